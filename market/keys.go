package market

import "github.com/ria-go/ria/internal/keys"

// The keys of one market are <prefix>{<market name>}:<part>. Every key of a
// market shares the {<market name>} hash tag, so a market lives in one
// Cluster slot and every script and transaction touches a single slot. The
// market lock's keys (package lock, prefix <prefix>lock:, lock name = market
// name) carry the same tag.

// user is the HASH of user id: fields name and funds (an integer).
func (k keySet) user(id string) string { return k.space.Key(k.market, "user:"+id) }

// inventory is the SET of the item IDs user id holds (not listed).
func (k keySet) inventory(id string) string { return k.space.Key(k.market, "inventory:"+id) }

// keySet holds the fixed keys of one market, built once by [New].
type keySet struct {
	space  keys.Space
	market string
	// listings is a ZSET of "<item>.<seller>" scored by price.
	listings string
	// items is a SET of every item ID ever added to the market: item IDs
	// are unique within a market.
	items string
	// money is a STRING integer, the sum of every deposit (AddUser funds,
	// AddFunds amounts): the money supply, which trades never change.
	money string
}

func newKeySet(space keys.Space, market string) keySet {
	return keySet{
		space:    space,
		market:   market,
		listings: space.Key(market, "listings"),
		items:    space.Key(market, "items"),
		money:    space.Key(market, "money"),
	}
}

// member is the listings member of item sold by seller, as in the book:
// "<item>.<seller>". Item IDs hold no '.', so it splits at the first '.'.
func member(seller, item string) string { return item + "." + seller }
