package market_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/txn"
	"github.com/ria-go/ria/lock"
	"github.com/ria-go/ria/market"
)

// The book's scenario (Redis in Action 4.4): Frank lists ItemA for 10, Bill
// buys it with 125: Bill is left with 115 and ItemA, Frank with 10, and the
// listing is gone.
func TestMarket_bookScenario(t *testing.T) {
	forEachVariant(t, func(t *testing.T, b *redistest.Backend, v variant, m *market.Market) {
		ctx := t.Context()
		book(t, m)

		require.NoError(t, v.list(m, ctx, "17", "ItemA", 10))
		inv, err := m.Inventory(ctx, "17")
		require.NoError(t, err)
		assert.Empty(t, inv, "listed items leave the inventory")
		price, err := m.Price(ctx, "17", "ItemA")
		require.NoError(t, err)
		assert.Equal(t, int64(10), price)
		ls, err := m.Listings(ctx, 10)
		require.NoError(t, err)
		assert.Equal(t, []market.Listing{{Seller: "17", Item: "ItemA", Price: 10}}, ls)
		score, err := b.Client.ZScore(ctx, key(b, m.Name(), "listings"), "ItemA.17").Result()
		require.NoError(t, err)
		assert.Equal(t, 10.0, score, "the book's member name and score")

		paid, err := v.buy(m, ctx, "27", "17", "ItemA", 10)
		require.NoError(t, err)
		assert.Equal(t, int64(10), paid)

		bill, err := m.User(ctx, "27")
		require.NoError(t, err)
		assert.Equal(t, market.User{ID: "27", Name: "Bill", Funds: 115}, bill)
		frank, err := m.Funds(ctx, "17")
		require.NoError(t, err)
		assert.Equal(t, int64(10), frank)
		inv, err = m.Inventory(ctx, "27")
		require.NoError(t, err)
		assert.Equal(t, []string{"ItemA"}, inv)
		ls, err = m.Listings(ctx, 10)
		require.NoError(t, err)
		assert.Empty(t, ls)
		_, err = m.Price(ctx, "17", "ItemA")
		assert.ErrorIs(t, err, market.ErrNotListed)
		totals, err := m.Totals(ctx)
		require.NoError(t, err)
		assert.Equal(t, market.Totals{Money: 125, Items: 1}, totals)

		// Sold: a second purchase finds nothing.
		require.NoError(t, m.AddUser(ctx, "28", "Carol", 50))
		_, err = v.buy(m, ctx, "28", "17", "ItemA", 10)
		assert.ErrorIs(t, err, market.ErrNotListed)
		funds, err := m.Funds(ctx, "28")
		require.NoError(t, err)
		assert.Equal(t, int64(50), funds)

		// The buyer can sell it on.
		require.NoError(t, v.list(m, ctx, "27", "ItemA", 30))
		paid, err = v.buy(m, ctx, "28", "27", "ItemA", 40)
		require.NoError(t, err)
		assert.Equal(t, int64(30), paid, "pays the price, not the limit")
		funds, err = m.Funds(ctx, "28")
		require.NoError(t, err)
		assert.Equal(t, int64(20), funds)
	})
}

// A refused purchase changes nothing, and says why.
func TestMarket_buyRefused(t *testing.T) {
	forEachVariant(t, func(t *testing.T, b *redistest.Backend, v variant, m *market.Market) {
		ctx := t.Context()
		book(t, m)
		require.NoError(t, m.AddUser(ctx, "28", "Poor", 5))
		require.NoError(t, v.list(m, ctx, "17", "ItemA", 10))
		before := snapshot(t, b)

		for _, c := range []struct {
			name                string
			buyer, seller, item string
			limit               int64
			want                error
			msg                 string
		}{
			{"unknown item", "27", "17", "ItemZ", 10, market.ErrNotListed, ""},
			{"other seller", "27", "18", "ItemA", 10, market.ErrNotListed, ""},
			{"unknown buyer", "99", "17", "ItemA", 10, market.ErrUnknownUser, ""},
			{"price above limit", "27", "17", "ItemA", 9, market.ErrPriceTooHigh, "price 10, limit 9"},
			{"insufficient funds", "28", "17", "ItemA", 10, market.ErrInsufficientFunds, "price 10, funds 5"},
			{"own listing", "17", "17", "ItemA", 10, market.ErrOwnListing, ""},
		} {
			_, err := v.buy(m, ctx, c.buyer, c.seller, c.item, c.limit)
			assert.ErrorIs(t, err, c.want, c.name)
			assert.ErrorContains(t, err, c.msg, c.name)
		}
		assert.Equal(t, before, snapshot(t, b), "refused purchases write nothing")

		// Exactly enough funds is enough.
		_, err := m.AddFunds(ctx, "28", 5)
		require.NoError(t, err)
		_, err = v.buy(m, ctx, "28", "17", "ItemA", 10)
		require.NoError(t, err)
		funds, err := m.Funds(ctx, "28")
		require.NoError(t, err)
		assert.Zero(t, funds)
	})
}

func TestMarket_List_notOwned(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m := newMarket(t, b, b.Client, "m")
		book(t, m)
		require.NoError(t, m.AddItem(ctx, "27", "ItemB"))
		require.NoError(t, m.List(ctx, "17", "ItemA", 10))
		before := snapshot(t, b)
		for _, list := range []listFunc{(*market.Market).List, (*market.Market).ListWatch} {
			for _, c := range []struct{ name, seller, item string }{
				{"unknown item", "17", "ItemZ"},
				{"listed already", "17", "ItemA"},
				{"someone else's", "17", "ItemB"},
				{"unknown seller", "99", "ItemB"},
			} {
				assert.ErrorIs(t, list(m, ctx, c.seller, c.item, 20), market.ErrNotOwned, c.name)
			}
		}
		assert.Equal(t, before, snapshot(t, b), "refused listings write nothing")
	})
}

func TestMarket_users(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m := newMarket(t, b, b.Client, "m")
		require.NoError(t, m.AddUser(ctx, "17", "Frank", 0))
		require.NoError(t, m.AddUser(ctx, "27", "Bill", 125))
		assert.ErrorIs(t, m.AddUser(ctx, "27", "Other", 1000), market.ErrUserExists)
		u, err := m.User(ctx, "27")
		require.NoError(t, err)
		assert.Equal(t, market.User{ID: "27", Name: "Bill", Funds: 125}, u, "AddUser does not overwrite")

		funds, err := m.AddFunds(ctx, "17", 40)
		require.NoError(t, err)
		assert.Equal(t, int64(40), funds)
		totals, err := m.Totals(ctx)
		require.NoError(t, err)
		assert.Equal(t, market.Totals{Money: 165}, totals, "deposits count into the money supply")

		require.NoError(t, m.AddItem(ctx, "17", "ItemA"))
		require.NoError(t, m.AddItem(ctx, "17", "ItemB"))
		inv, err := m.Inventory(ctx, "17")
		require.NoError(t, err)
		assert.Equal(t, []string{"ItemA", "ItemB"}, inv)
		inv, err = m.Inventory(ctx, "27")
		require.NoError(t, err)
		assert.Empty(t, inv)

		// Item IDs are unique within the market, wherever the item is.
		require.NoError(t, m.List(ctx, "17", "ItemB", 5))
		before := snapshot(t, b)
		assert.ErrorIs(t, m.AddItem(ctx, "17", "ItemA"), market.ErrItemExists, "in the inventory")
		assert.ErrorIs(t, m.AddItem(ctx, "27", "ItemA"), market.ErrItemExists, "in another inventory")
		assert.ErrorIs(t, m.AddItem(ctx, "17", "ItemB"), market.ErrItemExists, "listed")

		// Unknown users.
		assert.ErrorIs(t, m.AddItem(ctx, "99", "ItemC"), market.ErrUnknownUser)
		_, err = m.AddFunds(ctx, "99", 10)
		assert.ErrorIs(t, err, market.ErrUnknownUser)
		_, err = m.Funds(ctx, "99")
		assert.ErrorIs(t, err, market.ErrUnknownUser)
		_, err = m.User(ctx, "99")
		assert.ErrorIs(t, err, market.ErrUnknownUser)
		_, err = m.Inventory(ctx, "99")
		assert.ErrorIs(t, err, market.ErrUnknownUser)
		assert.Equal(t, before, snapshot(t, b), "refused calls write nothing")

		totals, err = m.Totals(ctx)
		require.NoError(t, err)
		assert.Equal(t, market.Totals{Money: 165, Items: 2}, totals)
	})
}

// Markets of other names are independent, and so are two Market values of
// one name on two clients (they share their data).
func TestMarket_names(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		other, _ := b.NewClient()
		m1, m2 := newMarket(t, b, b.Client, "east"), newMarket(t, b, other, "east")
		west := newMarket(t, b, b.Client, "west")
		require.NoError(t, m1.AddUser(ctx, "17", "Frank", 10))
		f, err := m2.Funds(ctx, "17")
		require.NoError(t, err)
		assert.Equal(t, int64(10), f, "same market through another client")
		_, err = west.Funds(ctx, "17")
		assert.ErrorIs(t, err, market.ErrUnknownUser)
		assert.Equal(t, "west", west.Name())
	})
}

// Listings come cheapest first, as many as asked.
func TestMarket_Listings(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m := newMarket(t, b, b.Client, "m")
		require.NoError(t, m.AddUser(ctx, "17", "Frank", 0))
		require.NoError(t, m.AddUser(ctx, "a.b", "Dotted", 0))
		for i, it := range []string{"C", "A", "B"} {
			require.NoError(t, m.AddItem(ctx, "17", it))
			require.NoError(t, m.List(ctx, "17", it, int64(30-10*i)))
		}
		require.NoError(t, m.AddItem(ctx, "a.b", "D"))
		require.NoError(t, m.List(ctx, "a.b", "D", market.MaxPrice))
		ls, err := m.Listings(ctx, 3)
		require.NoError(t, err)
		assert.Equal(t, []market.Listing{
			{Seller: "17", Item: "B", Price: 10},
			{Seller: "17", Item: "A", Price: 20},
			{Seller: "17", Item: "C", Price: 30},
		}, ls)
		ls, err = m.Listings(ctx, 100)
		require.NoError(t, err)
		require.Len(t, ls, 4)
		assert.Equal(t, market.Listing{Seller: "a.b", Item: "D", Price: market.MaxPrice}, ls[3],
			"seller IDs may hold '.'; prices up to 2^53 are exact")
	})
}

// The largest price is paid exactly by every variant, with all the money a
// market may hold; a limit above MaxPrice means any price, and a limit one
// below the price is refused.
func TestMarket_maxPrice(t *testing.T) {
	forEachVariant(t, func(t *testing.T, b *redistest.Backend, v variant, m *market.Market) {
		ctx := t.Context()
		require.NoError(t, m.AddUser(ctx, "17", "Frank", 0))
		require.NoError(t, m.AddUser(ctx, "27", "Bill", market.MaxFunds))
		require.NoError(t, m.AddItem(ctx, "17", "ItemA"))
		require.NoError(t, v.list(m, ctx, "17", "ItemA", market.MaxPrice))
		paid, err := v.buy(m, ctx, "27", "17", "ItemA", math.MaxInt64)
		require.NoError(t, err)
		assert.Equal(t, int64(market.MaxPrice), paid)
		f, err := m.Funds(ctx, "27")
		require.NoError(t, err)
		assert.Zero(t, f)
		f, err = m.Funds(ctx, "17")
		require.NoError(t, err)
		assert.Equal(t, int64(market.MaxFunds), f)

		require.NoError(t, v.list(m, ctx, "27", "ItemA", market.MaxPrice))
		_, err = v.buy(m, ctx, "17", "27", "ItemA", market.MaxPrice-1)
		assert.ErrorIs(t, err, market.ErrPriceTooHigh)
		paid, err = v.buy(m, ctx, "17", "27", "ItemA", market.MaxPrice)
		require.NoError(t, err)
		assert.Equal(t, int64(market.MaxPrice), paid)
		totals, err := m.Totals(ctx)
		require.NoError(t, err)
		assert.Equal(t, market.Totals{Money: market.MaxFunds, Items: 1}, totals)
	})
}

// A round price (100,000,000) sells on every backend: miniredis replies
// its score as "1e+8", which its Lua's tonumber does not read, and the Lua
// variant refused the listing as a malformed price there.
func TestMarket_roundPrice(t *testing.T) {
	forEachVariant(t, func(t *testing.T, b *redistest.Backend, v variant, m *market.Market) {
		ctx := t.Context()
		const price = 100_000_000
		require.NoError(t, m.AddUser(ctx, "17", "Frank", 0))
		require.NoError(t, m.AddUser(ctx, "27", "Bill", price))
		require.NoError(t, m.AddItem(ctx, "17", "ItemA"))
		require.NoError(t, v.list(m, ctx, "17", "ItemA", price))
		paid, err := v.buy(m, ctx, "27", "17", "ItemA", price)
		require.NoError(t, err)
		assert.Equal(t, int64(price), paid)
		f, err := m.Funds(ctx, "17")
		require.NoError(t, err)
		assert.Equal(t, int64(price), f)
	})
}

// A listing whose score someone else set to a non-price is refused by every
// variant with a *ria.KeyError naming the listings, and nothing moves (the
// Lua variant used to loop forever on a negative price, blocking the
// server).
func TestMarket_malformedPrice(t *testing.T) {
	forEachVariant(t, func(t *testing.T, b *redistest.Backend, v variant, m *market.Market) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		require.NoError(t, m.AddUser(ctx, "17", "Frank", 0))
		require.NoError(t, m.AddUser(ctx, "27", "Bill", 100))
		require.NoError(t, m.AddItem(ctx, "17", "ItemA"))
		require.NoError(t, v.list(m, ctx, "17", "ItemA", 10))
		listings := key(b, v.name, "listings")
		for _, bad := range []float64{-5, 0, 2.5, market.MaxPrice * 2} {
			require.NoError(t, b.Client.ZAdd(ctx, listings, redis.Z{Score: bad, Member: "ItemA.17"}).Err())
			before := snapshot(t, b)
			_, err := v.buy(m, ctx, "27", "17", "ItemA", 100)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "price %v", bad)
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, "price %v", bad) {
				assert.Equal(t, listings, kerr.Key)
				assert.Equal(t, "market listings", kerr.Role)
				assert.Contains(t, kerr.Got, `for "ItemA.17"`)
			}
			assert.Equal(t, before, snapshot(t, b), "price %v", bad)
			_, err = m.Price(ctx, "17", "ItemA")
			assert.ErrorIs(t, err, ria.ErrCorrupt)
			_, err = m.Listings(ctx, 10)
			assert.ErrorIs(t, err, ria.ErrCorrupt)
		}
	})
}

// The money supply is bounded by MaxFunds, so no balance can overflow and
// the scripts' arithmetic stays exact: a deposit that would pass it is
// refused with ErrMoneyLimit and writes nothing, and the market stays
// usable (the issue: AddUser with MaxInt64 funds used to break every later
// deposit with a raw overflow error).
func TestMarket_moneyLimit(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m := newMarket(t, b, b.Client, "m")
		require.NoError(t, m.AddUser(ctx, "17", "Frank", market.MaxFunds-3))
		require.NoError(t, m.AddUser(ctx, "27", "Bill", 2))
		before := snapshot(t, b)
		_, err := m.AddFunds(ctx, "17", 2)
		assert.ErrorIs(t, err, market.ErrMoneyLimit)
		assert.ErrorContains(t, err, "supply 9007199254740991")
		assert.ErrorIs(t, m.AddUser(ctx, "28", "Carol", 2), market.ErrMoneyLimit)
		assert.ErrorIs(t, m.AddUser(ctx, "28", "Carol", market.MaxFunds), market.ErrMoneyLimit)
		assert.Equal(t, before, snapshot(t, b), "refused deposits write nothing")

		funds, err := m.AddFunds(ctx, "27", 1)
		require.NoError(t, err, "up to the limit")
		assert.Equal(t, int64(3), funds)
		totals, err := m.Totals(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(market.MaxFunds), totals.Money)
		_, err = m.AddFunds(ctx, "27", 1)
		assert.ErrorIs(t, err, market.ErrMoneyLimit)

		// The market stays usable: users without funds, items, trades.
		require.NoError(t, m.AddUser(ctx, "28", "Carol", 0))
		require.NoError(t, m.AddItem(ctx, "28", "ItemA"))
		require.NoError(t, m.List(ctx, "28", "ItemA", 3))
		paid, err := m.Buy(ctx, "27", "28", "ItemA", 3)
		require.NoError(t, err)
		assert.Equal(t, int64(3), paid)

		// A supply above the bound, written before it existed (or by
		// someone else), refuses deposits the same way.
		require.NoError(t, b.Client.Set(ctx, key(b, "m", "money"), strconv.FormatInt(1<<62+1, 10), 0).Err())
		before = snapshot(t, b)
		_, err = m.AddFunds(ctx, "27", 1)
		assert.ErrorIs(t, err, market.ErrMoneyLimit)
		assert.ErrorIs(t, m.AddUser(ctx, "29", "Dan", 1), market.ErrMoneyLimit)
		assert.Equal(t, before, snapshot(t, b))
		require.NoError(t, m.AddUser(ctx, "29", "Dan", 0), "no money, no limit")
	})
}

// Every key of a market, and of its lock, is in the slot of its hash tag;
// the types are those doc.go gives.
func TestMarket_keys(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m := newMarket(t, b, b.Client, "m")
		book(t, m)
		require.NoError(t, m.List(ctx, "17", "ItemA", 10))
		locker, err := lock.New(b.Client, lock.WithPrefix(b.Prefix+"lock:"))
		require.NoError(t, err)
		l, err := locker.TryAcquire(ctx, "m", time.Minute)
		require.NoError(t, err, "the market lock is lock %q under prefix+lock:", "m")
		require.NoError(t, l.Release(ctx))

		want := map[string]string{
			key(b, "m", "user:17"):      "hash",
			key(b, "m", "user:27"):      "hash",
			key(b, "m", "inventory:17"): "none", // emptied by the listing
			key(b, "m", "listings"):     "zset",
			key(b, "m", "items"):        "set",
			key(b, "m", "money"):        "string",
		}
		for k, typ := range want {
			assert.Equal(t, typ, b.Client.Type(ctx, k).Val(), k)
		}
		assert.Equal(t, map[string]string{"name": "Bill", "funds": "125"}, b.Client.HGetAll(ctx, key(b, "m", "user:27")).Val())
		ks := keysWithPrefix(t, b)
		assert.Contains(t, ks, b.Prefix+"lock:{m}:fence")
		if b.Kind == redistest.Cluster {
			slot := b.Client.ClusterKeySlot(ctx, key(b, "m", "listings")).Val()
			for _, k := range ks {
				assert.Equal(t, slot, b.Client.ClusterKeySlot(ctx, k).Val(), k)
			}
		}
	})
}

// A reply record lives as long as doc.go ("Limits") says with go-redis
// v9's default options: the retry window, 3 x (6 s + 5 s + 5 s + 1 s) +
// 1 s = 52 s, for a script's record, and the window plus the 5 s of the
// settling, 57 s, for a WATCH transaction's (doc.go once said "about
// 30 s", which under-sized their memory by some 40%).
func TestMarket_replyRecordTTL(t *testing.T) {
	const scriptTTL, watchTTL = 52 * time.Second, 57 * time.Second
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", "")), " ")
	assert.Contains(t, text, "a script's record lives 52 s with go-redis v9's default options")
	assert.Contains(t, text, "57 s with the defaults")

	b := redistest.New(t, redistest.Standalone)
	ctx := t.Context()
	rdb := redis.NewClient(&redis.Options{Addr: b.Addrs()[0]}) // go-redis's defaults
	t.Cleanup(func() { _ = rdb.Close() })
	m := newMarket(t, b, rdb, "ttl")
	records := func() []string { return b.Keys(key(b, "ttl", "once:*")) }
	// ttlOfNew returns the TTL of the one record that fn leaves.
	ttlOfNew := func(fn func() error) time.Duration {
		before := records()
		require.NoError(t, fn())
		var fresh []string
		for _, k := range records() {
			if !slices.Contains(before, k) {
				fresh = append(fresh, k)
			}
		}
		require.Len(t, fresh, 1)
		return b.Client.PTTL(ctx, fresh[0]).Val()
	}
	ttl := ttlOfNew(func() error { return m.AddUser(ctx, "u", "U", 1) })
	assert.LessOrEqual(t, ttl, scriptTTL, "a script's record")
	assert.Greater(t, ttl, scriptTTL-2*time.Second, "a script's record")
	require.NoError(t, m.AddItem(ctx, "u", "i"))
	ttl = ttlOfNew(func() error { return m.ListWatch(ctx, "u", "i", 1) })
	assert.LessOrEqual(t, ttl, watchTTL, "a WATCH transaction's record")
	assert.Greater(t, ttl, watchTTL-2*time.Second, "a WATCH transaction's record")
}

// Round trips per operation once the scripts are cached, as doc.go states.
func TestMarket_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, count := hookedClient(t, b)
		m := newMarket(t, b, rdb, "m")
		// Warm up every script (the first EVALSHA may be answered NOSCRIPT).
		require.NoError(t, m.AddUser(ctx, "s", "Seller", 0))
		require.NoError(t, m.AddUser(ctx, "b", "Buyer", 1000))
		_, err := m.AddFunds(ctx, "b", 1)
		require.NoError(t, err)
		item := 0
		next := func() string {
			item++
			id := "i" + string(rune('a'+item))
			require.NoError(t, m.AddItem(ctx, "s", id))
			return id
		}
		warm := next()
		require.NoError(t, m.List(ctx, "s", warm, 1))
		_, err = m.Buy(ctx, "b", "s", warm, 1)
		require.NoError(t, err)
		warm = next()
		require.NoError(t, m.List(ctx, "s", warm, 1))
		_, err = m.BuyLocked(ctx, "b", "s", warm, 1)
		require.NoError(t, err)
		require.ErrorIs(t, m.Unlist(ctx, "s", warm), market.ErrNotListed)

		for _, c := range []struct {
			op   string
			want int64
			fn   func() error
		}{
			{"AddUser", 1, func() error { return m.AddUser(ctx, "u", "U", 1) }},
			{"AddFunds", 1, func() error { _, err := m.AddFunds(ctx, "u", 1); return err }},
			{"AddItem", 1, func() error { return m.AddItem(ctx, "s", "x") }},
			{"List", 1, func() error { return m.List(ctx, "s", "x", 5) }},
			{"Buy", 1, func() error { _, err := m.Buy(ctx, "b", "s", "x", 5); return err }},
			{"ListWatch", 3, func() error { return m.ListWatch(ctx, "b", "x", 5) }},
			{"BuyWatch", 3, func() error { _, err := m.BuyWatch(ctx, "s", "b", "x", 5); return err }},
			{"List again", 1, func() error { return m.List(ctx, "s", "x", 5) }},
			{"Unlist", 1, func() error { return m.Unlist(ctx, "s", "x") }},
			{"Unlist refused", 1, func() error { return wantErr(0, m.Unlist(ctx, "s", "x")) }},
			{"List once more", 1, func() error { return m.List(ctx, "s", "x", 5) }},
			{"BuyLocked", 5, func() error { _, err := m.BuyLocked(ctx, "b", "s", "x", 5); return err }},
			{"Buy refused", 1, func() error { return wantErr(m.Buy(ctx, "b", "s", "x", 5)) }},
			{"BuyWatch refused", 3, func() error { return wantErr(m.BuyWatch(ctx, "b", "s", "x", 5)) }},
			{"BuyLocked refused", 5, func() error { return wantErr(m.BuyLocked(ctx, "b", "s", "x", 5)) }},
			{"ListWatch refused", 3, func() error { return wantErr(0, m.ListWatch(ctx, "s", "x", 5)) }},
			{"User", 1, func() error { _, err := m.User(ctx, "b"); return err }},
			{"Funds", 1, func() error { _, err := m.Funds(ctx, "b"); return err }},
			{"Inventory", 1, func() error { _, err := m.Inventory(ctx, "b"); return err }},
			{"Price", 1, func() error { return wantErr(m.Price(ctx, "s", "x")) }},
			{"Listings", 1, func() error { _, err := m.Listings(ctx, 10); return err }},
			{"Totals", 1, func() error { _, err := m.Totals(ctx); return err }},
		} {
			var err error
			rt, cmds := count.Delta(func() { err = c.fn() })
			require.NoError(t, err, c.op)
			assert.Equal(t, c.want, rt, "%s round trips (%d commands)", c.op, cmds)
		}
	})
}

// wantErr turns an expected failure into success, for round-trip counts of
// refused calls.
func wantErr(_ int64, err error) error {
	if err == nil {
		return errors.New("want an error")
	}
	return nil
}

// Bad input is refused before reaching Redis, with an error naming what was
// wrong, and writes nothing.
func TestMarket_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m := newMarket(t, b, b.Client, "m")
		for _, c := range []struct {
			want string
			fn   func() error
		}{
			{"user ID: empty", func() error { return m.AddUser(ctx, "", "X", 1) }},
			{"name: empty", func() error { return m.AddUser(ctx, "u", "", 1) }},
			{"funds -1: must be in [0, 9007199254740992]", func() error { return m.AddUser(ctx, "u", "X", -1) }},
			{"funds 9007199254740993: must be in [0, 9007199254740992]", func() error { return m.AddUser(ctx, "u", "X", market.MaxFunds+1) }},
			{"funds 9223372036854775807: must be in", func() error { return m.AddUser(ctx, "u", "X", math.MaxInt64) }},
			{"user ID: empty", func() error { _, err := m.AddFunds(ctx, "", 1); return err }},
			{"amount 0: must be in [1, 9007199254740992]", func() error { _, err := m.AddFunds(ctx, "u", 0); return err }},
			{"amount -5: must be in [1, 9007199254740992]", func() error { _, err := m.AddFunds(ctx, "u", -5); return err }},
			{"amount 9223372036854775807: must be in", func() error { _, err := m.AddFunds(ctx, "u", math.MaxInt64); return err }},
			{"user ID: empty", func() error { return m.AddItem(ctx, "", "i") }},
			{"item ID: empty", func() error { return m.AddItem(ctx, "u", "") }},
			{`item ID "a.b": must not contain '.'`, func() error { return m.AddItem(ctx, "u", "a.b") }},
			{"user ID: empty", func() error { _, err := m.User(ctx, ""); return err }},
			{"user ID: empty", func() error { _, err := m.Funds(ctx, ""); return err }},
			{"user ID: empty", func() error { _, err := m.Inventory(ctx, ""); return err }},
			{"seller ID: empty", func() error { _, err := m.Price(ctx, "", "i"); return err }},
			{"item ID: empty", func() error { _, err := m.Price(ctx, "s", ""); return err }},
			{"n 0: must be at least 1", func() error { _, err := m.Listings(ctx, 0); return err }},
			{"n -1: must be at least 1", func() error { _, err := m.Listings(ctx, -1); return err }},
			{"market: unlist: seller ID: empty", func() error { return m.Unlist(ctx, "", "i") }},
			{"market: unlist: item ID: empty", func() error { return m.Unlist(ctx, "s", "") }},
			{`market: unlist: item ID "a.b": must not contain '.'`, func() error { return m.Unlist(ctx, "s", "a.b") }},
		} {
			rt, _ := b.Count.Delta(func() { assert.ErrorContains(t, c.fn(), c.want) })
			assert.Zero(t, rt, c.want)
		}
		for _, list := range []listFunc{(*market.Market).List, (*market.Market).ListWatch} {
			for _, c := range []struct {
				seller, item string
				price        int64
				want         string
			}{
				{"", "i", 1, "seller ID: empty"},
				{"s", "", 1, "item ID: empty"},
				{"s", "a.b", 1, "must not contain '.'"},
				{"s", "i", 0, "price 0: must be in [1, 9007199254740992]"},
				{"s", "i", -10, "price -10: must be in"},
				{"s", "i", market.MaxPrice + 1, "price 9007199254740993: must be in"},
			} {
				rt, _ := b.Count.Delta(func() { assert.ErrorContains(t, list(m, ctx, c.seller, c.item, c.price), c.want) })
				assert.Zero(t, rt, c.want)
			}
		}
		for _, v := range variants {
			for _, c := range []struct {
				buyer, seller, item string
				limit               int64
				want                string
			}{
				{"", "s", "i", 1, "buyer ID: empty"},
				{"b", "", "i", 1, "seller ID: empty"},
				{"b", "s", "", 1, "item ID: empty"},
				{"b", "s", "x.y", 1, "must not contain '.'"},
				{"b", "s", "i", 0, "price limit 0: must be at least 1"},
				{"b", "s", "i", -3, "price limit -3: must be at least 1"},
				{"s", "s", "i", 1, "buyer is the seller"},
			} {
				rt, _ := b.Count.Delta(func() {
					_, err := v.buy(m, ctx, c.buyer, c.seller, c.item, c.limit)
					assert.ErrorContains(t, err, c.want, v.name)
				})
				assert.Zero(t, rt, v.name+": "+c.want)
			}
		}
		assert.Empty(t, keysWithPrefix(t, b), "bad input wrote nothing")
	})
}

func TestNew_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, c := range []struct {
			name string
			opts []market.Option
			want string
		}{
			{"", nil, "market name: empty name"},
			{"}x", nil, "market name"},
			{"m", []market.Option{market.WithPrefix("a{b")}, "prefix"},
			{"m", []market.Option{market.WithTimeout(0)}, "timeout 0s: must be positive"},
			{"m", []market.Option{market.WithTimeout(-time.Second)}, "timeout -1s"},
			{"m", []market.Option{market.WithLockTTL(time.Microsecond)}, "lock TTL 1µs: must be at least 1ms"},
		} {
			rt, _ := b.Count.Delta(func() {
				m, err := market.New(b.Client, c.name, c.opts...)
				assert.Nil(t, m)
				assert.ErrorContains(t, err, c.want)
			})
			assert.Zero(t, rt)
		}
		assert.Panics(t, func() { _, _ = market.New(nil, "m") })
		assert.Empty(t, keysWithPrefix(t, b))
	})
}

// interferer is a hook that runs a function just before a MULTI/EXEC is
// sent: another client changing the watched keys between the reads and the
// EXEC, every time or once.
type interferer struct {
	fn   func(ctx context.Context)
	once bool
	ran  int
}

func (h *interferer) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *interferer) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (h *interferer) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) == 0 || cmds[0].Name() != "multi" {
			return next(ctx, cmds)
		}
		if !h.once || h.ran == 0 {
			h.ran++
			h.fn(ctx)
		}
		return next(ctx, cmds)
	}
}

// A WATCH loop whose keys keep changing gives up at the timeout with
// ErrContended (the book's loop would spin on); the lock variant gives up
// when the lock stays busy. Nothing is written.
func TestMarket_contended(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const timeout = 100 * time.Millisecond
		n := 0
		h := &interferer{fn: func(ctx context.Context) {
			// Another client changes the listings and the seller's
			// inventory at every attempt.
			n++
			b.Client.ZAdd(ctx, key(b, "m", "listings"), redis.Z{Score: float64(n), Member: "noise"})
			b.Client.SAdd(ctx, key(b, "m", "inventory:17"), fmt.Sprint("noise", n))
		}}
		rdb, _ := hookedClient(t, b, h)
		m := newMarket(t, b, rdb, "m", market.WithTimeout(timeout))
		book(t, m)
		require.NoError(t, m.AddItem(ctx, "17", "ItemB"))
		require.NoError(t, m.List(ctx, "17", "ItemA", 10))
		h.ran = 0
		for _, c := range []struct {
			name string
			fn   func() error
		}{
			{"BuyWatch", func() error { _, err := m.BuyWatch(ctx, "27", "17", "ItemA", 10); return err }},
			{"BuyLocked", func() error { _, err := m.BuyLocked(ctx, "27", "17", "ItemA", 10); return err }},
			{"ListWatch", func() error { return m.ListWatch(ctx, "17", "ItemB", 10) }},
		} {
			h.ran = 0
			start := time.Now()
			err := c.fn()
			took := time.Since(start)
			assert.ErrorIs(t, err, market.ErrContended, c.name)
			assert.ErrorIs(t, err, txn.ErrContended, c.name)
			assert.GreaterOrEqual(t, took, timeout, c.name)
			assert.Less(t, took, time.Minute, c.name) // bounds a hang
			// took >= timeout says it gave up only at its deadline. How
			// many attempts fit in 100ms depends on the machine's load
			// (one attempt may take it all), so retrying itself is shown
			// by tests that interfere once (TestMarket_mixedVariants,
			// TestFaults_abortedExecLost).
			assert.GreaterOrEqual(t, h.ran, 1, c.name)
		}
		funds, err := m.Funds(ctx, "27")
		require.NoError(t, err)
		assert.Equal(t, int64(125), funds)
		inv, err := m.Inventory(ctx, "17")
		require.NoError(t, err)
		assert.Contains(t, inv, "ItemB", "not listed")
		_, err = m.Price(ctx, "17", "ItemB")
		assert.ErrorIs(t, err, market.ErrNotListed)

		// The market lock stays busy (held by someone else).
		locker, err := lock.New(b.Client, lock.WithPrefix(b.Prefix+"lock:"))
		require.NoError(t, err)
		l, err := locker.TryAcquire(ctx, "m", time.Minute)
		require.NoError(t, err)
		start := time.Now()
		_, err = m.BuyLocked(ctx, "27", "17", "ItemA", 10)
		assert.ErrorIs(t, err, market.ErrContended)
		assert.ErrorIs(t, err, lock.ErrNotObtained)
		assert.GreaterOrEqual(t, time.Since(start), timeout)
		require.NoError(t, l.Release(ctx))
		funds, err = m.Funds(ctx, "27")
		require.NoError(t, err)
		assert.Equal(t, int64(125), funds)

		// A cancelled ctx is not contention, and is said once.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = m.BuyLocked(cctx, "27", "17", "ItemA", 10)
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, lock.ErrNotObtained)
		assert.NotErrorIs(t, err, market.ErrContended)
		assert.Equal(t, 1, strings.Count(err.Error(), "context canceled"), err.Error())

		// Nor is a ctx that ends while waiting for a busy lock.
		l, err = locker.TryAcquire(ctx, "m", time.Minute)
		require.NoError(t, err)
		dctx, cancel := context.WithTimeout(ctx, timeout/2)
		defer cancel()
		_, err = m.BuyLocked(dctx, "27", "17", "ItemA", 10)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, market.ErrContended)
		assert.Equal(t, 1, strings.Count(err.Error(), "context deadline exceeded"), err.Error())
		require.NoError(t, l.Release(ctx))
	})
}

// An outage is reported as one: no variant answers with a refusal or
// ErrContended when Redis cannot be reached, and the WATCH variants, which
// sent nothing that writes, do not say the outcome is unknown.
func TestMarket_outage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nobody listens there now
	rdb := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	m, err := market.New(rdb, "m", market.WithTimeout(300*time.Millisecond))
	require.NoError(t, err)
	ctx := t.Context()
	for _, v := range variants {
		_, err := v.buy(m, ctx, "27", "17", "ItemA", 10)
		require.Error(t, err, v.name)
		assert.ErrorContains(t, err, "connection refused", v.name)
		for _, refusal := range []error{market.ErrContended, market.ErrNotListed, market.ErrUnknownUser} {
			assert.NotErrorIs(t, err, refusal, v.name)
		}
		if v.name != "Buy" {
			// Only reads (or the lock) were tried: nothing was bought.
			assert.NotErrorIs(t, err, ria.ErrOutcomeUnknown, v.name)
		}
	}
	assert.NotErrorIs(t, m.ListWatch(ctx, "17", "ItemA", 10), ria.ErrOutcomeUnknown)
}

// Variants can be mixed: when a Lua purchase takes the item between the
// reads and the EXEC of a WATCH purchase (also one under the market lock,
// which the Lua purchase does not take), the WATCH purchase retries, finds
// it sold, and charges nobody: the item is sold once.
func TestMarket_mixedVariants(t *testing.T) {
	for _, v := range variants[1:] {
		t.Run(v.name, func(t *testing.T) {
			redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
				ctx := t.Context()
				var (
					raced error
					other *market.Market
				)
				h := &interferer{once: true, fn: func(ctx context.Context) {
					_, raced = other.Buy(ctx, "28", "17", "ItemA", 10)
				}}
				rdb, _ := hookedClient(t, b, h)
				m := newMarket(t, b, rdb, "m")
				other = newMarket(t, b, b.Client, "m")
				book(t, m)
				require.NoError(t, m.AddUser(ctx, "28", "Carol", 50))
				require.NoError(t, m.List(ctx, "17", "ItemA", 10))
				h.ran = 0
				_, err := v.buy(m, ctx, "27", "17", "ItemA", 10)
				require.NoError(t, raced, "the Lua purchase ran between the reads and EXEC")
				assert.ErrorIs(t, err, market.ErrNotListed)

				for id, want := range map[string]int64{"27": 125, "28": 40, "17": 10} {
					f, err := m.Funds(ctx, id)
					require.NoError(t, err)
					assert.Equal(t, want, f, id)
				}
				inv, err := m.Inventory(ctx, "27")
				require.NoError(t, err)
				assert.Empty(t, inv)
				inv, err = m.Inventory(ctx, "28")
				require.NoError(t, err)
				assert.Equal(t, []string{"ItemA"}, inv)
			})
		})
	}
}
