package cache_test

import (
	"context"
	"math"
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
			{"jobs", []cache.Option{cache.WithTTL(cache.MaxDuration + 1)}, "ttl 87600h0m0.000000001s: must be at most 87600h0m0s"},
			{"jobs", []cache.Option{cache.WithLease(math.MaxInt64)}, "lease"},
			{"jobs", []cache.Option{cache.WithStaleGrace(math.MaxInt64)}, "stale grace"},
			{"jobs", []cache.Option{cache.WithRefreshAhead(math.MaxInt64)}, "refresh window"},
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
		_, err = cache.NewLatest[int](rdb, "l", math.MaxInt, p)
		assert.ErrorContains(t, err, "must be at least 1 and at most 1048576")
		_, err = cache.NewLatest[int](rdb, "l{", 3, p)
		assert.ErrorContains(t, err, "must not contain")
		_, err = cache.NewCounter(rdb, "c}", nil, p)
		assert.ErrorContains(t, err, "must not contain")
		_, err = cache.NewGuard(rdb, "g", cache.WithPrefix("a{"))
		assert.ErrorContains(t, err, "prefix")
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
		_, err = g.Allow(ctx, "u", math.MaxInt64)
		assert.ErrorContains(t, err, "at most")

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
		_, err = top.Incr(ctx, "k", 1, math.Inf(1))
		assert.ErrorContains(t, err, "must be finite")
		assert.ErrorContains(t, top.Add(ctx, "k", 1, math.NaN()), "must be finite")
		_, err = top.Range(ctx, "k", math.MaxInt)
		assert.ErrorContains(t, err, "at most 1048576")

		bt := cache.NewBatch(rdb)
		r1 := c.Read(bt, "", nil)
		r2 := top.Read(bt, "k", -1)
		r3 := top.Read(bt, "k", math.MaxInt)
		err = bt.Exec(ctx)
		assert.ErrorContains(t, err, "key: empty")
		assert.ErrorContains(t, err, "n -1")
		_, _, err = r3.Value()
		assert.ErrorContains(t, err, "at most 1048576")
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

// rawCodec stores strings as they are.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return []byte(v.(string)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*string) = string(data)
	return nil
}

// Inputs that the data, not the call, make wrong: a sum beyond int64, an
// encoding that would read as a lease marker. Keys may hold anything,
// braces included: every key of an entry keeps one hash tag.
func TestBadInput_values(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := cache.WithPrefix(b.Prefix)

		plain, err := cache.NewCounter(b.Client, "views", nil, p)
		require.NoError(t, err)
		count := key(b, "views", "k", "count")
		require.NoError(t, b.Client.Set(ctx, count, math.MaxInt64-1, 0).Err())
		_, err = plain.Incr(ctx, "k", 5)
		assert.ErrorIs(t, err, cache.ErrOverflow)
		n, err := plain.Incr(ctx, "k", 1)
		require.NoError(t, err)
		assert.Equal(t, int64(math.MaxInt64), n, "exact beyond 2^53")
		n, err = plain.Incr(ctx, "k", -2)
		require.NoError(t, err)
		assert.Equal(t, int64(math.MaxInt64-2), n)

		restoring, err := cache.NewCounter(b.Client, "restored", func(context.Context, string) (int64, error) {
			return math.MaxInt64, nil
		}, p)
		require.NoError(t, err)
		_, err = restoring.Incr(ctx, "k", 1)
		assert.ErrorIs(t, err, cache.ErrOverflow)
		assert.Empty(t, dataKeys(b, key(b, "restored", "k", "*")), "nothing written, lease given back")
		n, err = restoring.Get(ctx, "k")
		require.NoError(t, err)
		assert.Equal(t, int64(math.MaxInt64), n)

		raw, err := cache.New[string](b.Client, "raw", p, cache.WithCodec(rawCodec{}))
		require.NoError(t, err)
		marker := cache.MarkerForTest("x", false)
		assert.ErrorContains(t, raw.Set(ctx, "k", marker), "marks a lease")
		_, err = raw.Get(ctx, "k", func(context.Context) (string, error) { return marker, nil })
		assert.ErrorContains(t, err, "marks a lease")
		assert.Empty(t, b.Keys(key(b, "raw", "k", "*")))

		c := newCache[string](t, b.Client, b)
		for _, k := range []string{"a}b", "{x}", "}{", "a:b}:val"} {
			v, err := c.Get(ctx, k, func(context.Context) (string, error) { return "loaded " + k, nil })
			require.NoError(t, err, k)
			assert.Equal(t, "loaded "+k, v)
			v, err = c.Get(ctx, k, func(context.Context) (string, error) { return "again", nil })
			require.NoError(t, err, k)
			assert.Equal(t, "loaded "+k, v, "a hit")
			require.NoError(t, c.Set(ctx, k, "set"))
			require.NoError(t, c.Delete(ctx, k))
			_, err = plain.Incr(ctx, k, 1)
			require.NoError(t, err, k)
		}
	})
}
