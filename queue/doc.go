// Package queue is a task queue on Redis (Redis in Action 6.4): named tasks
// with payloads, workers that run them with handlers registered by name,
// several queues served in strict priority order, delayed tasks, and, beyond
// the book, at-least-once delivery with leases, heartbeats, retries with
// exponential backoff and a dead-letter set.
//
//	g, err := queue.New(rdb, "emails")                    // a group of queues
//	id, err := g.Enqueue(ctx, "default", "send_sold_email", Sold{...})
//	id, err = g.Enqueue(ctx, "low", "send_digest", d, queue.Delay(time.Hour), queue.MaxRetry(3))
//
//	w, err := queue.NewWorker(g, queue.Queues("high", "default", "low"), queue.Concurrency(32))
//	err = w.Handle("send_sold_email", queue.Typed(func(ctx context.Context, s Sold) error { ... }))
//	err = w.Run(ctx) // until ctx ends (nil) or an error retrying cannot heal
//
// A [Group] is a named set of queues whose keys share one Redis Cluster
// hash tag. Tasks are enqueued into one of its queues; a [Worker] serves
// some of them, highest priority first. Payloads are encoded by the group's
// [Codec] (encoding/json by default) and decoded by [Task.Decode] or a
// [Typed] handler.
//
// # Delivery
//
// At least once. Taking a task moves it, in the same script, into the
// in-flight set with a lease (server time); the worker extends the leases
// of its tasks every lease/3 (one round trip for all of them) and settles
// each task when its handler returns: acknowledged (deleted) on success,
// retried after an exponential backoff on error, or dead. A task whose
// lease expires (its worker crashed, was cut off from Redis, or stalled
// past the lease) goes back to the front of its queue, counting a failed
// attempt, through the same atomic recovery step that every take runs (see
// Scheduling; [Group.Recover] runs it alone); any number of recoverers may
// run at once and each expired lease is recovered once.
//
// So a task runs more than once only when
//   - its worker died, or lost its connection, after the handler returned
//     and before the outcome reached Redis (a finished task's outcome goes
//     with the worker's next take, which is sent at once, or in a settle
//     call when the worker is idle, so this window is about one round
//     trip), or
//   - its lease expired while the handler still ran: the worker stalled (or
//     Redis was unreachable) for longer than the lease. The handler's
//     context is then cancelled with [ErrLeaseLost] as soon as the worker
//     finds out, and its outcome is ignored, or
//   - its Enqueue's reply was lost and go-redis's re-send reached Redis
//     after the task had finished (see Lost replies).
//
// Every lease carries a token, new for every take: a nonce of the worker
// (a random prefix of its process and a counter), which no Redis restart
// or failover can hand out twice. The outcome or heartbeat of a stale run
// never touches a newer run of the same task. Make handlers idempotent, or
// give tasks an [ID] and dedupe. A task never disappears without being
// acknowledged, except a dead task dropped beyond [WithDeadLimit] and a
// delayed task deleted by [Group.Cancel].
//
// Failures: a handler error retries the task after base*2^attempts (capped,
// then jittered down by up to half; see [Backoff]) until it has failed
// MaxRetry+1 times ([MaxRetry], default 5), then the task goes to the dead
// set with its last error. An error wrapping [ErrNoRetry] sends it there at
// once, as do an unknown task name ([ErrUnknownTask]) and a payload that
// does not decode ([ErrBadPayload]); a panic is an error ("panic: ...").
// A task whose stored fields someone else overwrote (they do not parse)
// goes there unrun, with an error saying so, whether it was ready, came
// due or its lease expired (the take that promotes or recovers it sends
// it there), and the worker carries on. [Group.Dead]
// lists the dead tasks, [Group.Requeue] sends one back with its attempts
// reset.
//
// # Scheduling
//
//   - Strict priority: a take empties the first of the worker's queues
//     before it takes from the second, and so on (but see [Prefetch]).
//   - FIFO within a queue, except that recovered and given-back tasks go to
//     the front.
//   - No polling: an idle worker blocks (BLPOP) on the signal lists of its
//     queues, where a wake token is pushed when a queue's ready list goes
//     from empty to not empty (enqueue, promotion, recovery, give-back; at
//     most one token is pending), and on the group's schedule list (below). A worker that takes tasks and leaves
//     some behind wakes the next idle worker of that queue, so every token
//     taken leads to a take. Its wait ends at the earliest due time or
//     lease deadline it knows of, and after its lease (at most 30 s) in any
//     case, so that idle workers recover the expired leases of crashed
//     workers within about a lease. A task enqueued while a worker of its
//     queue is idle is picked up after the BLPOP's reply and one take: well
//     under a second. (A worker killed between its BLPOP and its take takes
//     the token with it: the tasks of that queue then wait for another
//     worker's next take, at most about a lease.)
//   - Delayed tasks ([Delay], [At]; due times by the server's clock) are
//     promoted to their queue, 100 per round trip, by the atomic script that
//     takes tasks: at every take of a worker whose queues hold fewer tasks
//     than it asks for (so before any worker waits) and at least every
//     50 ms of a busy worker. Any number of promoters may run at once and
//     each task is promoted once. [Group.Promote] runs that step alone.
//     Expired leases are recovered the same way.
//   - Every due time has a worker that promotes it: a take tells its worker
//     the first due time when it finds less work than it asked for, when it
//     promotes and after the worker waited; the worker then promotes by
//     that time, whether idle (its wait ends then), busy (every 50 ms) or
//     with every slot busy (a take of no task when the time comes, at most
//     every 50 ms). A due time added earlier than every delayed one (an
//     enqueue with a delay, a retry) pushes a token to the group's schedule
//     list, which wakes one idle worker (or the next one to become idle):
//     it takes again and so learns it. So a due task is promoted within
//     milliseconds (up to 50 ms while the worker that knows of it is busy):
//     an idle worker ends its wait itself when the time comes (one push to
//     its wake list), as Redis times a blocked command out only at its next
//     event loop tick, up to 1000/hz ms late (100 ms at the default hz 10).
//     While no worker is idle and none knows of it, the next take that
//     finds it due promotes it: a busy worker takes all the time, one with
//     every slot busy when a slot frees. If the worker that knew of it is
//     killed, another one finds it when its own wait ends (its lease, at
//     most 30 s).
//
// # Prefetch
//
// By default a worker takes no more tasks than it has free slots, so at
// concurrency 1 every task waits for one take round trip. With [Prefetch](n)
// it takes up to n more and keeps them, leased, until a slot frees: one
// take brings several tasks and acknowledges as many, and a finished
// handler starts the next task at once. A prefetched task of a lower queue
// may then run before a higher-priority task enqueued after it was taken;
// its lease runs (and is extended by the heartbeat) while it waits; at
// shutdown it is given back at once without counting an attempt.
//
// # Graceful shutdown
//
// When Run's ctx ends the worker stops taking tasks, gives the prefetched
// ones back, lets the running ones finish for the grace period ([Grace],
// default 10 s), then cancels their contexts, waits at most one more
// second, and gives the unfinished tasks back to the front of their queues
// without counting an attempt. Run then returns nil.
//
// A worker that stops while waiting for work ends its BLPOP (it also waits
// on a wake list of its own) and waits for it to return, so that the BLPOP
// takes no wake token after Run has returned. Its last settle call passes
// on the tokens it may have taken without taking tasks after them: it
// wakes each of its queues that has ready tasks, and an idle worker of the
// group if tasks are delayed. So a worker stopping next to idle ones never
// leaves a task waiting. If Redis cannot be reached, the BLPOP ends at its
// timeout (at most the lease or 30 s, plus 5 s) and Run returns then.
//
// # Unique tasks
//
// An enqueue with [Unique](ttl) is refused, with a [*NotUniqueError]
// naming the holder's task ID (it matches [ErrNotUnique] and
// [ErrDuplicate]), while another task with the same uniqueness key is
// unfinished (ready, delayed, in flight, waiting to retry) and at most ttl
// after that task's enqueue. The key is the SHA-256 of the task's queue,
// name and encoded payload, or the caller's [UniqueKey] (which spans every
// queue and name of the group). The check, the enqueue and the taking of
// the key's lock (a STRING holding the holder's ID, with the TTL) are one
// script, for [Group.EnqueueBatch] too (all or nothing; two jobs of a batch
// with one key are refused before anything is sent). The lock is released
// by the script that settles the task when it is acknowledged, dies (goes
// to the dead letters, from a handler or an expired lease with no retry
// left) or is cancelled, and only if the task still holds it: a lock whose
// TTL ran out and that a later task took is never released by the older
// one. So a dead task frees its key, as a done one does (asynq keeps it
// until the TTL); [Group.Requeue] does not take it again. A lock whose
// holder is no longer in the group (deleted by hand, or by a script that
// does not release locks) is free. A re-send of a unique enqueue whose
// first run succeeded is recognised and succeeds (see Lost replies); a
// TTL shorter than the time the task waits makes the key free before the
// task runs.
//
// # Pausing queues
//
// [Group.Pause] pauses a queue for every worker of the group, in any
// process (the state is a SET in Redis), until [Group.Resume]. A paused
// queue accepts enqueues, and delayed tasks are promoted into it, but the
// take script (which reads the paused set: one more command on the
// server, no more round trips) hands none of its tasks out; a worker that
// serves other queues keeps taking from them, in priority order. Tasks
// taken before the pause (running or prefetched) finish normally. A take
// drops a paused queue's wake token instead of passing it on, so idle
// workers are not woken again and again by a paused queue that has tasks
// (an enqueue into an empty paused queue wakes one idle worker once, which
// takes nothing). [Group.Resume] pushes a wake token when the queue has
// ready tasks, so an idle worker takes at once (not at the end of its
// wait), and wakes the next one if it leaves tasks. (A worker that stops
// passes on the wake tokens of its queues that have tasks, paused or not:
// one more such wake.) [Group.Paused] and
// [Stats].Paused list the paused queues.
//
// # Periodic tasks
//
// A [Scheduler] ([Group.Scheduler]) enqueues the task of each [Periodic]
// schedule once per period (every interval from the Unix epoch plus an
// offset, on the server's clock), or once per time of a cron spec
// ([Periodic].Cron, see [ParseCron]: 5 fields or @hourly, @daily...,
// evaluated in UTC), however many Schedulers run in however many
// processes: one script per schedule checks the period mark and writes the
// task (ID "<name>@<Unix ms of the period's start>", "<name>@<Unix seconds
// of the cron time>" for a cron schedule) and the mark together, so a
// Scheduler that crashes leaves either both or neither, and the others go
// on. The mark is the start time of the last period (cron time) enqueued,
// so a change of Every or Offset takes effect at the first period that
// starts after it: a longer Every waits for its next period, a shorter one
// enqueues at once, and a moved Offset enqueues the first period that
// starts at the new offset after the mark, even while the last period's
// task is still ready, running, retrying or dead (the start time names the
// task, and marks only grow, so no two periods share an ID; a period
// number did not change with the Offset). While Schedulers with the old
// and the new Every or Offset run side by side (a rolling change), each
// enqueues those of its periods that start after the mark. A tick that
// finds its period's task there already, unmarked (its mark was lost, or
// someone enqueued that ID), marks the period and does not list the task
// as its own. (Upgrade notes: a mark written by an earlier version, a
// period number, counts only for the period of that number, so the period
// in which the new version first ticks is not enqueued twice. Tasks that
// earlier versions enqueued keep their IDs "<name>@<period number>": the
// mark, written with them, is what tells a period enqueued, not their ID,
// so a period is enqueued once across an upgrade, and an old task's ID is
// never taken for a new period's.)
// [Scheduler.Run] wakes at each period's start (cron time);
// [Scheduler.Tick] is one pass (1 round trip for all schedules). A cron
// time lasts until the next one, as a period does: the first tick in it
// enqueues its task (late, if no Scheduler ticked at the time itself), and
// a time in which no Scheduler ran is skipped, not caught up.
//
// The times of a cron spec are computed in Go, from the server's clock as
// the last tick read it, and the script checks them against the server's
// clock (the last time at or before now, the next one after now): a
// Scheduler whose clock is not the server's learns the difference from
// its first reply and sends again (1 more round trip then, and whenever
// the difference changes across a cron time).
//
// # Inspecting and metrics
//
// [Group.Stats] counts the tasks ready (per queue), delayed, in flight and
// dead; [Group.Task] tells one task's state, payload, attempts and last
// error. [Group.List] pages the tasks in one state, with their payloads,
// failed attempts, last errors and times, in one read-only script (every
// task listed was in that state at one moment): the ready tasks of one
// queue in the order workers take them, the group's delayed tasks by due
// time, its running tasks by lease deadline, its dead tasks most recent
// first. [Group.Delete] deletes a ready, delayed or dead task with all the
// group keeps of it (its unique lock included), never a task in flight
// ([ErrInFlight]); [Group.RunNow] makes a delayed or retrying task ready at
// once, at the back of its queue, waking its workers; [Group.Requeue] puts
// a dead task back; [Group.Cancel] deletes a delayed one; [Group.Pause]
// and [Group.Resume] stop and restart a queue.
//
// Bulk actions: [Group.Purge] deletes every ready task of one queue,
// [Group.DeleteAllDead] every dead task of the group (the dead set is the
// group's) and [Group.RequeueAllDead] requeues them all, each task exactly
// as Delete or Requeue does it (the same Lua), and each returns how many
// tasks it deleted or requeued. They work in batches of [MaxBulkBatch]
// tasks, one atomic script call each, so a million tasks never block the
// server for more than a few milliseconds at a time, and workers,
// producers and single-task calls can run between batches: a task is
// taken by a worker or deleted, requeued once (by the bulk action or by a
// Requeue racing it), never lost, duplicated or left half-deleted, and
// Stats are right after every batch. A bulk action stops once it has
// taken out as many tasks as its list or set held at its first batch, so
// producers (or requeued tasks dying again at once) cannot keep it going
// forever. Package queue/dashboard
// serves all of this as a web page (an http.Handler). A worker reports
// every run of a task to a [Metrics] ([WithMetrics]): its result (ok,
// retry, dead, given back) and the handler's time; [ExpvarMetrics]
// publishes those counts and a group's gauges through expvar, with no new
// dependency.
//
// # Errors
//
// Every call returns errors rather than logging them, except [Worker.Run],
// which logs (to [slog.Default] unless [Logger] says otherwise) the failed
// tasks, lost leases and the Redis errors it retries: network errors, and
// a server that is loading, failing over, busy or out of memory, retried
// with backoff for as long as ctx lasts. An error that retrying cannot heal
// stops the worker (gracefully, as above) and Run returns it:
//   - a key of the group that holds something this package did not write:
//     a *ria.KeyError naming the key and its role, matching
//     ria.ErrWrongType (a HASH where a LIST should be...) or ria.ErrCorrupt
//     (a value it parses that does not parse where the task cannot go to
//     the dead letters instead: the fields of a prefetched or running task
//     given back at shutdown);
//   - a reply of a script that this version cannot read (two versions of
//     the package sharing a group), another error reply of the server (a
//     script error, an ACL or cluster configuration that refuses the
//     scripts), or a closed client.
//
// Every script checks the types of the keys it touches (those it finds
// through a task's queue included) and the values it parses before its
// first write, so a call that fails that way has changed nothing.
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost or timed out (its
// MaxRetries, 3 by default). Every state-changing call answers what
// happened, whichever run of it reached Redis:
//   - [Group.Enqueue] and [Group.EnqueueBatch] recognise their own re-send
//     and enqueue once: a generated ID is a random UUID that only this call
//     has, and an [ID] given by the caller is stored with a nonce of the
//     call, so the re-send is no [ErrDuplicate]. A re-send that reaches
//     Redis after every task of the call has finished (and been deleted)
//     cannot tell, and enqueues them again: at-least-once delivery, as
//     above.
//   - A [Unique] enqueue first looks for its own tasks, as a batch does
//     (the lock it took may have expired and been taken by another task
//     since its first run): a re-send whose first run succeeded succeeds.
//   - A [Scheduler.Tick]'s script re-sent finds its period (cron time)
//     marked, and the tick's nonce packed with the task it finds tells
//     that this tick enqueued it: Tick still lists it (unless the task
//     has finished by then).
//   - [Group.Pause], [Group.Resume], [Group.Cancel], [Group.Requeue],
//     [Group.Delete], [Group.RunNow],
//     and each batch of [Group.Promote], [Group.Recover], [Group.Purge],
//     [Group.DeleteAllDead] and [Group.RequeueAllDead] record their reply
//     for the client's retry window (a small STRING key,
//     <prefix>{G}:once:<nonce>), and a re-send gets the first run's
//     answer: never [ErrNotFound] for a task it cancelled, requeued,
//     deleted or moved, and the count of what it moved, deleted or
//     requeued (a re-sent batch does not take out the next tasks).
//   - A worker's take carries a lease token new for every take, and
//     records (took:<worker>, for a lease) the IDs it took. A re-send of it,
//     by go-redis or by the worker after go-redis gave up (with the same
//     token, within half a lease), hands out the same tasks instead of
//     taking more: a lost take reply leaves no task in flight unseen until
//     its lease expires (unless an attempt of the take reaches Redis after
//     a later take of the worker, as after a long stall). Settling an
//     outcome (ack, retry, dead, give-back) and extending a lease take the
//     lease token into account, so doing it twice changes nothing more.
//
// When every re-send fails too, a call returns an error wrapping
// ria.ErrOutcomeUnknown (never [ErrNotFound] or [ErrDuplicate] for
// something it did): read the state back, or enqueue again with the same
// [ID] ([ErrDuplicate] then says it is there). A client with MaxRetries -1
// (on a Cluster, MaxRedirects -1 too) never re-sends, and keeps no record.
//
// # Limits
//
//   - A group's keys live in one hash slot, so one group is served by one
//     Redis node (or Cluster shard); spread load over several groups.
//   - Only one Redis primary is the source of truth: a failover with
//     asynchronous replication can lose recent enqueues or outcomes (a lost
//     outcome means the task runs again).
//   - An idle worker takes (1 round trip, 2 when it ends its own wait at a
//     due time or the lease bound, then BLPOP again) at least once
//     per lease: a short lease makes idle workers wake that often.
//   - [Group.Cancel] removes delayed tasks only; [Group.Delete] removes
//     ready, delayed and dead ones (a ready one costs a scan of its
//     queue's ready list), never one in flight. The bulk actions take a
//     whole queue's ready tasks or all the group's dead tasks: there is no
//     bulk action on delayed tasks, and none on the dead tasks of one queue
//     (the dead set is the group's). A bulk action is atomic per batch, not
//     as a whole: an error midway leaves the batches before it done. [Group.List] cannot filter
//     the group's delayed, running and dead sets by queue (each task's
//     Queue tells it).
//   - Cron specs are evaluated in UTC only (no time zone, so no daylight
//     saving); their resolution is the minute.
//   - [Group.EnqueueBatch] writes the whole batch (at most [MaxBatch]
//     tasks) in one script, which blocks the server while it runs.
//   - Dead tasks stay until requeued or until newer ones push them past the
//     dead limit (default 10000); done tasks are deleted at once (no
//     result retention).
//   - Each idle worker holds one connection of the client's pool in BLPOP;
//     a busy one uses one more for its take and one for its heartbeat.
//   - A handler that ignores its context's cancellation at shutdown is left
//     running; its task is given back, so it may run twice.
//   - Numbers that reach Redis are bounded: [MaxRetries], [MaxDelay],
//     [MaxBatch], [MaxDeadLimit], [MaxDeadPage], [MaxListPage], [MaxConcurrency],
//     [MaxPrefetch], [MaxLease].
//
// # Keys
//
// With the default prefix "queue:" and a group called G (group names must
// not hold '{' or '}', so that no two groups share a key; queue names may
// hold anything):
//
//	queue:{G}:tasks       HASH    "<ID>" -> the task packed with its payload (below),
//	                              "<ID>:a" -> failed attempts, "<ID>:e" -> last error (after a failure);
//	                              so no ID ends in ":a" or ":e" ([ID] refuses them)
//	queue:{G}:ready:<q>   LIST    IDs ready in queue q, oldest first (RPUSH, LPOP)
//	queue:{G}:delayed     ZSET    ID -> due time (server Unix ms); also tasks waiting to retry
//	queue:{G}:inflight    ZSET    "<ID>:<lease token>" -> lease deadline (server Unix ms)
//	queue:{G}:dead        ZSET    ID -> time of death (server Unix ms)
//	queue:{G}:signal:<q>  LIST    a wake token for the idle workers of queue q
//	queue:{G}:schedule    LIST    at most one wake token for any idle worker of the group
//	queue:{G}:took:<W>    STRING  worker W's last take: its lease token and the IDs it took
//	                              (for a lease), for a re-send of that take
//	queue:{G}:wake:<W>    LIST    a token that ends worker W's own BLPOP (30 s TTL)
//	queue:{G}:periodic    HASH    schedule name -> the start (server Unix ms) of the last period
//	                              whose task was enqueued; "<name>@cron" -> the last cron time
//	                              enqueued (Unix seconds)
//	queue:{G}:unique:<U>  STRING  the ID of the task holding uniqueness key U, with its TTL
//	queue:{G}:paused      SET     the names of the paused queues
//	queue:{G}:once:<N>    STRING  the reply of one Cancel, Requeue, Delete, RunNow call, or of
//	                              one batch of Promote, Recover, Purge, DeleteAllDead or
//	                              RequeueAllDead, for the client's retry window
//
// A task is one field of the tasks hash, written once by Enqueue (an HSETNX,
// which also tells an Enqueue's re-send) and read whole by the take that
// hands it out:
//
//	<len(queue)>:<queue><len(name)>:<name><max retries>:<len(nonce)>:<nonce><payload>
//
// (lengths in bytes, in decimal; nonce: the enqueue call's, for an [ID]
// given by the caller, else empty, followed for a [Unique] task by '/' and
// its uniqueness key, which a take so hands to the worker with the task:
// the worker names it when it settles the task, and only then does the
// settle script read the lock). Its failed attempts and last error, the
// only fields that change, are written only when it fails. Every
// redis.call in a script has a fixed cost that dominates the server time
// of an enqueue or a take, so fewer fields mean fewer commands: an enqueue
// of a ready task runs LLEN (the ready list's length, which also checks its
// type: a token is pushed only when the list was empty), HSETNX and RPUSH.
// The lease token is part of the in-flight member, so that settling a run
// is one ZREM that succeeds only for the run that still holds the task.
//
// A task's queue is read from tasks by the scripts that promote, recover,
// give back and requeue tasks, so the ready and signal lists they push to
// cannot be declared in KEYS beforehand: they are built from declared
// prefix keys ("queue:{G}:ready:", "queue:{G}:signal:"), whose hash tag
// keeps them in the group's slot, and read (so checked) before any write.
// Every other key is passed in KEYS.
//
// # Round trips
//
// Once the server has cached the scripts (the first call of each script per
// server costs one more: EVALSHA answered NOSCRIPT, then EVAL):
//
//   - [Group.Enqueue] 1, [Unique] or not; [Group.EnqueueBatch] 1 for the
//     whole batch. A unique task costs the general script and 2 to 3 more
//     commands on the server (HEXISTS or HGET of its own ID, GET of the
//     lock, SET of the lock; HEXISTS of the holder when it is held). On
//     the server, one ready task with a generated ID costs 3 commands
//     besides the EVALSHA (LLEN, HSETNX, RPUSH), 2 more when its queue was
//     empty (LLEN and RPUSH of the wake token), through a script of its own
//     that takes 3 keys and 2 arguments; it leaves anything unusual (a key
//     of the wrong type) to the general script, which says what is wrong:
//     1 more round trip then.
//   - A processed task: take + ack = 2 at most, fewer on a busy worker:
//     one take hands out up to min(free slots + prefetch, 64) tasks and
//     carries the acknowledgements (and other outcomes) of the tasks
//     finished since the last one. A busy worker of concurrency 1 pays 1
//     round trip per task; with [Prefetch](32), about 0.07; of concurrency
//     32, about 0.06. A worker that finds its queues empty blocks in 1
//     BLPOP and settles the tasks that finish meanwhile in 1 round trip per
//     batch; so a task picked up by an idle worker that is idle again when
//     it finishes costs 3: the BLPOP that wakes the worker, the take and
//     the settle.
//   - A worker with every slot busy that knows of a due delayed task pays
//     1 take of no task to promote it (at most every 50 ms).
//   - Stopping: 1 settle call (the outcomes left and the wake tokens
//     passed on), 1 push to end the BLPOP of a waiting worker, 1 settle to
//     give prefetched tasks back while handlers finish, and 1 take to ask
//     again for the tasks of a take whose reply never came.
//   - Heartbeat: 1 per lease/3 per worker with tasks, per 1000 tasks.
//   - A take runs SMEMBERS of the paused set (1 command on the server); the
//     ack of a unique task runs GET and DEL of its lock (2 commands), that
//     of other tasks nothing more.
//   - [Group.Pause], [Group.Resume], [Group.Paused] 1 each.
//   - [Scheduler.Tick] 1 for all schedules (see Periodic tasks for cron).
//   - [Group.Pause], [Group.Resume], [Group.Cancel], [Group.Requeue],
//     [Group.Delete], [Group.RunNow], [Group.Stats], [Group.Dead],
//     [Group.Task], [Group.List] 1 each;
//     [Group.Promote] and [Group.Recover] 1 per 100 tasks (at least 1);
//     [Group.Purge], [Group.DeleteAllDead] and [Group.RequeueAllDead] 1
//     per [MaxBulkBatch] (1000) tasks (at least 1). On the server, a batch
//     runs LRANGE or ZRANGE, one HMGET for all its tasks (a requeue: one per
//     task), a GET per unique lock held, then LTRIM or ZREMRANGEBYRANK and
//     one HDEL per task (a requeue: ZREM, HDEL and RPUSH per task, LLEN of
//     each queue's lists once).
//
// # Redis Cluster
//
// Every key of a group carries the hash tag {G}, so each script and the
// Stats transaction touch one slot; different groups spread over the
// cluster. The group name is the namespace the user chooses for that slot.
// Works unchanged with *redis.Client, *redis.ClusterClient and *redis.Ring.
package queue
