package market_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/market"
)

// A money supply that no deposit writes (negative, not in canonical form)
// is refused as corrupt by AddUser, AddFunds and Totals, and nothing
// changes. A negative supply let deposits pass MaxFunds: a
// balance went beyond 2^53, which every purchase then refused as corrupt;
// Totals read '007' and '+5', which the scripts refuse.
func TestMarket_corruptMoney(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m := newMarket(t, b, b.Client, "m")
		for _, v := range []string{"-1", "-9007199254740992", "007", "+5", "-0"} {
			b.Flush()
			require.NoError(t, m.AddUser(ctx, "17", "Frank", 0))
			require.NoError(t, b.Client.Set(ctx, key(b, "m", "money"), v, 0).Err())
			before := b.Snapshot()
			_, err := m.AddFunds(ctx, "17", market.MaxFunds)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "AddFunds %q", v)
			err = m.AddUser(ctx, "18", "Grace", market.MaxFunds)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "AddUser %q", v)
			assert.Equal(t, before, b.Snapshot(), "%q: nothing changed", v)
			_, err = m.Totals(ctx)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "Totals %q", v)
		}
	})
}
