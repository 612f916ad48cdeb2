// Package market is the marketplace of Redis in Action (sections 4.4 and
// 6.2): users with funds and inventories, items listed for sale at a price,
// purchases that move the money and the item at once, and listings their
// seller takes back (which the book lacks).
//
//	m, err := market.New(rdb, "game")            // one market, one Cluster slot
//	err = m.AddUser(ctx, "17", "Frank", 0)
//	err = m.AddUser(ctx, "27", "Bill", 125)
//	err = m.AddItem(ctx, "17", "ItemA")
//	err = m.List(ctx, "17", "ItemA", 10)         // inventory -> market
//	paid, err := m.Buy(ctx, "27", "17", "ItemA", 10)
//	// Bill: 115 and ItemA; Frank: 10; the listing is gone.
//	// errors.Is(err, market.ErrNotListed / ErrInsufficientFunds / ...)
//	err = m.AddItem(ctx, "17", "ItemB")
//	err = m.List(ctx, "17", "ItemB", 500)        // nobody buys it at that price
//	err = m.Unlist(ctx, "17", "ItemB")           // market -> inventory: Frank holds ItemB again
//
// Listing comes in two variants and purchase in three, to compare the
// book's techniques (see the benchmarks):
//
//   - [Market.List] and [Market.Buy]: one Lua script each, 1 round trip,
//     never retried, never contended. Use these. [Market.Unlist], which
//     takes a listing back, has only this variant.
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
//     clients, and through lost replies (below).
//   - Taking a listing back ([Market.Unlist]) is all or nothing too: the
//     listing leaves the market and the item returns to the seller's
//     inventory, or nothing changes ([ErrNotListed]: only the seller's own
//     listing, still on the market, can be taken back). A listing is sold
//     or taken back, never both; an item is never both listed and in an
//     inventory, and never lost. It checks the listings' and the
//     inventory's types before its first write, like every script.
//   - A purchase checks, atomically with its writes, that the item is listed
//     by that seller at no more than the buyer's limit (maxPrice: the book's
//     check that the price did not change, relaxed to "at most"; the buyer
//     pays the listed price) and that the buyer's funds cover it.
//   - Nothing is half-written. Redis does not roll back a script that fails
//     midway, nor the other commands of a MULTI/EXEC when one fails, so
//     every operation checks, before its first write, the type of every key
//     it writes or relies on and every value it parses (funds, the money
//     supply, a listing's price): the scripts with check_types, check_int
//     and check_hint, the WATCH variants with TYPE in their watched reads
//     (every key they write is WATCHed, so the checks still hold at EXEC).
//     A key someone else wrote makes the call fail with a *ria.KeyError
//     naming the key and its role ([ria.ErrWrongType], [ria.ErrCorrupt])
//     and change nothing. The reads ([Market.User], [Market.Inventory],
//     [Market.Listings], ...) name such a key the same way.
//   - Buying your own listing is refused ([ErrOwnListing]) before reaching
//     Redis. Bad input (empty IDs, an item ID with '.', a price outside
//     [1, [MaxPrice]], a deposit outside [0 or 1, [MaxFunds]]) is refused
//     with an error naming it, before reaching Redis. A deposit that would
//     take the money supply past [MaxFunds] is refused by the script
//     ([ErrMoneyLimit]), so no input can break a market.
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
// # Lost replies
//
// go-redis re-sends a command whose reply was lost or timed out (MaxRetries,
// 3 by default), so a state-changing call may reach Redis twice. Every call
// answers what happened:
//
//   - The scripts ([Market.AddUser], [Market.AddFunds], [Market.AddItem],
//     [Market.List], [Market.Unlist], [Market.Buy]) record their reply under a key of the
//     call, <prefix>{M}:once:<nonce>, for the client's retry window; a
//     re-send finds the record and gets the first run's answer instead of
//     running again. A deposit is made once, a purchase is made once, a
//     listing is taken back once, and a call that succeeded never comes
//     back as ErrUserExists, ErrItemExists, ErrNotOwned or ErrNotListed. A client with MaxRetries -1
//     (on a Cluster, MaxRedirects -1 too) never re-sends, and keeps no
//     records.
//   - The WATCH variants ([Market.ListWatch], [Market.BuyWatch],
//     [Market.BuyLocked]): go-redis does not re-send EXEC (the transaction's
//     connection is gone), so a lost EXEC reply leaves the outcome open.
//     Each transaction WATCHes a record key of its own and writes it in its
//     MULTI; the call then settles the outcome in one more round trip with
//     SET record NX GET: the record is there if EXEC committed; if not, the
//     SET writes it, which changes a WATCHed key, so that the EXEC, should
//     it still reach Redis late, aborts. A transaction settled as not
//     committed, or a transport error before EXEC (only reads had been
//     sent), starts over, up to 4 tries within [WithTimeout].
//   - Only when no answer comes at all (every re-send, or the settling,
//     failed) does a call return an error wrapping [ria.ErrOutcomeUnknown]:
//     it may or may not have taken effect; read the state back
//     ([Market.Inventory], [Market.Funds]) before trying again. A sentinel
//     refusal ([ErrNotListed], [ErrUserExists]...) always means nothing
//     changed, and so does any other error that does not wrap
//     ria.ErrOutcomeUnknown (a *ria.KeyError, ctx's error, a transport error
//     of a WATCH variant before EXEC).
//
// # Limits
//
//   - Amounts are int64 whole units (cents, say; the book uses integers).
//     Prices are at most [MaxPrice] = 2^53, the range in which a sorted set's
//     float64 score is exact; a price limit above it means any price. The
//     money supply (sum of all deposits) is at most [MaxFunds] = 2^53, so
//     every balance is too: no balance can overflow and every comparison in
//     the scripts (Lua numbers are float64) is exact.
//   - There is no way to withdraw money or to delete a user or an item; the
//     book has none either. A listing can be taken back ([Market.Unlist],
//     which the book lacks) but not repriced in place: Unlist then List
//     takes 2 round trips, with the item off the market in between, and an
//     Unlist refused with [ErrNotListed] may mean a buyer took it at the
//     old price first. Unlist has no WATCH or lock variant.
//   - One market is one hash slot of a Cluster (see below): its throughput is
//     that of one Redis node. Shard by market name for more.
//   - The WATCH variants watch the whole listings set, as the book does: on a
//     busy market every purchase or listing makes every other WATCH purchase
//     or listing retry ([ErrContended] once the timeout passes). ListWatch
//     watches the listings too (the book watches only the inventory), since
//     it writes them. BuyLocked serialises the market's purchases, four round
//     trips each under the lock.
//   - Each blocked BuyLocked holds a connection of the client's pool while it
//     waits (package lock's blocking wait).
//   - Reply records take memory for the client's retry window: one small
//     STRING per state-changing call. The window is read from the client's
//     options: MaxRetries times (PoolTimeout + WriteTimeout + ReadTimeout +
//     MaxRetryBackoff), plus a second, at most 5 minutes; a script's record
//     lives 52 s with go-redis v9's default options (less when ctx's
//     deadline is nearer; none with MaxRetries -1), and a WATCH
//     transaction's record the window (at least 10 s) plus 5 s for the
//     settling: 57 s with the defaults, 15 s at least.
//   - miniredis (v2.40.0) does not abort a WATCH transaction when ZREM
//     removes one member of a watched sorted set that does not become empty,
//     so on miniredis BuyWatch and BuyLocked can sell an item twice when Buy
//     or BuyWatch run at the same time, or sell an item that Unlist took
//     back meanwhile. Real Redis aborts them; the package's concurrency
//     tests of those variants (and of BuyLocked mixed with Unlist) run on
//     real servers.
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
//	market:{M}:once:<nonce>    STRING  one call's reply record (scripts) or
//	                                   transaction record ("1" committed, "0"
//	                                   settled as not), PX the retry window
//	market:lock:{M}:...        the market lock (package lock, prefix "market:lock:",
//	                           lock name M); its fence key stays
//
// Item IDs must not contain '.', so a listing's member splits at its first
// '.'; user IDs may hold any character. A *ria.KeyError names a key's role:
// "market user", "market inventory", "market listings", "market items",
// "market money".
//
// # Round trips
//
// Once the scripts are cached on the server (the first call of each script
// costs one more: EVALSHA answered NOSCRIPT, then EVAL), with the commands
// Redis runs (the checks included; measured on redis 7.0):
//
//	                               round trips   commands on the server
//	AddUser, AddFunds              1             10, 11 (Lua)
//	AddItem, List                  1             9, 7 (Lua)
//	Unlist                         1             7 (Lua; 6 when refused)
//	Buy                            1             15 (Lua; 10 when refused)
//	User, Funds, Inventory, Price, 1             1-2 (one pipeline of reads)
//	Listings, Totals
//	ListWatch                      3             9: WATCH; TYPE x2, SISMEMBER;
//	                                             MULTI, ZADD, SREM, SET, EXEC
//	BuyWatch                       3             15: WATCH; TYPE x4, ZSCORE, HGET x2;
//	                                             MULTI, HINCRBY x2, SADD, ZREM, SET, EXEC
//	BuyLocked                      5             BuyWatch's 15 plus the lock's:
//	                                             acquire; WATCH; reads; MULTI/EXEC; release
//
// uncontended; a WATCH variant refused by its checks also takes 3 (UNWATCH
// replaces MULTI/EXEC). Each WATCH retry costs 3 more, and settling a lost
// EXEC reply 1 more. A BuyLocked that finds the lock taken is queued by its
// acquire attempt and pays 1 more per blocking wait (one when a release
// hands it the lock: 6 in all).
//
// # Redis Cluster
//
// Every key of market M, and of its lock, carries the hash tag {M}: one
// market lives in one slot, so every script and transaction touches a single
// slot and no CROSSSLOT error is possible. Different markets spread over the
// cluster. Works unchanged with *redis.Client, *redis.ClusterClient and
// *redis.Ring.
package market
