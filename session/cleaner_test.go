package session_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// The book's test_clean_full_sessions: with a limit of 0, every session
// goes with its login, its viewed items and its cart.
func TestCleaner_Clean_limitZero(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		for i := range 5 {
			tok := fmt.Sprintf("tok-%d", i)
			require.NoError(t, s.UpdateToken(ctx, tok, fmt.Sprintf("user-%d", i), "itemX"))
			require.NoError(t, s.AddToCart(ctx, tok, "itemY", 3))
		}
		require.NoError(t, s.AddToCart(ctx, "anonymous", "itemZ", 1)) // a cart without a login
		require.Len(t, b.Keys(""), 3+2*5+1, "login, recent, views, 5 viewed, 5+1 carts")

		c, err := s.Cleaner(0)
		require.NoError(t, err)
		n, err := c.Clean(ctx)
		require.NoError(t, err)
		assert.Equal(t, 6, n)

		for i := range 5 {
			_, ok, err := s.CheckToken(ctx, fmt.Sprintf("tok-%d", i))
			require.NoError(t, err)
			assert.False(t, ok, "login of tok-%d deleted", i)
		}
		left, err := s.Sessions(ctx)
		require.NoError(t, err)
		assert.Zero(t, left)
		assert.Equal(t, []string{key(b, "views")}, b.Keys(""),
			"only the app's view ranking is left: no login, recent, viewed or cart key")

		n, err = c.Clean(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "nothing left to clean")
	})
}

// The oldest sessions go first, in batches, and the newest stay whole.
func TestCleaner_Clean_keepsNewest(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		for i := range 6 {
			tok := fmt.Sprintf("tok-%d", i)
			require.NoError(t, s.UpdateToken(ctx, tok, "u", "item"))
			require.NoError(t, s.AddToCart(ctx, tok, "item", 1))
			b.FastForward(time.Millisecond) // distinct server times
		}
		alive := func() []string {
			var out []string
			for i := range 6 {
				tok := fmt.Sprintf("tok-%d", i)
				_, ok, err := s.CheckToken(ctx, tok)
				require.NoError(t, err)
				if ok {
					out = append(out, tok)
				}
			}
			return out
		}

		c, err := s.Cleaner(4, session.WithBatch(2))
		require.NoError(t, err)
		n, err := c.Clean(ctx) // also caches the script
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		assert.Equal(t, []string{"tok-2", "tok-3", "tok-4", "tok-5"}, alive())

		c, err = s.Cleaner(1, session.WithBatch(2))
		require.NoError(t, err)
		rt, _ := b.Count.Delta(func() {
			n, err = c.Clean(ctx)
			require.NoError(t, err)
		})
		assert.Equal(t, 3, n)
		assert.Equal(t, int64(4), rt, "two batches of two round trips")
		assert.Equal(t, []string{"tok-5"}, alive())
		viewed, err := s.Viewed(ctx, "tok-5")
		require.NoError(t, err)
		assert.Equal(t, []string{"item"}, viewed)
		cart, err := s.Cart(ctx, "tok-5")
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"item": 1}, cart)
		for _, tok := range []string{"tok-0", "tok-2", "tok-4"} {
			assert.Zero(t, b.Client.Exists(ctx, key(b, "viewed:"+tok), key(b, "cart:"+tok)).Val(), tok)
		}

		rt, _ = b.Count.Delta(func() {
			n, err = c.Clean(ctx)
			require.NoError(t, err)
		})
		assert.Zero(t, n)
		assert.Equal(t, int64(1), rt, "at the limit: one read")
	})
}

// refresher is a hook that, once armed, sees a session again right after
// the cleaner has read its candidates (a pipeline with ZRANGE; connection
// setup pipelines do not count) and before it deletes them.
type refresher struct {
	armed atomic.Bool
	fn    func()
}

func (h *refresher) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *refresher) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *refresher) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "zrange" }) &&
			h.armed.CompareAndSwap(true, false) {
			h.fn()
		}
		return err
	}
}

// A session seen again between the cleaner's read and its delete survives,
// and the next oldest goes instead (the book would delete the session in
// use and keep an idle one).
func TestCleaner_Clean_seenAgain(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		for i := range 3 {
			require.NoError(t, s.UpdateToken(ctx, fmt.Sprintf("tok-%d", i), "u", "item"))
			b.FastForward(time.Millisecond)
		}
		rdb, _ := b.NewClient() // our own client: we may add a hook
		h := &refresher{fn: func() {
			b.FastForward(time.Millisecond) // a later server time
			assert.NoError(t, s.UpdateToken(ctx, "tok-0", "u", "other"))
		}}
		rdb.AddHook(h)
		c, err := newStore(t, b, rdb).Cleaner(1)
		require.NoError(t, err)

		h.armed.Store(true) // candidates tok-0 and tok-1; tok-0 is seen again
		n, err := c.Clean(ctx)
		require.NoError(t, err)
		assert.False(t, h.armed.Load(), "the hook ran")
		assert.Equal(t, 2, n, "tok-1, then tok-2 deleted")
		left, err := s.Sessions(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), left)
		user, ok, err := s.CheckToken(ctx, "tok-0")
		require.NoError(t, err)
		assert.True(t, ok, "the session seen again survives")
		assert.Equal(t, "u", user)
		viewed, err := s.Viewed(ctx, "tok-0")
		require.NoError(t, err)
		assert.Equal(t, []string{"other", "item"}, viewed, "with its viewed items")
		for _, tok := range []string{"tok-1", "tok-2"} {
			_, ok, err := s.CheckToken(ctx, tok)
			require.NoError(t, err)
			assert.False(t, ok, tok)
		}
	})
}
