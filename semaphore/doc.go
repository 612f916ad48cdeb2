// Package semaphore is a counting semaphore shared through Redis: at most
// limit holders, in any number of processes, hold a permit of the same name
// at once. It is the "fair semaphore" of Redis in Action (section 6.3), made
// atomic: each operation is one Lua script that reads the server's clock, so
// it needs neither a lock nor synchronised client clocks.
//
// A permit lapses when its timeout passes without [Permit.Refresh], so a
// crashed holder frees its place by itself. [Semaphore.TryAcquire] takes a
// permit or fails at once; [Semaphore.Acquire] waits for one.
//
//	sem, err := semaphore.New(rdb, "reports", 3, 30*time.Second)
//	...
//	p, err := sem.Acquire(ctx, semaphore.WithWait(10*time.Second))
//	if err != nil {
//		return err // errors.Is(err, semaphore.ErrNoPermit) if it stayed full
//	}
//	defer p.Release(ctx)
//	// ... work, calling p.Refresh(ctx) more often than every 30s; stop if it
//	// returns semaphore.ErrNotHeld.
//
// # Guarantees
//
//   - Never more than limit live holders, by the server's clock: the acquire
//     script drops expired holders, counts the rest and adds the new one in
//     one atomic step.
//   - Fair: admission in the order the server runs the scripts, and waiters
//     served first come first served. A waiter joins a FIFO queue and blocks
//     (BLPOP) on a grant list of its own; a release hands its permit directly
//     to the first live waiter (adds it to the holders with a fresh deadline
//     and pushes its Seq to its grant list). Newcomers cannot take a permit
//     while anyone waits for one, and no attempt is wasted.
//   - [Permit.Seq] numbers the permits of a name in the order they were
//     granted. A counter that is new, or was lost by a restart without
//     persistence, starts again from the server time in microseconds, so Seq
//     never repeats as long as the server clock does not go back.
//   - No client clock is read for deadlines: they come from Redis TIME inside
//     the scripts, so clock skew between clients cannot let one of them in
//     early or keep another out. (The book's version scores holders with the
//     client's time.time() and needs a lock to be fair.)
//   - A retried acquire never takes two permits: an ID that already holds a
//     live permit keeps it. A permit whose grant may have been lost (ctx ended
//     or the connection failed with the script in flight) is released on a
//     best-effort basis.
//
// # Limits
//
//   - A holder that stalls past its timeout loses its permit silently, and
//     others may take it; it learns so only when [Permit.Refresh] or
//     [Permit.Release] returns [ErrNotHeld]. Refresh well within the timeout.
//   - A holder that crashes never releases: its permit frees itself at its
//     deadline, and the waiters blocked until then race for it; FIFO order
//     resumes with the next release. A waiter that dies keeps its place only
//     until the end of its current blocking wait (bounded by the earliest
//     deadline and its own wait, plus 2 s); releases skip expired places. A
//     waiter that dies just after being handed a permit holds it until its
//     deadline.
//   - Semaphores of one name should agree on limit and timeout: a hand-over
//     gives the waiter the releaser's timeout.
//   - Each blocked [Semaphore.Acquire] holds one connection of the client's
//     pool while it waits (BLPOP); size the pool for the waiters you expect.
//   - The seq counter has no TTL: it stays, one small key per name.
//   - A failover that loses recent writes (asynchronous replication) can lose
//     permits, letting more than limit holders in; this package does not use
//     WAIT or Redlock.
//
// # Keys
//
// With the default prefix "semaphore:", a semaphore called name uses:
//
//	semaphore:{name}:holders    ZSET    permit ID -> deadline (server Unix ms); TTL >= timeout
//	semaphore:{name}:seq        STRING  last Seq minted; no TTL
//	semaphore:{name}:queue      LIST    IDs of waiting acquirers, oldest first
//	semaphore:{name}:waiters    HASH    waiting ID -> place expiry (server Unix ms)
//	semaphore:{name}:grant:<ID> LIST    Seq of the permit handed to waiter ID; TTL timeout
//
// The queue and waiters keys expire with the longest waiter's place. The
// release script builds grant keys from the declared prefix key and the
// popped ID (they cannot be declared before the pop); the hash tag keeps
// them in the semaphore's slot.
//
// # Round trips
//
// Once the server has cached the scripts, [Semaphore.TryAcquire],
// [Permit.Refresh], [Permit.Release] and [Semaphore.Holders] take one round
// trip each; the first call of each per server may take two (EVALSHA answered
// by NOSCRIPT, then EVAL). [Semaphore.Acquire] takes one when a permit is
// free; a waiter pays 1 to queue, 1 per blocking wait (one when a release
// hands it a permit; one more per holder deadline passed or per 30 s), and
// 1 to leave the queue if it gives up.
//
// # Redis Cluster
//
// All keys of a semaphore share the {name} hash tag, so they live in one slot
// and each script runs on one node; different names spread over the cluster.
// Nothing here can cause a CROSSSLOT error.
package semaphore
