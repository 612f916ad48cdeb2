package session_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// The book's test_clean_full_sessions (which sets the limit to 0; here
// the limit is at least 1): every session but the newest goes with its
// login, its viewed items and its cart.
func TestCleaner_Clean_limitOne(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		require.NoError(t, s.AddToCart(ctx, "anonymous", "itemZ", 1)) // a cart without a login
		for i := range 5 {
			b.FastForward(time.Millisecond) // distinct server times
			tok := fmt.Sprintf("tok-%d", i)
			require.NoError(t, s.UpdateToken(ctx, tok, fmt.Sprintf("user-%d", i), "itemX"))
			require.NoError(t, s.AddToCart(ctx, tok, "itemY", 3))
		}
		require.Len(t, dataKeys(b), 3+2*5+1, "login, recent, views, 5 viewed, 5+1 carts")

		_, err := s.Cleaner(0)
		require.ErrorIs(t, err, session.ErrInvalid, "a Cleaner never deletes every session")
		c, err := s.Cleaner(1)
		require.NoError(t, err)
		n, err := c.Clean(ctx)
		require.NoError(t, err)
		assert.Equal(t, 5, n)

		for i := range 4 {
			_, ok, err := s.CheckToken(ctx, fmt.Sprintf("tok-%d", i))
			require.NoError(t, err)
			assert.False(t, ok, "login of tok-%d deleted", i)
		}
		user, ok, err := s.CheckToken(ctx, "tok-4")
		require.NoError(t, err)
		assert.True(t, ok, "the newest session stays")
		assert.Equal(t, "user-4", user)
		left, err := s.Sessions(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), left)
		assert.Equal(t, []string{key(b, "cart:tok-4"), key(b, "login"), key(b, "recent"), key(b, "viewed:tok-4"), key(b, "views")},
			dataKeys(b), "no login, recent, viewed or cart key of a deleted session is left")

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
		assert.Equal(t, int64(2), rt, "two batches of one round trip")
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

// Several cleaners on several clients at once delete exactly the sessions
// over the limit, the oldest, and never one more: each batch reads and
// deletes its candidates in one atomic step.
func TestCleaner_Clean_concurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const (
			sessions = 60
			limit    = 10
			cleaners = 4
		)
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		for i := range sessions {
			b.FastForward(time.Millisecond) // distinct server times
			tok := fmt.Sprintf("tok-%02d", i)
			require.NoError(t, s.UpdateToken(ctx, tok, "u", "item"))
			require.NoError(t, s.AddToCart(ctx, tok, "item", 1))
		}
		var deleted atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, cleaners)
		start := make(chan struct{})
		for range cleaners {
			rdb, _ := b.NewClient()
			c, err := newStore(t, b, rdb).Cleaner(limit, session.WithBatch(3))
			require.NoError(t, err)
			wg.Go(func() {
				<-start
				n, err := c.Clean(ctx)
				if err != nil {
					errs <- err
				}
				deleted.Add(int64(n))
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		assert.Equal(t, int64(sessions-limit), deleted.Load(), "the counts add up to what was deleted")
		left, err := s.Sessions(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(limit), left)
		for i := range sessions {
			tok := fmt.Sprintf("tok-%02d", i)
			_, ok, err := s.CheckToken(ctx, tok)
			require.NoError(t, err)
			assert.Equal(t, i >= sessions-limit, ok, "%s: the newest stay", tok)
			assert.Equal(t, b.Client.Exists(ctx, key(b, "viewed:"+tok), key(b, "cart:"+tok)).Val() == 2, ok, tok)
		}
	})
}

// The book's clean_sessions: with WithKeepCarts every session but the
// newest goes with its login and viewed items, and its cart stays,
// readable by the old token.
func TestCleaner_Clean_keepCarts(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		for i := range 4 {
			b.FastForward(time.Millisecond) // distinct server times
			tok := fmt.Sprintf("tok-%d", i)
			require.NoError(t, s.UpdateToken(ctx, tok, fmt.Sprintf("user-%d", i), "itemX"))
			require.NoError(t, s.AddToCart(ctx, tok, "itemY", i+1))
		}
		c, err := s.Cleaner(1, session.WithKeepCarts())
		require.NoError(t, err)
		n, err := c.Clean(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		for i := range 4 {
			_, ok, err := s.CheckToken(ctx, fmt.Sprintf("tok-%d", i))
			require.NoError(t, err)
			assert.Equal(t, i == 3, ok, "login of tok-%d", i)
			cart, err := s.Cart(ctx, fmt.Sprintf("tok-%d", i))
			require.NoError(t, err)
			assert.Equal(t, map[string]int{"itemY": i + 1}, cart, "cart of tok-%d kept", i)
		}
		assert.Equal(t, []string{key(b, "cart:tok-0"), key(b, "cart:tok-1"), key(b, "cart:tok-2"), key(b, "cart:tok-3"),
			key(b, "login"), key(b, "recent"), key(b, "viewed:tok-3"), key(b, "views")}, dataKeys(b))
	})
}
