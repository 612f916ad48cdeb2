package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

func TestBadInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb := b.Client
		p := cache.WithPrefix(b.Prefix)
		for _, tc := range []struct {
			name string
			opts []cache.Option
			want string
		}{
			{"", nil, "cache name: empty"},
			{"a:b", nil, "must not contain"},
			{"a{b", nil, "must not contain"},
			{"jobs", []cache.Option{cache.WithTTL(0)}, "ttl 0s: must be at least 1ms"},
			{"jobs", []cache.Option{cache.WithTTL(-time.Second)}, "ttl -1s"},
			{"jobs", []cache.Option{cache.WithLease(0)}, "lease 0s"},
			{"jobs", []cache.Option{cache.WithRefreshAhead(-1)}, "refresh window"},
			{"jobs", []cache.Option{cache.WithTTL(time.Second), cache.WithRefreshAhead(time.Second)}, "shorter than the ttl"},
			{"jobs", []cache.Option{cache.WithStaleGrace(-time.Second)}, "stale grace"},
			{"jobs", []cache.Option{cache.WithCodec(nil)}, "nil codec"},
			{"jobs", []cache.Option{cache.WithLogger(nil)}, "nil logger"},
			{"jobs", []cache.Option{cache.WithPrefix("a{b")}, "prefix"},
			{"jobs", []cache.Option{nil}, "nil option"},
		} {
			_, err := cache.New[string](rdb, tc.name, append([]cache.Option{p}, tc.opts...)...)
			assert.ErrorContains(t, err, tc.want, "New(%q)", tc.name)
		}
		_, err := cache.NewGuard(rdb, "g", cache.WithTTL(time.Second))
		assert.ErrorContains(t, err, "option WithTTL does not apply")
		_, err = cache.NewCounter(rdb, "c", nil, cache.WithCodec(cache.JSON))
		assert.ErrorContains(t, err, "option WithCodec does not apply")
		_, err = cache.NewLatest[int](rdb, "l", 0, p)
		assert.ErrorContains(t, err, "n 0: must be at least 1")
		_, err = cache.NewTop[int](rdb, "", p)
		assert.ErrorContains(t, err, "top name: empty")

		c := newCache[string](t, rdb, b)
		load := func(context.Context) (string, error) { t.Error("load called"); return "", nil }
		_, err = c.Get(ctx, "", load)
		assert.ErrorContains(t, err, "key: empty")
		_, err = c.Get(ctx, "k", nil)
		assert.ErrorContains(t, err, "nil load function")
		assert.ErrorContains(t, c.Set(ctx, "", "v"), "key: empty")
		assert.ErrorContains(t, c.Delete(ctx, ""), "key: empty")

		counter, err := cache.NewCounter(rdb, "views", func(context.Context, string) (int64, error) {
			t.Error("restore called")
			return 0, nil
		}, p)
		require.NoError(t, err)
		_, err = counter.Incr(ctx, "", 1)
		assert.ErrorContains(t, err, "key: empty")
		_, err = counter.Get(ctx, "")
		assert.ErrorContains(t, err, "key: empty")

		g, err := cache.NewGuard(rdb, "reset", p)
		require.NoError(t, err)
		_, err = g.Allow(ctx, "u", 0)
		assert.ErrorContains(t, err, "window 0s: must be at least 1ms")
		_, err = g.Allow(ctx, "u", -time.Second)
		assert.ErrorContains(t, err, "window")
		_, err = g.Allow(ctx, "", time.Second)
		assert.ErrorContains(t, err, "key: empty")

		l, err := cache.NewLatest[int](rdb, "latest", 3, p)
		require.NoError(t, err)
		assert.ErrorContains(t, l.Push(ctx, "k"), "no values")
		assert.ErrorContains(t, l.Push(ctx, "", 1), "key: empty")
		_, err = l.List(ctx, "")
		assert.ErrorContains(t, err, "key: empty")

		top, err := cache.NewTop[int](rdb, "top", p)
		require.NoError(t, err)
		_, err = top.Range(ctx, "k", 0)
		assert.ErrorContains(t, err, "n 0: must be at least 1")
		_, err = top.Incr(ctx, "", 1, 1)
		assert.ErrorContains(t, err, "key: empty")

		bt := cache.NewBatch(rdb)
		r1 := c.Read(bt, "", nil)
		r2 := top.Read(bt, "k", -1)
		err = bt.Exec(ctx)
		assert.ErrorContains(t, err, "key: empty")
		assert.ErrorContains(t, err, "n -1")
		_, _, err = r1.Value()
		assert.ErrorContains(t, err, "key: empty")
		_, _, err = r2.Value()
		assert.ErrorContains(t, err, "n -1")

		assert.Empty(t, b.Keys(""), "bad input wrote nothing")
	})
	assert.Panics(t, func() { _, _ = cache.New[int](nil, "x") })
	assert.Panics(t, func() { _, _ = cache.NewCounter(nil, "x", nil) })
	assert.Panics(t, func() { _, _ = cache.NewGuard(nil, "x") })
	assert.Panics(t, func() { cache.NewBatch(nil) })
	_, err := cache.New[int](redis.NewClient(&redis.Options{}), "x", cache.WithPrefix("}"))
	assert.ErrorContains(t, err, "prefix")
}
