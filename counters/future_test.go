package counters_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

const century = 100 * 365 * 24 * time.Hour

// UpdateAt takes a time up to MaxAhead after the clock (the WithClock
// clock, or the server's TIME) and refuses a later one with ErrInvalid,
// naming it, before any write.
func TestCounters_UpdateAt_future(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		skipped, err := c.UpdateAt(ctx, "hits", 1, t0.Add(counters.MaxAhead))
		require.NoError(t, err)
		assert.Empty(t, skipped)
		before := b.Snapshot()
		for _, at := range []time.Time{t0.Add(counters.MaxAhead + time.Second), t0.Add(century)} {
			_, err = c.UpdateAt(ctx, "hits", 1, at)
			assert.ErrorIs(t, err, counters.ErrInvalid, at)
			assert.ErrorContains(t, err, at.UTC().Format(time.RFC3339))
			_, err = c.UpdateAt(ctx, "new", 1, at)
			assert.ErrorIs(t, err, counters.ErrInvalid, at)
		}
		assert.Equal(t, before, b.Snapshot(), "nothing changed")

		// The server's clock.
		srv, err := counters.New(b.Client, counters.WithPrefix(b.Prefix))
		require.NoError(t, err)
		_, err = srv.UpdateAt(ctx, "hits", 1, time.Now().Add(century))
		assert.ErrorIs(t, err, counters.ErrInvalid)
		assert.Equal(t, before, b.Snapshot(), "nothing changed")
		require.NoError(t, srv.Update(ctx, "hits", 1))
	})
}

// Stats.UpdateAt refuses a time more than MaxAhead after the clock with
// ErrInvalid, changing nothing, so that the current hour's updates go on
// working.
func TestStats_UpdateAt_future(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		st, err := c.Stats("T")
		require.NoError(t, err)
		_, err = st.Update(ctx, "/p", 1)
		require.NoError(t, err)
		before := b.Snapshot()
		for _, at := range []time.Time{t0.Add(counters.MaxAhead + time.Second), t0.Add(century)} {
			_, err = st.UpdateAt(ctx, "/p", 1, at)
			assert.ErrorIs(t, err, counters.ErrInvalid, at)
			assert.ErrorContains(t, err, at.UTC().Format(time.RFC3339))
		}
		assert.Equal(t, before, b.Snapshot(), "nothing changed")
		// Up to MaxAhead is taken: t0+1min is in the next hour, which becomes
		// the current one; t0's hour is the previous.
		sum, err := st.UpdateAt(ctx, "/p", 2, t0.Add(counters.MaxAhead))
		require.NoError(t, err)
		assert.Equal(t, hourEnd, sum.Hour)
		sum, err = st.Update(ctx, "/p", 3)
		require.NoError(t, err)
		assert.Equal(t, counters.Summary{Hour: hourEnd.Add(-time.Hour), Count: 2, Sum: 4, Min: 1, Max: 3, SumSq: 10}, sum)

		// The server's clock.
		srv, err := counters.New(b.Client, counters.WithPrefix(b.Prefix))
		require.NoError(t, err)
		sst, err := srv.Stats("T")
		require.NoError(t, err)
		_, err = sst.UpdateAt(ctx, "/q", 1, time.Now().Add(century))
		assert.ErrorIs(t, err, counters.ErrInvalid)
		_, err = sst.Update(ctx, "/q", 1)
		require.NoError(t, err, "the current hour is still writable")
		cur, _, err := sst.Get(ctx, "/q")
		require.NoError(t, err)
		assert.Equal(t, int64(1), cur.Count)
	})
}

// An UpdateAt older than every precision's retention writes nothing: no
// sample, and no known HASH that would make the counter known.
func TestCounters_UpdateAt_tooOldWritesNothing(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		skipped, err := c.UpdateAt(ctx, "old", 1, t0.Add(-365*24*time.Hour))
		require.NoError(t, err)
		var all []time.Duration
		for _, p := range c.Precisions() {
			all = append(all, p.Step)
		}
		assert.Equal(t, all, skipped)
		assert.Empty(t, b.Snapshot())
		names, err := c.Names(ctx)
		require.NoError(t, err)
		assert.Empty(t, names)
	})
}

// commandStats returns the calls per command of b's server.
func commandStats(t *testing.T, b *redistest.Backend) map[string]int64 {
	t.Helper()
	info, err := b.Client.Info(t.Context(), "commandstats").Result()
	require.NoError(t, err)
	out := map[string]int64{}
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, found := strings.CutPrefix(name, "cmdstat_")
		if !ok || !found {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		require.NoError(t, err, line)
		out[name] = n
	}
	return out
}

// The server commands of an update are what the package doc says
// (INFO commandstats of the real standalone server: miniredis has none,
// and a Cluster spreads them).
func TestCounters_Update_serverCommands(t *testing.T) {
	b := redistest.New(t, redistest.Standalone)
	ctx := t.Context()
	delta := func(fn func() error) map[string]int64 {
		before := commandStats(t, b)
		require.NoError(t, fn())
		after := commandStats(t, b)
		out := map[string]int64{}
		for k, v := range after {
			if d := v - before[k]; d != 0 && k != "info" {
				out[k] = d
			}
		}
		return out
	}
	clocked, _ := newCounters(t, b, b.Client)
	srv, err := counters.New(b.Client, counters.WithPrefix(b.Prefix))
	require.NoError(t, err)
	require.NoError(t, srv.Update(ctx, "hits", 1)) // caches the script, writes the known HASH
	update := map[string]int64{"multi": 1, "evalsha": 1, "hget": 1, "hmget": 1, "hset": 1, "exec": 1}
	assert.Equal(t, update, delta(func() error { return clocked.Update(ctx, "hits", 1) }), "Update, WithClock: 6")
	update["time"] = 1
	assert.Equal(t, update, delta(func() error { return srv.Update(ctx, "hits", 1) }), "Update: 7")
	update["hmget"] = 2
	assert.Equal(t, update, delta(func() error { _, err := srv.UpdateAt(ctx, "hits", 1, time.Now()); return err }), "UpdateAt: 8")

	st, err := srv.Stats("T")
	require.NoError(t, err)
	_, err = st.Update(ctx, "/p", 1) // caches the script
	require.NoError(t, err)
	stats := map[string]int64{"multi": 1, "evalsha": 1, "time": 1, "type": 2, "hgetall": 2, "hset": 1, "exec": 1}
	assert.Equal(t, stats, delta(func() error { _, err := st.Update(ctx, "/p", 1); return err }), "Stats.Update: 9")
	stats["type"], stats["zadd"], stats["zremrangebyrank"] = 3, 1, 1
	assert.Equal(t, stats, delta(func() error { return st.Record(ctx, "/p", time.Second) }), "Stats.Record: 3 more")
	cst, err := clocked.Stats("T")
	require.NoError(t, err)
	delete(stats, "time")
	assert.Equal(t, stats, delta(func() error { return cst.Record(ctx, "/c", time.Second) }), "Stats.Record, WithClock: 1 less")
}
