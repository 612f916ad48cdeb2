package cache_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

type view struct {
	Job  int    `json:"job"`
	User string `json:"user"`
}

// The blog's "latest 3 job views": pushed and trimmed in one round trip.
func TestLatest(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l, err := cache.NewLatest[view](b.Client, "views", 3, cache.WithPrefix(b.Prefix), cache.WithTTL(time.Hour))
		require.NoError(t, err)
		// A first connection on Cluster, and the script cached on the server.
		require.NoError(t, l.Push(ctx, "site", view{Job: -1}))
		for i := range 10 {
			var rt int64
			rt, _ = b.Count.Delta(func() { err = l.Push(ctx, "site", view{Job: i, User: "u"}) })
			require.NoError(t, err)
			assert.Equal(t, int64(1), rt, "push")
		}
		var got []view
		rt, _ := b.Count.Delta(func() { got, err = l.List(ctx, "site") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "list")
		assert.Equal(t, []view{{9, "u"}, {8, "u"}, {7, "u"}}, got, "newest first, trimmed to 3")
		n, err := b.Client.LLen(ctx, key(b, "views", "site", "latest")).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(3), n, "trimmed in Redis")
		pttl, err := b.Client.PTTL(ctx, key(b, "views", "site", "latest")).Result()
		require.NoError(t, err)
		assert.Greater(t, pttl, 59*time.Minute)

		require.NoError(t, l.Push(ctx, "site", view{Job: 10}, view{Job: 11}))
		got, err = l.List(ctx, "site")
		require.NoError(t, err)
		assert.Equal(t, []int{11, 10, 9}, []int{got[0].Job, got[1].Job, got[2].Job}, "the last pushed is newest")

		got, err = l.List(ctx, "nobody")
		require.NoError(t, err)
		assert.Empty(t, got)

		require.NoError(t, b.Client.LPush(ctx, key(b, "views", "site", "latest"), "garbage").Err())
		_, err = l.List(ctx, "site")
		assert.ErrorIs(t, err, cache.ErrDecode)
	})
}

// The blog's "top jobs by views", typed.
func TestTop(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		top, err := cache.NewTop[int](b.Client, "jobs", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		// A first connection on Cluster, and the scripts cached on the server.
		require.NoError(t, top.Add(ctx, "site", -1, 0))
		_, err = top.Incr(ctx, "site", -1, 0)
		require.NoError(t, err)
		// The blog's views: 0..9 once, 2..4 again, 4..5 again.
		for _, r := range [][2]int{{0, 10}, {2, 5}, {4, 6}} {
			for job := r[0]; job < r[1]; job++ {
				var rt int64
				rt, _ = b.Count.Delta(func() { _, err = top.Incr(ctx, "site", job, 1) })
				require.NoError(t, err)
				assert.Equal(t, int64(1), rt)
			}
		}
		var got []cache.Ranked[int]
		rt, _ := b.Count.Delta(func() { got, err = top.Range(ctx, "site", 4) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt)
		assert.Equal(t, []cache.Ranked[int]{{4, 3}, {5, 2}, {3, 2}, {2, 2}}, got,
			"highest score first; ties: the encoded member that sorts last first")

		score, err := top.Incr(ctx, "site", 7, 2.5)
		require.NoError(t, err)
		assert.Equal(t, 3.5, score)
		rt, _ = b.Count.Delta(func() { err = top.Add(ctx, "site", 9, 100) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "add")
		got, err = top.Range(ctx, "site", 2)
		require.NoError(t, err)
		assert.Equal(t, []cache.Ranked[int]{{9, 100}, {7, 3.5}}, got)

		withTTL, err := cache.NewTop[string](b.Client, "tagged", cache.WithPrefix(b.Prefix), cache.WithTTL(time.Hour))
		require.NoError(t, err)
		_, err = withTTL.Incr(ctx, "site", "warm-up", 0)
		require.NoError(t, err)
		rt, _ = b.Count.Delta(func() { _, err = withTTL.Incr(ctx, "site", "go", 1) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "ZINCRBY and PEXPIRE in one script")
		pttl, err := b.Client.PTTL(ctx, key(b, "tagged", "site", "top")).Result()
		require.NoError(t, err)
		assert.Greater(t, pttl, 59*time.Minute)
	})
}
