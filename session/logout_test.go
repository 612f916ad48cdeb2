package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// Logout ends one session whole (login, recent entry, viewed items, cart)
// and leaves the others and the view ranking alone; a second Logout
// answers false.
func TestStore_Logout(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		for _, tok := range []string{"tok", "tok2"} {
			require.NoError(t, s.UpdateToken(ctx, tok, "user-"+tok, "item-1"))
			require.NoError(t, s.AddToCart(ctx, tok, "book", 2))
		}

		existed, err := s.Logout(ctx, "tok")
		require.NoError(t, err)
		assert.True(t, existed)
		_, ok, err := s.CheckToken(ctx, "tok")
		require.NoError(t, err)
		assert.False(t, ok, "the token no longer resolves")
		viewed, err := s.Viewed(ctx, "tok")
		require.NoError(t, err)
		assert.Empty(t, viewed)
		cart, err := s.Cart(ctx, "tok")
		require.NoError(t, err)
		assert.Empty(t, cart)
		assert.Zero(t, b.Client.Exists(ctx, key(b, "viewed:tok"), key(b, "cart:tok")).Val())
		n, err := s.Sessions(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "the recent entry went too")

		// The other session is untouched; the ranking keeps the views.
		user, ok, err := s.CheckToken(ctx, "tok2")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "user-tok2", user)
		viewed, err = s.Viewed(ctx, "tok2")
		require.NoError(t, err)
		assert.Equal(t, []string{"item-1"}, viewed)
		cart, err = s.Cart(ctx, "tok2")
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"book": 2}, cart)
		assert.Equal(t, int64(2), viewsOf(t, b, "item-1"))

		// Again, and a token never seen: false, and nothing changes but
		// the calls' reply records.
		before := dataSnapshot(b)
		for _, tok := range []string{"tok", "never"} {
			existed, err = s.Logout(ctx, tok)
			require.NoError(t, err)
			assert.False(t, existed, tok)
		}
		assert.Equal(t, before, dataSnapshot(b))

		// An anonymous session (a cart, no login) exists, and ends.
		require.NoError(t, s.AddToCart(ctx, "anon", "pen", 1))
		existed, err = s.Logout(ctx, "anon")
		require.NoError(t, err)
		assert.True(t, existed, "an anonymous session with a cart")
		cart, err = s.Cart(ctx, "anon")
		require.NoError(t, err)
		assert.Empty(t, cart)
		// A login without a recent entry (half of a session) exists too.
		require.NoError(t, b.Client.HSet(ctx, key(b, "login"), "half", "u").Err())
		existed, err = s.Logout(ctx, "half")
		require.NoError(t, err)
		assert.True(t, existed, "a login entry alone")

		assert.Equal(t, []string{key(b, "cart:tok2"), key(b, "login"), key(b, "recent"), key(b, "viewed:tok2"), key(b, "views")},
			dataKeys(b), "no key of an ended session is left")
	})
}

// A cart that a Cleaner kept (WithKeepCarts) outlives its session: Logout
// of its token answers false (the session had ended) and deletes the cart.
func TestStore_Logout_keptCart(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		require.NoError(t, s.UpdateToken(ctx, "old", "alice", "item"))
		require.NoError(t, s.AddToCart(ctx, "old", "book", 1))
		b.FastForward(time.Millisecond) // distinct server times
		require.NoError(t, s.UpdateToken(ctx, "new", "bob", "item"))
		c, err := s.Cleaner(1, session.WithKeepCarts())
		require.NoError(t, err)
		n, err := c.Clean(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		cart, err := s.Cart(ctx, "old")
		require.NoError(t, err)
		require.Equal(t, map[string]int{"book": 1}, cart, "the Cleaner kept the cart")

		existed, err := s.Logout(ctx, "old")
		require.NoError(t, err)
		assert.False(t, existed, "the Cleaner had ended the session")
		cart, err = s.Cart(ctx, "old")
		require.NoError(t, err)
		assert.Empty(t, cart, "the kept cart is deleted all the same")
		_, ok, err := s.CheckToken(ctx, "new")
		require.NoError(t, err)
		assert.True(t, ok)
	})
}

// ClearCart empties one cart and leaves the session (its login, its
// recent entry, its views) and the other carts alone.
func TestStore_ClearCart(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		for _, tok := range []string{"tok", "tok2"} {
			require.NoError(t, s.UpdateToken(ctx, tok, "user-"+tok, "item-1"))
			require.NoError(t, s.AddToCart(ctx, tok, "book", 2))
			require.NoError(t, s.AddToCart(ctx, tok, "pen", 1))
		}

		require.NoError(t, s.ClearCart(ctx, "tok"))
		cart, err := s.Cart(ctx, "tok")
		require.NoError(t, err)
		assert.Empty(t, cart)
		assert.Zero(t, b.Client.Exists(ctx, key(b, "cart:tok")).Val())
		user, ok, err := s.CheckToken(ctx, "tok")
		require.NoError(t, err)
		assert.True(t, ok, "still logged in")
		assert.Equal(t, "user-tok", user)
		viewed, err := s.Viewed(ctx, "tok")
		require.NoError(t, err)
		assert.Equal(t, []string{"item-1"}, viewed)
		n, err := s.Sessions(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)
		cart, err = s.Cart(ctx, "tok2")
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"book": 2, "pen": 1}, cart)

		// Again, and a cart never filled: no error, nothing changes.
		before := dataSnapshot(b)
		require.NoError(t, s.ClearCart(ctx, "tok"))
		require.NoError(t, s.ClearCart(ctx, "never"))
		assert.Equal(t, before, dataSnapshot(b))

		// The cart fills again.
		require.NoError(t, s.AddToCart(ctx, "tok", "pen", 3))
		cart, err = s.Cart(ctx, "tok")
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"pen": 3}, cart)
	})
}

// dataSnapshot returns b.Snapshot() but for the reply records of
// once-scripts (see dataKeys).
func dataSnapshot(b *redistest.Backend) map[string]string {
	snap := b.Snapshot()
	for k := range snap {
		if strings.Contains(k, "}:once:") {
			delete(snap, k)
		}
	}
	return snap
}
