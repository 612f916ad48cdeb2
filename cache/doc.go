// Package cache holds the read- and write-caching patterns of the usage blog
// (seeds/004): a typed read-through cache with stampede protection across
// processes, stale-while-revalidate and an optional in-process near cache
// invalidated across processes, counters restored from the system of
// record when Redis loses them, a once-per-window guard, a GCRA rate
// limiter (the go-redis/redis_rate contract), latest-N lists, top-N
// rankings, and a batch that reads all of these in one round trip.
//
//	jobs, _ := cache.New[Job](rdb, "jobs", cache.WithTTL(time.Minute),
//		cache.WithRefreshAhead(10*time.Second))
//	job, err := jobs.Get(ctx, "42", func(ctx context.Context) (Job, error) {
//		return db.Job(ctx, 42) // one caller in the whole fleet runs this per miss
//	})
//
//	views, _ := cache.NewCounter(rdb, "job-views", func(ctx context.Context, key string) (int64, error) {
//		return db.CountViews(ctx, key) // when Redis has lost the counter
//	})
//	n, err := views.Incr(ctx, "42", 1)
//
//	resets, _ := cache.NewGuard(rdb, "password-reset")
//	if ok, _ := resets.Allow(ctx, userID, 5*time.Second); ok { sendEmail() }
//
//	api, _ := cache.NewLimiter(rdb, "api")
//	r, err := api.Allow(ctx, clientIP, cache.PerSecond(10)) // r.Allowed, r.Remaining, r.RetryAfter
//
//	b := cache.NewBatch(rdb)
//	session := sessions.Read(b, userID, loadSession)
//	counts := []*cache.Result[int64]{views.Read(b, "42"), views.Read(b, "43")}
//	err = b.Exec(ctx) // one round trip when everything is cached
//
// # What it fixes in the blog
//
//   - Stampedes. The blog's get-then-setex lets every worker that misses run
//     the heavy task; its "task flag" version makes the others sleep a fixed
//     time and read again (nothing if the task was slower), and its flag
//     outlives a crashed task. Here a Get's first command both reads the
//     entry and, on a miss, takes its lease: SET val <lease marker> NX PX
//     lease GET answers a hit with the value, as a GET does, and on a miss
//     leaves the caller's marker (its token, PX lease) where the value will
//     be. The loader stores with a compare-and-set that checks its marker;
//     everyone else registers as a waiter of that lease (a marker flag, so
//     the store knows someone waits: no server work when nobody does) and
//     blocks on the lease's own wake list (BLMOVE, no polling), receiving
//     the value the store pushes there. Concurrent Gets of a key in one
//     process share one Get: one read, one wait or load, and its result
//     (its error too, if its load failed; a loaded value that was not
//     stored, because a Set or Delete ended its lease, goes to its loader's
//     caller only, and the others look again). A failed load wakes the
//     waiters of other processes at once and one takes over; a hung or dead
//     loader is replaced when its lease ends.
//   - Expiry cliffs. With [WithRefreshAhead] an entry close to its end is
//     returned as usual while one caller reloads it in the background; with
//     [WithStaleGrace] an expired entry is kept for a grace time and served
//     stale while one caller reloads it. Nobody waits for a reload.
//   - Stale writes. A Set or Delete during a load ends its lease, so the
//     loader (which may have read the data just invalidated) does not store
//     its value; its waiters, in every process, receive the Set value or
//     look again, and a Get that starts after the Set or Delete returned
//     never receives the value that load read.
//   - Counters that lose their value. The blog's INCR+EXPIRE starts an
//     expired counter at 1 and then overwrites it with the restored value,
//     losing the increments made in between, and every caller that sees 1
//     restores. [Counter.Incr] finds a missing counter and takes a restore
//     lease in one script; the restorer sets restored value + its increment
//     atomically, the others wait and then add theirs: one restore, no lost
//     increment. In one process, one caller per counter waits in Redis; the
//     others wait for it in memory.
//   - The password-reset limiter's EXISTS then SETEX is a race (two
//     requests both see no key and both send an email): [Guard.Allow] is one
//     SET NX PX.
//   - Latest-N lists push and trim in one script; rankings are typed.
//
// # Guarantees and limits
//
//   - Exactly one load per miss across all processes, as long as loads end
//     within the lease ([WithLease], default 10 s). A load that outlasts its
//     lease is returned to its caller but not stored, and a waiter starts
//     another: set the lease above the slowest load you expect. A
//     background refresh that outlasts the entry's remaining life may run
//     beside the load of the caller that then finds the entry missing.
//   - Refresh ahead and stale grace never make a caller wait; a failing
//     background reload is retried at most once a second (or once per
//     lease, if shorter) while the old value lasts.
//   - A Get that finds an entry it cannot decode (another program version
//     wrote it, or a person did) treats it as a miss and overwrites it, and
//     logs the decode error ([WithLogger]); a Batch read without a loader,
//     [Latest.List] and [Top.Range] return an error wrapping [ErrDecode].
//     No encoded value may start with the bytes of a lease marker,
//     "\x00ria:lease:" (no JSON, msgpack, gob or protobuf encoding does): Set
//     and Get refuse one that does.
//   - Waiters that give up (ctx) return at once; their blocked BLMOVE ends
//     within the lease or their ctx's deadline, then frees its connection.
//     Each blocked waiter holds a connection of the client's pool, but only
//     one caller per entry or counter and process blocks (the others wait
//     in memory): size PoolSize above the number of entries and counters a
//     process may wait for at once.
//   - A load or restore function that panics gives its lease back (waiters
//     elsewhere take over at once) and the panic reaches the caller of Get,
//     Incr or [Batch.Exec] (which re-panics in its own goroutine); in a
//     background refresh it is recovered and logged ([WithLogger]).
//   - Background refreshes are bounded by the lease; [Cache.Wait] waits
//     for those running (call it at shutdown, after the last Get).
//   - A loader hands values up to 64 KiB to its waiters through the lease's
//     wake list, which holds that second copy for at most the lease (it
//     exists only when someone waited); waiters re-read larger values (one
//     more round trip).
//   - Redis is the source of truth for the lease, so a failover that loses
//     a fresh lease can let a second caller load (a duplicate load, never a
//     wrong value). Redis unreachable: Get returns the error without
//     loading.
//   - Every process sharing a name (and prefix) must use the same type,
//     codec, TTL and grace.
//   - A key of another Redis type, a counter that is not an integer (as
//     INCRBY reads one), or a rate limit's TAT that is not one as the
//     limiter writes it, where the package expects its own gives a
//     [*ria.KeyError] naming the key and its role (matching
//     [ria.ErrWrongType] or [ria.ErrCorrupt]):
//     every script checks the keys it relies on before its first write, so
//     the call changed nothing. A counter sum beyond the int64 range gives
//     [ErrOverflow], also before any write.
//   - Numbers are bounded: durations (TTLs, leases, windows, grace) at most
//     [MaxDuration], list lengths and ranges at most [MaxN], scores finite;
//     a [Limit]'s full burst refills within MaxDuration, and a request asks
//     for at most its Burst.
//     Guard.Allow needs Redis 7.0 or later (SET with both NX and GET), as
//     does Get (the same command).
//
// # Near cache
//
// [WithNear](size, maxStale) puts an in-process near cache in front of
// Redis (what Redisson's RLocalCachedMap gives): a Get of a key this
// process read lately returns from memory, with no round trip; a miss
// there is today's Get (one load per key across processes still), which
// fills it.
//
//	jobs, _ := cache.New[Job](rdb, "jobs", cache.WithNear(10_000, 5*time.Second))
//	defer jobs.Close() // stops the invalidation subscriber
//
// How it behaves:
//
//   - Bounded: at most size entries, evicted by CLOCK (second chance, O(1)
//     amortised: a hit sets a bit under a read lock). An entry holds the
//     encoded value, so each hit decodes its own copy, as a Get from Redis
//     does, and memory is about size × (key + encoded value).
//   - Never older than Redis says: an entry is served until the earliest
//     of maxStale after the read that filled it began, and the end of the
//     entry's fresh time in Redis as known then (its PTTL, read in the same
//     round trip as the value, less the refresh window and the stale
//     grace; for a value stored by this Get or the loader it waited for,
//     the TTL less the refresh window). An entry due for refresh or stale
//     is not kept near, so refresh ahead and stale grace work as without.
//   - Invalidated across processes: every write through a Cache of the
//     name (Set, Delete, a loader's store, a background refresh's store)
//     PUBLISHes the key on the channel <prefix>{N}:near from inside its own
//     script, so the write costs no extra round trip; each near cache of
//     the name subscribes to it (one Pub/Sub connection per Cache, and a
//     goroutine that [Cache.Close] stops) and drops the key when it hears
//     it. A process's own Set and Delete drop its entry before they
//     return, without waiting for their message.
//   - No stale fill: every key being read for the near cache carries a
//     version that an invalidation of the key bumps, and a flush an epoch;
//     a read that began before the invalidation or flush is not cached even
//     if it lands after it.
//   - Staleness bound. After another process changes a key through this
//     package, this process's near cache drops it once the invalidation
//     arrives: normally within the Pub/Sub latency (the server pushes it
//     to the subscriber as the write's script runs). Pub/Sub delivers at
//     most once: if the invalidation is lost, a value may be served up to
//     maxStale after another process changed it, never longer. When the subscription
//     breaks or is made again (connection lost, server restart, failover,
//     a ping unanswered for 5 s), the near cache is emptied and is not used
//     until the subscription is confirmed, since anything could have been
//     missed meanwhile.
//   - Not heard: writes made outside the package (a plain SET by another
//     program, an EXPIRE, a FLUSHDB) and writes of a process whose Cache of
//     the name lacks WithNear (it publishes nothing: give every process
//     WithNear) are bounded by maxStale only.
//   - Costs: a near miss reads the entry's PTTL with it (1 round trip, 2
//     commands); each write runs one PUBLISH more in its script; each near
//     cache holds one Pub/Sub connection. On a Cluster, PUBLISH is
//     broadcast to every node over the cluster bus (each write reaches
//     each node once, subscribed or not); sharded Pub/Sub (SPUBLISH) would
//     keep it on one node, but a script may only SPUBLISH to a channel of
//     its own slot, the entry's, so a near cache would need one channel per
//     slot, 16,384 SSUBSCRIBEs, followed across slot migrations. Not on a
//     *redis.Ring (New refuses it) or any client over independent servers
//     (a shard.Router): a script's PUBLISH reaches the subscribers of its
//     own server only.
//   - [Batch] reads go to Redis (one round trip for the whole batch) and
//     do not fill the near cache, except the misses they load through Get.
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost (a dropped connection, a
// read timeout; MaxRetries, 3 by default), so a command may run twice.
// Every state-changing call of this package answers truly all the same:
//
//   - Naturally idempotent: a Get's first command (a re-sent SET NX GET
//     finds the caller's own marker, so the caller knows it holds the
//     lease), a waiter's registration, the loader's store (a re-send finds
//     its own value and answers "stored" again), Set, Delete, the releases,
//     the background refresh check, Guard.Allow (SET key <nonce> NX PX GET:
//     a re-send within the window finds its own nonce and answers true; one
//     after it may find another call's key, so a refusal whose reply took
//     the window or longer is an unknown outcome, and a re-send after it
//     that finds the key free sets it again), Counter.Get (INCRBY 0; a
//     restore lease names its taker), and Latest.Clear (DEL).
//     With [WithNear], a re-sent Set or Delete publishes its invalidation
//     again (a key dropped twice: harmless); a re-sent store, none.
//   - Never re-sent: [Limiter.AllowN] runs its script in MULTI/EXEC, which
//     go-redis does not send again once written, so a request is never
//     counted twice; a lost reply is an error wrapping ria.ErrOutcomeUnknown
//     (counted once or not at all), and nothing is recorded. A lost reply
//     of a transaction that carried several calls (see Round trips) is an
//     unknown outcome for each of them.
//   - Answered from a record: [Counter.Incr], [Counter.Set], the
//     restore's final set, [Latest.Push], [Top.Incr], [Top.Add],
//     [Top.Remove], [Guard.Reset] and [Limiter.Reset] run once-scripts
//     (a re-sent Counter.Set, Top.Add or Reset that ran again would undo
//     a write another client made between its runs: an Incr, a call let
//     through, a request counted): the first run records
//     its reply under a key of its own call, <prefix>{N:K}:once:<nonce>, a
//     STRING that lives for the client's retry window, and a re-send is
//     answered from it. The window is read from the client's options:
//     MaxRetries times (PoolTimeout + WriteTimeout + ReadTimeout +
//     MaxRetryBackoff), plus a second, at most 5 minutes; 52 s with
//     go-redis v9's defaults, none (no record is written) with MaxRetries
//     -1. Mind the memory on hot paths: each call keeps about 200 bytes
//     for that window (measured on Redis 7.0: a 45-byte key, a 10-byte
//     reply, and Redis's per-key and expiry overhead), so 1,000 Incr/s
//     keep about 52,000 records, some 10 MB, with the defaults. Give a hot
//     counter a client with fewer retries or shorter timeouts to shrink
//     it, or MaxRetries -1 (on a Cluster, MaxRedirects -1 too) to keep
//     none (a lost reply is then an error
//     whose outcome is unknown, below). Counter.Get, Guard.Allow,
//     Latest.Clear and the Cache's calls keep none.
//
// When every attempt lost its reply, the call returns an error wrapping
// [ria.ErrOutcomeUnknown]: it may or may not have taken effect; read the
// state to find out. A refusal (Guard.Allow's false, a KeyError,
// ErrOverflow) always means the call changed nothing (for Guard.Allow,
// unless a Guard.Reset of its key came between its run and its re-send). A Get whose first
// command failed that way gives back the lease it may have taken.
//
// # Keys
//
// With the default prefix "cache:", a Cache, Counter, Guard, Latest or Top
// named N and a key K:
//
//	cache:{N:K}:val              STRING  a Cache entry: the encoded value, PX ttl+grace;
//	                                     while a caller loads it, its lease marker
//	                                     "\x00ria:lease:"+token (+":w" once a waiter
//	                                     registered), PX lease
//	cache:{N:K}:lease            STRING  the token of the caller refreshing the entry in
//	                                     the background, PX lease
//	cache:{N:K}:wake:<token>     LIST    "v"+value or "r" (look again) for the waiters of
//	                                     lease <token>; PX lease
//	cache:{N:K}:count            STRING  a Counter, PX ttl from its last use
//	cache:{N:K}:count.lease      HASH    t = restorer's token, w = waiters; PX lease
//	cache:{N:K}:count.wake:<t>   LIST    "r" when restore t is done or abandoned; PX lease
//	cache:{N:K}:guard            STRING  the nonce of the call let through, PX window
//	cache:{N:K}:rate             STRING  a Limiter's theoretical arrival time (µs of Redis's
//	                                     clock), PX until then
//	cache:{N:K}:latest           LIST    a Latest list, encoded values, newest first
//	cache:{N:K}:top              ZSET    a Top ranking: encoded members scored
//	cache:{N}:near               channel a Cache's near cache invalidations (WithNear):
//	                                     a 16-hex-digit writer id, then K
//	cache:{N:K}:once:<nonce>     STRING  the reply of one Counter.Incr,
//	                                     Counter.Set, restore, Latest.Push,
//	                                     Top.Incr, Top.Add, Top.Remove,
//	                                     Guard.Reset or Limiter.Reset, for
//	                                     its re-sends; PX the client's
//	                                     retry window
//
// Names must not contain '{', '}' or ':'; keys may be any non-empty string,
// braces included. Redis Cluster hashes what lies between a key's first
// '{' and the first '}' after it: {N:K} whole, or for a K holding a '}',
// N: and K up to that brace; either way the same for all the keys of one
// entry, which so share its slot. No part holds a '}', so the last '}'
// ends N:K and a key names one entry.
//
// # Round trips
//
// Once the scripts are cached on the server (a script's first call on a
// server costs one more: EVALSHA answered NOSCRIPT, then EVAL). The server
// commands in brackets count those a script runs, as Redis's INFO
// commandstats does; a TYPE is a check (check.lua) where no command of the
// script checks the key's type itself.
//
//	Cache.Get      hit 1: SET NX PX GET [1] (with refresh or grace on, and
//	               PTTL in the same round trip [2]); no script runs; Gets
//	               made at the same time share it (below)
//	               miss, the loader 2: SET NX PX GET; the load; the store
//	               [EVALSHA: GET, SET; with waiters, TYPE, RPUSH, PEXPIRE of
//	               their wake list; with refresh or grace on, GET and DEL of
//	               the refresh lease] = 4 commands without waiters
//	               miss, a waiter 3: SET NX PX GET; register [EVALSHA: GET,
//	               TYPE, SET KEEPTTL (the first waiter), PTTL]; BLMOVE; 2 if
//	               the value was stored by the time it registered; +2 per
//	               look again
//	               a Get that joins another Get of its process: 0 (as a
//	               Get of its own if it must look again)
//	               due for refresh: 1, and 1 in the background to take the
//	               refresh lease, then the reload and its store
//	Cache.Set      1 [EVALSHA: GET, SET, and as the store; with WithNear,
//	               PUBLISH]
//	Cache.Delete   1 [EVALSHA: GET, DEL, and as the store; with WithNear,
//	               PUBLISH]
//	Cache.Get      with WithNear: a near hit 0; a near miss as above, the
//	               hit's SET NX PX GET with PTTL in the same round trip [2];
//	               the store of a miss PUBLISHes too
//	Counter.Incr   1 [EVALSHA: GET and SET of its record, EXISTS (with a
//	               restore function), INCRBY, PEXPIRE]; missing: restorer 2,
//	               waiter 3 (look, wait, add); a caller waiting for another
//	               of its process 1 or 2 (add, or look and add)
//	Counter.Get    as Incr, without the record
//	Counter.Set    1 [EVALSHA: GET and SET of its record, TYPE, SET PX]
//	Counter.Keys   1 per 1,000 keys of the database, per node (SCAN)
//	Guard.Allow    1 (SET NX PX GET) [1]
//	Guard.Reset    1 [EVALSHA: GET and SET of its record, DEL]
//	Limiter.AllowN 1 [MULTI, EVALSHA: GET, TIME, and when allowed SET of
//	               the TAT; EXEC]; calls made at the same time share it
//	               (below)
//	Limiter.Reset  1 [EVALSHA: GET and SET of its record, DEL]
//	Latest.Push    1 [EVALSHA: GET and SET of its record, TYPE, LPUSH, LTRIM,
//	               PEXPIRE with a TTL]
//	Latest.List    1; Len 1 (LLEN); Clear 1 (DEL, idempotent)
//	Top.Incr       1 [EVALSHA: GET and SET of its record, TYPE, ZINCRBY,
//	               PEXPIRE with a TTL]
//	Top.Add        1 [EVALSHA: GET and SET of its record, TYPE, ZADD,
//	               PEXPIRE with a TTL]
//	Top.Range      1; Score 1 (ZSCORE); Rank 1 (ZREVRANK)
//	Top.Remove     1 [EVALSHA: GET and SET of its record, TYPE, ZREM per
//	               500 members]
//	Batch.Exec     1 (one per node on Cluster), plus loads and restores of
//	               what was missing, and background refreshes
//
// Calls made at the same time share round trips (group commit): a Get's
// first command (the claim) made while two claims of its Cache are on
// their way waits for one to come back, then leaves with every claim
// waiting by then (up to 128) in one pipeline; a Limiter's calls alike, in
// one MULTI/EXEC, each still its own script run and reply. One goroutine
// alone pays one round trip per call, with no delay; 32 goroutines paid
// about 0.2 round trips a call in cachebench. On a Cluster a pipeline is
// one round trip per node it reaches, and only calls of one slot share a
// transaction.
//
// # Redis Cluster
//
// Every key of one entry (counter, guard, list, ranking) carries the hash
// tag {N:K}, so each script's keys are in one slot and entries spread over
// the cluster. A [Batch] usually spans slots: go-redis splits its pipeline
// by node and sends the parts in parallel, one round trip per node. Works
// unchanged with *redis.Client, *redis.ClusterClient and *redis.Ring.
package cache
