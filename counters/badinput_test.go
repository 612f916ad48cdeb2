package counters_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// Bad input gets a clear error wrapping ErrInvalid, sends nothing and
// writes nothing.
func TestBadInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := counters.WithPrefix(b.Prefix)
		for _, tc := range []struct {
			opts []counters.Option
			want string
		}{
			{[]counters.Option{counters.WithPrefix("a{b")}, "prefix"},
			{[]counters.Option{counters.WithPrecisions()}, "0 precisions"},
			{[]counters.Option{counters.WithPrecisions(counters.Precision{Step: 1500 * time.Millisecond, Samples: 1})}, "whole number of seconds"},
			{[]counters.Option{counters.WithPrecisions(counters.Precision{Step: time.Second, Samples: 0})}, "samples 0"},
			{[]counters.Option{counters.WithPrecisions(counters.Precision{Step: time.Second, Samples: 1}, counters.Precision{Step: time.Second, Samples: 2})}, "given twice"},
			{[]counters.Option{counters.WithClock(nil)}, "nil clock"},
			{[]counters.Option{nil}, "nil option"},
		} {
			_, err := counters.New(b.Client, append([]counters.Option{p}, tc.opts...)...)
			assert.ErrorIs(t, err, counters.ErrInvalid)
			assert.ErrorContains(t, err, tc.want)
		}
		c, _ := newCounters(t, b, b.Client)
		st, err := c.Stats("T")
		require.NoError(t, err)
		bt, err := c.Batcher()
		require.NoError(t, err)
		calls := map[string]func() error{
			"update empty name": func() error { return c.Update(ctx, "", 1) },
			"update brace":      func() error { return c.Update(ctx, "a}b", 1) },
			"update n":          func() error { return c.Update(ctx, "a", counters.MaxDelta+1) },
			"update at n": func() error {
				_, err := c.UpdateAt(ctx, "a", -counters.MaxDelta-1, t0)
				return err
			},
			"get empty name": func() error { _, err := c.Get(ctx, "", time.Second); return err },
			"get unknown precision": func() error {
				_, err := c.Get(ctx, "a", 2*time.Second)
				return err
			},
			"stats empty type": func() error { _, err := c.Stats(""); return err },
			"stats colon type": func() error { _, err := c.Stats("a:b"); return err },
			"stats keep":       func() error { _, err := c.Stats("T", counters.WithSlowestKept(0)); return err },
			"stats nan":        func() error { _, err := st.Update(ctx, "/p", math.NaN()); return err },
			"stats inf":        func() error { _, err := st.UpdateAt(ctx, "/p", math.Inf(-1), t0); return err },
			"stats empty ctx":  func() error { _, err := st.Update(ctx, "", 1); return err },
			"stats get":        func() error { _, _, err := st.Get(ctx, "{"); return err },
			"delete name":      func() error { return c.Delete(ctx, "") },
			"delete brace":     func() error { return c.Delete(ctx, "a}") },
			"record negative":  func() error { return st.Record(ctx, "/p", -time.Second) },
			"time nil fn":      func() error { return st.Time(ctx, "/p", nil) },
			"slowest n":        func() error { _, err := st.Slowest(ctx, 0); return err },
			"batcher add name": func() error { return bt.Add("", 1) },
			"batcher add n":    func() error { return bt.Add("a", math.MinInt64) },
			"cleaner interval": func() error { _, err := c.Cleaner(counters.WithInterval(0)); return err },
			"cleaner logger":   func() error { _, err := c.Cleaner(counters.WithLogger(nil)); return err },
			"batcher clock": func() error {
				_, err := c.Batcher(counters.WithCleanerClock(time.Now))
				return err
			},
		}
		for name, call := range calls {
			rt, _ := b.Count.Delta(func() { err = call() })
			assert.ErrorIs(t, err, counters.ErrInvalid, name)
			assert.Zero(t, rt, name)
		}
		assert.ErrorContains(t, c.Update(ctx, "", 1), "counter name: empty")
		_, err = c.Get(ctx, "a", 2*time.Second)
		assert.ErrorContains(t, err, "unknown precision 2s")
		_, err = st.Update(ctx, "/p", math.NaN())
		assert.ErrorContains(t, err, "must be a finite number")
		_, err = c.Batcher(counters.WithCleanerClock(time.Now))
		assert.ErrorContains(t, err, "option WithCleanerClock does not apply")
		assert.Empty(t, b.Snapshot(), "nothing written")
	})
}

// A count that would leave ±MaxDelta is refused before any write.
func TestCounters_Update_overflow(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		require.NoError(t, c.Update(ctx, "a", counters.MaxDelta))
		before := b.Snapshot()
		assert.ErrorIs(t, c.Update(ctx, "a", 1), counters.ErrOverflow)
		assert.Equal(t, before, b.Snapshot())
		require.NoError(t, c.Update(ctx, "a", -1))
	})
}

// Every script-backed operation refuses a key of the wrong type, naming
// it and its role, and changes nothing.
func TestWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		st, err := c.Stats("T")
		require.NoError(t, err)
		cl, err := c.Cleaner()
		require.NoError(t, err)
		bt, err := c.Batcher()
		require.NoError(t, err)
		counter := []redistest.KeyRole{
			{Key: key(b, "a", "known"), Type: "hash", Role: "counters known"},
			{Key: key(b, "a", "samples"), Type: "hash", Role: "counters samples"},
		}
		setup := func() { require.NoError(t, c.Update(ctx, "a", 1)) }
		b.CheckWrongTypes(t, setup, func() error { return c.Update(ctx, "a", 1) }, counter...)
		b.CheckWrongTypes(t, setup, func() error { _, err := c.UpdateAt(ctx, "a", 1, t0); return err }, counter...)
		b.CheckWrongTypes(t, setup, func() error {
			if err := bt.Add("a", 1); err != nil {
				return err
			}
			return bt.Flush(ctx)
		}, counter...)
		b.CheckWrongTypes(t, setup, func() error { _, err := cl.Clean(ctx); return err }, counter...)
		b.CheckWrongTypes(t, setup, func() error { return c.Delete(ctx, "a") }, counter...)
		b.CheckWrongTypes(t, setup, func() error { _, err := c.Get(ctx, "a", time.Second); return err }, counter[1])

		statsKey := func(part string) string { return b.Prefix + "stats:{T}:" + part + ":/p" }
		b.CheckWrongTypes(t, func() {
			_, err := st.Update(ctx, "/p", 1)
			require.NoError(t, err)
		}, func() error { _, err := st.Update(ctx, "/p", 2); return err },
			redistest.KeyRole{Key: statsKey("cur"), Type: "hash", Role: "counters stats"},
			redistest.KeyRole{Key: statsKey("last"), Type: "hash", Role: "counters stats previous hour"})
		b.CheckWrongTypes(t, func() {
			require.NoError(t, st.Record(ctx, "/p", time.Second))
		}, func() error { return st.Record(ctx, "/p", time.Second) },
			redistest.KeyRole{Key: statsKey("cur"), Type: "hash", Role: "counters stats"},
			redistest.KeyRole{Key: statsKey("last"), Type: "hash", Role: "counters stats previous hour"},
			redistest.KeyRole{Key: b.Prefix + "stats:{T}:slowest", Type: "zset", Role: "counters slowest"})
		// The reads name a key of another type as well.
		b.CheckWrongTypes(t, func() {
			require.NoError(t, st.Record(ctx, "/p", time.Second))
		}, func() error { _, _, err := st.Get(ctx, "/p"); return err },
			redistest.KeyRole{Key: statsKey("cur"), Type: "hash", Role: "counters stats"},
			redistest.KeyRole{Key: statsKey("last"), Type: "hash", Role: "counters stats previous hour"})
		b.CheckWrongTypes(t, func() {
			require.NoError(t, st.Record(ctx, "/p", time.Second))
		}, func() error { _, err := st.Slowest(ctx, 5); return err },
			redistest.KeyRole{Key: b.Prefix + "stats:{T}:slowest", Type: "zset", Role: "counters slowest"})
		_ = context.Background
	})
}
