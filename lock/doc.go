// Package lock is a distributed mutual-exclusion lock on Redis (Redis in
// Action 6.2): acquire with a TTL, release and extend only by the owner, a
// fencing token per acquisition, waiting without polling, and optional
// auto-extension.
//
//	locker := lock.New(rdb)
//	l, err := locker.Acquire(ctx, "market", 10*time.Second, lock.WithWait(5*time.Second))
//	if err != nil { ... }                 // errors.Is(err, lock.ErrNotObtained)
//	defer l.Release(ctx)
//	write(l.Fence(), ...)                 // let the resource reject stale holders
//
// or, with auto-extension and guaranteed release:
//
//	err := locker.Do(ctx, "market", 10*time.Second, func(ctx context.Context) error { ... })
//
// # Guarantees
//
//   - Mutual exclusion while the TTL lasts: the lock is a SET NX PX of a
//     random token; release and extend are Lua scripts that act only if the
//     token is still ours, so a holder whose lock expired gets [ErrNotHeld]
//     and never touches the next holder's lock.
//   - [Lock.Fence] is strictly increasing per lock name, minted in the same
//     script as the acquisition. It is max(previous+1, server time in µs), so
//     it keeps increasing even if Redis loses the counter (restart without
//     persistence, failover), as long as the server clock does not go back.
//   - No polling storm: a waiter blocks (BLPOP) on a per-lock wake list; the
//     release script pushes one token when someone waits, waking one waiter.
//     A crashed holder wakes nobody, so waiters also wake when its TTL ends
//     (plus a few ms of jitter). A contended hand-off costs a few round
//     trips, not hundreds of failed attempts.
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
//   - Waiters are woken one per release but are not served in FIFO order: a
//     newcomer may take a just-released lock first, and the woken waiter
//     blocks again.
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
//	lock:{N}:owner    STRING  holder's token, PX ttl
//	lock:{N}:fence    STRING  last fencing token (no TTL; one per lock name)
//	lock:{N}:waiting  STRING  mark that someone waits, PX of the longest wait
//	lock:{N}:wake     LIST    wake tokens, PX of the waiting mark
//
// # Round trips
//
// Once the scripts are cached on the server (the first call of each script
// on a server costs one more: EVALSHA answered NOSCRIPT, then EVAL):
// TryAcquire 1, uncontended Acquire 1, Release 1, Extend 1, one Extend every
// TTL/3 under KeepAlive. A waiter pays 1 per blocking wait and 1 per retry.
//
// # Redis Cluster
//
// Every key of a lock carries the hash tag {N}, so each script's keys are in
// one slot; different locks spread over the cluster. Works unchanged with
// *redis.Client, *redis.ClusterClient and *redis.Ring.
package lock
