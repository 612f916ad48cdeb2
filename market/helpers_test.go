package market_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/roundtrip"
	"github.com/ria-go/ria/market"
)

// buyFunc is one purchase variant, as a method expression.
type buyFunc func(m *market.Market, ctx context.Context, buyer, seller, item string, maxPrice int64) (int64, error)

// listFunc is one listing variant.
type listFunc func(m *market.Market, ctx context.Context, seller, item string, price int64) error

type variant struct {
	name string
	buy  buyFunc
	list listFunc
}

// variants pairs each purchase variant with a listing variant, so that both
// listing variants run the book's scenario.
var variants = []variant{
	{"Buy", (*market.Market).Buy, (*market.Market).List},
	{"BuyWatch", (*market.Market).BuyWatch, (*market.Market).ListWatch},
	{"BuyLocked", (*market.Market).BuyLocked, (*market.Market).List},
}

// forEachVariant runs fn on every backend and, inside, for every purchase
// variant, each with a market of its own (named after the variant).
func forEachVariant(t *testing.T, fn func(t *testing.T, b *redistest.Backend, v variant, m *market.Market)) {
	t.Helper()
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				fn(t, b, v, newMarket(t, b, b.Client, v.name))
			})
		}
	})
}

func newMarket(t testing.TB, b *redistest.Backend, rdb market.Client, name string, opts ...market.Option) *market.Market {
	t.Helper()
	m, err := market.New(rdb, name, append([]market.Option{market.WithPrefix(b.Prefix)}, opts...)...)
	require.NoError(t, err)
	return m
}

// key returns one of market name's keys (see doc.go).
func key(b *redistest.Backend, name, part string) string {
	return b.Prefix + "{" + name + "}:" + part
}

// book sets up the book's scenario: seller 17 (Frank, no funds) holds
// ItemA; buyer 27 (Bill) has 125.
func book(t *testing.T, m *market.Market) {
	t.Helper()
	ctx := t.Context()
	require.NoError(t, m.AddUser(ctx, "17", "Frank", 0))
	require.NoError(t, m.AddUser(ctx, "27", "Bill", 125))
	require.NoError(t, m.AddItem(ctx, "17", "ItemA"))
}

// snapshot is the full state of the test's markets: every key under the
// test's prefix with its type and value, except the market lock's (whose
// fence counter stays after a BuyLocked) and the reply records of calls
// (":once:" keys, which a refused once-script call leaves for its re-sends
// and which expire with the client's retry window).
func snapshot(t *testing.T, b *redistest.Backend) map[string]string {
	t.Helper()
	ctx := t.Context()
	out := map[string]string{}
	for _, k := range keysWithPrefix(t, b) {
		if strings.HasPrefix(k, b.Prefix+"lock:") || strings.Contains(k, "}:once:") {
			continue
		}
		typ, err := b.Client.Type(ctx, k).Result()
		require.NoError(t, err)
		var v any
		switch typ {
		case "string":
			v, err = b.Client.Get(ctx, k).Result()
		case "hash":
			v, err = b.Client.HGetAll(ctx, k).Result()
		case "set":
			var ms []string
			ms, err = b.Client.SMembers(ctx, k).Result()
			slices.Sort(ms)
			v = ms
		case "zset":
			v, err = b.Client.ZRangeWithScores(ctx, k, 0, -1).Result()
		default:
			v = "?"
		}
		require.NoError(t, err)
		out[k] = typ + " " + fmt.Sprint(v)
	}
	return out
}

// keysWithPrefix returns the keys under the test's prefix on every master,
// sorted.
func keysWithPrefix(t *testing.T, b *redistest.Backend) []string {
	t.Helper()
	out := b.Keys("")
	slices.Sort(out)
	return out
}

// hookedClient returns a new client of the backend with hooks that see
// every command, and the counter of its round trips. On a cluster the hooks
// go on each node's client, as the harness's counter does: go-redis runs a
// ClusterClient's own hooks for commands and pipelines, but not for the
// WATCH transactions it hands to a node (Watch).
func hookedClient(t *testing.T, b *redistest.Backend, hooks ...redis.Hook) (redis.UniversalClient, *roundtrip.Counter) {
	t.Helper()
	rdb, cnt := b.NewClient()
	if c, ok := rdb.(*redis.ClusterClient); ok {
		// Nodes are created on first use, so every node gets the hooks.
		c.OnNewNode(func(n *redis.Client) {
			for _, h := range hooks {
				n.AddHook(h)
			}
		})
		return rdb, cnt
	}
	for _, h := range hooks {
		rdb.AddHook(h)
	}
	return rdb, cnt
}
