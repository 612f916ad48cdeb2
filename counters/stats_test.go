package counters_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// Statistics are exact (the same float64 sums as Go's, in the same
// order), one round trip per update and per read, and the hour rotates at
// the boundary: the previous hour is kept, an older one dropped.
func TestStats_exactAndHours(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, clk := newCounters(t, b, b.Client)
		st, err := c.Stats(counters.AccessTime)
		require.NoError(t, err)

		values := []float64{0.125, 0.3, 1e-3, 2.75, 0.1, 0.2, 7.0 / 3, 1e6, 0}
		var want counters.Summary
		want.Hour, want.Min, want.Max = hourEnd.Add(-time.Hour), math.Inf(1), math.Inf(-1)
		for i, v := range values {
			var got counters.Summary
			rt, _ := b.Count.Delta(func() { got, err = st.UpdateAt(ctx, "/home", v, t0.Add(time.Duration(i)*time.Second)) })
			require.NoError(t, err)
			if i > 0 { // the first call caches the script on the node
				assert.Equal(t, int64(1), rt)
			}
			want.Count++
			want.Sum += v
			want.SumSq += v * v
			want.Min, want.Max = min(want.Min, v), max(want.Max, v)
			assert.Equal(t, want, got)
		}
		var cur, prev counters.Summary
		rt, _ := b.Count.Delta(func() { cur, prev, err = st.Get(ctx, "/home") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt)
		assert.Equal(t, want, cur)
		assert.Zero(t, prev)
		mean := want.Sum / float64(want.Count)
		var ss float64
		for _, v := range values {
			ss += (v - mean) * (v - mean)
		}
		assert.InDelta(t, math.Sqrt(ss/float64(len(values)-1)), cur.StdDev(), 1e-9)
		assert.InDelta(t, mean, cur.Mean(), 1e-12)

		// A value of the next hour: the current hour becomes the previous.
		clk.now = hourEnd.Add(time.Second)
		next, err := st.UpdateAt(ctx, "/home", 5, hourEnd.Add(time.Second))
		require.NoError(t, err)
		assert.Equal(t, counters.Summary{Hour: hourEnd, Count: 1, Sum: 5, Min: 5, Max: 5, SumSq: 25}, next)
		// A late value of the previous hour goes there.
		late, err := st.UpdateAt(ctx, "/home", 1, hourEnd.Add(-time.Second))
		require.NoError(t, err)
		assert.Equal(t, want.Count+1, late.Count)
		cur, prev, err = st.Get(ctx, "/home")
		require.NoError(t, err)
		assert.Equal(t, next, cur)
		assert.Equal(t, late, prev)
		// Before the previous hour: refused, nothing changed.
		before := b.Snapshot()
		_, err = st.UpdateAt(ctx, "/home", 1, hourEnd.Add(-time.Hour-time.Second))
		assert.ErrorIs(t, err, counters.ErrTooOld)
		assert.Equal(t, before, b.Snapshot())
		// Two hours on: both the current and the previous hour are dropped.
		clk.now = hourEnd.Add(2 * time.Hour)
		far, err := st.UpdateAt(ctx, "/home", 2, hourEnd.Add(2*time.Hour))
		require.NoError(t, err)
		assert.Equal(t, int64(1), far.Count)
		cur, prev, err = st.Get(ctx, "/home")
		require.NoError(t, err)
		assert.Equal(t, far, cur)
		assert.Zero(t, prev)
	})
}

// Time records durations, ranks the slowest contexts, and reports fn's
// error; Record is one round trip.
func TestStats_timeAndSlowest(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, err := counters.New(b.Client, counters.WithPrefix(b.Prefix))
		require.NoError(t, err)
		st, err := c.Stats(counters.AccessTime, counters.WithSlowestKept(2))
		require.NoError(t, err)
		require.NoError(t, st.Record(ctx, "/a", 30*time.Millisecond)) // caches the scripts on /a's node
		var rt int64
		rt, _ = b.Count.Delta(func() { err = st.Record(ctx, "/a", 30*time.Millisecond) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt)
		require.NoError(t, st.Record(ctx, "/b", 10*time.Millisecond))
		require.NoError(t, st.Record(ctx, "/c", 20*time.Millisecond))
		boom := errors.New("boom")
		assert.ErrorIs(t, st.Time(ctx, "/c", func() error { return boom }), boom)
		stop := st.Start("/c")
		require.NoError(t, stop(ctx))

		slow, err := st.Slowest(ctx, 10)
		require.NoError(t, err)
		require.Len(t, slow, 2, "the slowest 2 are kept")
		assert.Equal(t, "/a", slow[0].Context)
		assert.InDelta(t, 0.030, slow[0].Mean, 1e-9)
		assert.Equal(t, "/c", slow[1].Context)
		cur, _, err := st.Get(ctx, "/c")
		require.NoError(t, err)
		assert.Equal(t, int64(3), cur.Count)
		assert.InDelta(t, cur.Mean(), slow[1].Mean, 1e-12)
		// No clock given: the hour is the server's.
		assert.Zero(t, cur.Hour.Unix()%3600)
		assert.WithinDuration(t, time.Now(), cur.Hour, 2*time.Hour, "the server's hour")
	})
}

// Stats.UpdateAt refuses a time beyond ±2^52 s of the epoch (valid for
// time.Time): stored as the hour of a context with no statistics yet, an
// hour beyond ±2^53 made every later Update of the context fail with
// ria.ErrCorrupt.
func TestStats_updateAtFarPast(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		st, err := c.Stats(counters.AccessTime)
		require.NoError(t, err)
		for _, at := range []time.Time{time.Unix(-1<<60, 0), time.Unix(1<<60, 0), time.Unix(-1<<52-1, 0)} {
			_, err = st.UpdateAt(ctx, "/p", 1, at)
			assert.ErrorIs(t, err, counters.ErrInvalid, "%v", at)
		}
		assert.Empty(t, b.Keys(""), "nothing written")
		_, err = st.Update(ctx, "/p", 2)
		assert.NoError(t, err, "the context must stay usable")
		_, _, err = st.Get(ctx, "/p")
		assert.NoError(t, err)
	})
}

// A value whose square is infinite (1e200) must be refused with
// ErrOverflow, leaving nothing behind (doc: "ErrOverflow ... a statistic
// to ±Inf. Nothing was written"), on miniredis too: stats.lua compared
// with math.huge, which miniredis's Lua defines as the largest finite
// double, so there the update stored sumsq "+Inf" and every later update
// of the context failed as corrupt.
func TestStats_overflowSquares(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		st, err := c.Stats(counters.AccessTime)
		require.NoError(t, err)
		s, err := st.Update(ctx, "/p", 1e200)
		assert.ErrorIs(t, err, counters.ErrOverflow, "got %+v", s)
		_, err = st.Update(ctx, "/p", 1)
		assert.NoError(t, err, "the context must stay usable")
	})
}
