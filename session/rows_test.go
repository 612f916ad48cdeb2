package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// inventory is the book's Inventory row: it changes with every load.
type inventory struct {
	loads atomic.Int64
}

func (inv *inventory) load(_ context.Context, id string) (any, error) {
	n := inv.loads.Add(1)
	return map[string]any{"id": id, "data": "data to cache...", "version": n}, nil
}

// rowVersion returns the cached row's version, or 0 if it is not cached.
func rowVersion(t *testing.T, s *session.Store, id string) int {
	t.Helper()
	data, ok, err := s.Row(t.Context(), id)
	require.NoError(t, err)
	if !ok {
		return 0
	}
	var row struct {
		ID      string `json:"id"`
		Version int    `json:"version"`
	}
	require.NoError(t, json.Unmarshal(data, &row))
	assert.Equal(t, id, row.ID)
	return row.Version
}

// The book's test_cache_rows: a scheduled row appears, changes after its
// delay, and disappears after a delay of -1. The clock is the test's.
func TestRowCacher_schedule(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		clock := newFakeClock()
		inv := &inventory{}
		rc, err := s.RowCacher(inv.load, session.WithClock(clock.Now))
		require.NoError(t, err)

		require.NoError(t, s.ScheduleRowCache(ctx, "itemX", 5*time.Second))
		assert.Zero(t, rowVersion(t, s, "itemX"), "not cached before a pass")
		n, err := rc.CacheDue(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		assert.Equal(t, 1, rowVersion(t, s, "itemX"), "cached at once")
		assert.Equal(t, float64(clock.Now().Add(5*time.Second).UnixMilli()),
			b.Client.ZScore(ctx, key(b, "schedule"), "itemX").Val(), "next due in 5s")

		clock.Add(4 * time.Second)
		n, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "not due yet")
		assert.Equal(t, 1, rowVersion(t, s, "itemX"))

		clock.Add(time.Second)
		n, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		assert.Equal(t, 2, rowVersion(t, s, "itemX"), "reloaded after its delay")

		require.NoError(t, s.ScheduleRowCache(ctx, "itemX", -1))
		assert.Zero(t, rowVersion(t, s, "itemX"), "gone at once")
		clock.Add(time.Minute)
		n, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Zero(t, rowVersion(t, s, "itemX"), "not cached again")
		assert.Equal(t, int64(2), inv.loads.Load())
		assert.Equal(t, []string{key(b, "rowgen:last")}, dataKeys(b),
			"schedule, delay, generation and row all gone; the generation counter stays")
	})
}

// Rescheduling makes the row due at once with its new delay.
func TestRowCacher_reschedule(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		clock := newFakeClock()
		inv := &inventory{}
		rc, err := s.RowCacher(inv.load, session.WithClock(clock.Now))
		require.NoError(t, err)
		require.NoError(t, s.ScheduleRowCache(ctx, "a", time.Hour))
		require.NoError(t, s.ScheduleRowCache(ctx, "b", time.Hour))
		n, err := rc.CacheDue(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, n)

		require.NoError(t, s.ScheduleRowCache(ctx, "a", 2*time.Second))
		n, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "a due at once, b not")
		assert.Equal(t, 3, rowVersion(t, s, "a"))
		clock.Add(2 * time.Second)
		n, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "a every 2s now")
		assert.Equal(t, 4, rowVersion(t, s, "a"))
		assert.Equal(t, 2, rowVersion(t, s, "b"))
	})
}

// A delay <= 0 left by another writer (the book's schedule_row_cache with
// -1) is dropped by the next pass, with the cached copy.
func TestRowCacher_CacheDue_dropsNonPositiveDelay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		clock := newFakeClock()
		inv := &inventory{}
		rc, err := s.RowCacher(inv.load, session.WithClock(clock.Now))
		require.NoError(t, err)
		require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Second))
		_, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rowVersion(t, s, "r"))

		now := float64(clock.Now().UnixMilli())
		require.NoError(t, b.Client.ZAdd(ctx, key(b, "delay"), redisZ("r", -1)).Err())
		require.NoError(t, b.Client.ZAdd(ctx, key(b, "schedule"), redisZ("r", now)).Err())
		require.NoError(t, b.Client.ZAdd(ctx, key(b, "schedule"), redisZ("nodelay", now)).Err())
		n, err := rc.CacheDue(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		assert.Zero(t, rowVersion(t, s, "r"))
		assert.Equal(t, []string{key(b, "rowgen:last")}, dataKeys(b), "all gone but the generation counter")
		assert.Equal(t, int64(1), inv.loads.Load(), "no load for a dropped row")
	})
}

// A row unscheduled while its loader runs is not written back.
func TestRowCacher_unscheduledWhileLoading(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		loads := 0
		rc, err := s.RowCacher(func(ctx context.Context, id string) (any, error) {
			loads++
			if err := s.ScheduleRowCache(ctx, id, -1); err != nil { // meanwhile, elsewhere
				return nil, err
			}
			return "stale", nil
		})
		require.NoError(t, err)
		require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Second))
		n, err := rc.CacheDue(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Equal(t, 1, loads)
		assert.Equal(t, []string{key(b, "rowgen:last")}, dataKeys(b), "not resurrected")
	})
}

// A failing loader keeps the cached copy, and the row is tried again after
// its delay; other rows are cached meanwhile.
func TestRowCacher_CacheDue_loaderError(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		clock := newFakeClock()
		boom := errors.New("db down")
		var failing atomic.Bool
		inv := &inventory{}
		rc, err := s.RowCacher(func(ctx context.Context, id string) (any, error) {
			if id == "bad" && failing.Load() {
				return nil, boom
			}
			if id == "json" {
				return []byte("{not json"), nil
			}
			return inv.load(ctx, id)
		}, session.WithClock(clock.Now))
		require.NoError(t, err)
		require.NoError(t, s.ScheduleRowCache(ctx, "bad", 10*time.Second))
		_, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rowVersion(t, s, "bad"))

		failing.Store(true)
		require.NoError(t, s.ScheduleRowCache(ctx, "good", 10*time.Second))
		require.NoError(t, s.ScheduleRowCache(ctx, "json", 10*time.Second))
		require.NoError(t, s.ScheduleRowCache(ctx, "bad", 10*time.Second))
		n, err := rc.CacheDue(ctx)
		assert.ErrorIs(t, err, boom)
		assert.ErrorContains(t, err, `session: load row "bad"`)
		assert.ErrorContains(t, err, `session: load row "json": loader returned invalid JSON`)
		assert.Equal(t, 1, n, "the good row")
		assert.Equal(t, 1, rowVersion(t, s, "bad"), "the old copy stays")
		assert.Equal(t, 2, rowVersion(t, s, "good"))
		assert.Equal(t, float64(clock.Now().Add(10*time.Second).UnixMilli()),
			b.Client.ZScore(ctx, key(b, "schedule"), "bad").Val(), "retried after its delay")

		n, err = rc.CacheDue(ctx)
		require.NoError(t, err, "nothing due: no retry storm")
		assert.Zero(t, n)
		failing.Store(false)
		clock.Add(10 * time.Second)
		_, err = rc.CacheDue(ctx)
		assert.ErrorContains(t, err, `"json"`)
		assert.Equal(t, 3, rowVersion(t, s, "bad"))
	})
}

func TestRowCacher_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		clock := newFakeClock()
		inv := &inventory{}
		rc, err := s.RowCacher(inv.load, session.WithClock(clock.Now))
		require.NoError(t, err)
		// Warm up every row script.
		require.NoError(t, s.ScheduleRowCache(ctx, "w", time.Second))
		_, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		require.NoError(t, b.Client.ZAdd(ctx, key(b, "schedule"), redisZ("x", 0)).Err())
		_, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		require.NoError(t, s.ScheduleRowCache(ctx, "w", -1))

		for _, id := range []string{"a", "b", "c"} {
			require.NoError(t, s.ScheduleRowCache(ctx, id, time.Second))
		}
		rt, _ := b.Count.Delta(func() {
			n, err := rc.CacheDue(ctx)
			require.NoError(t, err)
			assert.Equal(t, 3, n)
		})
		assert.Equal(t, int64(1+3), rt, "one, plus one per row")
		rt, _ = b.Count.Delta(func() {
			n, err := rc.CacheDue(ctx)
			require.NoError(t, err)
			assert.Zero(t, n)
		})
		assert.Equal(t, int64(1), rt, "nothing due")
	})
}

// Run pauses until the next row is due, at most the interval: a row due
// centuries away (a delay near the largest Duration, or a score of +inf
// written by hand) pauses for the interval, never for a negative time that
// would make Run spin.
func TestRowCacher_pauseUntil(t *testing.T) {
	const now = int64(1_700_000_000_000)
	const interval = 50 * time.Millisecond
	for _, c := range []struct {
		name string
		due  float64
		want time.Duration
	}{
		{"due now", float64(now), 0},
		{"overdue", float64(now - 5000), 0},
		{"in 20ms", float64(now + 20), 20 * time.Millisecond},
		{"in 1s", float64(now + 1000), interval},
		{"in 300 years", float64(now) + 1e13, interval}, // 1e13 ms overflows a Duration of ms
		{"at +inf", math.Inf(1), interval},
		{"at -inf", math.Inf(-1), 0},
		{"NaN", math.NaN(), 0},
	} {
		assert.Equal(t, c.want, session.PauseUntil(c.due, now, interval), c.name)
	}
}
