// Package semaphore is a counting semaphore shared through Redis: at most
// limit holders, in any number of processes, hold a permit of the same name
// at once. It is the "fair semaphore" of Redis in Action (section 6.3), made
// atomic: each operation is one Lua script that reads the server's clock, so
// it needs neither a lock nor synchronised client clocks.
//
// A permit lapses when its timeout passes without [Permit.Refresh], so a
// crashed holder frees its place by itself. [Semaphore.TryAcquire] takes a
// permit or fails at once; [Semaphore.Acquire] waits for one.
// [Permit.KeepAlive] refreshes a permit in the background and returns a
// context cancelled when the permit is lost or released;
// [Semaphore.Do] runs a function under a permit: acquire, keep alive,
// release (even on panic).
//
//	sem, err := semaphore.New(rdb, "reports", 3, 30*time.Second)
//	...
//	err = sem.Do(ctx, func(ctx context.Context, p *semaphore.Permit) error {
//		return build(ctx) // ctx is cancelled if the permit is lost
//	}, semaphore.WithWait(10*time.Second))
//	// errors.Is(err, semaphore.ErrNoPermit) if it stayed full;
//	// errors.Is(err, semaphore.ErrNotHeld) if the permit was lost meanwhile.
//
// or by hand:
//
//	p, err := sem.Acquire(ctx, semaphore.WithWait(10*time.Second))
//	if err != nil {
//		return err
//	}
//	defer p.Release(ctx)
//	ctx = p.KeepAlive(ctx) // or call p.Refresh(ctx) more often than every 30s,
//	// and stop if it returns semaphore.ErrNotHeld
//
// # Guarantees
//
//   - Never more than limit live holders, by the server's clock: the acquire
//     script drops expired holders, counts the rest and adds the new one in
//     one atomic step.
//   - Fair: admission in the order the server runs the scripts, and waiters
//     served first come first served. A waiter joins a FIFO queue and blocks
//     on a grant list of its own; a release hands its permit directly to the
//     first live waiter (adds it to the holders with a fresh deadline and
//     pushes its Seq to its grant list). Newcomers cannot take a permit
//     while a live waiter (one whose place has not expired) waits for one,
//     and no attempt is wasted. Acquire and release read the queue alike:
//     from its head, skipping the entries of waiters whose place expired
//     (a release, an acquisition and a caller that queues drop them; a
//     refused TryAcquire writes nothing).
//   - [Permit.Seq] numbers the permits of a name in the order they were
//     granted. A counter that is new, or was lost by a restart without
//     persistence, starts again from the server time in microseconds, so Seq
//     never repeats as long as the server clock does not go back.
//   - No client clock is read for deadlines: they come from Redis TIME inside
//     the scripts, so clock skew between clients cannot let one of them in
//     early or keep another out. (The book's version scores holders with the
//     client's time.time() and needs a lock to be fair.)
//   - Liveness with slow clients. A waiter that gives up leaves the queue and
//     gives back a permit a release may have handed it meanwhile; if it
//     cannot confirm that (its client keeps failing), the Semaphore retries
//     in the background until it succeeds or the timeout has passed. A
//     waiter that is late (its place expired between its attempt and its
//     blocking wait) is skipped by a release, which wakes it: it tries
//     again at once.
//   - A key of the wrong type (a holders key that is a STRING, a seq that
//     is not an integer...) gives a *ria.KeyError naming the key and its
//     role (errors.Is ria.ErrWrongType or ria.ErrCorrupt), and the script
//     changes nothing: every key a script relies on is checked before its
//     first write. The seq counter is at its maximum at 2^53-1, beyond
//     which Lua's numbers would give two permits the same seq.
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost or timed out
// (MaxRetries). Every call of this package answers truly when that happens:
//
//   - TryAcquire and Acquire: the permit ID is chosen by the caller, and an
//     ID that already holds a live permit keeps it, so a re-sent attempt
//     that had taken a permit answers "acquired" with its Seq and never
//     takes a second one. A re-sent attempt that queued the caller keeps its
//     single place (the waiters hash is keyed by ID).
//   - Release: a successful release records the call's nonce under
//     semaphore:{name}:released:<ID> for the client's retry window; a
//     re-send that finds the permit gone answers "released" from the
//     record, not [ErrNotHeld].
//   - Refresh is naturally idempotent (it moves the deadline again); the
//     leave of a waiter that gives up is too. [Permit.KeepAlive] is Refresh
//     in a loop: a refresh whose outcome is unknown is retried, sooner,
//     until the permit's deadline (see below).
//
// An error that wraps [ErrNoPermit] or [ErrNotHeld] always means that the
// call holds (or released) nothing. When every re-send fails, the error
// wraps ria.ErrOutcomeUnknown instead: the call may or may not have taken
// effect. For an acquisition or a release in doubt, the Semaphore then
// gives the permit back in the background, retrying with backoff (10 ms up
// to 1 s) until Redis answers or the timeout has passed; [WithLogger] says
// where it logs the give-backs it could not complete. The give-back runs on
// the Semaphore's own client: if that client keeps timing out for the whole
// timeout, the give-back fails too and the permit lapses at its deadline,
// as a crashed holder's would (until then the server counts it, so the
// callers may see fewer permits than limit).
//
// # Limits
//
//   - A holder that stalls past its timeout loses its permit silently, and
//     others may take it; it learns so only when [Permit.Refresh] or
//     [Permit.Release] returns [ErrNotHeld], or when the context of
//     [Permit.KeepAlive] is cancelled (cause wrapping ErrNotHeld). Refresh
//     well within the timeout; KeepAlive refreshes every third of it.
//   - KeepAlive on a Redis error: it retries at a third of the time left
//     before the permit's deadline, which it estimates from the client's
//     monotonic clock (the send time of its last successful acquisition or
//     refresh, plus the timeout: never later than the server's deadline;
//     a permit handed over is dated from the waiter's last attempt before
//     the hand-over, and an attempt that finds one handed over restarts
//     its lease),
//     and cancels its context, as lost, when that estimate has passed
//     without a successful refresh. Its first refresh comes a third of
//     the timeout after the start of that estimate: at once for a permit
//     handed over late in a wait (less than 2/3 of the timeout left), so
//     that a permit the server still holds is refreshed before its
//     estimate passes and [Semaphore.Do] releases it; KeepAlive on a
//     permit whose estimate has passed already cancels at once. The permit may in fact outlive that
//     estimate by a round trip; [Semaphore.Do] then does not release it,
//     and it lapses at its deadline.
//   - A holder that crashes never releases: its permit frees itself at its
//     deadline, and the waiters blocked until then race for it; FIFO order
//     resumes with the next release. A waiter that dies keeps its place only
//     until the end of its current blocking wait (bounded by the earliest
//     deadline, half the timeout and its own wait, plus 2 s); releases and
//     newcomers skip expired places (and drop them from the queue), so a
//     dead waiter keeps no one out of a free permit, not even while no
//     holder is left to release. A waiter that dies just after being handed
//     a permit holds it until its deadline.
//   - Semaphores of one name should agree on limit and timeout: a hand-over
//     gives the waiter the releaser's timeout.
//   - Each blocked [Semaphore.Acquire] holds one connection of the client's
//     pool while it waits; size the pool for the waiters you expect.
//   - The seq counter has no TTL: it stays, one small key per name.
//   - A failover that loses recent writes (asynchronous replication) can lose
//     permits, letting more than limit holders in; this package does not use
//     WAIT or Redlock.
//
// # Keys
//
// With the default prefix "semaphore:", a semaphore called name uses:
//
//	semaphore:{name}:holders       ZSET    permit ID -> deadline (server Unix ms); TTL >= timeout
//	semaphore:{name}:seq           STRING  last Seq minted; no TTL
//	semaphore:{name}:queue         LIST    IDs of waiting acquirers, oldest first
//	semaphore:{name}:waiters       HASH    waiting ID -> place expiry (server Unix ms)
//	semaphore:{name}:grant:<ID>    LIST    Seq of the permit handed to waiter ID (or an
//	                                       empty wake); TTL timeout
//	semaphore:{name}:released:<ID> STRING  nonce of the Release call that released
//	                                       permit ID; TTL the client's retry window
//
// The queue and waiters keys expire with the longest waiter's place; an
// entry whose place expired before that counts for nobody, and the next
// release, acquisition or queued caller that reads past it drops it. The
// release script builds grant keys from the declared prefix key and the ID
// it reads from the queue (they cannot be declared before that read); the
// hash tag keeps them in the semaphore's slot.
//
// # Round trips
//
// Once the server has cached the scripts, [Semaphore.TryAcquire],
// [Permit.Refresh], [Permit.Release] and [Semaphore.Holders] take one round
// trip each; the first call of each per server may take two (EVALSHA
// answered by NOSCRIPT, then EVAL). [Semaphore.Acquire] takes one when a
// permit is free. [Permit.KeepAlive] takes none when called and then one
// (a Refresh) every third of the timeout (the first at once for a permit
// handed over late in a wait; sooner while refreshes fail).
// [Semaphore.Do] takes its Acquire's, KeepAlive's while fn runs, and one
// for the release: 2 for a free permit and an fn shorter than a third of
// the timeout.
//
// A contended Acquire costs 2 round trips in all: 1 for "queue and block"
// (its attempt and its blocking BLPOP of the grant list sent in one
// pipeline) and the holder's Release, which hands it the permit; then its
// own Release. A Semaphore remembers that its last attempt found it full
// and pipelines from the first attempt; one that has not seen it full pays
// a plain attempt and a plain blocking wait (BLMOVE), 2 round trips, and
// pipelines from then on. The pipelined BLPOP waits at most 1 s (its
// timeout is chosen before the attempt tells when the earliest deadline
// falls, and must fit in the client's ReadTimeout, which go-redis does not
// lengthen inside a pipeline): a longer wait goes on with one plain
// blocking wait until the earliest holder's deadline (or a release hands a
// permit over), one more per deadline passed or per 30 s, and an attempt
// again every half of the timeout when that is shorter (a hand-over is
// dated from the waiter's last attempt). A waiter that
// gives up pays 1 to leave the queue. With a ReadTimeout under about 260 ms
// there is no room for a blocking read in a pipeline, and every wait is
// plain (a wake that a plain wait reads, which stays on the grant list,
// costs 1 more to delete). A wait that ends by its timeout (a holder that
// neither released nor extended) ends when the server times the blocking
// command out, at its next event loop tick: up to 1000/hz ms after the
// holder's deadline (100 ms at Redis's default hz 10).
//
// # Redis Cluster
//
// All keys of a semaphore share the {name} hash tag, so they live in one slot
// and each script runs on one node; different names spread over the cluster.
// Nothing here can cause a CROSSSLOT error. Works unchanged with
// *redis.Client, *redis.ClusterClient and *redis.Ring.
package semaphore
