// Package market is the marketplace of Redis in Action (sections 4.4 and
// 6.2): users with funds and inventories, items listed for sale at a price,
// and purchases that move the money and the item at once.
//
//	m, err := market.New(rdb, "game")            // one market, one Cluster slot
//	err = m.AddUser(ctx, "17", "Frank", 0)
//	err = m.AddUser(ctx, "27", "Bill", 125)
//	err = m.AddItem(ctx, "17", "ItemA")
//	err = m.List(ctx, "17", "ItemA", 10)         // inventory -> market
//	paid, err := m.Buy(ctx, "27", "17", "ItemA", 10)
//	// Bill: 115 and ItemA; Frank: 10; the listing is gone.
//	// errors.Is(err, market.ErrNotListed / ErrInsufficientFunds / ...)
//
// Listing comes in two variants and purchase in three, to compare the
// book's techniques (see the benchmarks):
//
//   - [Market.List] and [Market.Buy]: one Lua script each, 1 round trip,
//     never retried, never contended. Use these.
//   - [Market.ListWatch] and [Market.BuyWatch]: the book's list_item and
//     purchase_item, WATCH/MULTI/EXEC retried while the watched keys change,
//     until a deadline ([WithTimeout], default 10s), with jittered backoff
//     between attempts, then [ErrContended] (the book retries at once, which
//     feeds the contention, and reports giving up like a refusal).
//   - [Market.BuyLocked]: the book's purchase_item_with_lock, which locks
//     the whole market, corrected: see below.
//
// # Guarantees
//
//   - Every purchase is all or nothing: the price leaves the buyer and
//     reaches the seller, the item reaches the buyer's inventory and the
//     listing is removed, or nothing changes. A listing is sold at most once,
//     funds never go negative, and money and items are conserved: the users'
//     funds add up to [Totals].Money (every deposit ever made) and the
//     inventories and listings hold exactly [Totals].Items items, each in one
//     place. This holds with all variants used at once, by any number of
//     clients.
//   - A purchase checks, atomically with its writes, that the item is listed
//     by that seller at no more than the buyer's limit (maxPrice: the book's
//     check that the price did not change, relaxed to "at most"; the buyer
//     pays the listed price) and that the buyer's funds cover it.
//   - Buying your own listing is refused ([ErrOwnListing]) before reaching
//     Redis. Bad input (empty IDs, an item ID with '.', a price outside
//     [1, [MaxPrice]], a negative deposit) is refused with an error naming
//     it, before reaching Redis.
//   - Item IDs are unique within a market ([Market.AddItem] refuses a known
//     ID): with the book's per-user item names, two users holding "ItemA"
//     would merge into one when either bought the other's, and an item would
//     vanish.
//
// BuyLocked is the book's function with its flaws fixed: the lock (package
// lock) has a TTL and is extended while held, so a crashed buyer blocks the
// market for at most the TTL ([WithLockTTL], default 5s) instead of forever;
// it is released only by its holder; waiters queue first come first served
// and block without polling, for at most [WithTimeout]; the reads are one
// pipelined round trip; funds are compared as integers. Under the lock the
// purchase still WATCHes the listings and the buyer: the lock serialises
// BuyLocked callers, so the WATCH does not fail among them, but it keeps the
// purchase exact if the lock expires under a stalled holder, or if Buy or
// BuyWatch change the market meanwhile (they do not take the lock); the book's
// version would then sell an item twice or overdraw the buyer.
//
// # Limits
//
//   - Amounts are int64 whole units (cents, say; the book uses integers).
//     Prices are at most [MaxPrice] = 2^53, the range in which a sorted set's
//     float64 score is exact. The money supply (sum of all deposits) is at
//     most 2^63-1; a deposit that would pass it fails with Redis's overflow
//     error and writes nothing. So no balance can overflow.
//   - There is no way to withdraw money, delete a user or an item, or take a
//     listing back; the book has none either.
//   - One market is one hash slot of a Cluster (see below): its throughput is
//     that of one Redis node. Shard by market name for more.
//   - The WATCH variants watch the whole listings set, as the book does: on a
//     busy market every purchase or listing makes every other WATCH purchase
//     retry ([ErrContended] once the timeout passes). BuyLocked serialises
//     the market's purchases, four round trips each under the lock.
//   - Each blocked BuyLocked holds a connection of the client's pool while it
//     waits (package lock's BLPOP).
//   - A refusal (a sentinel error) means nothing changed. A transport error
//     or timeout after the request left (EVALSHA or EXEC sent) leaves the
//     outcome unknown: check [Market.Inventory] before buying again.
//   - miniredis (v2.40.0) does not abort a WATCH transaction when ZREM
//     removes one member of a watched sorted set that does not become empty,
//     so on miniredis BuyWatch and BuyLocked can sell an item twice when Buy
//     or BuyWatch run at the same time. Real Redis aborts them; the
//     package's concurrency tests of those variants run on real servers.
//   - Listings returns the cheapest listings; there is no paging or search.
//
// # Keys
//
// With the default prefix "market:" and a market named M:
//
//	market:{M}:user:<id>       HASH    name, funds (integer)
//	market:{M}:inventory:<id>  SET     item IDs the user holds (not listed)
//	market:{M}:listings        ZSET    "<item>.<seller>" scored by price (the book's "market:")
//	market:{M}:items           SET     every item ID of the market
//	market:{M}:money           STRING  the money supply: sum of all deposits
//	market:lock:{M}:...        the market lock (package lock, prefix "market:lock:",
//	                           lock name M): owner, queue, waiters, grants; and
//	                           fence, one small key that stays
//
// Item IDs must not contain '.', so a listing's member splits at its first
// '.'; user IDs may hold any character.
//
// # Round trips
//
// Once the scripts are cached on the server (the first call of each script
// costs one more: EVALSHA answered NOSCRIPT, then EVAL):
//
//	AddUser, AddFunds, AddItem, List, Buy              1 (one Lua script)
//	User, Funds, Inventory, Price, Listings, Totals    1 (one pipeline of reads)
//	ListWatch                                          3: WATCH; SISMEMBER; MULTI/EXEC
//	BuyWatch                                           3: WATCH; ZSCORE+HGET; MULTI/EXEC
//	BuyLocked                                          5: lock acquire; WATCH; ZSCORE+HGET;
//	                                                      MULTI/EXEC; lock release
//
// uncontended; a WATCH variant refused by its checks also takes 3 (UNWATCH
// replaces MULTI/EXEC). Each WATCH retry costs 3 more; a BuyLocked that
// finds the lock taken is queued by its acquire attempt and pays 1 more per
// blocking wait (one when a release hands it the lock: 6 in all).
//
// # Redis Cluster
//
// Every key of market M, and of its lock, carries the hash tag {M}: one
// market lives in one slot, so every script and transaction touches a single
// slot and no CROSSSLOT error is possible. Different markets spread over the
// cluster. Works unchanged with *redis.Client, *redis.ClusterClient and
// *redis.Ring.
package market
