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
//	// On checkout, and on logout:
//	err = st.ClearCart(ctx, token)
//	existed, err := st.Logout(ctx, token) // false: it had ended already
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
//     viewed; [Store.TopViewed] reads it with the counts). The book sends
//     up to five commands, one round trip each.
//   - A [Cleaner] keeps at most a limit (at least 1) of sessions by
//     deleting the oldest, each with its login entry, its recent entry, its
//     viewed items and its cart, in batches of 100 that are each one atomic
//     script that finds and deletes them (the book's clean_full_sessions
//     reads, then deletes with three separate commands, and can delete a
//     session that was seen again meanwhile). [Store.AddToCart] also marks
//     the session as seen, so a cart never outlives the cleaner's tracking.
//     [WithKeepCarts] keeps the carts instead (the book's clean_sessions).
//   - [Store.Logout] ends one session (the book has no logout): one atomic
//     script deletes what the cleaner deletes of a session, its cart
//     always included, and answers whether the session existed.
//     [Store.ClearCart] empties a cart (a checkout) and leaves the session
//     logged in.
//   - [Store.CanCache] and [Store.CacheRequest] cache the pages of items
//     among the most viewed ([DefaultCacheTop]: 10,000) for
//     [DefaultPageTTL] (300 s). A request is an item page when its query
//     has a non-empty "item" parameter, and dynamic (never cached) when its
//     query has a "_" parameter or does not parse (a bad % escape or a ';'
//     could hide a "_"). The rank check and the lookup are one script.
//   - [Store.ScheduleRowCache] and a [RowCacher] keep database rows cached
//     as JSON, each reloaded every delay by a [Loader] you supply. A delay
//     <= 0 stops caching the row and deletes its copy at once (the book
//     waits for the loop), and a load in flight cannot write it back; nor
//     can it when the row is scheduled again meanwhile, which caches it at
//     once. Each schedule and each store gives the row a new generation,
//     a number never given before; a RowCacher's store or drop writes only
//     if the row's generation is still the one it read when it picked the
//     row, whatever the due times and the RowCachers' clocks (comparing
//     due times could not tell a row rescheduled and cached again, by a
//     pass whose clock was read earlier, from the one picked).
//   - A [Rescaler] trims the ranking to twice the cacheable top (the book's
//     20,000) and halves every count, atomically, every 5 minutes.
//   - The book's `while not QUIT` threads are [Cleaner.Run],
//     [RowCacher.Run] and [Rescaler.Run]: they stop when ctx ends, finish
//     the unit of work in flight, ride out transient Redis errors with
//     backoff (logged to [WithLogger], slog.Default() by default), return
//     the first error that retrying cannot mend (a *ria.KeyError, for
//     instance), and have single-pass twins ([Cleaner.Clean],
//     [RowCacher.CacheDue], [Rescaler.Rescale]) for tests and cron jobs. A
//     [Loader] that panics does not kill the process: the panic is
//     recovered and reported ([ErrLoaderPanic]), and the row is tried again
//     after its delay.
//   - No script leaves a partial write. Each checks, before its first
//     write, the type of every key it touches, the keys it names itself
//     included (the cleaner's candidates' viewed items and carts). A key
//     holding something this package did not write there makes the call
//     fail with a *ria.KeyError naming the key and its role (for instance
//     "session viewed items"), matching ria.ErrWrongType, having changed
//     nothing: a failed UpdateToken logs nobody in. The plain reads
//     ([Store.CheckToken], [Store.Viewed], [Store.Cart], ...) name such a
//     key the same way.
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost (a dropped connection, a
// read timeout; MaxRetries, 3 by default), so a script may run twice. Every
// state-changing call answers truly all the same:
//
//   - Answered from a record: [Store.UpdateToken], with or without an
//     item (a view counts once, and a re-send does not log the token in
//     again after a Logout that ended the session meanwhile),
//     [Store.AddToCart] (a re-send does not put back an item that a
//     checkout cleared, or change a count another call set, meanwhile),
//     [Store.ClearCart] (a re-send does not delete an item added after the
//     clear), [Store.Logout] (a session that existed is not
//     reported gone by the re-send that finds it deleted),
//     [Store.ScheduleRowCache] (a re-send does not make the
//     row due again after a RowCacher cached it), a [Cleaner]'s batch (the
//     count deleted is exact), a [RowCacher]'s store and drop of a row (the
//     count is exact) and [Rescaler.Rescale] (the ranking is halved once)
//     run once-scripts: the first run records its reply under a key of its
//     own call, <prefix>{A}:once:<nonce>, a STRING that lives for the
//     client's retry window, and a re-send is answered from it without
//     running again, whatever other clients wrote in between. A refusal (a
//     *ria.KeyError) comes before the script's first write and is not
//     recorded. The window
//     is read from the client's options: MaxRetries times (PoolTimeout +
//     WriteTimeout + ReadTimeout + MaxRetryBackoff), plus a second, at
//     most 5 minutes; 52 s with go-redis v9's defaults, none (no record is
//     written) with MaxRetries -1 (on a Cluster, MaxRedirects -1 too).
//     Every call of these keeps one record: UpdateToken runs on every
//     request, and AddToCart and ClearCart on every cart change, each
//     keeping a record of about 120 bytes for the window (measured on
//     Redis 7.0 with the default prefix), so 1,000 such calls/s keep some
//     6 MB with the defaults; give the web servers a client with fewer
//     retries or shorter timeouts to shrink it.
//   - Naturally idempotent: the page store of [Store.CacheRequest] (SET
//     with the TTL: a re-send stores the same page again).
//
// When every attempt lost its reply, the call returns an error wrapping
// ria.ErrOutcomeUnknown: it may or may not have taken effect. Calling
// again is harmless for every call but Rescale (which may then halve
// twice) and UpdateToken with an item (which may count the view twice);
// Logout called again ends the session all the same, but may answer false.
// The loops run their units again themselves: a Cleaner's batch run again
// deletes only sessions still over the limit (never below it), a
// RowCacher's store run again finds the row with a new generation and
// writes nothing, and a Rescaler retries an unknown rescale with the record
// of its first attempt (see [Rescaler.Run]). A refusal (an [ErrInvalid]
// error, a *ria.KeyError) always means that the call changed nothing.
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
//     A Cleaner deletes only the sessions beyond its limit, oldest first,
//     and its limit is at least 1 (to log one session out, call
//     [Store.Logout]; to log everyone out, delete the app's keys).
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
//	session:{A}:schedule       ZSET    row ID -> next due (Unix ms of the RowCacher's clock;
//	                                   at once: below 0, the server's µs at scheduling - 2^52)
//	session:{A}:row:<row ID>   STRING  the row's JSON
//	session:{A}:rowgen         HASH    row ID -> generation (the integer minted by its
//	                                   last schedule or store)
//	session:{A}:rowgen:last    STRING  the last generation minted (an integer, from the
//	                                   server's µs when new); it stays
//	session:{A}:once:<nonce>   STRING  the reply of one call of a once-script; TTL the
//	                                   client's retry window (see Lost replies)
//
// A page key is named by the hex SHA-256 of the request string. Every
// script receives the keys it touches in KEYS, but for the clean script,
// which names the viewed and cart keys of the sessions it deletes from
// their prefixes (declared in KEYS) and the tokens it reads; the hash tag
// keeps them in the app's slot. App names must not hold '{' or '}' (they
// would move the hash tag, or let two apps share a key).
//
// # Round trips
//
// Once the server has cached the scripts (the first call of each script on
// a server costs one more: EVALSHA answered NOSCRIPT, then EVAL):
// [Store.UpdateToken] 1, [Store.CheckToken] 1, [Store.AddToCart] 1,
// [Store.Cart] 1, [Store.ClearCart] 1 (one script), [Store.Logout] 1 (one
// script), [Store.Viewed] 1, [Store.TopViewed] 1, [Store.Sessions] 1; [Store.CanCache]
// 1 (0 when the URL is not an item page or is dynamic); [Store.CacheRequest]
// 1 on a hit or when the item is not in the top, 2 on a miss (plus render),
// 0 when the URL rules caching out; [Store.ScheduleRowCache] 1 (one
// script), [Store.Row] 1; [Cleaner.Clean] 1 per batch, 1 when nothing is
// over the limit; [RowCacher.CacheDue] 1 plus 1 per row due;
// [Rescaler.Rescale] 1 (one script). Every call sends one command per
// round trip.
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
