package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

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
	// asked for always does.
	maintainEvery = 50 * time.Millisecond
)

// errShutdown is the cause of a handler's context cancelled when its
// worker's grace period ran out.
var errShutdown = errors.New("queue: worker shut down")

// WorkerOption configures a [Worker].
type WorkerOption func(*workerOptions)

type workerOptions struct {
	queues      []string
	concurrency int
	lease       time.Duration
	grace       time.Duration
	logger      *slog.Logger
	base, max   time.Duration
}

// Queues sets the queues the worker serves, highest priority first: it
// takes a task of a queue only when every queue before it is empty.
// Default: "default".
func Queues(names ...string) WorkerOption {
	return func(o *workerOptions) { o.queues = slices.Clone(names) }
}

// Concurrency sets how many tasks the worker runs at once, each in its own
// goroutine. Default: 10.
func Concurrency(n int) WorkerOption { return func(o *workerOptions) { o.concurrency = n } }

// Lease sets how long a taken task stays the worker's without a heartbeat:
// the worker extends the leases of its running tasks every lease/3, and
// a task whose lease expires (its worker died or stalled) goes back to its
// queue. An idle worker waits for work no longer than its lease (and 30s)
// before it takes again, recovering the expired leases of other workers.
// Default: 30s; at least 10ms.
func Lease(d time.Duration) WorkerOption { return func(o *workerOptions) { o.lease = d } }

// Grace sets how long [Worker.Run] lets running tasks finish once its ctx
// has ended; then it cancels their contexts and puts the unfinished tasks
// back at the front of their queues. Default: 10s; zero gives them back at
// once.
func Grace(d time.Duration) WorkerOption { return func(o *workerOptions) { o.grace = d } }

// Logger sets where the worker reports failed tasks, lost leases and Redis
// errors. Default: nowhere.
func Logger(l *slog.Logger) WorkerOption { return func(o *workerOptions) { o.logger = l } }

// Backoff sets the delay before a failed task is retried: base after the
// first failure, doubling with each failure up to max, then a random
// fraction taken off (the delay lies between half and all of it) so that
// tasks that failed together do not retry together. Default: 1s, 10min.
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
// less than 1, the lease is shorter than 10ms, the grace period is
// negative, or the backoff base is less than 1ms or above its max. It
// panics if g is nil.
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
	for _, opt := range opts {
		opt(&o)
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
	case o.concurrency < 1:
		return nil, fmt.Errorf("queue: new worker of %q: concurrency %d: must be at least 1", g.name, o.concurrency)
	case o.lease < 10*time.Millisecond:
		return nil, fmt.Errorf("queue: new worker of %q: lease %v: must be at least 10ms", g.name, o.lease)
	case o.grace < 0:
		return nil, fmt.Errorf("queue: new worker of %q: grace %v: must not be negative", g.name, o.grace)
	case o.base < time.Millisecond || o.max < o.base:
		return nil, fmt.Errorf("queue: new worker of %q: backoff %v..%v: want 1ms <= base <= max", g.name, o.base, o.max)
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	return &Worker{g: g, o: o, handlers: map[string]Handler{}}, nil
}

// Handle registers h for the tasks called name, replacing any handler of
// that name. It returns an error if name is empty or h is nil. Handlers
// registered while [Worker.Run] runs count from its next run.
func (w *Worker) Handle(name string, h Handler) error {
	switch {
	case name == "":
		return errors.New("queue: handle: task name: empty name")
	case h == nil:
		return fmt.Errorf("queue: handle %q: nil handler", name)
	}
	w.mu.Lock()
	w.handlers[name] = h
	w.mu.Unlock()
	return nil
}

// Run takes tasks from the worker's queues and runs them until ctx ends,
// then shuts down gracefully: it stops taking tasks, lets the running ones
// finish within the grace period ([Grace]), then cancels their contexts
// and gives the unfinished ones back to the front of their queues (no
// attempt counted). It returns nil then.
//
// One fetch loop serves all the worker's goroutines: while a slot is free
// it takes up to as many tasks as slots are free (at most 64) in one round
// trip, which also acknowledges the tasks finished since the last one.
// When the queues are empty it blocks (BLPOP) on their signal lists and the
// group's schedule list until a task is enqueued, promoted, recovered or
// given back, or an earlier due time is added, or until the earliest due
// time or lease deadline it knows of (at most its lease, or 30 s); it never
// polls. With every slot busy it still promotes the due tasks it knows of
// when they are due (see "Scheduling" in the package doc). A heartbeat
// extends the leases of the running tasks every lease/3, in one round trip
// for all of them. Redis errors are logged and retried with backoff; Run
// returns early only if it has no handler, is already running, or the
// client was closed.
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

	r := &run{
		w:        w,
		g:        w.g,
		log:      w.o.logger.With("group", w.g.name),
		handlers: handlers,
		base:     context.WithoutCancel(ctx),
		wakeKey:  w.g.keys.wake + uuid.NewString(),
		outcomes: make(chan outcome, w.o.concurrency),
		jobs:     map[jobKey]*job{},
		free:     w.o.concurrency,
	}
	hbCtx, stopHB := context.WithCancel(r.base)
	hbDone := make(chan struct{})
	go func() { defer close(hbDone); r.heartbeat(hbCtx) }()
	err := r.fetch(ctx)
	r.shutdown()
	stopHB()
	<-hbDone
	if err != nil {
		return fmt.Errorf("queue: run worker of %q: %w", w.g.name, err)
	}
	return nil
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
	expiry time.Time // when the lease ends at the latest, by the local clock
	done   bool      // the handler returned
}

// run is the state of one [Worker.Run].
type run struct {
	w        *Worker
	g        *Group
	log      *slog.Logger
	handlers map[string]Handler
	base     context.Context // Run's ctx without its cancellation
	wakeKey  string
	outcomes chan outcome // from the handlers' goroutines

	// Owned by the fetch loop (then by shutdown).
	free    int       // slots without a running handler
	pending []outcome // outcomes not yet settled on the server

	mu   sync.Mutex
	jobs map[jobKey]*job // taken and not settled
}

// fetch is the fetch loop; it returns when ctx ends (nil) or the client is
// closed.
//
// Due times: a take that asks for them (the first after a wait for work,
// and every take that promotes) learns the first due time in delayed. The
// worker is then bound to promote by that time: an idle worker blocks until
// then at the latest; a busy one promotes every maintainEvery; one whose
// slots are all busy takes no task but promotes when it comes (at most
// every maintainEvery). A due time added later that is earlier than every
// delayed one wakes an idle worker through the group's schedule list (see
// common.lua), which then takes and learns it.
func (r *run) fetch(ctx context.Context) error {
	var (
		backoff    time.Duration
		maintained time.Time // when a take last promoted and recovered
		asked      = true    // the next take asks for the due times
		due        time.Time // the first due time learned (local clock); zero: none
	)
	retry := func(op string, err error) error {
		if errors.Is(err, redis.ErrClosed) {
			return err
		}
		backoff = min(max(2*backoff, 10*time.Millisecond), 2*time.Second)
		level := slog.LevelError
		if wait.Transient(err) {
			level = slog.LevelWarn
		}
		r.log.Log(r.base, level, "queue: "+op+" failed; retrying", "err", err, "backoff", backoff)
		_ = wait.Sleep(ctx, wait.Jitter(backoff))
		return nil
	}
	for ctx.Err() == nil {
		r.drain()
		k := min(r.free, maxTake)
		if k == 0 && !r.full(ctx, due, maintained) {
			continue
		}
		// With k == 0 the due time has come while every slot is busy: a take
		// of no task promotes.
		sent := time.Now()
		maintain := k == 0 || sent.Sub(maintained) >= maintainEvery
		hint := asked || maintain
		tasks, ws, err := r.g.take(r.base, r.w.o.queues, k, r.w.o.lease, maintain, hint, r.pending)
		if err != nil {
			if err := retry("take", err); err != nil {
				return err
			}
			continue
		}
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
		r.dispatch(tasks, sent)
		if len(tasks) == k {
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

// full waits, while every slot is busy, until a handler returns (false) or
// the first due time has come (true; but not sooner than maintainEvery
// after the last promotion), or ctx ends (false).
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
// free, and the outcome waits to be settled.
func (r *run) received(o outcome) {
	r.free++
	r.pending = append(r.pending, o)
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
	r.pending = r.pending[:0]
}

// settleNow applies the pending outcomes in one round trip. With stop, for
// a worker that stops, it also passes on the wake tokens the worker may
// have taken (see settle.lua); it then runs even if nothing is pending.
func (r *run) settleNow(ctx context.Context, stop bool) error {
	if len(r.pending) == 0 && !stop {
		return nil
	}
	if err := r.g.settle(ctx, r.pending, r.wakeKey, stop, r.w.o.queues); err != nil {
		return err
	}
	r.settled()
	return nil
}

// dispatch starts a handler goroutine for each task taken; the take was
// sent at sent, so the leases end after sent+lease.
func (r *run) dispatch(tasks []taken, sent time.Time) {
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
		r.mu.Unlock()
		r.free--
		go r.exec(j)
	}
}

// exec runs one task and sends its outcome.
func (r *run) exec(j *job) {
	err := r.call(j)
	o := outcome{job: j}
	switch {
	case err == nil:
		o.kind = 'a'
	case errors.Is(context.Cause(j.ctx), errShutdown):
		o.kind = 'l' // cut short by the shutdown: give it back
	case errors.Is(err, ErrNoRetry):
		o.kind, o.err = 'd', errText(err)
		r.log.Warn("queue: task failed; no retry", "queue", j.task.Queue, "task", j.task.Name, "id", j.task.ID, "err", err)
	default:
		o.kind, o.err, o.backoff = 'r', errText(err), r.backoff(j.task.Attempt)
		r.log.Warn("queue: task failed", "queue", j.task.Queue, "task", j.task.Name, "id", j.task.ID,
			"attempt", j.task.Attempt+1, "max_retry", j.task.MaxRetry, "err", err)
	}
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
// come.
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
	for {
		select {
		case err := <-done:
			return err
		case o := <-r.outcomes:
			r.received(o)
			r.drain()
			if err := r.settleNow(r.base, false); err != nil {
				r.log.Warn("queue: settle failed; it will go with the next take", "err", err)
			}
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
		select {
		case <-done:
			return
		case <-time.After(wait.Jitter(time.Duration(attempt+1) * 100 * time.Millisecond)):
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
		r.log.Warn("queue: heartbeat failed", "err", err)
		for _, j := range jobs {
			if !j.done && time.Now().After(j.expiry) {
				r.log.Warn("queue: lease ran out during a Redis outage", "task", j.task.Name, "id", j.task.ID)
				j.cancel(ErrLeaseLost)
			}
		}
		return
	}
	for i, j := range jobs {
		if held[i] {
			j.expiry = sent.Add(r.w.o.lease)
			continue
		}
		if _, ok := r.jobs[jobKey{j.task.ID, j.token}]; ok && !j.done {
			r.log.Warn("queue: lease lost; cancelling the task", "task", j.task.Name, "id", j.task.ID)
			j.cancel(ErrLeaseLost)
		}
	}
}

// shutdown lets the running handlers finish within the grace period, then
// cancels them and gives their tasks back, and settles every outcome.
func (r *run) shutdown() {
	running := func() int { return r.w.o.concurrency - r.free }
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
