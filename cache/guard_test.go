package cache_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// The blog's password reset: one email per user per window.
func TestGuard_Allow(t *testing.T) {
	t.Parallel() // waits out TTLs on the real servers
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g, err := cache.NewGuard(b.Client, "password-reset", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		const window = 300 * time.Millisecond
		_, err = g.Allow(ctx, "warm-up", window) // a first connection on Cluster
		require.NoError(t, err)
		var ok bool
		rt, _ := b.Count.Delta(func() { ok, err = g.Allow(ctx, "user1", window) })
		require.NoError(t, err)
		assert.True(t, ok, "first request")
		assert.Equal(t, int64(1), rt)
		ok, err = g.Allow(ctx, "user1", window)
		require.NoError(t, err)
		assert.False(t, ok, "second request within the window")
		ok, err = g.Allow(ctx, "user2", window)
		require.NoError(t, err)
		assert.True(t, ok, "another user")

		b.FastForward(window + 100*time.Millisecond)
		ok, err = g.Allow(ctx, "user1", window)
		require.NoError(t, err)
		assert.True(t, ok, "after the window")
		ok, err = g.Allow(ctx, "user1", window)
		require.NoError(t, err)
		assert.False(t, ok)
	})
}
