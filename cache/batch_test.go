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

type session struct {
	User string `json:"user"`
}

// The blog's get_cache: a session, job view counters, the latest views and
// the top jobs, of different kinds and types, in one round trip.
func TestBatch(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		opt := cache.WithPrefix(b.Prefix)
		sessions, err := cache.New[session](b.Client, "sessions", opt)
		require.NoError(t, err)
		d := newDB(t, map[string]int64{"1": 10, "2": 20, "3": 30})
		views, err := cache.NewCounter(b.Client, "views", d.restore, opt)
		require.NoError(t, err)
		latest, err := cache.NewLatest[int](b.Client, "latest", 3, opt)
		require.NoError(t, err)
		top, err := cache.NewTop[int](b.Client, "top", opt)
		require.NoError(t, err)

		require.NoError(t, sessions.Set(ctx, "u1", session{User: "ann"}))
		for _, job := range []string{"1", "2", "3"} {
			_, err := views.Incr(ctx, job, 1)
			require.NoError(t, err)
		}
		require.NoError(t, latest.Push(ctx, "site", 1, 2, 3))
		_, err = top.Incr(ctx, "site", 3, 31)
		require.NoError(t, err)
		_, err = top.Incr(ctx, "site", 2, 21)
		require.NoError(t, err)

		bt := cache.NewBatch(b.Client)
		sess := sessions.Read(bt, "u1", nil)
		nobody := sessions.Read(bt, "u2", nil)
		counts := []*cache.Result[int64]{views.Read(bt, "1"), views.Read(bt, "2"), views.Read(bt, "3")}
		last := latest.Read(bt, "site")
		best := top.Read(bt, "site", 1)
		_, _, err = sess.Value()
		assert.ErrorIs(t, err, cache.ErrNotExecuted)
		assert.Equal(t, 7, bt.Len())

		// On Cluster go-redis splits the pipeline by node and sends the parts
		// in parallel: one round trip per node that holds some of the keys.
		rt, cmds := b.Count.Delta(func() { err = bt.Exec(ctx) })
		require.NoError(t, err)
		want := nodes(t, b, key(b, "sessions", "u1", "val"), key(b, "sessions", "u2", "val"),
			key(b, "views", "1", "count"), key(b, "views", "2", "count"), key(b, "views", "3", "count"),
			key(b, "latest", "site", "latest"), key(b, "top", "site", "top"))
		if !b.Real() || b.Kind == redistest.Standalone {
			require.Equal(t, int64(1), want)
		}
		assert.Equal(t, want, rt, "one round trip (per node)")
		assert.Equal(t, int64(7), cmds)
		t.Logf("%d round trips", rt)

		s, ok, err := sess.Value()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "ann", s.User)
		_, ok, err = nobody.Value()
		require.NoError(t, err)
		assert.False(t, ok, "no loader: a miss stays a miss")
		for i, want := range []int64{11, 21, 31} {
			n, ok, err := counts[i].Value()
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, want, n)
		}
		l, ok, err := last.Value()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, []int{3, 2, 1}, l)
		r, ok, err := best.Value()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, []cache.Ranked[int]{{3, 31}}, r)
		assert.ErrorContains(t, bt.Exec(ctx), "executed already")
	})
}

// Missing items are completed by their own paths: a counter is restored, an
// entry with a loader is loaded (once, with stampede protection).
func TestBatch_fillsMisses(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		opt := cache.WithPrefix(b.Prefix)
		sessions, err := cache.New[session](b.Client, "sessions", opt)
		require.NoError(t, err)
		d := newDB(t, map[string]int64{"9": 90})
		views, err := cache.NewCounter(b.Client, "views", d.restore, opt)
		require.NoError(t, err)
		plain, err := cache.NewCounter(b.Client, "plain", nil, opt)
		require.NoError(t, err)

		bt := cache.NewBatch(b.Client)
		sess := sessions.Read(bt, "u1", func(context.Context) (session, error) { return session{User: "bob"}, nil })
		count := views.Read(bt, "9")
		zero := plain.Read(bt, "9")
		require.NoError(t, bt.Exec(ctx))

		s, ok, err := sess.Value()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "bob", s.User)
		n, ok, err := count.Value()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, int64(90), n, "restored")
		assert.Equal(t, int64(1), d.restores.Load())
		n, ok, err = zero.Value()
		require.NoError(t, err)
		assert.False(t, ok, "no restore function: missing")
		assert.Zero(t, n)
		assert.Equal(t, `{"user":"bob"}`, raw(t, b, key(b, "sessions", "u1", "val")), "stored")
	})
}

// An entry due for refresh is returned and refreshed in the background.
func TestBatch_refreshAhead(t *testing.T) {
	t.Parallel() // waits out TTLs on the real servers
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b, cache.WithTTL(3*time.Second), cache.WithRefreshAhead(2500*time.Millisecond))
		l := newGatedLoader(t)
		_, err := c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		b.FastForward(time.Second)
		bt := cache.NewBatch(b.Client)
		r := c.Read(bt, "k", l.load)
		require.NoError(t, bt.Exec(ctx))
		v, ok, err := r.Value()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "v1", v)
		c.Wait()
		assert.Equal(t, int64(2), l.calls.Load())
		assert.Equal(t, `"v2"`, raw(t, b, key(b, "jobs", "k", "val")))
	})
}

// nodes returns the number of servers that hold keys: 1 but on Cluster.
func nodes(t *testing.T, b *redistest.Backend, keys ...string) int64 {
	t.Helper()
	cc, ok := b.Client.(*redis.ClusterClient)
	if !ok {
		return 1
	}
	addrs := map[string]bool{}
	for _, k := range keys {
		n, err := cc.MasterForKey(t.Context(), k)
		require.NoError(t, err)
		addrs[n.Options().Addr] = true
	}
	return int64(len(addrs))
}

// A loader that panics in Exec's completions gives its lease back, the
// other items complete, and the panic reaches Exec's caller (as it would
// Get's) instead of killing the process.
func TestBatch_loaderPanics(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b, cache.WithLease(time.Minute))
		d := newDB(t, map[string]int64{"9": 90})
		views := newCounter(t, b.Client, b, d.restore)
		bt := cache.NewBatch(b.Client)
		c.Read(bt, "bad", func(context.Context) (string, error) { panic("loader bug") })
		good := c.Read(bt, "good", func(context.Context) (string, error) { return "ok", nil })
		count := views.Read(bt, "9")
		assert.PanicsWithValue(t, "loader bug", func() { _ = bt.Exec(ctx) })

		v, ok, err := good.Value()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "ok", v)
		n, ok, err := count.Value()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, int64(90), n)
		assert.Empty(t, b.Keys(key(b, "jobs", "bad", "*")), "lease given back")
	})
}
