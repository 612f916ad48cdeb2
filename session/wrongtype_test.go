package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// Every script-backed operation checks every key it relies on before its
// first write, the keys it builds from a prefix included: a key of another
// type makes it fail with a *ria.KeyError naming the key and its role, and
// changes nothing. The plain reads name such a key the same way.
func TestStore_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		kr := func(part, typ, role string) redistest.KeyRole {
			return redistest.KeyRole{Key: key(b, part), Type: typ, Role: role}
		}
		login := kr("login", "hash", "session logins")
		recent := kr("recent", "zset", "session recent")
		views := kr("views", "zset", "session view ranking")
		schedule := kr("schedule", "zset", "session row schedule")
		delay := kr("delay", "zset", "session row delays")
		row := kr("row:r", "string", "session row")
		gens := kr("rowgen", "hash", "session row generations")
		counter := kr("rowgen:last", "string", "session row generation counter")
		seen := func() {
			require.NoError(t, s.UpdateToken(ctx, "tok", "alice", "7"))
			require.NoError(t, s.AddToCart(ctx, "tok", "7", 1))
		}

		t.Run("UpdateToken", func(t *testing.T) {
			for _, item := range []string{"7", ""} {
				b.CheckWrongTypes(t, seen, func() error { return s.UpdateToken(ctx, "tok", "bob", item) },
					login, recent, kr("viewed:tok", "zset", "session viewed items"), views)
			}
			// The case: the failed call leaves no login behind.
			b.Flush()
			require.NoError(t, b.Client.Set(ctx, key(b, "viewed:tok2"), "x", 0).Err())
			assert.ErrorIs(t, s.UpdateToken(ctx, "tok2", "bob", "7"), ria.ErrWrongType)
			_, ok, err := s.CheckToken(ctx, "tok2")
			require.NoError(t, err)
			assert.False(t, ok, "a failed UpdateToken logs nobody in")
		})
		t.Run("AddToCart", func(t *testing.T) {
			for _, n := range []int{2, 0} {
				b.CheckWrongTypes(t, seen, func() error { return s.AddToCart(ctx, "tok", "7", n) },
					recent, kr("cart:tok", "hash", "session cart"))
			}
		})
		t.Run("ClearCart", func(t *testing.T) {
			b.CheckWrongTypes(t, seen, func() error { return s.ClearCart(ctx, "tok") },
				kr("cart:tok", "hash", "session cart"))
		})
		t.Run("Logout", func(t *testing.T) {
			b.CheckWrongTypes(t, seen, func() error { _, err := s.Logout(ctx, "tok"); return err },
				login, recent, kr("viewed:tok", "zset", "session viewed items"), kr("cart:tok", "hash", "session cart"))
			// A session never seen: its keys are checked all the same.
			b.CheckWrongTypes(t, func() {}, func() error { _, err := s.Logout(ctx, "tok"); return err },
				login, recent, kr("viewed:tok", "zset", "session viewed items"), kr("cart:tok", "hash", "session cart"))
		})
		t.Run("CacheRequest", func(t *testing.T) {
			const req = "/?item=7"
			rendered := 0
			render := func(context.Context, string) (string, error) { rendered++; return "p", nil }
			b.CheckWrongTypes(t, func() {
				seen()
				_, err := s.CacheRequest(ctx, req, render)
				require.NoError(t, err)
			}, func() error { _, err := s.CacheRequest(ctx, req, render); return err },
				views, kr("page:"+sha256hex(req), "string", "session page"))
		})
		t.Run("Clean", func(t *testing.T) {
			c, err := s.Cleaner(1)
			require.NoError(t, err)
			setup := func() {
				seen() // tok, the oldest: the candidate
				b.FastForward(time.Millisecond)
				require.NoError(t, s.UpdateToken(ctx, "new", "carol", "8"))
			}
			b.CheckWrongTypes(t, setup, func() error { _, err := c.Clean(ctx); return err },
				recent, login,
				// The candidate's keys, named in the script from the
				// token it reads.
				kr("viewed:tok", "zset", "session viewed items"), kr("cart:tok", "hash", "session cart"))
		})
		t.Run("Rescale", func(t *testing.T) {
			r, err := s.Rescaler()
			require.NoError(t, err)
			b.CheckWrongTypes(t, seen, func() error { return r.Rescale(ctx) }, views)
		})
		t.Run("ScheduleRowCache", func(t *testing.T) {
			setup := func() { require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Second)) }
			b.CheckWrongTypes(t, setup, func() error { return s.ScheduleRowCache(ctx, "r", time.Minute) },
				schedule, delay, gens, counter)
			b.CheckWrongTypes(t, setup, func() error { return s.ScheduleRowCache(ctx, "r", -1) },
				schedule, delay, gens, row)
		})
		t.Run("reads", func(t *testing.T) {
			// The plain reads name a key of another type the same way.
			b.CheckWrongTypes(t, seen, func() error { _, _, err := s.CheckToken(ctx, "tok"); return err }, login)
			b.CheckWrongTypes(t, seen, func() error { _, err := s.Viewed(ctx, "tok"); return err },
				kr("viewed:tok", "zset", "session viewed items"))
			b.CheckWrongTypes(t, seen, func() error { _, err := s.Sessions(ctx); return err }, recent)
			b.CheckWrongTypes(t, seen, func() error { _, err := s.Cart(ctx, "tok"); return err },
				kr("cart:tok", "hash", "session cart"))
			b.CheckWrongTypes(t, seen, func() error { _, err := s.CanCache(ctx, "/?item=7"); return err }, views)
			b.CheckWrongTypes(t, func() { require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Second)) },
				func() error { _, _, err := s.Row(ctx, "r"); return err }, row)
		})
		t.Run("CacheDue", func(t *testing.T) {
			clock := newFakeClock()
			rc, err := s.RowCacher(func(context.Context, string) (any, error) { return 1, nil }, session.WithClock(clock.Now))
			require.NoError(t, err)
			cacheDue := func() error { _, err := rc.CacheDue(ctx); return err }
			// A row due: it is loaded and stored.
			b.CheckWrongTypes(t, func() {
				require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Second))
				require.NoError(t, cacheDue())
				clock.Add(time.Second)
			}, cacheDue, schedule, delay, row, gens, counter)
			// A row without a delay: it is dropped.
			b.CheckWrongTypes(t, func() {
				require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Second))
				require.NoError(t, cacheDue())
				require.NoError(t, b.Client.ZRem(ctx, key(b, "delay"), "r").Err())
				clock.Add(time.Second)
			}, cacheDue, schedule, delay, row, gens)
		})
	})
}

// A cart count that is not an integer is a *ria.KeyError matching
// ria.ErrCorrupt, naming the cart key.
func TestStore_Cart_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		require.NoError(t, s.AddToCart(ctx, "tok", "7", 1))
		require.NoError(t, b.Client.HSet(ctx, key(b, "cart:tok"), "8", "many").Err())
		_, err := s.Cart(ctx, "tok")
		assert.ErrorIs(t, err, ria.ErrCorrupt)
		var ke *ria.KeyError
		if assert.ErrorAs(t, err, &ke) {
			assert.Equal(t, key(b, "cart:tok"), ke.Key)
			assert.Equal(t, "session cart", ke.Role)
		}
	})
}
