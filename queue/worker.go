package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/wait"
)

const (
	// maxBlock caps one blocking wait of an idle worker (so does its lease:
	// it then recovers the expired leases of crashed workers).
	maxBlock = 30 * time.Second
	// blockMargin is how long after its timeout a blocking wait is given up
	// by the client if the server has not answered.
	blockMargin = 5 * time.Second
	// maintainEvery is how often a busy worker's take promotes due tasks
	// and recovers expired leases; a take that finds fewer tasks than it
	// asks for always does.
	maintainEvery = 50 * time.Millisecond

	// MaxConcurrency is the largest [Concurrency].
	MaxConcurrency = 10_000
	// MaxPrefetch is the largest [Prefetch].
	MaxPrefetch = 1000
	// MaxLease is the longest [Lease].
	MaxLease = 24 * time.Hour
)

// errShutdown is the cause of a handler's context cancelled when its
// worker's grace period ran out.
var errShutdown = errors.New("queue: worker shut down")

// WorkerOption configures a [Worker].
type WorkerOption func(*workerOptions)

type workerOptions struct {
	queues      []string
	concurrency int
	prefetch    int
	lease       time.Duration
	grace       time.Duration
	logger      *slog.Logger
	base, max   time.Duration
	metrics     Metrics
}

// Queues sets the queues the worker serves, highest priority first: it
// takes a task of a queue only when every queue before it is empty.
// Default: "default".
func Queues(names ...string) WorkerOption {
	return func(o *workerOptions) { o.queues = slices.Clone(names) }
}

// Concurrency sets how many tasks the worker runs at once, each in its own
// goroutine. Default: 10; at most [MaxConcurrency].
func Concurrency(n int) WorkerOption { return func(o *workerOptions) { o.concurrency = n } }

// Prefetch lets the worker take up to n tasks more than it has free slots,
// and keep them, leased, until a slot frees: a take then brings several
// tasks at once and a finished handler starts the next task without a
// round trip, which pays when tasks are short (at concurrency 1, a worker
// without prefetch waits one round trip per task). The worker takes again
// when half of the prefetched tasks have started. Default: 0 (a worker
// takes no more tasks than it has free slots); at most [MaxPrefetch].
//
// What prefetch changes:
//   - Priority: a prefetched task of a lower-priority queue may start after
//     a higher-priority task was enqueued (and another worker may be free
//     to run it), since it was taken before.
//   - Leases: a prefetched task is leased from its take, so its lease runs
//     while it waits. The heartbeat extends it like a running task's; if it
//     is lost anyway (the worker stalled past the lease), the task is not
//     started.
//   - Shutdown: when Run's ctx ends, the prefetched tasks that have not
//     started go back to the front of their queues at once, in their order,
//     without counting an attempt.
//   - Other workers: the prefetched tasks are not available to them.
func Prefetch(n int) WorkerOption { return func(o *workerOptions) { o.prefetch = n } }

// Lease sets how long a taken task stays the worker's without a heartbeat:
// the worker extends the leases of its tasks every lease/3, and a task
// whose lease expires (its worker died or stalled) goes back to its queue.
// An idle worker waits for work no longer than its lease (and 30s) before
// it takes again, recovering the expired leases of other workers.
// Default: 30s; between 10ms and [MaxLease].
func Lease(d time.Duration) WorkerOption { return func(o *workerOptions) { o.lease = d } }

// Grace sets how long [Worker.Run] lets running tasks finish once its ctx
// has ended; then it cancels their contexts and puts the unfinished tasks
// back at the front of their queues. Default: 10s; zero gives them back at
// once.
func Grace(d time.Duration) WorkerOption { return func(o *workerOptions) { o.grace = d } }

// Logger sets where the worker reports failed tasks, lost leases and Redis
// errors. Default: [slog.Default] when [NewWorker] is called.
func Logger(l *slog.Logger) WorkerOption { return func(o *workerOptions) { o.logger = l } }

// WithMetrics reports every run of a task to m (see [Metrics] and
// [ExpvarMetrics]). Default: none.
func WithMetrics(m Metrics) WorkerOption { return func(o *workerOptions) { o.metrics = m } }

// Backoff sets the delay before a failed task is retried: base after the
// first failure, doubling with each failure up to max, then a random
// fraction taken off (the delay lies between half and all of it) so that
// tasks that failed together do not retry together. Default: 1s, 10min;
// 1ms <= base <= max <= [MaxDelay].
func Backoff(base, max time.Duration) WorkerOption {
	return func(o *workerOptions) { o.base, o.max = base, max }
}

// Worker runs the tasks of some queues of a [Group] with the handlers
// registered for their names. Its methods are safe for concurrent use; one
// Worker runs one [Worker.Run] at a time, and any number of workers, in any
// processes, may serve the same queues.
type Worker struct {
	g *Group
	o workerOptions

	mu       sync.Mutex
	handlers map[string]Handler
	running  bool
}

// NewWorker returns a worker of group g. It returns an error naming the
// bad option if a queue name is empty or given twice, the concurrency is
// not between 1 and [MaxConcurrency], the prefetch not between 0 and
// [MaxPrefetch], the lease not between 10ms and [MaxLease], the grace
// period is negative, or the backoff is not 1ms <= base <= max <=
// [MaxDelay]. It panics if g is nil.
func NewWorker(g *Group, opts ...WorkerOption) (*Worker, error) {
	if g == nil {
		panic("queue: NewWorker with a nil group")
	}
	o := workerOptions{
		queues:      []string{"default"},
		concurrency: 10,
		lease:       30 * time.Second,
		grace:       10 * time.Second,
		base:        time.Second,
		max:         10 * time.Minute,
	}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("queue: new worker: %w", err)
	}
	if len(o.queues) == 0 {
		return nil, fmt.Errorf("queue: new worker of %q: queues: none given", g.name)
	}
	for i, q := range o.queues {
		if q == "" {
			return nil, fmt.Errorf("queue: new worker of %q: queue name %d: empty name", g.name, i)
		}
		if slices.Index(o.queues, q) != i {
			return nil, fmt.Errorf("queue: new worker of %q: queue name %q: given twice", g.name, q)
		}
	}
	switch {
	case o.concurrency < 1 || o.concurrency > MaxConcurrency:
		return nil, fmt.Errorf("queue: new worker of %q: concurrency %d: must be between 1 and %d", g.name, o.concurrency, MaxConcurrency)
	case o.prefetch < 0 || o.prefetch > MaxPrefetch:
		return nil, fmt.Errorf("queue: new worker of %q: prefetch %d: must be between 0 and %d", g.name, o.prefetch, MaxPrefetch)
	case o.lease < 10*time.Millisecond || o.lease > MaxLease:
		return nil, fmt.Errorf("queue: new worker of %q: lease %v: must be between 10ms and %v", g.name, o.lease, MaxLease)
	case o.grace < 0:
		return nil, fmt.Errorf("queue: new worker of %q: grace %v: must not be negative", g.name, o.grace)
	case o.base < time.Millisecond || o.max < o.base || o.max > MaxDelay:
		return nil, fmt.Errorf("queue: new worker of %q: backoff %v..%v: want 1ms <= base <= max <= %v", g.name, o.base, o.max, MaxDelay)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	return &Worker{g: g, o: o, handlers: map[string]Handler{}}, nil
}

// Handle registers h for the tasks called name, replacing any handler of
// that name. It returns an error if name is empty or h cannot run (nil, a
// nil [HandlerFunc] or pointer, a [Typed] of a nil func). Handlers
// registered while [Worker.Run] runs count from its next run.
func (w *Worker) Handle(name string, h Handler) error {
	if name == "" {
		return errors.New("queue: handle: task name: empty name")
	}
	if err := checkHandler(h); err != nil {
		return fmt.Errorf("queue: handle %q: %w", name, err)
	}
	w.mu.Lock()
	w.handlers[name] = h
	w.mu.Unlock()
	return nil
}

// Run takes tasks from the worker's queues and runs them until ctx ends,
// then shuts down gracefully: it stops taking tasks, gives the prefetched
// ones back, lets the running ones finish within the grace period
// ([Grace]), then cancels their contexts and gives the unfinished ones
// back to the front of their queues (no attempt counted). It returns nil
// then.
//
// One fetch loop serves all the worker's goroutines: while a slot is free
// it takes up to as many tasks as slots are free (plus [Prefetch]; at most
// 64) in one round trip, which also acknowledges the tasks finished since
// the last one. When the queues are empty it blocks (BLPOP) on their
// signal lists and the group's schedule list until a task is enqueued,
// promoted, recovered or given back, or an earlier due time is added, or
// until the earliest due time or lease deadline it knows of (at most its
// lease, or 30 s); it never polls. With every slot busy it still promotes
// the due tasks it knows of when they are due (see "Scheduling" in the
// package doc). A heartbeat extends the leases of the worker's tasks every
// lease/3, in one round trip for all of them.
//
// Errors that may heal (the network, a server that is loading, failing
// over or busy) are logged and retried with backoff, for as long as ctx
// lasts. An error that retrying cannot heal makes Run shut down as above
// and return it: a key of the group that holds a value the package did
// not write (a *ria.KeyError: ria.ErrWrongType or ria.ErrCorrupt), a reply
// this version cannot read, another server error reply (a failed script,
// ACL or cluster configuration), or a closed client. Run also returns at
// once an error if the worker has no handler or is already running.
func (w *Worker) Run(ctx context.Context) error {
	w.mu.Lock()
	switch {
	case len(w.handlers) == 0:
		w.mu.Unlock()
		return fmt.Errorf("queue: run worker of %q: no handler registered", w.g.name)
	case w.running:
		w.mu.Unlock()
		return fmt.Errorf("queue: run worker of %q: already running", w.g.name)
	}
	w.running = true
	handlers := maps.Clone(w.handlers)
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.running = false
		w.mu.Unlock()
	}()

	id := uuid.NewString()
	r := &run{
		w:         w,
		g:         w.g,
		log:       w.o.logger.With("group", w.g.name),
		handlers:  handlers,
		base:      context.WithoutCancel(ctx),
		wakeKey:   w.g.keys.wake + id,
		recordKey: w.g.keys.took + id,
		outcomes:  make(chan outcome, w.o.concurrency),
		fatal:     make(chan error, 1),
		jobs:      map[jobKey]*job{},
		free:      w.o.concurrency,
		token:     script.Nonce(),
	}
	hbCtx, stopHB := context.WithCancel(r.base)
	hbDone := make(chan struct{})
	go func() { defer close(hbDone); r.heartbeat(hbCtx) }()
	err := r.fetch(ctx)
	if err != nil {
		r.log.Error("queue: worker stopping: an error that retrying cannot heal", "err", err)
	}
	r.shutdown()
	stopHB()
	<-hbDone
	if err != nil {
		return fmt.Errorf("queue: run worker of %q: %w", w.g.name, err)
	}
	return nil
}

// permanent reports whether err will not heal by retrying (see
// [Worker.Run]).
func permanent(err error) bool {
	var (
		kerr *ria.KeyError
		merr *malformedError
		rerr redis.Error
	)
	switch {
	case errors.As(err, &kerr), errors.As(err, &merr), errors.Is(err, redis.ErrClosed):
		return true
	case !errors.As(err, &rerr) || wait.Transient(err):
		return false
	}
	msg := rerr.Error()
	code, _, _ := strings.Cut(msg, " ")
	switch code {
	case "OOM", "MISCONF", "NOREPLICAS", "MOVED", "ASK", "NOSCRIPT":
		return false // memory freed, disk fixed, replicas back, slots moved
	}
	return !strings.Contains(msg, "max number of clients")
}

// jobKey identifies one run of a task: a task whose lease expired may be
// taken again by the same worker while its first run goes on.
type jobKey struct{ id, token string }

// job is a task the worker took and has not settled yet.
type job struct {
	task   Task
	token  string
	ctx    context.Context
	cancel context.CancelCauseFunc

	// Guarded by run.mu.
	expiry  time.Time // when the lease ends at the latest, by the local clock
	started bool      // its handler was started
	lost    bool      // its lease was lost before it started: never start it
	done    bool      // the handler returned (or it never runs)
}

// run is the state of one [Worker.Run].
type run struct {
	w         *Worker
	g         *Group
	log       *slog.Logger
	handlers  map[string]Handler
	base      context.Context // Run's ctx without its cancellation
	wakeKey   string
	recordKey string
	outcomes  chan outcome // from the handlers' goroutines
	fatal     chan error   // a permanent error of the heartbeat

	// Owned by the fetch loop (then by shutdown).
	free     int       // slots without a running handler
	buffer   []*job    // taken and not started (prefetch), in take order
	pending  []outcome // outcomes not yet settled on the server
	token    string    // the lease token of the next take
	unknown  bool      // the last take failed: it may have taken tasks; token is its
	unknownT time.Time // when the take with token was first sent

	mu   sync.Mutex
	jobs map[jobKey]*job // taken and not settled
}

// fetch is the fetch loop; it returns when ctx ends (nil) or on an error
// that retrying cannot heal.
//
// Due times: a take that asks for them (the first after a wait for work,
// and every take that promotes) learns the first due time in delayed. The
// worker is then bound to promote by that time: an idle worker blocks until
// then at the latest; a busy one promotes every maintainEvery; one whose
// slots are all busy takes no task but promotes when it comes (at most
// every maintainEvery). A due time added later that is earlier than every
// delayed one wakes an idle worker through the group's schedule list (see
// common.lua), which then takes and learns it.
//
// Lost replies: a take whose reply is lost is re-sent by go-redis; if every
// re-send fails too, the loop sends it again with the same lease token (as
// long as that is well within the lease), and take.lua hands out the tasks
// the first run took.
func (r *run) fetch(ctx context.Context) error {
	var (
		backoff    time.Duration
		maintained time.Time // when a take last promoted and recovered
		asked      = true    // the next take asks for the due times
		due        time.Time // the first due time learned (local clock); zero: none
	)
	retry := func(op string, err error) error {
		if permanent(err) {
			return fmt.Errorf("%s: %w", op, err)
		}
		backoff = min(max(2*backoff, 10*time.Millisecond), 2*time.Second)
		level := slog.LevelError
		if wait.Transient(err) {
			level = slog.LevelWarn
		}
		r.log.Log(r.base, level, "queue: "+op+" failed; retrying", "err", err, "backoff", backoff)
		t := time.NewTimer(wait.Jitter(backoff))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		case err := <-r.fatal:
			return err
		}
		return nil
	}
	for ctx.Err() == nil {
		r.drain()
		select {
		case err := <-r.fatal:
			return err
		default:
		}
		k := r.want()
		if k == 0 && !r.unknown && !r.full(ctx, due, maintained) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		// With k == 0 the due time has come while every slot is busy (or a
		// failed take is sent again): a take of no task promotes.
		sent := time.Now()
		if r.unknown && sent.Sub(r.unknownT) > r.w.o.lease/2 {
			// Its tasks, if any, come back when their leases expire.
			r.unknown, r.token = false, script.Nonce()
		}
		if !r.unknown {
			r.unknownT = sent
		}
		maintain := k == 0 || sent.Sub(maintained) >= maintainEvery
		hint := asked || maintain
		tasks, ws, err := r.g.take(r.base, r.w.o.queues, r.recordKey, k, r.w.o.lease, maintain, hint, r.token, r.pending)
		if err != nil {
			r.unknown = true
			if err := retry("take", err); err != nil {
				return err
			}
			continue
		}
		r.unknown, r.token = false, script.Nonce()
		if maintain || len(tasks) < k {
			maintained = sent
		}
		if hint || len(tasks) < k {
			due = time.Time{}
			if ws.delayed >= 0 {
				due = sent.Add(ws.delayed)
			}
		}
		asked = false
		r.settled()
		r.dispatch(tasks, r.unknownT)
		if len(tasks) >= k {
			backoff = 0
			continue
		}
		asked = true
		if err := r.idle(ctx, r.block(ws)); err != nil {
			if err := retry("wait", err); err != nil {
				return err
			}
			continue
		}
		backoff = 0
	}
	return nil
}

// want returns how many tasks to take now: as many as fill the free slots
// and the prefetch buffer, if a slot has nothing to run or, with prefetch,
// half of the buffer has started; else 0.
func (r *run) want() int {
	p := r.w.o.prefetch
	room := r.free + p - len(r.buffer)
	if r.free > len(r.buffer) || (p > 0 && room >= (p+1)/2) {
		return min(room, maxTake)
	}
	return 0
}

// full waits, while every slot is busy, until a handler returns (false) or
// the first due time has come (true; but not sooner than maintainEvery
// after the last promotion), or ctx ends or a permanent error comes
// (false).
func (r *run) full(ctx context.Context, due, maintained time.Time) bool {
	var timer <-chan time.Time
	if !due.IsZero() {
		at := due
		if next := maintained.Add(maintainEvery); next.After(at) {
			at = next
		}
		t := time.NewTimer(time.Until(at) + wait.Spread(time.Until(at)))
		defer t.Stop()
		timer = t.C
	}
	select {
	case o := <-r.outcomes:
		r.received(o)
		return false
	case <-timer:
		return true
	case <-ctx.Done():
		return false
	case err := <-r.fatal:
		select {
		case r.fatal <- err: // for the loop
		default:
		}
		return false
	}
}

// block returns how long an idle worker waits for work at most: until the
// first due time or lease deadline, a little later and spread so that idle
// workers do not all wake in the same millisecond; and no longer than its
// lease (to recover the expired leases of crashed workers) or maxBlock.
func (r *run) block(ws waits) time.Duration {
	block := min(maxBlock, r.w.o.lease)
	for _, d := range []time.Duration{ws.delayed, ws.inflight} {
		if d >= 0 {
			block = min(block, d+wait.Spread(d))
		}
	}
	return block
}

// drain receives the outcomes that are ready, without waiting.
func (r *run) drain() {
	for {
		select {
		case o := <-r.outcomes:
			r.received(o)
		default:
			return
		}
	}
}

// received records the outcome of a handler that returned: its slot is
// free (and starts the next prefetched task), and the outcome waits to be
// settled.
func (r *run) received(o outcome) {
	r.free++
	r.pending = append(r.pending, o)
	r.start()
}

// settled forgets the pending outcomes, which the server has applied.
func (r *run) settled() {
	if len(r.pending) == 0 {
		return
	}
	r.mu.Lock()
	for _, o := range r.pending {
		delete(r.jobs, jobKey{o.job.task.ID, o.job.token})
	}
	r.mu.Unlock()
	clear(r.pending)
	r.pending = r.pending[:0]
}

// settleNow applies the pending outcomes in one round trip. With stop, for
// a worker that stops, it also passes on the wake tokens the worker may
// have taken (see settle.lua); it then runs even if nothing is pending.
func (r *run) settleNow(ctx context.Context, stop bool) error {
	if len(r.pending) == 0 && !stop {
		return nil
	}
	if err := r.g.settle(ctx, r.pending, r.recordKey, r.wakeKey, stop, r.w.o.queues); err != nil {
		return err
	}
	r.settled()
	return nil
}

// dispatch queues the tasks taken, whose take was first sent at sent (so
// their leases end after sent+lease), and starts as many as slots are
// free. A task whose fields do not parse goes to the dead letters unrun.
func (r *run) dispatch(tasks []taken, sent time.Time) {
	r.enqueue(tasks, sent)
	r.start()
}

// enqueue queues the tasks taken (see dispatch) without starting them.
func (r *run) enqueue(tasks []taken, sent time.Time) {
	for _, t := range tasks {
		key := jobKey{t.task.ID, t.token}
		r.mu.Lock()
		_, dup := r.jobs[key]
		r.mu.Unlock()
		if dup {
			// take.lua hands a run out once; never run two handlers for one.
			r.log.Error("queue: task handed out twice; running it once", "queue", t.task.Queue, "task", t.task.Name, "id", t.task.ID)
			continue
		}
		ctx, cancel := context.WithCancelCause(r.base)
		j := &job{task: t.task, token: t.token, ctx: ctx, cancel: cancel, expiry: sent.Add(r.w.o.lease)}
		r.mu.Lock()
		r.jobs[key] = j
		if t.corrupt != nil {
			j.done = true
		}
		r.mu.Unlock()
		if t.corrupt != nil {
			cancel(nil)
			r.log.Error("queue: task fields do not parse; task sent to the dead letters unrun", "queue", t.task.Queue, "id", t.task.ID, "err", t.corrupt)
			r.pending = append(r.pending, outcome{job: j, kind: 'd', err: errText(t.corrupt)})
			r.report(t.task, RunDead, 0)
			continue
		}
		r.buffer = append(r.buffer, j)
	}
}

// start starts the handlers of buffered tasks while slots are free.
func (r *run) start() {
	for r.free > 0 && len(r.buffer) > 0 {
		j := r.buffer[0]
		r.buffer[0] = nil
		r.buffer = r.buffer[1:]
		r.mu.Lock()
		if j.lost {
			delete(r.jobs, jobKey{j.task.ID, j.token})
			r.mu.Unlock()
			continue
		}
		j.started = true
		r.mu.Unlock()
		r.free--
		go r.exec(j)
	}
	if len(r.buffer) == 0 {
		r.buffer = nil // let the array go
	}
}

// exec runs one task and sends its outcome.
func (r *run) exec(j *job) {
	start := time.Now()
	err := r.call(j)
	took := time.Since(start)
	o := outcome{job: j}
	attempts := j.task.Attempt + 1
	switch {
	case err == nil:
		o.kind = 'a'
	case errors.Is(context.Cause(j.ctx), errShutdown):
		o.kind = 'l' // cut short by the shutdown: give it back
	case errors.Is(err, ErrNoRetry) || attempts > j.task.MaxRetry:
		o.kind, o.err, o.attempts = 'd', errText(err), strconv.Itoa(attempts)
		r.log.Warn("queue: task failed; sent to the dead letters", "queue", j.task.Queue, "task", j.task.Name, "id", j.task.ID,
			"attempt", attempts, "max_retry", j.task.MaxRetry, "err", err)
	default:
		o.kind, o.err, o.attempts, o.backoff = 'r', errText(err), strconv.Itoa(attempts), r.backoff(j.task.Attempt)
		r.log.Warn("queue: task failed", "queue", j.task.Queue, "task", j.task.Name, "id", j.task.ID,
			"attempt", attempts, "max_retry", j.task.MaxRetry, "err", err)
	}
	r.report(j.task, runResult(o.kind), took)
	j.cancel(nil)
	// Under mu, so that shutdown finds the outcome of every job marked done
	// in the channel. The send never blocks: the channel has room for one
	// outcome per slot.
	r.mu.Lock()
	j.done = true
	r.outcomes <- o
	r.mu.Unlock()
}

// call runs the task's handler, turning a panic into an error.
func (r *run) call(j *job) (err error) {
	h, ok := r.handlers[j.task.Name]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownTask, j.task.Name)
	}
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("queue: handler panicked", "queue", j.task.Queue, "task", j.task.Name, "id", j.task.ID,
				"panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h.Process(j.ctx, &j.task)
}

func errText(err error) string {
	s := err.Error()
	if len(s) > maxErrorLen {
		s = s[:maxErrorLen]
	}
	return s
}

// backoff returns the delay before the retry of a task that has failed
// attempt times before: base*2^attempt, at most max, less up to half.
func (r *run) backoff(attempt int) time.Duration {
	d := r.w.o.base
	for range attempt {
		if d >= r.w.o.max/2 {
			d = r.w.o.max
			break
		}
		d *= 2
	}
	return wait.Jitter(min(d, r.w.o.max))
}

// idle waits, without polling, up to block until a queue of the worker gets
// a task or an idle worker of the group is asked to take again (schedule),
// or ctx ends. Outcomes of the handlers still running are settled as they
// come (and prefetched tasks started).
//
// The BLPOP runs in its own goroutine (go-redis does not interrupt a
// blocked read). When ctx ends, idle ends it by pushing to the worker's own
// wake list, which it also waits on, and returns only once it has ended,
// so that it cannot take a wake token meant for others after Run returns.
// A token it took anyway is passed on by the final settle (settle.lua).
func (r *run) idle(ctx context.Context, block time.Duration) error {
	keys := make([]string, 0, len(r.w.o.queues)+2)
	for _, q := range r.w.o.queues {
		keys = append(keys, r.g.keys.signal+q)
	}
	keys = append(keys, r.g.keys.schedule, r.wakeKey)
	// The deadline ends the BLPOP even if the server never answers.
	bctx, cancel := context.WithTimeout(r.base, block+blockMargin)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		_, _, _, err := wait.BLPop(bctx, r.g.rdb, block, keys...)
		done <- err
	}()
	// Redis times a blocked command out at its next event loop tick, up to
	// 1000/hz ms late (100 ms at the default hz 10): the worker ends its
	// wait itself when block has passed, so that a due task is promoted on
	// time (one more round trip: the push to its wake list).
	over := time.NewTimer(block)
	defer over.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-over.C:
			r.endWait(done)
			return nil
		case o := <-r.outcomes:
			r.received(o)
			r.drain()
			if err := r.settleNow(r.base, false); err != nil {
				if permanent(err) {
					r.endWait(done)
					return fmt.Errorf("settle: %w", err)
				}
				r.log.Warn("queue: settle failed; it will go with the next take", "err", err)
			}
		case err := <-r.fatal:
			r.endWait(done)
			return err
		case <-ctx.Done():
			r.endWait(done)
			return nil
		}
	}
}

// endWait ends the worker's BLPOP, whose result comes on done: it pushes a
// token to the worker's own wake list, then waits for the BLPOP to return
// (at its deadline at the latest, if the push fails).
func (r *run) endWait(done <-chan error) {
	for attempt := range 3 {
		wctx, cancel := context.WithTimeout(r.base, time.Second)
		_, err := r.g.rdb.TxPipelined(wctx, func(p redis.Pipeliner) error {
			p.RPush(wctx, r.wakeKey, "1")
			p.PExpire(wctx, r.wakeKey, maxBlock)
			return nil
		})
		cancel()
		if err == nil {
			break
		}
		r.log.Warn("queue: ending the blocked wait failed", "err", err, "attempt", attempt+1)
		t := time.NewTimer(wait.Jitter(time.Duration(attempt+1) * 100 * time.Millisecond))
		select {
		case <-done:
			t.Stop()
			return
		case <-t.C:
		}
	}
	<-done
}

// heartbeat extends the leases of the unsettled tasks every lease/3 until
// ctx ends.
func (r *run) heartbeat(ctx context.Context) {
	every := r.w.o.lease / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.beat(ctx, every)
	}
}

func (r *run) beat(ctx context.Context, timeout time.Duration) {
	r.mu.Lock()
	jobs := slices.Collect(maps.Values(r.jobs))
	r.mu.Unlock()
	if len(jobs) == 0 {
		return
	}
	sent := time.Now()
	bctx, cancel := context.WithTimeout(ctx, timeout)
	held, err := r.g.extend(bctx, r.w.o.lease, jobs)
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if permanent(err) {
			select {
			case r.fatal <- fmt.Errorf("heartbeat: %w", err):
			default:
			}
		}
		r.log.Warn("queue: heartbeat failed", "err", err)
		for _, j := range jobs {
			if !j.done && time.Now().After(j.expiry) {
				r.log.Warn("queue: lease ran out during a Redis outage", "task", j.task.Name, "id", j.task.ID)
				r.lose(j)
			}
		}
		return
	}
	for i, j := range jobs {
		if held[i] {
			j.expiry = sent.Add(r.w.o.lease)
			continue
		}
		if _, ok := r.jobs[jobKey{j.task.ID, j.token}]; ok && !j.done && !j.lost {
			r.log.Warn("queue: lease lost; cancelling the task", "task", j.task.Name, "id", j.task.ID)
			r.lose(j)
		}
	}
}

// lose gives up job j, whose lease is lost: a running handler's context is
// cancelled; a prefetched task is never started. Called with r.mu held.
func (r *run) lose(j *job) {
	j.cancel(ErrLeaseLost)
	if !j.started {
		j.lost = true
		delete(r.jobs, jobKey{j.task.ID, j.token})
	}
}

// shutdown gives the prefetched tasks back, lets the running handlers
// finish within the grace period, then cancels them and gives their tasks
// back, and settles every outcome.
func (r *run) shutdown() {
	r.giveBack()
	running := func() int { return r.w.o.concurrency - r.free }
	if running() > 0 && len(r.pending) > 0 {
		// Give the prefetched tasks back now, for other workers to run.
		ctx, cancel := context.WithTimeout(r.base, 2*time.Second)
		if err := r.settleNow(ctx, false); err != nil {
			r.log.Warn("queue: settle failed", "err", err)
		}
		cancel()
	}
	if running() > 0 {
		r.log.Debug("queue: stopping; letting the running tasks finish", "running", running(), "grace", r.w.o.grace)
		grace := time.NewTimer(r.w.o.grace)
	wait:
		for running() > 0 {
			select {
			case o := <-r.outcomes:
				r.received(o)
				r.drain()
				if err := r.settleNow(r.base, false); err != nil {
					r.log.Warn("queue: settle failed", "err", err)
				}
			case <-grace.C:
				break wait
			}
		}
		grace.Stop()
	}
	if running() > 0 {
		r.mu.Lock()
		for _, j := range r.jobs {
			if !j.done {
				j.cancel(errShutdown)
			}
		}
		r.mu.Unlock()
		// The handlers were told to stop; those that return within a second
		// report their outcome, the others' tasks are given back anyway.
		hard := time.NewTimer(time.Second)
	cut:
		for running() > 0 {
			select {
			case o := <-r.outcomes:
				r.received(o)
			case <-hard.C:
				break cut
			}
		}
		hard.Stop()
		r.mu.Lock()
		r.drain()
		for _, j := range r.jobs {
			if !j.done {
				r.log.Warn("queue: handler ignored cancellation; task given back", "task", j.task.Name, "id", j.task.ID)
				r.pending = append(r.pending, outcome{job: j, kind: 'l'})
			}
		}
		r.mu.Unlock()
	}
	if r.unknown {
		// The last take failed: ask again for the tasks it may have taken,
		// and give them back.
		ctx, cancel := context.WithTimeout(r.base, 2*time.Second)
		tasks, _, err := r.g.take(ctx, r.w.o.queues, r.recordKey, 0, r.w.o.lease, false, false, r.token, r.pending)
		cancel()
		if err == nil {
			r.settled()
			r.enqueue(tasks, r.unknownT)
			r.giveBack()
		}
	}
	var err error
	for attempt := range 5 {
		ctx, cancel := context.WithTimeout(r.base, 2*time.Second)
		err = r.settleNow(ctx, true)
		cancel()
		if err == nil || !wait.Transient(err) {
			break
		}
		time.Sleep(wait.Jitter(time.Duration(attempt+1) * 100 * time.Millisecond))
	}
	switch {
	case err != nil && len(r.pending) > 0:
		r.log.Error("queue: settle at shutdown failed; the leases will expire", "err", err, "tasks", len(r.pending))
	case err != nil:
		r.log.Warn("queue: passing on wake tokens at shutdown failed", "err", err)
	}
	r.log.Debug("queue: stopped")
}

// giveBack turns the buffered tasks into releases, last first, so that
// pushed to the front of their queues one by one they keep their order.
func (r *run) giveBack() {
	r.mu.Lock()
	for i := len(r.buffer) - 1; i >= 0; i-- {
		j := r.buffer[i]
		if j.lost {
			delete(r.jobs, jobKey{j.task.ID, j.token})
			continue
		}
		j.done = true
		j.cancel(errShutdown)
		r.pending = append(r.pending, outcome{job: j, kind: 'l'})
	}
	r.mu.Unlock()
	r.buffer = nil
}
