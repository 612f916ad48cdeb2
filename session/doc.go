// Package session keeps the web-app state of Redis in Action chapter 2 in
// Redis: login tokens with each session's recent activity, shopping carts,
// a cache of rendered pages for the most viewed items, a cache of database
// rows refreshed on a schedule, and the view ranking that decides which
// pages are worth caching.
//
//	st, err := session.New(rdb, "shop")
//	...
//	// On every request:
//	user, ok, err := st.CheckToken(ctx, token)
//	err = st.UpdateToken(ctx, token, user, itemID) // itemID "" when none
//	err = st.AddToCart(ctx, token, "item-7", 2)    // 0 takes it out
//	page, err := st.CacheRequest(ctx, r.URL.RequestURI(), render)
//
//	// In the background, each loop owned by its caller:
//	cl, _ := st.Cleaner(10_000_000) // keep at most 10M sessions
//	go cl.Run(ctx)
//	rs, _ := st.Rescaler()
//	go rs.Run(ctx)
//	rc, _ := st.RowCacher(loadRow)
//	go rc.Run(ctx)
//	err = st.ScheduleRowCache(ctx, "row-42", 5*time.Second)
//
// # What it does, and how it differs from the book
//
//   - [Store.UpdateToken] records a request in one round trip: one script
//     maps the token to its user, marks the session as seen, adds the item
//     to the session's last [ViewedLimit] (25) viewed items and counts the
//     view in the ranking (ZINCRBY -1, as the book, so rank 0 is the most
//     viewed). The book sends up to five commands, one round trip each.
//   - A [Cleaner] keeps at most a limit of sessions by deleting the oldest,
//     each with its login entry, its recent entry, its viewed items and its
//     cart, in batches of 100 that are each one atomic script (the book's
//     clean_full_sessions deletes them with three separate commands and
//     can delete a session that was seen again meanwhile; here such a
//     session is skipped). [Store.AddToCart] also marks the session as
//     seen, so a cart never outlives the cleaner's tracking.
//   - [Store.CanCache] and [Store.CacheRequest] cache the pages of items
//     among the most viewed ([DefaultCacheTop]: 10,000) for
//     [DefaultPageTTL] (300 s). A request is an item page when its query
//     has a non-empty "item" parameter, and dynamic (never cached) when its
//     query has a "_" parameter. The rank check and the lookup are one
//     script.
//   - [Store.ScheduleRowCache] and a [RowCacher] keep database rows cached
//     as JSON, each reloaded every delay by a [Loader] you supply. A delay
//     <= 0 stops caching the row and deletes its copy at once (the book
//     waits for the loop), and a load in flight cannot write it back.
//   - A [Rescaler] trims the ranking to twice the cacheable top (the book's
//     20,000) and halves every count, atomically, every 5 minutes.
//   - The book's `while not QUIT` threads are [Cleaner.Run],
//     [RowCacher.Run] and [Rescaler.Run]: they stop when ctx ends, finish
//     the unit of work in flight, ride out transient Redis errors with
//     backoff, and have single-pass twins ([Cleaner.Clean],
//     [RowCacher.CacheDue], [Rescaler.Rescale]) for tests and cron jobs.
//
// # Clocks
//
// Session and view times come from the Redis server's TIME, inside the
// scripts, so every web server agrees on which sessions are oldest; a
// session's viewed items are scored strictly increasing, so their order
// survives a clock step. The row schedule follows the RowCacher's clock
// ([WithClock], default time.Now), as the book's time.time(): run the
// RowCachers of one app on hosts whose clocks agree.
//
// # Limits
//
//   - Sessions have no TTL: without a running [Cleaner] they accumulate.
//     A Cleaner deletes only the sessions beyond its limit, oldest first.
//   - Concurrent misses of one page each call render (no stampede
//     protection). Pages and rows live as long as their TTL or schedule.
//   - The view ranking counts every view of [Store.UpdateToken] with an
//     item; counts are negative (ZINCRBY -1) and halved by each rescale.
//   - A failover that loses recent writes (asynchronous replication) can
//     lose sessions, carts and views.
//
// # Keys
//
// With the default prefix "session:" and an app called A:
//
//	session:{A}:login          HASH    token -> user
//	session:{A}:recent         ZSET    token -> last seen (server Unix µs)
//	session:{A}:viewed:<token> ZSET    item -> view time (server Unix µs); the newest 25
//	session:{A}:cart:<token>   HASH    item -> count
//	session:{A}:views          ZSET    item -> minus its (halved) view count
//	session:{A}:page:<sha256>  STRING  rendered page of a request; TTL 300 s
//	session:{A}:delay          ZSET    row ID -> re-caching period (ms)
//	session:{A}:schedule       ZSET    row ID -> next due (Unix ms of the RowCacher's clock; 0: at once)
//	session:{A}:row:<row ID>   STRING  the row's JSON
//
// A page key is named by the hex SHA-256 of the request string. Every
// script receives all the keys it touches in KEYS.
//
// # Round trips
//
// Once the server has cached the scripts (the first call of each script on
// a server costs one more: EVALSHA answered NOSCRIPT, then EVAL):
// [Store.UpdateToken] 1, [Store.CheckToken] 1, [Store.AddToCart] 1,
// [Store.Cart] 1, [Store.Viewed] 1, [Store.Sessions] 1; [Store.CanCache]
// 1 (0 when the URL is not an item page or is dynamic); [Store.CacheRequest]
// 1 on a hit or when the item is not in the top, 2 on a miss (plus render),
// 0 when the URL rules caching out; [Store.ScheduleRowCache] 1, [Store.Row]
// 1; [Cleaner.Clean] 1 when nothing is over the limit, else 2 per batch;
// [RowCacher.CacheDue] 1 plus 1 per row due; [Rescaler.Rescale] 1.
//
// # Redis Cluster
//
// The login, recent and views indexes are global to an app and each
// script touches them together with per-session keys, so every key of an
// app carries the hash tag {A}: one app lives in one Cluster slot, on one
// node, pages and rows included. Different apps (for instance one per
// tenant or per site) spread over the cluster. Nothing here can cause a
// CROSSSLOT error. Works unchanged with *redis.Client, *redis.ClusterClient
// and *redis.Ring.
package session
