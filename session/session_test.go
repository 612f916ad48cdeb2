package session_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

func TestStore_UpdateToken_CheckToken(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)

		user, ok, err := s.CheckToken(ctx, "tok")
		require.NoError(t, err)
		assert.False(t, ok, "unknown token")
		assert.Empty(t, user)

		require.NoError(t, s.UpdateToken(ctx, "tok", "alice", "item-1"))
		user, ok, err = s.CheckToken(ctx, "tok")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "alice", user)

		// Another process sees it; no item records no view.
		other, _ := b.NewClient()
		require.NoError(t, newStore(t, b, other).UpdateToken(ctx, "tok2", "bob", ""))
		user, ok, err = s.CheckToken(ctx, "tok2")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "bob", user)
		viewed, err := s.Viewed(ctx, "tok2")
		require.NoError(t, err)
		assert.Empty(t, viewed)
		n, err := s.Sessions(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)

		viewed, err = s.Viewed(ctx, "tok")
		require.NoError(t, err)
		assert.Equal(t, []string{"item-1"}, viewed)
	})
}

// The session keeps its 25 newest views, newest first, even on a server
// whose clock does not move (miniredis's TIME is frozen by the harness).
func TestStore_UpdateToken_viewedTrimmed(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		for i := range 30 {
			require.NoError(t, s.UpdateToken(ctx, "tok", "alice", fmt.Sprintf("item-%d", i)))
		}
		var want []string
		for i := 29; i >= 5; i-- {
			want = append(want, fmt.Sprintf("item-%d", i))
		}
		viewed, err := s.Viewed(ctx, "tok")
		require.NoError(t, err)
		assert.Equal(t, want, viewed)
		assert.Equal(t, int64(session.ViewedLimit), b.Client.ZCard(ctx, key(b, "viewed:tok")).Val())

		// Viewing an older item again makes it the newest; the ranking
		// counts both views (ZINCRBY -1: lower is more viewed).
		require.NoError(t, s.UpdateToken(ctx, "tok", "alice", "item-10"))
		viewed, err = s.Viewed(ctx, "tok")
		require.NoError(t, err)
		assert.Equal(t, "item-10", viewed[0])
		assert.Len(t, viewed, session.ViewedLimit)
		assert.Equal(t, -2.0, b.Client.ZScore(ctx, key(b, "views"), "item-10").Val())
		assert.Equal(t, -1.0, b.Client.ZScore(ctx, key(b, "views"), "item-0").Val(),
			"a view trimmed from the session still counts in the ranking")
		assert.Equal(t, int64(30), b.Client.ZCard(ctx, key(b, "views")).Val())
	})
}

func TestStore_AddToCart(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)

		cart, err := s.Cart(ctx, "tok")
		require.NoError(t, err)
		assert.Empty(t, cart)

		require.NoError(t, s.AddToCart(ctx, "tok", "book", 2))
		require.NoError(t, s.AddToCart(ctx, "tok", "pen", 1))
		require.NoError(t, s.AddToCart(ctx, "tok", "book", 5)) // sets, not adds
		cart, err = s.Cart(ctx, "tok")
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"book": 5, "pen": 1}, cart)

		require.NoError(t, s.AddToCart(ctx, "tok", "pen", 0))
		cart, err = s.Cart(ctx, "tok")
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"book": 5}, cart, "count 0 removes the item")
		require.NoError(t, s.AddToCart(ctx, "tok", "absent", 0), "removing an absent item is fine")

		// An anonymous session's cart is tracked for the cleaner.
		n, err := s.Sessions(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)
		_, ok, err := s.CheckToken(ctx, "tok")
		require.NoError(t, err)
		assert.False(t, ok, "a cart is not a login")

		// A count that is not an integer (written by someone else).
		require.NoError(t, b.Client.HSet(ctx, key(b, "cart:tok"), "bad", "x").Err())
		_, err = s.Cart(ctx, "tok")
		assert.ErrorContains(t, err, `malformed count "x"`)
	})
}

// The keys and their types and TTLs are those doc.go documents.
func TestStore_keys(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		require.NoError(t, s.UpdateToken(ctx, "tok", "alice", "7"))
		require.NoError(t, s.AddToCart(ctx, "tok", "7", 1))
		_, err := s.CacheRequest(ctx, "/shop?item=7", func(_ context.Context, req string) (string, error) {
			return "page", nil
		})
		require.NoError(t, err)
		require.NoError(t, s.ScheduleRowCache(ctx, "r1", time.Minute))
		rc, err := s.RowCacher(func(context.Context, string) (any, error) { return 1, nil })
		require.NoError(t, err)
		_, err = rc.CacheDue(ctx)
		require.NoError(t, err)

		for part, typ := range map[string]string{
			"login": "hash", "recent": "zset", "viewed:tok": "zset", "cart:tok": "hash", "views": "zset",
			"page:" + sha256hex("/shop?item=7"): "string", "delay": "zset", "schedule": "zset", "row:r1": "string",
			"rowgen": "hash", "rowgen:last": "string",
		} {
			assert.Equal(t, typ, b.Client.Type(ctx, key(b, part)).Val(), part)
		}
		assert.Len(t, dataKeys(b), 11, "no other keys but reply records")
		for _, k := range b.Keys("") {
			if strings.Contains(k, "}:once:") {
				assert.Equal(t, "string", b.Client.Type(ctx, k).Val(), k)
				assert.Positive(t, b.Client.PTTL(ctx, k).Val(), "%s expires", k)
			}
		}
		// Set to the page TTL when the page was stored, a moment ago.
		ttl := b.Client.PTTL(ctx, key(b, "page:"+sha256hex("/shop?item=7"))).Val()
		assert.LessOrEqual(t, ttl, session.DefaultPageTTL)
		assert.Greater(t, ttl, session.DefaultPageTTL-time.Minute)
		for _, part := range []string{"login", "recent", "viewed:tok", "cart:tok", "views", "row:r1", "rowgen", "rowgen:last"} {
			assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, key(b, part)).Val(), part+" has no TTL")
		}
		assert.Equal(t, 60000.0, b.Client.ZScore(ctx, key(b, "delay"), "r1").Val(), "delay in ms")

		// Recent and viewed scores are server Unix µs: between the server's
		// times before and after the call.
		before := b.Client.Time(ctx).Val()
		require.NoError(t, s.UpdateToken(ctx, "tok", "alice", "8"))
		after := b.Client.Time(ctx).Val()
		seen := b.Client.ZScore(ctx, key(b, "recent"), "tok").Val()
		assert.GreaterOrEqual(t, seen, float64(before.UnixMicro()))
		assert.LessOrEqual(t, seen, float64(after.UnixMicro()))
		viewedAt := b.Client.ZScore(ctx, key(b, "viewed:tok"), "8").Val()
		assert.GreaterOrEqual(t, viewedAt, float64(before.UnixMicro()))
	})
}

func TestStore_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		// Warm up: the first call of each script may take two round trips
		// (EVALSHA answered by NOSCRIPT, then EVAL).
		require.NoError(t, s.UpdateToken(ctx, "tok", "alice", "7"))
		require.NoError(t, s.UpdateToken(ctx, "tok", "alice", ""))
		require.NoError(t, s.AddToCart(ctx, "tok", "7", 1))
		require.NoError(t, s.ScheduleRowCache(ctx, "r", -1))
		require.NoError(t, s.ClearCart(ctx, "warm"))
		_, err := s.Logout(ctx, "warm")
		require.NoError(t, err)

		for _, c := range []struct {
			op   string
			cmds int64
			fn   func()
		}{
			{"UpdateToken with item", 1, func() { require.NoError(t, s.UpdateToken(ctx, "tok", "alice", "8")) }},
			{"UpdateToken without item", 1, func() { require.NoError(t, s.UpdateToken(ctx, "tok", "alice", "")) }},
			{"CheckToken", 1, func() { _, _, err := s.CheckToken(ctx, "tok"); require.NoError(t, err) }},
			{"AddToCart", 1, func() { require.NoError(t, s.AddToCart(ctx, "tok", "8", 3)) }},
			{"AddToCart remove", 1, func() { require.NoError(t, s.AddToCart(ctx, "tok", "8", 0)) }},
			{"Cart", 1, func() { _, err := s.Cart(ctx, "tok"); require.NoError(t, err) }},
			{"Viewed", 1, func() { _, err := s.Viewed(ctx, "tok"); require.NoError(t, err) }},
			{"Sessions", 1, func() { _, err := s.Sessions(ctx); require.NoError(t, err) }},
			{"ScheduleRowCache", 1, func() { require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Second)) }},
			{"ScheduleRowCache stop", 1, func() { require.NoError(t, s.ScheduleRowCache(ctx, "r", -1)) }},
			{"Row", 1, func() { _, _, err := s.Row(ctx, "r"); require.NoError(t, err) }},
			{"ClearCart", 1, func() { require.NoError(t, s.ClearCart(ctx, "tok")) }},
			{"Logout", 1, func() {
				existed, err := s.Logout(ctx, "tok")
				require.NoError(t, err)
				require.True(t, existed)
			}},
			{"Logout again", 1, func() {
				existed, err := s.Logout(ctx, "tok")
				require.NoError(t, err)
				require.False(t, existed)
			}},
		} {
			rt, cmds := b.Count.Delta(c.fn)
			assert.Equal(t, int64(1), rt, c.op+" round trips")
			assert.Equal(t, c.cmds, cmds, c.op+" commands")
		}
	})
}
