// Package counters keeps time-series counters and statistics in Redis
// (Redis in Action 5.2): counts per time slice at several precisions, a
// cleaner that enforces their retention, a client-side batcher for high
// event rates, and per-hour statistics of values such as access times,
// with the slowest contexts ranked.
//
//	c, err := counters.New(rdb) // the book's precisions: 1s 5s 1m 5m 1h 5h 1d, 120 samples each
//	err = c.Update(ctx, "hits:/cart", 1)             // every precision, one round trip
//	samples, err := c.Get(ctx, "hits:/cart", 5*time.Second)
//
//	cl, _ := c.Cleaner()
//	go cl.Run(ctx)                                   // retention, every minute
//
//	b, _ := c.Batcher()                              // statsd-style: sum in memory, flush every second
//	go b.Run(ctx)
//	defer b.Close(ctx)
//	_ = b.Add("hits:/cart", 1)                       // no round trip
//
//	st, _ := c.Stats(counters.AccessTime)
//	err = st.Time(ctx, "/cart", func() error { return serve(w, r) })
//	cur, prev, err := st.Get(ctx, "/cart")           // cur.Mean(), cur.StdDev(), ...
//	slowest, err := st.Slowest(ctx, 10)
//
// # What it does, and how it differs from the book
//
//   - [Counters.Update] adds to the current slice of every precision in
//     one Lua script: atomic and one round trip (the book pipelines 14
//     commands in MULTI/EXEC). Slices are aligned on Unix time (a 5 s
//     slice starts at a multiple of 5 s since 1970). The time is the Redis
//     server's (TIME, inside the script), so every process agrees;
//     [Counters.UpdateAt] takes an explicit time for back-filling and
//     tests, and [WithClock] replaces the server's clock.
//   - Retention: each precision keeps its last [Precision.Samples] slices
//     (the book's 120) counted back from now. A [Cleaner] deletes older
//     samples, one atomic script per counter (the book reads and deletes
//     in separate steps), and forgets a counter once it has no sample
//     left. Each counter records per precision a watermark, below which
//     everything is deleted: an update never writes below it, so a cleaned
//     slice never comes back half-filled, and an UpdateAt older than the
//     retention is skipped at that precision (and reported) instead of
//     being counted and deleted later; one skipped at every precision
//     writes nothing. A time more than [MaxAhead] (1 min) after the clock
//     is refused (see Limits). Deleting is bounded: at most 1000
//     samples per precision per script, slice by slice from the
//     watermark, or by reading the samples when there are fewer.
//     [Counters.Delete] drops one counter (samples and name) at once.
//   - A [Batcher] sums increments in memory and writes them every
//     interval, one pipeline per flush (one round trip per node), as
//     statsd does for a process (see Limits).
//   - [Stats] keeps count, sum, minimum, maximum and sum of squares per
//     context for the current hour and the hour before; the mean and the
//     standard deviation are computed on read ([Summary.Mean],
//     [Summary.StdDev]). The hour rotates inside the update script, by
//     the server's clock: the book's WATCH loop can lose or double values
//     at the boundary; here none is. [Stats.Record] (and its wrappers
//     [Stats.Start] and [Stats.Time], the book's access_time) also ranks
//     the context by its hour's mean among the slowest (the book's
//     slowest:AccessTime, top 100), in the same script and round trip.
//   - The book's clean_counters thread is [Cleaner.Run]: it stops when
//     ctx ends, finishes the page of counters in flight, rides out
//     transient Redis errors with backoff, and returns an error that
//     retrying cannot mend (a key of the wrong type). [Cleaner.Clean] is
//     one pass, for tests and cron jobs.
//
// # Lost replies
//
// go-redis sends a command again when its reply is lost, but never a
// MULTI/EXEC: Update, UpdateAt, Stats.Update and Stats.Record run their
// script in one, so a lost reply is an error wrapping
// ria.ErrOutcomeUnknown (the update counted once or not at all: read the
// counter to find out) and they leave nothing behind. A Batcher's flush,
// a clean and [Counters.Delete] record their reply for the client's retry window (a STRING
// under the counter's hash tag, <prefix>{name}:once:<nonce>) and answer a
// re-send from it, so a flush counts once, a clean reports what it
// deleted and a Delete does not delete an update made meanwhile; one that
// gets no reply after every re-send returns an error
// wrapping ria.ErrOutcomeUnknown. A Batcher keeps a
// flush that got no reply and sends it again, with the same record, at
// its next flush (see [Batcher]).
//
// # Keys of the wrong type
//
// Every script checks the type of each key it uses, and the values it
// parses, before its first write: a key written by someone else gives a
// *ria.KeyError naming the key and its role ("counters known", "counters
// samples", "counters stats", "counters stats previous hour", "counters
// slowest"), and nothing changes. The reads (Get, Stats.Get,
// Stats.Slowest) name such a key the same way.
//
// # Limits
//
//   - A count is an integer within ±[MaxDelta] (2^53-1, exact in Lua);
//     an update that would leave it returns [ErrOverflow].
//   - Without a running [Cleaner], samples accumulate beyond the
//     retention. A cleaner stopped for long catches up 1000 samples per
//     precision per counter per script.
//   - A cleaner whose clock ([WithCleanerClock]) runs ahead of the
//     writers' may cut above the slice a current-time update writes; that
//     sample then stays until the cleaner reads the counter's samples
//     (fewer than 1000 left). Leave cleaners on the default clock in
//     production.
//   - A [Batcher] loses, if its process crashes, what was added since the
//     last flush: at most one interval ([WithInterval], 1 s) of
//     increments, plus any flush being retried. Increments are counted in
//     the slice of the flush that writes them, at most an interval late.
//     A flush that may have run (no reply; or re-sends that could not
//     connect or were refused with LOADING, READONLY, BUSY and the like,
//     which is how a restarting, failed-over or busy server answers the
//     re-send of a call it ran) is sent again with its reply record for 1 min after
//     it was first sent: the record lives for the client's retry window
//     plus 1 min, and go-redis may take a retry window to deliver a
//     re-send. After that its increments are given up and counted in
//     [BatcherStats.Unknown]: an outage longer than that costs at most one
//     flush's increments per counter, reported. Meanwhile the counter's
//     new increments sum beside it, sent once it is settled (one update
//     per counter in flight). An update the server refused for good never
//     ran: it takes new increments of its counter as long as the sum
//     stays within ±[MaxDelta] (the rest go in an update of their own),
//     and the failure of one update never stops the rest of a flush.
//     [Batcher.Stats] counts each increment in exactly one outcome and
//     does not wait for a flush.
//   - Each Batcher flush leaves a reply record of a few dozen bytes per
//     counter for the client's retry window (about 52 s with go-redis's
//     defaults). Update and Stats.Update leave none.
//   - An Update is bound by the server's Lua work, not by the network:
//     on one client, in one run on a shared 2-core machine
//     (BenchmarkUpdate_vsLimit), it made about 0.35x the updates/s of a
//     plain go-redis INCR loop and 0.28x those of redis-benchmark -c 1 -t
//     incr (the one-round-trip limit), 0.75x those of a bare script of
//     seven HINCRBYs without checks or retention (the floor of an atomic
//     one-round-trip update of seven precisions, itself about 0.45x INCR),
//     and 0.96x the book's MULTI/EXEC of 16 commands. On a
//     network the round trip dominates instead: through a proxy adding
//     about 1 ms per round trip (BenchmarkUpdate_vsLimitRTT) Update made
//     0.94x the INCRs/s. Updates and stats updates made at the same time
//     share transactions: a call made while two of its Counters' are on
//     their way leaves with every call waiting by then in the next (per
//     slot on a Cluster); at 32 goroutines (BenchmarkUpdate_parallel)
//     Update made 1.23x the book's update_counter and 0.41x unbatched
//     INCRs (1.05x and 0.35x with a transaction per call). A lost reply
//     of a shared transaction is an unknown outcome for each of its
//     calls. For high rates use a [Batcher]: millions of Adds per second,
//     one round trip per node per flush.
//   - [Counters.Names] and the cleaner SCAN the whole keyspace of every
//     node (about one round trip per 1000 keys, all keys counted); keep
//     counters in a database of their own if it holds many other keys.
//   - [Counters.UpdateAt] and [Stats.UpdateAt] refuse a time more than
//     [MaxAhead] (1 min) after the clock (the server's TIME, or
//     [WithClock]) with an error wrapping [ErrInvalid]; the script checks
//     it before any write, since only the server knows its time. A later
//     sample would outlive the retention (the cleaner would never forget
//     the counter), and a later hour would make the current hour's
//     Stats.Update fail. A minute leaves room for client clocks a little
//     ahead of the server's.
//   - The statistics keep two hours; [Stats.UpdateAt] for an older hour
//     returns [ErrTooOld]. Values are float64; sums are exact as float64
//     additions in the order the server ran them.
//   - A failover that loses recent writes (asynchronous replication) can
//     lose counts.
//
// # Keys
//
// With the default prefix "counters:", a counter N and a stats type T:
//
//	counters:{N}:samples          HASH  "<step s>:<slice start, Unix s>" -> count, every precision
//	counters:{N}:known            HASH  "<step s>" -> samples kept; "w<step s>" -> watermark; "cfg" -> the last writer's precisions
//	counters:{N}:once:<nonce>     STRING reply record of one call, for the client's retry window
//	counters:stats:{T}:cur:<ctx>  HASH  hour, count, sum, min, max, sumsq of context ctx, newest hour
//	counters:stats:{T}:last:<ctx> HASH  the same for the hour before
//	counters:stats:{T}:slowest    ZSET  context -> mean of its hour, the slowest 100
//
// The known HASH is what the cleaner and [Counters.Names] look for (SCAN
// MATCH <prefix>{*}:known on every master).
//
// # Round trips
//
// Once the scripts are cached on the server (the first call of each
// script on a server costs one more: EVALSHA answered NOSCRIPT, then
// EVAL): [Counters.Update] 1, [Counters.UpdateAt] 1, [Counters.Get] 1,
// [Counters.Delete] 1, [Counters.Names] 1 per SCAN page per node;
// [Stats.Update] 1,
// [Stats.Record] (Start, Time) 1, [Stats.Get] 1, [Stats.Slowest] 1;
// [Batcher.Add] 0, [Batcher.Flush] 1 per node whatever the number of
// counters; [Cleaner.Clean] per node 1 per SCAN page plus 1 per page of
// counters found (a pipeline of one script each), plus 1 per further 1000
// samples a counter has to delete at one precision.
//
// Server commands (INFO commandstats counts those a script runs; measured
// on redis-server 7.0): Update 7 (MULTI, EVALSHA, TIME, HGET, HMGET,
// HSET, EXEC; 6 with [WithClock]); UpdateAt and an
// Update of a new counter or of a writer with other precisions 1 or 2
// more (HMGET and HSET of the known HASH). Stats.Update 9 (MULTI,
// EVALSHA, TIME, TYPE x2, HGETALL x2, HSET, EXEC; 8 with
// [WithClock]; +1 RENAME or DEL at a new hour); Stats.Record 3 more
// (TYPE, ZADD, ZREMRANGEBYRANK). The book's update_counter is 16
// (MULTI, 7 ZADD, 7 HINCRBY, EXEC).
//
// # Redis Cluster
//
// Every key of a counter carries the hash tag {N}, and every key of a
// stats type the tag {T}, so each script's keys are in one slot: no
// CROSSSLOT error is possible. Counters spread over the cluster; a stats
// type lives on one node (use several types to spread it). Names and the
// cleaner scan every master (ForEachMaster; every shard of a Ring); a
// Batcher's flush pipelines to every node at once. Works unchanged with
// *redis.Client, *redis.ClusterClient and *redis.Ring.
package counters
