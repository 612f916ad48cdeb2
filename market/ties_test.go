package market_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/market"
)

// Listings at one price come in the byte order of their members
// "<item>.<seller>" (the doc said "by item"): an item ID that is a prefix
// of another sorts after it when the next byte of the longer one is below
// '.' ('-', '+', ',', ' ', ...): "a-b" before "a".
func TestMarket_Listings_tiesByMember(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m := newMarket(t, b, b.Client, "ties")
		require.NoError(t, m.AddUser(ctx, "s", "Seller", 0))
		for _, item := range []string{"a", "a-b"} {
			require.NoError(t, m.AddItem(ctx, "s", item))
			require.NoError(t, m.List(ctx, "s", item, 10))
		}
		got, err := m.Listings(ctx, 10)
		require.NoError(t, err)
		assert.Equal(t, []market.Listing{{Seller: "s", Item: "a-b", Price: 10}, {Seller: "s", Item: "a", Price: 10}}, got,
			"equal prices: by member (\"a-b.s\" < \"a.s\")")
	})
}
