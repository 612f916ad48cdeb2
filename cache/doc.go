// Package cache holds the read- and write-caching patterns of the usage blog
// (seeds/004): a typed read-through cache with stampede protection across
// processes and stale-while-revalidate, counters restored from the system of
// record when Redis loses them, a once-per-window guard, latest-N lists,
// top-N rankings, and a batch that reads all of these in one round trip.
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
//     outlives a crashed task. Here a miss takes a lease (a HASH with the
//     loader's token, PX lease) in the same script that confirms the miss
//     (a hit is a plain GET: no script runs); everyone else blocks on the
//     entry's wake list (BLMOVE, no polling) and receives the value the
//     loader pushes there. Concurrent Gets of a key in one process share
//     one Get: one read, one wait or load, and its result (its error too,
//     if its load failed). A failed load wakes the waiters of other
//     processes at once and one takes over; a hung or dead loader is
//     replaced when its lease ends.
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
//   - Latest-N lists push and trim in one MULTI/EXEC; rankings are typed.
//
// # Guarantees and limits
//
//   - Exactly one load per miss across all processes, as long as loads end
//     within the lease ([WithLease], default 10 s). A load that outlasts its
//     lease is returned to its caller but not stored, and a waiter starts
//     another: set the lease above the slowest load you expect.
//   - Refresh ahead and stale grace never make a caller wait; a failing
//     background reload is retried at most once a second (or once per
//     lease, if shorter) while the old value lasts.
//   - A Get that finds an entry it cannot decode (another program version
//     wrote it, or a person did) treats it as a miss and overwrites it, and
//     logs the decode error ([WithLogger]); a Batch read without a loader,
//     [Latest.List] and [Top.Range] return an error wrapping [ErrDecode].
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
//   - A loader hands values up to 64 KiB to its waiters through the wake
//     list, which holds that second copy for at most the lease (it exists
//     only when someone waited); waiters re-read larger values (one more
//     round trip).
//   - Redis is the source of truth for the lease, so a failover that loses
//     a fresh lease can let a second caller load (a duplicate load, never a
//     wrong value). Redis unreachable: Get returns the error without
//     loading.
//   - Every process sharing a name (and prefix) must use the same type,
//     codec, TTL and grace.
//
// # Keys
//
// With the default prefix "cache:", a Cache, Counter, Guard, Latest or Top
// named N and a key K:
//
//	cache:{N:K}:val          STRING  a Cache entry: the encoded value, PX ttl+grace
//	cache:{N:K}:lease        HASH    t = loader's token, w = waits; PX lease
//	cache:{N:K}:wake         LIST    "v"+value or "r" (look again) for waiters; PX lease
//	cache:{N:K}:count        STRING  a Counter, PX ttl from its last use
//	cache:{N:K}:count.lease  HASH    as lease, for the restorer
//	cache:{N:K}:count.wake   LIST    "r" when restored or abandoned; PX lease
//	cache:{N:K}:guard        STRING  "1", PX window: a Guard's refusal
//	cache:{N:K}:latest       LIST    a Latest list, encoded values, newest first
//	cache:{N:K}:top          ZSET    a Top ranking: encoded members scored
//
// Names must not contain '{', '}' or ':'; keys may be any non-empty string.
//
// # Round trips
//
// Once the scripts are cached on the server (a script's first call on a
// server costs one more: EVALSHA answered NOSCRIPT, then EVAL):
//
//	Cache.Get      hit 1 (a plain GET; GET+PTTL with refresh or grace on; no script);
//	               miss: loader 3 (read, look, store), waiter 3 (read, look, wait),
//	               +1 per look again; a Get that joins another Get of its
//	               process: 0; due for refresh: 1, and 1 in the background
//	               to take the lease, then the reload
//	Cache.Set      1       Cache.Delete  1
//	Counter.Incr   1; missing: restorer 2, waiter 3 (look, wait, add); a
//	               caller waiting for another of its process 1 or 2 (add,
//	               or look and add)
//	Counter.Get    as Incr
//	Guard.Allow    1 (SET NX PX)
//	Latest.Push    1 (MULTI LPUSH LTRIM [PEXPIRE] EXEC)    Latest.List 1
//	Top.Incr/Add   1 (ZINCRBY/ZADD, in MULTI with PEXPIRE when a TTL is set)
//	Top.Range      1
//	Batch.Exec     1 (one per node on Cluster), plus loads and restores of
//	               what was missing, and background refreshes
//
// # Redis Cluster
//
// Every key of one entry (counter, guard, list, ranking) carries the hash
// tag {N:K}, so each script's keys are in one slot and entries spread over
// the cluster. A [Batch] usually spans slots: go-redis splits its pipeline
// by node and sends the parts in parallel, one round trip per node. Works
// unchanged with *redis.Client, *redis.ClusterClient and *redis.Ring.
package cache
