package session_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
)

// Re-sends interleaved with other clients' writes: go-redis re-sends a
// script whose reply was lost, and another client may have written (and
// read) the same keys between the first run and the re-send. AddToCart,
// ClearCart and UpdateToken are once-scripts, so the re-send is answered
// from the record of the first run and does not undo what the other
// client did and observed (see the package doc's "Lost replies").

// An AddToCart whose reply is lost, then a checkout by another client
// (Cart, which sees the item, then ClearCart), then go-redis's re-send of
// the AddToCart: the re-send is answered from the record of the first run
// and does not put the checked-out item back into the cart.
func TestAddToCart_resendAfterObservedClear(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb)
		other := newStore(t, b, b.Client)
		require.NoError(t, s.AddToCart(ctx, "warm", "x", 1)) // script cached, one connection open

		var (
			seen              map[string]int
			cartErr, clearErr error
		)
		// No require in between: it runs on the proxy's goroutine.
		f.LoseReplyThen(redistest.Scripts, func() {
			seen, cartErr = other.Cart(ctx, "tok") // the checkout reads the cart...
			if cartErr == nil {
				clearErr = other.ClearCart(ctx, "tok") // ...and empties it
			}
		})
		require.NoError(t, s.AddToCart(ctx, "tok", "book", 1))
		require.Equal(t, int64(1), f.Lost(), "the reply was lost and the call re-sent")
		require.NoError(t, cartErr)
		require.NoError(t, clearErr)
		require.Equal(t, map[string]int{"book": 1}, seen, "the checkout observed the AddToCart")

		cart, err := other.Cart(ctx, "tok")
		require.NoError(t, err)
		assert.Empty(t, cart, "the re-send must not put back an item a checkout that saw it has cleared")
	})
}

// An UpdateToken without an item whose reply is lost, then a Logout by
// another client that finds the session (existed == true), then
// go-redis's re-send of the UpdateToken: the re-send is answered from the
// record of the first run and does not log the token in again.
func TestUpdateToken_resendAfterLogout(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb)
		other := newStore(t, b, b.Client)
		require.NoError(t, s.UpdateToken(ctx, "warm", "u", "")) // script cached

		var (
			existed   bool
			logoutErr error
		)
		// No require in between: it runs on the proxy's goroutine.
		f.LoseReplyThen(redistest.Scripts, func() {
			existed, logoutErr = other.Logout(ctx, "tok")
		})
		require.NoError(t, s.UpdateToken(ctx, "tok", "alice", ""))
		require.Equal(t, int64(1), f.Lost(), "the reply was lost and the call re-sent")
		require.NoError(t, logoutErr)
		require.True(t, existed, "the Logout observed the session the UpdateToken created")

		user, ok, err := other.CheckToken(ctx, "tok")
		require.NoError(t, err)
		assert.False(t, ok, "the re-send must not log the token back in (as %q) after a Logout that ended it", user)
	})
}

// A ClearCart whose reply is lost, then another client's AddToCart (which
// it sees in the cart), then go-redis's re-send of the ClearCart: the
// re-send is answered from the record of the first run and does not
// delete the item added after the clear.
func TestClearCart_resendAfterObservedAdd(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb)
		other := newStore(t, b, b.Client)
		require.NoError(t, s.ClearCart(ctx, "warm")) // script cached
		require.NoError(t, other.AddToCart(ctx, "tok", "old", 1))

		var (
			seen            map[string]int
			addErr, cartErr error
		)
		// No require in between: it runs on the proxy's goroutine.
		f.LoseReplyThen(redistest.Scripts, func() {
			addErr = other.AddToCart(ctx, "tok", "new", 2)
			if addErr == nil {
				seen, cartErr = other.Cart(ctx, "tok")
			}
		})
		require.NoError(t, s.ClearCart(ctx, "tok"))
		require.Equal(t, int64(1), f.Lost(), "the reply was lost and the call re-sent")
		require.NoError(t, addErr)
		require.NoError(t, cartErr)
		require.Equal(t, map[string]int{"new": 2}, seen, "the ClearCart ran before the add, which was observed")

		cart, err := other.Cart(ctx, "tok")
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"new": 2}, cart, "the re-send must not delete an item added (and seen) after the clear")
	})
}
