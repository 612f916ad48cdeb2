// Package logs keeps application logs in Redis (Redis in Action 5.1): a
// recent log of the last messages per log name and severity, a common
// log that counts each message per hour (the current hour and the one
// before), and a log/slog Handler that writes to both without making its
// callers wait for Redis.
//
//	l, err := logs.New(rdb)
//	err = l.LogCommon(ctx, "shop", logs.Entry{Severity: logs.Warning, Message: "cart service slow"})
//	recent, err := l.Recent(ctx, "shop", logs.Warning)       // newest first, with times
//	cur, prev, err := l.Common(ctx, "shop", logs.Warning, 10) // most common this hour and the last
//
//	h, err := l.Handler("shop")
//	go h.Run(ctx)
//	defer h.Close(ctx)
//	slog.SetDefault(slog.New(h))
//
// # What it does, and how it differs from the book
//
//   - [Logs.LogRecent] (the book's log_recent) pushes entries to the recent
//     log of their severity and trims it to its newest 100 ([WithRecent]),
//     each with its time in µs. One script, one round trip, for up to
//     [MaxEntries] entries of any severities.
//   - [Logs.LogCommon] (the book's log_common) does the same and counts
//     each entry's message in the common log of its severity and hour.
//     The book rotates the hour with a WATCH/MULTI loop that gives up
//     after a timeout and can lose counts at the boundary; here the
//     rotation happens inside the write's own script, by the entry's time
//     (the Redis server's, unless the entry has one): the first entry of
//     a new hour moves the current hour's counts to the previous hour, or
//     drops both when the current hour is older than the one just before.
//     However many writers race at the boundary, no count is lost,
//     counted in the wrong hour or rotated twice. An entry of the
//     previous hour (a late or back-filled one) is counted there; an
//     older one makes the write return [ErrTooOld], and one more than
//     [MaxAhead] (1 min) after the server's time, which would make its
//     hour current and every later write of the present hour too old, an
//     error wrapping [ErrInvalid]; either changes nothing.
//   - The book's severities are [Debug], [Info], [Warning], [Error] and
//     [Critical]; any lower-case word is accepted.
//   - A [Handler] is a slog.Handler: bounded buffer, batched writes by an
//     owned [Handler.Run] loop, exact counts of what was written and
//     dropped ([Handler.Stats]), [Handler.Close] writes the rest. The
//     common log counts a record's message without its attributes, so
//     "order placed id=42" and "order placed id=43" count as one message.
//
// # Lost replies
//
// LogRecent, LogCommon and a Handler's writes record their reply for the
// client's retry window (a STRING <prefix>{name}:once:<nonce>) and answer a
// re-send by go-redis from it, so an entry is written once. A call that
// gets no reply after every re-send (or whose re-sends could not connect,
// or were refused with LOADING, READONLY, BUSY and the like, as a
// restarting, failed-over or busy server answers the re-send of a call it
// ran) returns an
// error wrapping ria.ErrOutcomeUnknown. A Handler keeps such a batch and
// sends it again with the same record until it is written, for 5 min
// after its first try; its record lives for the retry window plus 5 min,
// so that go-redis's re-sends of the last try still find it. Then the
// batch's records are counted in [HandlerStats.Unknown].
//
// # Keys of the wrong type
//
// The write script checks the type of every key, and the hour it parses,
// before its first write, and the reads ([Logs.Recent], [Logs.Common])
// name a key of another type the same way: a key written by someone else
// gives a *ria.KeyError naming the key and its role ("logs recent", "logs
// common", "logs common previous hour", "logs hours") and nothing changes.
//
// # Limits
//
//   - A Handler writes records stamped with the Redis server's time when
//     they are written: at most an interval ([WithInterval], 200 ms)
//     after they were logged, or within a second of the end of an outage
//     (Run's backoff). While Redis is unreachable it keeps up to
//     [WithBuffer] (10,000) records and drops the rest, counting them; a
//     crash loses what is buffered. [Handler.Handle] never waits for
//     Redis: it formats the record and appends it under a mutex that is
//     held only to append one record, to take a batch (a slice operation)
//     or to count outcomes, so it returns in microseconds on an idle
//     machine, whatever Redis does. Its bound is the CPU's, not the
//     network's: the package's test (100,000 records from 8 goroutines,
//     the server stopped for a third of them, -race, a shared 2-core
//     machine) asserts that no Handle takes 1 s or more; the slowest
//     measured took about 0.3 s, a goroutine waiting for a core.
//   - A Handler drops records whenever they come faster than Redis takes
//     them for long enough to fill the buffer, not only during an
//     outage: Stats tells how many.
//   - Messages are at most [MaxMessage] (64 KiB); the Handler truncates
//     longer ones. The common log of an hour keeps every distinct
//     message: count templates, not messages with IDs in them (the
//     Handler does).
//   - Recent logs keep the order of the writes, not of the entries'
//     times.
//   - A failover that loses recent writes (asynchronous replication) can
//     lose entries.
//
// # Keys
//
// With the default prefix "logs:", a log name N and a severity S:
//
//	logs:{N}:recent:S       LIST   "<Unix µs> <message>", newest first, the newest 100
//	logs:{N}:common:S       ZSET   message -> count in the current hour
//	logs:{N}:last:S         ZSET   message -> count in the hour before
//	logs:{N}:hours          HASH   S -> start of the current hour (Unix s)
//	logs:{N}:once:<nonce>   STRING reply record of one write
//
// # Round trips
//
// Once the script is cached on the server (the first call on a server
// costs one more: EVALSHA answered NOSCRIPT, then EVAL): LogRecent 1,
// LogCommon 1 (for up to 1000 entries), Recent 1, Common 1; a Handler
// writes 1 round trip per batch of up to [WithBatch] (500) records, and
// Handle makes none. Server commands (INFO commandstats, redis-server
// 7.0) of a LogCommon of one entry: 13 (EVALSHA; TYPE x4, HGET x2 for the
// checks; ZINCRBY, LPUSH, LTRIM; the reply record's GET and SET; TIME), 3
// more when the hour moves to the next one (EXISTS, RENAME or DEL, HSET),
// 2 more (DEL, HSET) when it moves further or a severity is first
// counted; of a LogRecent of one entry: 7 (EVALSHA, TIME, TYPE, LPUSH,
// LTRIM, GET, SET).
//
// # Redis Cluster
//
// Every key of a log name carries the hash tag {N}, so each write's keys
// are in one slot and no CROSSSLOT error is possible; log names spread
// over the cluster. Works unchanged with *redis.Client,
// *redis.ClusterClient and *redis.Ring.
package logs
