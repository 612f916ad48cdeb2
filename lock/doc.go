// Package lock is a distributed mutual-exclusion lock on Redis (Redis in
// Action 6.2): acquire with a TTL, release and extend only by the owner, a
// fencing token per acquisition, waiting without polling, and optional
// auto-extension.
//
//	locker, err := lock.New(rdb)
//	l, err := locker.Acquire(ctx, "market", 10*time.Second, lock.WithWait(5*time.Second))
//	if err != nil { ... }                 // errors.Is(err, lock.ErrNotObtained)
//	defer l.Release(ctx)
//	write(l.Fence(), ...)                 // let the resource reject stale holders
//
// or, with auto-extension and guaranteed release:
//
//	err := locker.Do(ctx, "market", 10*time.Second, func(ctx context.Context, l *lock.Lock) error { ... })
//
// # Guarantees
//
//   - Mutual exclusion while the TTL lasts: the lock is a SET NX PX of a
//     random token; release and extend are Lua scripts that act only if the
//     token is still ours, so a holder whose lock expired gets [ErrNotHeld]
//     and never touches the next holder's lock.
//   - [Lock.Fence] is strictly increasing per lock name, minted in the same
//     script as the acquisition (or hand-over). A counter that is new, or was
//     lost by a restart without persistence or a failover, starts again from
//     the server time in microseconds, above every fence minted before as
//     long as the server clock does not go back.
//   - Fair waiting without polling: a waiter joins a FIFO queue and blocks
//     (BLPOP) on a grant list of its own; the release script hands the lock
//     directly to the first live waiter (sets it as owner with the waiter's
//     TTL, mints its fence, pushes the fence to its grant list). Waiters are
//     served in arrival order, newcomers cannot cut in while anyone waits,
//     and a contended hand-off costs the waiter three round trips (queue,
//     block, release), never a storm of failed attempts.
//   - A holder that crashes never releases: waiters block at most until its
//     TTL ends (plus a few ms of jitter), then try again. A waiter that gives
//     up (wait over, ctx cancelled) leaves the queue, and releases the lock
//     if it was handed over meanwhile. A waiter that dies keeps its place only
//     until the end of its current blocking wait (bounded by the owner's TTL
//     and its own wait, plus 2 s); a release skips expired places.
//   - [Lock.KeepAlive] cancels the holder's context as soon as the lock is
//     known lost, with [ErrNotHeld] as cause.
//
// # Limits
//
//   - A single Redis primary is the source of truth: with asynchronous
//     replication a failover can lose a fresh lock (no Redlock quorum). The
//     fence protects the resource in that case; use it.
//   - A holder that stalls past its TTL without KeepAlive loses the lock
//     silently; it learns so from Release or Extend ([ErrNotHeld]).
//   - A waiter that dies just after a release handed it the lock holds it
//     until the TTL it asked for ends, like any crashed holder.
//   - After a holder crashed, the waiters that wake at its TTL race for the
//     lock; FIFO order resumes with the next release.
//   - TryAcquire does not queue; it fails while the lock is held.
//   - Each blocked waiter holds one connection of the client's pool for the
//     duration of its BLPOP; size PoolSize above the number of concurrent
//     waiters.
//   - An Acquire whose ctx is cancelled while its script is in flight
//     releases the lock it may have taken (best effort, 1 s).
//
// # Keys
//
// With the default prefix "lock:" and a lock named N:
//
//	lock:{N}:owner     STRING  holder's token, PX ttl
//	lock:{N}:fence     STRING  last fencing token (no TTL; one per lock name)
//	lock:{N}:queue     LIST    tokens of waiters, oldest first
//	lock:{N}:waiters   HASH    waiter token -> "<place expiry ms> <ttl ms>"
//	lock:{N}:grant:<T> LIST    the fence of the lock handed to waiter T, PX ttl
//
// The queue and waiters keys expire with the longest waiter's place. The
// release script builds grant keys from the declared prefix key and the
// popped token (they cannot be declared before the pop); the hash tag keeps
// them in the lock's slot.
//
// # Round trips
//
// Once the scripts are cached on the server (the first call of each script
// on a server costs one more: EVALSHA answered NOSCRIPT, then EVAL):
// TryAcquire 1, uncontended Acquire 1, Release 1, Extend 1, one Extend every
// TTL/3 under KeepAlive. A waiter pays 1 to queue, 1 per blocking wait (one
// wait when a release hands it the lock; one more per expired owner TTL or
// per 30 s), and 1 to leave the queue if it gives up.
//
// # Redis Cluster
//
// Every key of a lock carries the hash tag {N}, so each script's keys are in
// one slot; different locks spread over the cluster. Works unchanged with
// *redis.Client, *redis.ClusterClient and *redis.Ring.
package lock
