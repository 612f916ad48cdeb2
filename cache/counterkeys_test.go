package cache_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// The blog's write-back: list the counters, read them, write them back,
// set them to 0. Keys spread over every node of a Cluster; keys with
// braces and SCAN pattern characters come back as they were; other kinds
// and other counters' names are not listed.
func TestCounter_KeysAndSet(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCounter(t, b.Client, b, nil)
		other, err := cache.NewCounter(b.Client, "views2", nil, cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		want := []string{"*", "a}:count", "job:1", "{x}", `[a-z]\?`}
		for i := range 30 {
			want = append(want, fmt.Sprint("k", i))
		}
		for i, k := range want {
			_, err := c.Incr(ctx, k, int64(i+1))
			require.NoError(t, err)
		}
		_, err = other.Incr(ctx, "k0", 5)
		require.NoError(t, err)
		guard, err := cache.NewGuard(b.Client, c.Name(), cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		_, err = guard.Allow(ctx, "g", 60e9)
		require.NoError(t, err)

		got, err := c.Keys(ctx)
		require.NoError(t, err)
		assert.ElementsMatch(t, want, got)

		for i, k := range want {
			n, err := c.Get(ctx, k)
			require.NoError(t, err)
			require.Equal(t, int64(i+1), n)
			require.NoError(t, c.Set(ctx, k, -1)) // the first Set of a node loads the script
			rt, _ := b.Count.Delta(func() { err = c.Set(ctx, k, 0) })
			require.NoError(t, err)
			assert.Equal(t, int64(1), rt, "Set: one round trip")
		}
		for _, k := range want {
			n, err := c.Get(ctx, k)
			require.NoError(t, err)
			assert.Zero(t, n, k)
		}
		n, err := other.Get(ctx, "k0")
		require.NoError(t, err)
		assert.Equal(t, int64(5), n, "another counter's key is its own")

		b.CheckWrongTypes(t, func() {}, func() error { return c.Set(ctx, "w", 3) },
			redistest.KeyRole{Key: b.Prefix + "{" + c.Name() + ":w}:count", Type: "string", Role: "cache counter"})
		assert.Error(t, c.Set(ctx, "", 1))
	})
}

// A Set whose reply is lost is re-sent and still answers nil; the value
// is the one set.
func TestFaults_CounterSet(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		c := newCounter(t, rdb, b, nil)
		reader := newCounter(t, b.Client, b, nil)
		require.NoError(t, c.Set(ctx, "warm", 1))
		h := redistest.NewHarness(t, f, "cache Counter.Set")
		for i := range 10 {
			var err error
			h.Call(1+i%2, redistest.Scripts, func() { err = c.Set(ctx, "k", int64(i*7)) })
			require.NoError(t, err)
			n, err := reader.Get(ctx, "k")
			require.NoError(t, err)
			h.Check(n == int64(i*7), "set %d, counter %d", i*7, n)
		}
	})
}
