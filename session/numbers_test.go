package session_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// A newest view time that is not a time in µs as UpdateToken writes one
// (beyond 2^53, infinite) is refused as corrupt, and nothing is written.
// Read as a double, the next view's time (newest + 1) was written as
// INT64_MIN or a rounded float: the new view did not come last.
func TestStore_UpdateToken_corruptViewTime(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		viewed := key(b, "viewed:tok")
		for _, score := range []float64{1e20, math.Inf(1), 1 << 53, -1e20} {
			b.Flush()
			require.NoError(t, s.UpdateToken(ctx, "tok", "alice", "a"))
			require.NoError(t, b.Client.ZAdd(ctx, viewed, redis.Z{Score: score, Member: "a"}).Err())
			before := b.Snapshot()
			err := s.UpdateToken(ctx, "tok", "alice", "b")
			assert.ErrorIs(t, err, ria.ErrCorrupt, "%v", score)
			assert.Equal(t, before, b.Snapshot(), "%v: nothing changed", score)
		}
	})
}

// A row delay so large that now + delay is no time in ms (beyond 2^53,
// infinite) is refused as corrupt by the store, which writes nothing.
// Read as a double, the row was written and rescheduled at INT64_MIN (or a
// float Redis reads otherwise), due again at once: a pass loaded it again
// and again.
func TestRowCacher_corruptDelay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		clock := newFakeClock()
		for _, d := range []float64{1e300, math.Inf(1), 1 << 53} {
			b.Flush()
			ctx, cancel := context.WithCancel(t.Context())
			loads := 0
			rc, err := s.RowCacher(func(context.Context, string) (any, error) {
				loads++
				if loads > 1 {
					cancel() // loaded again in the same pass: stop it
				}
				return map[string]int{"n": loads}, nil
			}, session.WithClock(clock.Now))
			require.NoError(t, err)
			require.NoError(t, s.ScheduleRowCache(ctx, "r1", time.Second))
			require.NoError(t, b.Client.ZAdd(ctx, key(b, "delay"), redis.Z{Score: d, Member: "r1"}).Err())
			before := b.Snapshot()
			_, err = rc.CacheDue(ctx)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "%v", d)
			assert.Equal(t, 1, loads, "%v: loaded once", d)
			assert.Equal(t, before, b.Snapshot(), "%v: nothing changed", d)
			cancel()
		}
	})
}

// A row generation counter that mint cannot increment (not an integer as
// INCR reads one) is refused as corrupt by ScheduleRowCache and by a
// RowCacher's store, and one at its maximum (2^53 - 1: the next value would
// not be exact in Lua) makes them fail at mint, their first write: either
// way nothing is written.
func TestRowCacher_corruptGenerationCounter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		clock := newFakeClock()
		rc, err := s.RowCacher(func(context.Context, string) (any, error) { return 1, nil }, session.WithClock(clock.Now))
		require.NoError(t, err)
		counter := key(b, "rowgen:last")
		for _, v := range []string{"x", "007", "1.5", "9007199254740991"} {
			b.Flush()
			require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Second))
			require.NoError(t, b.Client.Set(ctx, counter, v, 0).Err())
			before := b.Snapshot()
			err := s.ScheduleRowCache(ctx, "s", time.Second)
			if v == "9007199254740991" {
				assert.ErrorContains(t, err, "counter at its maximum")
			} else {
				assert.ErrorIs(t, err, ria.ErrCorrupt, "%q", v)
			}
			assert.Equal(t, before, b.Snapshot(), "%q: ScheduleRowCache changed nothing", v)
			n, err := rc.CacheDue(ctx)
			if v == "9007199254740991" {
				assert.ErrorContains(t, err, "counter at its maximum")
			} else {
				assert.ErrorIs(t, err, ria.ErrCorrupt, "%q", v)
			}
			assert.Zero(t, n)
			assert.Equal(t, before, b.Snapshot(), "%q: the store changed nothing", v)
		}
	})
}
