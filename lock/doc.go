// Package lock is a distributed mutual-exclusion lock on Redis (Redis in
// Action 6.2): acquire with a TTL, release and extend only by the owner, a
// fencing token per acquisition, waiting without polling, and optional
// auto-extension; also a read/write lock and a multi-lock.
//
//	locker, err := lock.New(rdb)
//	l, err := locker.Acquire(ctx, "market", 10*time.Second, lock.WithWait(5*time.Second))
//	if err != nil { ... }                 // errors.Is(err, lock.ErrNotObtained)
//	defer l.Release(ctx)
//	write(l.Fence(), ...)                 // let the resource reject stale holders
//
// or, with auto-extension and guaranteed release:
//
//	err := locker.Do(ctx, "market", 10*time.Second, func(ctx context.Context, l *lock.Lock) error {
//		return write(ctx, l.Fence(), ...)
//	})
//
// Several locks at once, all or none ([Locker.AcquireAll], [Locker.DoAll]):
// taken in the order of their names, so callers wanting overlapping sets
// never deadlock; the locks live in one slot each, so taking the set is a
// sequence of acquisitions (one round trip each when free), not one atomic
// step, and a set that cannot be completed is given back.
//
// Inspecting and breaking a lock by name, for operators and programs
// ([Locker.State], [RWLock.State], [Locker.Break]):
//
//	s, err := locker.State(ctx, "market") // s.Held, s.TTL, s.Fence, s.Waiters
//	ok, err := locker.Break(ctx, "market") // release it, whoever holds it
//
// A read/write lock ([Locker.RW]): any number of readers or one writer,
// each holder with its own TTL lease:
//
//	rw := locker.RW("catalog")
//	r, err := rw.RLock(ctx, 10*time.Second, lock.WithWait(5*time.Second)) // shared
//	w, err := rw.Lock(ctx, 10*time.Second, lock.WithWait(5*time.Second))  // exclusive
//	err = rw.DoWrite(ctx, 10*time.Second, func(ctx context.Context, h *lock.RWHold) error { ... })
//
// # Guarantees
//
//   - Mutual exclusion while the TTL lasts: the owner key holds a random
//     token with the TTL; acquire, release and extend are Lua scripts that
//     act on the lock only if it is free or still holds the caller's token,
//     so a holder whose lock expired gets [ErrNotHeld] and never touches the
//     next holder's lock.
//   - [Lock.Fence] is strictly increasing per lock name, minted in the same
//     script as the acquisition (or hand-over). A counter that is new, or was
//     lost by a restart without persistence or a failover, starts again from
//     the server time in microseconds, above every fence minted before as
//     long as the server clock does not go back.
//   - Fair waiting without polling: a waiter joins a FIFO queue and blocks on
//     a grant list of its own; the release script hands the lock directly to
//     the first live waiter (sets it as owner with the waiter's TTL, mints
//     its fence, pushes the fence to its grant list). Waiters are served in
//     arrival order, and newcomers cannot cut in while anyone waits.
//   - Liveness with slow clients. A waiter that gives up (wait over, ctx
//     cancelled) leaves the queue and releases the lock if a release handed
//     it over meanwhile; if it cannot confirm that (its client keeps
//     failing), the Locker retries in the background until it succeeds or
//     the TTL has passed, so the lock does not stay with a waiter that is
//     gone. A waiter that is late (its place expired between its attempt
//     and its blocking wait) is skipped by a release, which wakes it: it
//     tries again at once instead of sleeping until the old holder's TTL.
//   - A holder that crashes never releases: waiters block at most until its
//     TTL ends (plus a few ms of jitter), then try again. A waiter that dies
//     keeps its place only until the end of its current blocking wait
//     (bounded by the owner's TTL, half its own TTL and its own wait, plus
//     2 s); a release
//     skips expired places. A waiter that takes the lock by its own
//     attempt (the holder's TTL ended) leaves the queue in the same
//     script, so no later release hands the lock back to it once its own
//     hold has ended.
//   - [Lock.KeepAlive] cancels the holder's context as soon as the lock is
//     known lost, with [ErrNotHeld] as cause, and stops extending when its
//     ctx ends. [Locker.Do] returns an error wrapping [ErrNotHeld] whenever
//     the lock was lost before fn returned (taken by another, or not
//     extended before its TTL ran out, say through an outage), and then does
//     not try to release it. Both judge the TTL from a local estimate that
//     is never later than the server's expiry: a lock handed over is dated
//     from the waiter's last attempt before the hand-over, and an attempt
//     that finds the lock handed to it already restarts its TTL.
//     KeepAlive extends the lock a third of the TTL after the start of
//     that estimate: every TTL/3, and at once for a lock handed over late
//     in a wait (whose estimate has less than 2/3 of the TTL left), so
//     that a lock the server still holds is extended before its estimate
//     passes and Do releases it. A lock whose estimate has passed already
//     when KeepAlive is called counts as lost: the context is cancelled at
//     once (with ErrNotHeld).
//   - [Locker.State] only reads: whether the lock is held, the holder's
//     TTL, the last fence minted and the number of live waiters: those a
//     release would hand the lock to (the release scripts and State read
//     places with the same test: not expired, not malformed; the holder's
//     own stale place is not counted).
//     It never returns the holder's token, which is what authorises
//     Release and Extend: whoever knows it could release someone else's
//     lock. [RWLock.State] reads the same of a read/write lock (the
//     writer, the number of live readers, how long until every lease
//     ends).
//   - A key of the wrong type (an owner key that is a HASH, a fence that is
//     not an integer...) gives a *ria.KeyError naming the key and its role
//     (errors.Is ria.ErrWrongType or ria.ErrCorrupt), and the script changes
//     nothing: every key a script relies on is checked before its first
//     write. A fence counter is at its maximum at 2^53-1, beyond which
//     Lua's numbers would mint the same fence twice; a waiter's place whose
//     numbers are not as an acquire writes them is malformed, and a
//     release skips (and wakes) that waiter as it does a late one.
//
// # Break
//
// [Locker.Break] is for operators: it releases a lock whoever holds it,
// exactly as the holder's Release would (the release script in a break
// mode): the first live waiter in the queue gets the lock with a newly
// minted fence and its own TTL, or the lock is deleted when nobody waits.
// The holder's own place in the queue, if it kept one, is taken out (the
// lock never goes back to it), and a hand-over it has not read yet is
// deleted. It returns false, changing nothing but its reply record, if the lock is free.
//
// What Break gives up is mutual exclusion for the broken holder: it is not
// told, and may go on acting as holder beside the next one until it calls
// [Lock.Extend] or [Lock.Release] (both answer [ErrNotHeld], and touch
// nothing), or until its [Lock.KeepAlive] next extends (within TTL/3; it
// then cancels its ctx with cause ErrNotHeld). Only the fence protects the
// resource in that window: the next holder's fence is greater than the
// broken one's, so a resource that refuses older fences refuses the broken
// holder's writes once the next holder has written. Break a lock only when
// its holder is known dead or stuck, and use fences.
//
// A Break is a once-script: a re-send after a lost reply is answered from
// the record of its first run (lock:{N}:once:<nonce>, for the client's
// retry window), so one call breaks at most once, never also the waiter
// it handed the lock to, and a false answer stays false. When every
// re-send fails the error wraps ria.ErrOutcomeUnknown.
//
// The read/write lock has State but no Break: breaking it means ending
// every reader's and the writer's lease and granting the queue's head,
// which its release script does for one token at a time only.
//
// # Read/write locks
//
// [RWLock.RLock] and [RWLock.TryRLock] take the lock shared, [RWLock.Lock]
// and [RWLock.TryLock] exclusive; the options, errors and waiting
// ([WithWait], [ErrNotObtained], a FIFO queue and per-waiter grant lists,
// no polling, give-back of a grant to a waiter that has left, late waiters
// woken) are those of the exclusive lock. Each hold ([RWHold]) has its own
// token and TTL lease, its own [RWHold.Release], [RWHold.Extend] and
// [RWHold.KeepAlive]; [RWLock.DoRead] and [RWLock.DoWrite] are the
// counterparts of [Locker.Do].
//
//   - Exclusion: while the TTLs last, a writer holds the lock alone; readers
//     hold it together with other readers only. The writer is a STRING with
//     its TTL; the readers are a ZSET of tokens scored by their deadlines
//     in server time. Every script sweeps the readers whose deadline passed,
//     so a crashed reader or writer is expired, never stranding the lock.
//   - Fairness rule: waiters are served first come first served. A release
//     (and an acquisition, after expired holders are swept) grants the
//     waiters at the head of the queue that may enter: all the consecutive
//     readers at the head while no writer holds (they are granted together,
//     in one script), or the writer at the head when nobody holds. A
//     waiting writer blocks every waiter behind it, readers included, and a
//     newcomer never passes anyone waiting (TryRLock fails while a writer
//     waits), so a stream of readers cannot starve a writer: it gets in
//     once the readers granted before it have left.
//   - Crashed holders: waiters wake when the last holder's lease would end
//     and try again; the acquisition that finds the holders expired grants
//     the head of the queue in the order above (the caller included, if it
//     is its turn), so the FIFO order survives a crash, unlike the
//     exclusive lock's race after an expiry.
//   - Fences: every grant, read or write, mints one from the lock's own
//     counter (lock:{N}:rw:fence), so [RWHold.Fence] is strictly greater
//     than that of every hold granted before it: a writer's fence exceeds
//     those of every earlier reader and writer, and readers granted
//     together get consecutive fences. A reader whose acquisition was
//     re-sent after a lost reply gets a newer fence than its first run
//     minted (readers' fences are not stored).
//   - Lost replies: an acquisition recognises a hold of its token (a reader
//     is counted once, never twice) and answers "acquired"; a release is a
//     once-script (internal/script RunOnce): a re-send is answered from the
//     record of its first reply, under lock:{N}:once:<nonce>, for the
//     client's retry window; Extend, and the leave of a waiter that gives
//     up (which gives back a hold granted meanwhile), are naturally
//     idempotent and keep no record. A refusal is never reported for
//     something done; when every re-send fails the error wraps
//     ria.ErrOutcomeUnknown and the hold is given back in the background,
//     as for the exclusive lock.
//   - A key of the wrong type (or a corrupt fence) gives a *ria.KeyError,
//     and the script changes nothing: every key a script's path relies on,
//     the grant lists it will push to included, is checked before its
//     first write (by a read that fails on the wrong type, by TYPE, or by
//     the fence's INCRBY failing as the first write).
//
// Round trips (scripts cached): TryRLock, TryLock, and uncontended RLock or
// Lock 1; Release 1 (whatever number of readers it grants); Extend 1. A
// contended RLock or Lock costs what a contended [Locker.Acquire] does: 1
// for "queue and block" (pipelined), then the releases that hand it over.
// A release that grants k readers, and one that skips d expired places,
// costs O(k + d) work in its script.
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost or timed out
// (MaxRetries). Every call of this package answers truly when that happens:
//
//   - TryAcquire and Acquire: the acquire script recognises a lock that
//     holds the caller's token and answers "acquired" with its fence, so a
//     re-sent attempt that had taken the lock returns it. A re-sent attempt
//     that queued the caller keeps its single place (the waiters hash is
//     keyed by token).
//   - Release: a successful release records the call's nonce under
//     lock:{N}:released:<token> for the client's retry window; a re-send
//     that finds the lock gone answers "released" from the record, not
//     [ErrNotHeld].
//   - Extend is naturally idempotent (it resets the TTL again); the leave of
//     a waiter that gives up is too.
//   - Break is answered from a record of its first run (see "Break").
//
// An error that wraps [ErrNotObtained] or [ErrNotHeld] always means that the
// call holds (or released) nothing. When every re-send fails, the error
// wraps ria.ErrOutcomeUnknown instead: the call may or may not have taken
// effect. For an acquisition or a release in doubt, the Locker then gives
// the lock back in the background, retrying with backoff (10 ms up to 1 s)
// until Redis answers or the lock's TTL has passed; [WithLogger] says where
// it logs the give-backs it could not complete. The give-back runs on the
// Locker's own client: if that client keeps timing out for the whole TTL,
// the give-back fails too and the lock lapses at its TTL, as a crashed
// holder's would (until then other callers see it held). Pick a TTL you can
// afford to lose, and a ReadTimeout the server meets.
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
//   - AcquireAll holds the locks it has while it waits for the next one
//     (at most [MaxMulti] names).
//   - A read/write lock is not reentrant and has no upgrade or downgrade:
//     a holder that asks again gets a second hold, or waits for itself (a
//     writer asking to read, a reader asking to write while others wait).
//     Release the read hold, then Lock.
//   - Each blocked waiter holds one connection of the client's pool for the
//     duration of its blocking read; size PoolSize above the number of
//     concurrent waiters.
//
// # Keys
//
// With the default prefix "lock:" and a lock named N:
//
//	lock:{N}:owner        STRING  holder's token, PX ttl
//	lock:{N}:fence        STRING  last fencing token (no TTL; one per lock name)
//	lock:{N}:queue        LIST    tokens of waiters, oldest first
//	lock:{N}:waiters      HASH    waiter token -> "<place expiry ms> <ttl ms>"
//	lock:{N}:grant:<T>    LIST    the fence of the lock handed to waiter T (or
//	                              an empty wake), PX ttl
//	lock:{N}:released:<T> STRING  nonce of the Release call that released the
//	                              lock of token T, PX the client's retry window
//	lock:{N}:once:<nonce> STRING  the reply of one Break call, PX the
//	                              client's retry window
//
// A read/write lock named N has keys of its own (the exclusive lock N is
// another lock):
//
//	lock:{N}:rw:writer     STRING  the writer's token, PX ttl
//	lock:{N}:rw:readers    ZSET    reader token -> deadline (server Unix ms),
//	                               the key's TTL at least the longest lease
//	lock:{N}:rw:fence      STRING  last fencing token (no TTL)
//	lock:{N}:rw:queue      LIST    tokens of waiters, oldest first
//	lock:{N}:rw:waiters    HASH    waiter token -> "<place expiry ms> <ttl ms> <r|w>"
//	lock:{N}:rw:grant:<T>  LIST    the fence of the hold granted to waiter T
//	                               (or an empty wake), PX ttl
//	lock:{N}:once:<nonce>  STRING  the reply of one Release call, PX the
//	                               client's retry window
//
// The queue and waiters keys expire with the longest waiter's place. The
// release script builds grant keys from the declared prefix key and the
// token it reads from the queue (they cannot be declared before that read);
// the hash tag keeps them in the lock's slot.
//
// # Round trips
//
// Once the scripts are cached on the server (the first call of each script
// on a server costs one more: EVALSHA answered NOSCRIPT, then EVAL):
// TryAcquire 1, Acquire of a free lock 1, Release 1, Extend 1, one Extend
// every TTL/3 under KeepAlive (the first at once for a lock handed over
// late in a wait); State 1 (a script that only reads, O(number
// of waiters) in the server), RWLock.State 1, Break 1 (what a Release
// costs: O(k) for k expired places it skips).
//
// A contended Acquire costs 2 round trips in all: 1 for "queue and block"
// (its attempt and its blocking BLPOP of the grant list sent in one
// pipeline) and the holder's Release, which hands it the lock; then its own
// Release. A Locker remembers, per lock name (a small hint table), that its
// last attempt found the lock taken, and pipelines from the first attempt;
// a Locker that has not seen the lock taken pays a plain attempt and a
// plain blocking wait (BLMOVE), 2 round trips, and pipelines from then on.
// The pipelined BLPOP waits at most 1 s (its timeout is chosen before the
// attempt tells how long the holder's TTL lasts, and must fit in the
// client's ReadTimeout, which go-redis does not lengthen inside a
// pipeline): a longer wait goes on with one plain blocking wait until the
// holder's TTL ends (or a release hands the lock over), one more per
// expired TTL or per 30 s, and an attempt again every half of the
// waiter's own TTL when that is shorter (a hand-over is dated from the
// waiter's last attempt: it must come with time left for Do and
// KeepAlive to extend it). A waiter that gives up pays 1 to leave the
// queue. With a ReadTimeout under about 260 ms there is no room for a
// blocking read in a pipeline, and every wait is plain (a wake that a
// plain wait reads, which stays on the grant list, costs 1 more to delete).
// A wait that ends by its timeout (a holder that neither released nor
// extended) ends when the server times the blocking command out, at its
// next event loop tick: up to 1000/hz ms after the holder's TTL (100 ms at
// Redis's default hz 10) before the waiter attempts again.
//
// # Redis Cluster
//
// Every key of a lock carries the hash tag {N}, so each script's keys are in
// one slot; different locks spread over the cluster. Works unchanged with
// *redis.Client, *redis.ClusterClient and *redis.Ring.
package lock
