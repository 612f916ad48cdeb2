// Command queuebench compares ria's task queue with github.com/hibiken/asynq
// on one Redis server: enqueue throughput, and processed tasks per second
// with no-op handlers at concurrency 1 and 32 (queues filled beforehand),
// for ria's default worker, ria's worker with Prefetch and asynq, plus the
// pickup latency of an idle worker. Each scenario also measures the
// physical limit in the same rounds: a plain go-redis PING loop at the
// same concurrency, and the same loop sending pipelines of PINGs where the
// operation pipelines (a take brings several tasks). For each contender it
// prints tasks per second, the ratio of ria's to it, its fraction of the
// limits, client round trips and server commands per task: medians of
// interleaved rounds. It prints ratios, not verdicts; on a shared machine
// only ratios measured in one run mean anything.
//
// Usage (from the bench module):
//
//	go run ./queuebench [-rounds 3] [-d 1s] [-n1 5000] [-n32 20000] [-prefetch 32] [-pickups 5] [-v]
//
// It starts a throwaway redis-server on a loopback port, or uses $REDIS_ADDR
// (whose statistics it resets with CONFIG RESETSTAT).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/bench/internal/report"
	"github.com/ria-go/ria/bench/internal/server"
)

type config struct {
	rounds   int
	d        time.Duration // enqueue run length, and that of a limit run
	n1, n32  int           // tasks per processing run
	prefetch int           // of the ria prefetch contender
	depth    int           // PINGs per pipeline of the pipelined limit of processing
	pickups  int
	verbose  bool
	warmTask int
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 3, "interleaved rounds; the tables show medians over them")
	flag.DurationVar(&c.d, "d", time.Second, "duration of one enqueue run and of one limit run")
	flag.IntVar(&c.n1, "n1", 5000, "tasks processed per run at concurrency 1")
	flag.IntVar(&c.n32, "n32", 20000, "tasks processed per run at concurrency 32")
	flag.IntVar(&c.prefetch, "prefetch", 32, "Prefetch of the \"ria prefetch\" worker")
	flag.IntVar(&c.depth, "depth", 16, "PINGs per pipeline in the pipelined limit of the processing scenarios")
	flag.IntVar(&c.pickups, "pickups", 5, "tasks enqueued one at a time to an idle worker, for the pickup latency (0: skip)")
	flag.BoolVar(&c.verbose, "v", false, "also break server commands per task down by command")
	flag.Parse()
	if c.rounds < 1 || c.d <= 0 || c.n1 < 1 || c.n32 < 1 || c.pickups < 0 || c.prefetch < 1 || c.depth < 1 {
		fmt.Fprintln(os.Stderr, "queuebench: -rounds, -d, -n1, -n32, -prefetch and -depth must be positive, -pickups not negative")
		os.Exit(2)
	}
	c.warmTask = 500
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, c)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "queuebench:", err)
		os.Exit(1)
	}
}

// env is the server and the one client shared by the runs (the ria keys
// under its Prefix are deleted at the end).
type env struct {
	*server.Env
	rdb *redis.Client // the libraries' client, with the round-trip counter
	seq int
}

// contender is one row of a scenario: a library's run, or a limit's.
type contender struct {
	name  string
	limit bool // a physical-limit loop, not a library
	run   func(ctx context.Context, tag string) (result, error)
}

func run(ctx context.Context, c config) (err error) {
	se, err := server.Open(ctx, "queuebench", 1)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, se.Close()) }()
	e := &env{Env: se, rdb: se.Clients[0]}

	report.Header(os.Stdout, se, "queue", []string{"github.com/hibiken/asynq"}, []string{"github.com/redis/go-redis/v9"})
	fmt.Printf("Medians of %d interleaved round(s) (each contender and limit in turn, round after round) after a warm-up run of each library; no-op handlers; one go-redis client (pool %d) for everything.\n",
		c.rounds, server.PoolSize)
	fmt.Println("The machine may be shared: compare the ratios and fractions of one run, not absolute rates across runs.")

	libs := libraries(c.prefetch)
	ria, riaPrefetch, asynq := libs[0], libs[1], libs[2]
	enqueue := func(lib library) contender {
		return contender{name: lib.name, run: func(ctx context.Context, tag string) (result, error) {
			return e.enqueueRun(ctx, lib, tag, c.d)
		}}
	}
	process := func(lib library, concurrency, n int) contender {
		return contender{name: lib.name, run: func(ctx context.Context, tag string) (result, error) {
			return e.processRun(ctx, lib, tag, concurrency, n)
		}}
	}
	limit := func(concurrency, depth int) contender {
		name := fmt.Sprintf("limit: PING, %d goroutine(s)", concurrency)
		if depth > 1 {
			name = fmt.Sprintf("limit: pipelines of %d PINGs, %d goroutine(s)", depth, concurrency)
		}
		return contender{name: name, limit: true, run: func(ctx context.Context, _ string) (result, error) {
			return e.limitRun(ctx, concurrency, depth, c.d)
		}}
	}
	type scenario struct {
		name, title string
		cs          []contender
	}
	scenarios := []scenario{
		{"enqueue", fmt.Sprintf("1 goroutine enqueues single tasks for %v", c.d),
			[]contender{enqueue(ria), enqueue(asynq), limit(1, 1)}},
		{"process-c1", fmt.Sprintf("%d tasks enqueued beforehand, then one worker of concurrency 1 processes them", c.n1),
			[]contender{process(ria, 1, c.n1), process(riaPrefetch, 1, c.n1), process(asynq, 1, c.n1), limit(1, 1), limit(1, c.depth)}},
		{"process-c32", fmt.Sprintf("%d tasks enqueued beforehand, then one worker of concurrency 32 processes them", c.n32),
			[]contender{process(ria, 32, c.n32), process(riaPrefetch, 32, c.n32), process(asynq, 32, c.n32), limit(32, 1), limit(32, c.depth)}},
	}
	// Warm-up: load every script and connection once.
	for _, lib := range libs {
		if _, err := e.processRun(ctx, lib, e.tag("warm"), 32, c.warmTask); err != nil {
			return fmt.Errorf("%s warm-up: %w", lib.name, err)
		}
	}
	for _, sc := range scenarios {
		res, err := report.Interleave(len(sc.cs), c.rounds, false, func(i, round int) (result, error) {
			got, err := sc.cs[i].run(ctx, e.tag(fmt.Sprintf("%s-r%d", sc.name, round)))
			if err != nil {
				return got, fmt.Errorf("%s, %s, round %d: %w", sc.name, sc.cs[i].name, round, err)
			}
			return got, nil
		})
		if err != nil {
			return err
		}
		printReport(os.Stdout, sc.name, sc.title, sc.cs, res, c.verbose)
		if sc.name == "enqueue" {
			if err := e.batchLine(ctx, c.d, c.rounds); err != nil {
				return err
			}
		}
	}
	if c.pickups > 0 {
		report.Heading(os.Stdout, "pickup", fmt.Sprintf("an idle worker (concurrency 1); %d tasks enqueued one at a time, each after the previous one ran", c.pickups))
		rows := [][]string{{"library", "median latency", "min..max"}}
		for _, lib := range []library{ria, asynq} {
			lat, err := e.pickupRun(ctx, lib, e.tag("pickup"), c.pickups)
			if err != nil {
				return fmt.Errorf("pickup, %s: %w", lib.name, err)
			}
			slices.Sort(lat)
			rows = append(rows, []string{lib.name, fmtDur(medianDur(lat)), fmtDur(lat[0]) + ".." + fmtDur(lat[len(lat)-1])})
		}
		report.Table(os.Stdout, rows)
	}
	notes(os.Stdout, libs, c)
	return nil
}

// tag names a run's queue (asynq) or group (ria), unique in this process.
func (e *env) tag(what string) string {
	e.seq++
	return fmt.Sprintf("qb%s-%d-%s", e.ID, e.seq, what)
}

// result is what one run of one contender measured.
type result struct {
	server.Window
	tasks int64 // tasks (a limit: PINGs)
	left  int64 // tasks not settled after the worker stopped
	cpu   cpu   // used over the run
}

// cpu is the CPU time used by this process (the library's client, and
// its worker's goroutines) and by redis-server: the work a task costs,
// which other loads on a shared machine slow down but do not change much.
type cpu struct{ client, server time.Duration }

var cpuRe = regexp.MustCompile(`used_cpu_(?:sys|user):([0-9.]+)`)

// cpuNow reads the CPU time used so far by this process and the server.
func (e *env) cpuNow(ctx context.Context) (cpu, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpu{}, err
	}
	info, err := e.Admin.Info(ctx, "cpu").Result()
	if err != nil {
		return cpu{}, err
	}
	c := cpu{client: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	for _, m := range cpuRe.FindAllStringSubmatch(info, 2) {
		f, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return cpu{}, err
		}
		c.server += time.Duration(f * float64(time.Second))
	}
	return c, nil
}

// begin opens a measured window and notes the CPU time used so far.
func (e *env) begin(ctx context.Context) (server.Mark, cpu, error) {
	c, err := e.cpuNow(ctx)
	if err != nil {
		return server.Mark{}, cpu{}, err
	}
	m, err := e.Begin(ctx)
	return m, c, err
}

// end closes the window and sets r's window and CPU time.
func (e *env) end(ctx context.Context, m server.Mark, c0 cpu, r *result) error {
	var err error
	r.Window, err = m.End(ctx)
	c, cerr := e.cpuNow(ctx)
	r.cpu = cpu{client: c.client - c0.client, server: c.server - c0.server}
	return errors.Join(err, cerr)
}

func (e *env) enqueueRun(ctx context.Context, lib library, tag string, d time.Duration) (result, error) {
	sys, err := lib.open(e.rdb, e.Prefix, tag)
	if err != nil {
		return result{}, err
	}
	defer func() { _ = sys.cleanup(context.WithoutCancel(ctx)) }()
	if err := sys.enqueue(ctx, payload(0)); err != nil { // load the script
		return result{}, err
	}
	m, c0, err := e.begin(ctx)
	if err != nil {
		return result{}, err
	}
	var r result
	for i := 1; m.Elapsed() < d; i++ {
		if err := sys.enqueue(ctx, payload(i)); err != nil {
			return result{}, err
		}
		r.tasks++
	}
	return r, e.end(ctx, m, c0, &r)
}

// limitRun measures the physical limit: concurrency goroutines sending
// PING (depth 1) or pipelines of depth PINGs, one after the other, for d.
// Its tasks are the PINGs answered.
func (e *env) limitRun(ctx context.Context, concurrency, depth int, d time.Duration) (result, error) {
	m, c0, err := e.begin(ctx)
	if err != nil {
		return result{}, err
	}
	var (
		n    atomic.Int64
		wg   sync.WaitGroup
		errs = make(chan error, concurrency)
	)
	for range concurrency {
		wg.Go(func() {
			for m.Elapsed() < d {
				var err error
				if depth == 1 {
					err = e.rdb.Ping(ctx).Err()
				} else {
					_, err = e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
						for range depth {
							p.Ping(ctx)
						}
						return nil
					})
				}
				if err != nil {
					errs <- err
					return
				}
				n.Add(int64(depth))
			}
		})
	}
	wg.Wait()
	close(errs)
	r := result{tasks: n.Load()}
	err = e.end(ctx, m, c0, &r)
	return r, errors.Join(err, <-errs)
}

// batchLine prints ria's EnqueueBatch throughput, which asynq has no
// counterpart of, against pipelines of 100 PINGs from one goroutine (the
// same round trips), medians of rounds.
func (e *env) batchLine(ctx context.Context, d time.Duration, rounds int) error {
	var rates, limits, rts []float64
	for range rounds {
		sys, err := openRia(0)(e.rdb, e.Prefix, e.tag("batch"))
		if err != nil {
			return err
		}
		rs := sys.(*riaSystem)
		rt0 := e.RoundTrips()
		t0 := time.Now()
		n := 0
		for time.Since(t0) < d {
			if err := rs.prefill(ctx, 100); err != nil {
				return err
			}
			n += 100
		}
		el := time.Since(t0)
		rates = append(rates, float64(n)/el.Seconds())
		rts = append(rts, float64(e.RoundTrips()-rt0)/float64(n))
		l, err := e.limitRun(ctx, 1, 100, d)
		if err != nil {
			return err
		}
		limits = append(limits, float64(l.tasks)/l.Elapsed.Seconds())
	}
	rate, limit := report.Median(rates), report.Median(limits)
	fmt.Printf("ria EnqueueBatch of 100 (no asynq counterpart): %.0f tasks/s, %.3f rt/task; limit (pipelines of 100 PINGs, 1 goroutine): %.0f PINGs/s; ria/limit = %s\n",
		rate, report.Median(rts), limit, report.Ratio(rate, limit))
	return nil
}

func (e *env) processRun(ctx context.Context, lib library, tag string, concurrency, n int) (result, error) {
	sys, err := lib.open(e.rdb, e.Prefix, tag)
	if err != nil {
		return result{}, err
	}
	defer func() { _ = sys.cleanup(context.WithoutCancel(ctx)) }()
	if err := sys.prefill(ctx, n); err != nil {
		return result{}, fmt.Errorf("prefill: %w", err)
	}
	var (
		ran  atomic.Int64
		done = make(chan struct{})
	)
	m, c0, err := e.begin(ctx)
	if err != nil {
		return result{}, err
	}
	if err := sys.start(concurrency, func() {
		if ran.Add(1) == int64(n) {
			close(done)
		}
	}); err != nil {
		return result{}, err
	}
	select {
	case <-done:
	case <-ctx.Done():
	case <-time.After(waitTimeout):
	}
	r := result{tasks: ran.Load()}
	err = e.end(context.WithoutCancel(ctx), m, c0, &r)
	if serr := sys.stop(); serr != nil {
		err = errors.Join(err, fmt.Errorf("stop: %w", serr))
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil && r.tasks < int64(n) {
		err = fmt.Errorf("only %d of %d tasks ran within %v", r.tasks, n, waitTimeout)
	}
	if err != nil {
		return r, err
	}
	r.left, err = sys.left(ctx)
	return r, err
}

func (e *env) pickupRun(ctx context.Context, lib library, tag string, n int) ([]time.Duration, error) {
	sys, err := lib.open(e.rdb, e.Prefix, tag)
	if err != nil {
		return nil, err
	}
	defer func() { _ = sys.cleanup(context.WithoutCancel(ctx)) }()
	ran := make(chan time.Time, 1)
	if err := sys.start(1, func() { ran <- time.Now() }); err != nil {
		return nil, err
	}
	defer func() { _ = sys.stop() }()
	var lat []time.Duration
	for i := range n {
		// Let the worker go idle (and a polling one be anywhere in its cycle).
		time.Sleep(100*time.Millisecond + time.Duration(i)*137*time.Millisecond)
		t0 := time.Now()
		if err := sys.enqueue(ctx, payload(i)); err != nil {
			return nil, err
		}
		select {
		case t := <-ran:
			lat = append(lat, t.Sub(t0))
		case <-time.After(30 * time.Second):
			return nil, errors.New("task not picked up within 30s")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return lat, nil
}
