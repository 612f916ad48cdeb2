package cache_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
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
		// A refusal that takes the window or longer is an unknown outcome
		// (see Allow): a second leaves room for a slow machine.
		const window = time.Second
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

// A call whose SET ran but whose reply was lost, re-sent after its window
// ended and after another call took the key: the re-send reads the other
// call's nonce. The call did get through, so it must not answer false: its
// outcome is unknown.
func TestGuard_Allow_resentAfterWindow(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		// The re-send needs a new connection (the proxy cut the first one and
		// the pool holds one): its dial is held until the test lets it go.
		var armed atomic.Bool
		redialing, redial := make(chan struct{}), make(chan struct{})
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.PoolSize, o.DialTimeout = 1, time.Minute
			dial := o.Dialer
			o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				if armed.CompareAndSwap(true, false) {
					close(redialing)
					select {
					case <-redial:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return dial(ctx, network, addr)
			}
		})
		a, err := cache.NewGuard(rdb, "reset", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		other, err := cache.NewGuard(b.Client, "reset", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, a.Reset(ctx, "u")) // a's connection to the key's node

		const window = 50 * time.Millisecond
		armed.Store(true)
		f.LoseReply(1, redistest.Commands("set"))
		type answer struct {
			ok  bool
			err error
		}
		got := make(chan answer, 1)
		go func() {
			ok, err := a.Allow(ctx, "u", window)
			got <- answer{ok, err}
		}()
		recv(t, redialing, 20*time.Second, nil) // a's SET ran and its reply was lost
		require.Equal(t, int64(1), f.Lost())
		// Past the window (Redis expires a key once its ms clock is beyond
		// the key's end), on the server's clock and on this process's,
		// which Allow measures its reply's time on (miniredis's moves only
		// by FastForward).
		past := window + 10*time.Millisecond
		b.FastForward(past)
		if b.Mini != nil {
			time.Sleep(past)
		}
		ok, err := other.Allow(ctx, "u", time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "the window of a's call has ended")
		close(redial)
		ans := recv(t, got, 20*time.Second, nil)
		assert.False(t, ans.ok)
		assert.ErrorIs(t, ans.err, ria.ErrOutcomeUnknown, "a's call got through: it must not be refused")
	})
}
