package market_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/market"
)

// Every state-changing operation checks the type of every key it relies on
// before its first write (the scripts with check_types, the WATCH variants
// with TYPE in their watched reads): a key someone else wrote makes it
// fail with a *ria.KeyError naming the key and its role, and change
// nothing. The plain reads name such a key the same way.
func TestMarket_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m := newMarket(t, b, b.Client, "m")
		k := func(part string) string { return key(b, "m", part) }
		var (
			user = func(id string) redistest.KeyRole {
				return redistest.KeyRole{Key: k("user:" + id), Type: "hash", Role: "market user"}
			}
			inv = func(id string) redistest.KeyRole {
				return redistest.KeyRole{Key: k("inventory:" + id), Type: "set", Role: "market inventory"}
			}
			listings = redistest.KeyRole{Key: k("listings"), Type: "zset", Role: "market listings"}
			items    = redistest.KeyRole{Key: k("items"), Type: "set", Role: "market items"}
			money    = redistest.KeyRole{Key: k("money"), Type: "string", Role: "market money"}
		)
		nothing := func() {}
		scenario := func() { book(t, m) }
		listed := func() {
			book(t, m)
			require.NoError(t, m.List(ctx, "17", "ItemA", 10))
		}
		t.Run("AddUser", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { return m.AddUser(ctx, "u", "U", 5) }, user("u"), money)
		})
		t.Run("AddFunds", func(t *testing.T) {
			b.CheckWrongTypes(t, scenario, func() error { _, err := m.AddFunds(ctx, "27", 5); return err }, user("27"), money)
		})
		t.Run("AddItem", func(t *testing.T) {
			b.CheckWrongTypes(t, scenario, func() error { return m.AddItem(ctx, "17", "ItemB") }, user("17"), inv("17"), items)
		})
		for _, v := range []struct {
			name string
			list listFunc
		}{{"List", (*market.Market).List}, {"ListWatch", (*market.Market).ListWatch}} {
			t.Run(v.name, func(t *testing.T) {
				b.CheckWrongTypes(t, scenario, func() error { return v.list(m, ctx, "17", "ItemA", 10) }, inv("17"), listings)
			})
		}
		t.Run("Unlist", func(t *testing.T) {
			b.CheckWrongTypes(t, listed, func() error { return m.Unlist(ctx, "17", "ItemA") }, listings, inv("17"))
		})
		t.Run("reads", func(t *testing.T) {
			// The plain reads name a key of another type the same way.
			b.CheckWrongTypes(t, scenario, func() error { _, err := m.User(ctx, "17"); return err }, user("17"))
			b.CheckWrongTypes(t, scenario, func() error { _, err := m.Funds(ctx, "17"); return err }, user("17"))
			b.CheckWrongTypes(t, scenario, func() error { _, err := m.Inventory(ctx, "17"); return err }, inv("17"))
			b.CheckWrongTypes(t, listed, func() error { _, err := m.Price(ctx, "17", "ItemA"); return err }, listings)
			b.CheckWrongTypes(t, listed, func() error { _, err := m.Listings(ctx, 10); return err }, listings)
			b.CheckWrongTypes(t, scenario, func() error { _, err := m.Totals(ctx); return err }, money, items)
		})
		buyKeys := []redistest.KeyRole{listings, user("27"), user("17"), inv("27")}
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				call := func() error { _, err := v.buy(m, ctx, "27", "17", "ItemA", 10); return err }
				if v.name == "BuyLocked" {
					// The market lock's keys change with every acquisition
					// (its fence): compare the market's keys only.
					checkWrongTypesMarket(t, b, listed, call, buyKeys...)
					return
				}
				b.CheckWrongTypes(t, listed, call, buyKeys...)
			})
		}
	})
}

// checkWrongTypesMarket is redistest's CheckWrongTypes comparing the
// market's keys only (snapshot leaves out the market lock's).
func checkWrongTypesMarket(t *testing.T, b *redistest.Backend, setup func(), call func() error, keys ...redistest.KeyRole) {
	t.Helper()
	ctx := context.Background()
	for _, k := range keys {
		b.Flush()
		setup()
		require.NoError(t, b.Client.Del(ctx, k.Key).Err())
		if k.Type == "string" {
			require.NoError(t, b.Client.HSet(ctx, k.Key, "wrong", "type").Err())
		} else {
			require.NoError(t, b.Client.Set(ctx, k.Key, "wrong type", 0).Err())
		}
		before := snapshot(t, b)
		err := call()
		var kerr *ria.KeyError
		if assert.ErrorAs(t, err, &kerr, "%s %s", k.Role, k.Key) {
			assert.ErrorIs(t, err, ria.ErrWrongType)
			assert.Equal(t, k.Key, kerr.Key, "the error names the key")
			assert.Equal(t, k.Role, kerr.Role, "the error names the key's role")
			assert.Equal(t, "a "+k.Type, kerr.Want)
		}
		assert.Equal(t, before, snapshot(t, b), "nothing changed after the %s was of the wrong type", k.Role)
	}
	b.Flush()
}

// The case: with the buyer's inventory a STRING, Buy used to move
// the money and lose the item, and a following BuyWatch charged again. Now
// every variant fails and changes nothing; once the key is repaired the
// purchase happens once.
func TestMarket_Buy_inventoryString(t *testing.T) {
	forEachVariant(t, func(t *testing.T, b *redistest.Backend, v variant, m *market.Market) {
		ctx := t.Context()
		book(t, m)
		require.NoError(t, m.List(ctx, "17", "ItemA", 10))
		inv := key(b, v.name, "inventory:27")
		require.NoError(t, b.Client.Set(ctx, inv, "oops", 0).Err())
		before := snapshot(t, b)
		for _, other := range variants {
			_, err := other.buy(m, ctx, "27", "17", "ItemA", 10)
			assert.ErrorIs(t, err, ria.ErrWrongType, other.name)
			assert.ErrorContains(t, err, `market inventory "`+inv+`" holds a string, want a set`, other.name)
			assert.Equal(t, before, snapshot(t, b), "%s changed nothing", other.name)
		}
		require.NoError(t, b.Client.Del(ctx, inv).Err())
		paid, err := v.buy(m, ctx, "27", "17", "ItemA", 10)
		require.NoError(t, err)
		assert.Equal(t, int64(10), paid)
		for id, want := range map[string]int64{"27": 115, "17": 10} {
			f, err := m.Funds(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, want, f, id)
		}
	})
}

// Values the scripts parse (funds, the money supply) are checked before the
// first write too: a value someone else wrote fails the call with a
// *ria.KeyError (ria.ErrCorrupt) and changes nothing.
func TestMarket_corruptValues(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				m := newMarket(t, b, b.Client, v.name)
				k := func(part string) string { return key(b, v.name, part) }
				book(t, m)
				require.NoError(t, m.List(ctx, "17", "ItemA", 10))
				type corruptCase struct {
					name      string
					key, role string
					corrupt   func() error
					call      func() error
				}
				cases := []corruptCase{
					{"buyer's funds", k("user:27"), "market user field funds",
						func() error { return b.Client.HSet(ctx, k("user:27"), "funds", "12x").Err() },
						func() error { _, err := v.buy(m, ctx, "27", "17", "ItemA", 10); return err }},
					{"seller's funds", k("user:17"), "market user field funds",
						func() error { return b.Client.HSet(ctx, k("user:17"), "funds", "1.5").Err() },
						func() error { _, err := v.buy(m, ctx, "27", "17", "ItemA", 10); return err }},
					{"funds of a deposit", k("user:27"), "market user field funds",
						func() error { return b.Client.HSet(ctx, k("user:27"), "funds", "lots").Err() },
						func() error { _, err := m.AddFunds(ctx, "27", 5); return err }},
					{"money supply, deposit", k("money"), "market money",
						func() error { return b.Client.Set(ctx, k("money"), "much", 0).Err() },
						func() error { _, err := m.AddFunds(ctx, "27", 5); return err }},
					{"money supply, new user", k("money"), "market money",
						func() error { return b.Client.Set(ctx, k("money"), "1e3", 0).Err() },
						func() error { return m.AddUser(ctx, "28", "Carol", 5) }},
				}
				// Integers that Redis's HINCRBY refuses, or that an increment
				// would take past 64 bits: they passed the checks, and the
				// write failed halfway (money made or lost).
				for _, bad := range []string{"0125", "+125", "-0", "99999999999999999999", "9223372036854775800"} {
					cases = append(cases,
						corruptCase{"buyer's funds " + bad, k("user:27"), "market user field funds",
							func() error { return b.Client.HSet(ctx, k("user:27"), "funds", bad).Err() },
							func() error { _, err := v.buy(m, ctx, "27", "17", "ItemA", 10); return err }},
						corruptCase{"seller's funds " + bad, k("user:17"), "market user field funds",
							func() error { return b.Client.HSet(ctx, k("user:17"), "funds", bad).Err() },
							func() error { _, err := v.buy(m, ctx, "27", "17", "ItemA", 10); return err }},
						corruptCase{"funds of a deposit " + bad, k("user:27"), "market user field funds",
							func() error { return b.Client.HSet(ctx, k("user:27"), "funds", bad).Err() },
							func() error { _, err := m.AddFunds(ctx, "27", 5); return err }})
				}
				for _, c := range cases {
					good := snapshot(t, b)
					require.NoError(t, c.corrupt())
					before := snapshot(t, b)
					err := c.call()
					var kerr *ria.KeyError
					if assert.ErrorAs(t, err, &kerr, c.name) {
						assert.ErrorIs(t, err, ria.ErrCorrupt, c.name)
						assert.Equal(t, c.key, kerr.Key, c.name)
						assert.Equal(t, c.role, kerr.Role, c.name)
					}
					assert.Equal(t, before, snapshot(t, b), "%s: nothing changed", c.name)
					// Repair: the state as it was.
					require.NoError(t, b.Client.HSet(ctx, k("user:27"), "funds", "125").Err())
					require.NoError(t, b.Client.HSet(ctx, k("user:17"), "funds", "0").Err())
					require.NoError(t, b.Client.Set(ctx, k("money"), "125", 0).Err())
					assert.Equal(t, good, snapshot(t, b), "%s: repaired", c.name)
				}
			})
		}
	})
}
