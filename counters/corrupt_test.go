package counters_test

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// A count that Lua's tonumber reads but that is not a count as the
// package writes one (and as Get reads one) is refused, not rewritten.
func TestCounters_Update_corruptCount(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client, counters.WithPrecisions(counters.Precision{Step: time.Second, Samples: 10}))
		field := fmt.Sprintf("1:%d", t0.Unix())
		for _, v := range []string{" 12", "0x10", "1e3", "12 ", "+5", "007", "-0"} {
			b.Flush()
			require.NoError(t, c.Update(ctx, "a", 1))
			require.NoError(t, b.Client.HSet(ctx, key(b, "a", "samples"), field, v).Err())
			before := b.Snapshot()
			err := c.Update(ctx, "a", 1)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "%q", v)
			assert.Equal(t, before, b.Snapshot(), "%q: nothing changed", v)
			_, err = c.Get(ctx, "a", time.Second)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "Get %q", v)
		}
	})
}

// A watermark that no update or clean writes (not a multiple of its step,
// beyond 2^53) is refused by update and clean, which change nothing.
func TestCounters_corruptWatermark(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, clk := newCounters(t, b, b.Client, counters.WithPrecisions(counters.Precision{Step: time.Minute, Samples: 2}))
		cl, err := c.Cleaner()
		require.NoError(t, err)
		// Between the slices of the samples: a clean deleted slices that
		// do not exist ('60:<w>', '60:<w+60>'), none of the samples, and
		// raised the watermark past them, leaving them for ever. One
		// beyond 2^53 made every update skip silently.
		between := strconv.FormatInt(slice(t0, time.Minute).Unix()-53, 10)
		for _, w := range []string{between, "7", "99999999999999999999", "9007199254740993", "1e9", "-0", "0600"} {
			b.Flush()
			clk.now = t0
			_, err := c.UpdateAt(ctx, "a", 1, t0.Add(-time.Minute))
			require.NoError(t, err)
			require.NoError(t, c.Update(ctx, "a", 1))
			require.NoError(t, b.Client.HSet(ctx, key(b, "a", "known"), "w60", w).Err())
			before := b.Snapshot()
			_, err = c.UpdateAt(ctx, "a", 1, t0)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "update %q", w)
			assert.Equal(t, before, b.Snapshot(), "update %q: nothing changed", w)
			clk.now = t0.Add(2 * time.Minute) // both samples are out of the retention
			_, err = cl.Clean(ctx)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "clean %q", w)
			assert.Equal(t, before, b.Snapshot(), "clean %q: nothing changed", w)
		}
	})
}

// A known hash whose precision fields do not parse as a step (0, beyond
// 2^53) or its samples kept is refused by clean, which changes nothing.
func TestCleaner_corruptPrecision(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, clk := newCounters(t, b, b.Client, counters.WithPrecisions(counters.Precision{Step: time.Minute, Samples: 2}))
		cl, err := c.Cleaner()
		require.NoError(t, err)
		for _, f := range [][2]string{{"0", "5"}, {"60", "99999999999999999999"}, {"60", "9007199254740992"}, {"99999999999999999999", "5"}, {"060", "5"}} {
			b.Flush()
			clk.now = t0
			require.NoError(t, c.Update(ctx, "a", 1))
			require.NoError(t, b.Client.HSet(ctx, key(b, "a", "known"), f[0], f[1]).Err())
			before := b.Snapshot()
			clk.now = t0.Add(10 * time.Minute)
			_, err = cl.Clean(ctx)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "clean %q", f)
			assert.Equal(t, before, b.Snapshot(), "clean %q: nothing changed", f)
		}
	})
}

// Stored statistics that are numbers but not what stats.lua writes (a
// negative or fractional count, an hour that is not an integer, an
// infinite sum) are refused, and nothing changes.
func TestStats_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		st, err := c.Stats("T")
		require.NoError(t, err)
		cur := b.Prefix + "stats:{T}:cur:/p"
		for _, f := range [][2]string{{"count", "-1"}, {"count", "0.5"}, {"count", "1e300"}, {"hour", "1.5"}, {"hour", "inf"}, {"sum", "inf"}, {"min", "-inf"}, {"count", " 1"}} {
			b.Flush()
			_, err := st.UpdateAt(ctx, "/p", 0, t0)
			require.NoError(t, err)
			require.NoError(t, st.Record(ctx, "/q", 0))
			require.NoError(t, b.Client.HSet(ctx, cur, f[0], f[1]).Err())
			before := b.Snapshot()
			err = st.Record(ctx, "/p", 0)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "%q", f)
			assert.Equal(t, before, b.Snapshot(), "%q: nothing changed", f)
		}
	})
}

// The ranking keeps as many as asked, however many: a huge keep does not
// reach ZREMRANGEBYRANK as a float after the writes.
func TestStats_Record_hugeKeep(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		for _, keep := range []int{math.MaxInt, 1 << 62, 1<<53 + 1} {
			b.Flush()
			st, err := c.Stats("T", counters.WithSlowestKept(keep))
			require.NoError(t, err)
			require.NoError(t, st.Record(ctx, "/p", time.Second), "keep %d", keep)
			slow, err := st.Slowest(ctx, 5)
			require.NoError(t, err)
			assert.Len(t, slow, 1)
		}
	})
}
