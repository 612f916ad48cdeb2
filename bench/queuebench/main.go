// Command queuebench compares ria's task queue with github.com/hibiken/asynq
// on one Redis server: enqueue throughput, and processed tasks per second
// with no-op handlers at concurrency 1 and 32 (queues filled beforehand),
// plus the pickup latency of an idle worker. For each library it prints
// tasks per second, the ratio of ria's to asynq's, client round trips and
// server commands per task: medians of interleaved rounds. It prints
// ratios, not verdicts.
//
// Usage (from the bench module):
//
//	go run ./queuebench [-rounds 3] [-d 1s] [-n1 5000] [-n32 20000] [-pickups 5] [-v]
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
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/bench/internal/report"
	"github.com/ria-go/ria/bench/internal/server"
)

type config struct {
	rounds   int
	d        time.Duration // enqueue run length
	n1, n32  int           // tasks per processing run
	pickups  int
	verbose  bool
	warmTask int
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 3, "interleaved rounds; the tables show medians over them")
	flag.DurationVar(&c.d, "d", time.Second, "duration of one enqueue run")
	flag.IntVar(&c.n1, "n1", 5000, "tasks processed per run at concurrency 1")
	flag.IntVar(&c.n32, "n32", 20000, "tasks processed per run at concurrency 32")
	flag.IntVar(&c.pickups, "pickups", 5, "tasks enqueued one at a time to an idle worker, for the pickup latency (0: skip)")
	flag.BoolVar(&c.verbose, "v", false, "also break server commands per task down by command")
	flag.Parse()
	if c.rounds < 1 || c.d <= 0 || c.n1 < 1 || c.n32 < 1 || c.pickups < 0 {
		fmt.Fprintln(os.Stderr, "queuebench: -rounds, -d, -n1 and -n32 must be positive, -pickups not negative")
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

func run(ctx context.Context, c config) (err error) {
	se, err := server.Open(ctx, "queuebench", 1)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, se.Close()) }()
	e := &env{Env: se, rdb: se.Clients[0]}

	report.Header(os.Stdout, se, "queue", []string{"github.com/hibiken/asynq"}, []string{"github.com/redis/go-redis/v9"})
	fmt.Printf("Medians of %d interleaved round(s) (ria, asynq, ria, ...) after a warm-up run of each; no-op handlers; one go-redis client (pool %d) per library run.\n",
		c.rounds, server.PoolSize)

	libs := libraries()
	type scenario struct {
		name, title string
		unit        string
		measure     func(ctx context.Context, e *env, lib library, tag string) (result, error)
	}
	scenarios := []scenario{
		{"enqueue", fmt.Sprintf("1 goroutine enqueues single tasks for %v", c.d), "tasks",
			func(ctx context.Context, e *env, lib library, tag string) (result, error) {
				return e.enqueueRun(ctx, lib, tag, c.d)
			}},
		{"process-c1", fmt.Sprintf("%d tasks enqueued beforehand, then one worker of concurrency 1 processes them", c.n1), "tasks",
			func(ctx context.Context, e *env, lib library, tag string) (result, error) {
				return e.processRun(ctx, lib, tag, 1, c.n1)
			}},
		{"process-c32", fmt.Sprintf("%d tasks enqueued beforehand, then one worker of concurrency 32 processes them", c.n32), "tasks",
			func(ctx context.Context, e *env, lib library, tag string) (result, error) {
				return e.processRun(ctx, lib, tag, 32, c.n32)
			}},
	}
	// Warm-up: load every script and connection once.
	for _, lib := range libs {
		if _, err := e.processRun(ctx, lib, e.tag("warm"), 32, c.warmTask); err != nil {
			return fmt.Errorf("%s warm-up: %w", lib.name, err)
		}
	}
	for _, sc := range scenarios {
		res, err := report.Interleave(len(libs), c.rounds, false, func(i, round int) (result, error) {
			got, err := sc.measure(ctx, e, libs[i], e.tag(fmt.Sprintf("%s-r%d", sc.name, round)))
			if err != nil {
				return got, fmt.Errorf("%s, %s, round %d: %w", sc.name, libs[i].name, round, err)
			}
			return got, nil
		})
		if err != nil {
			return err
		}
		printReport(os.Stdout, sc.name, sc.title, libs, res, c.verbose)
		if sc.name == "enqueue" {
			if err := e.batchLine(ctx, c.d); err != nil {
				return err
			}
		}
	}
	if c.pickups > 0 {
		report.Heading(os.Stdout, "pickup", fmt.Sprintf("an idle worker (concurrency 1); %d tasks enqueued one at a time, each after the previous one ran", c.pickups))
		rows := [][]string{{"library", "median latency", "min..max"}}
		for _, lib := range libs {
			lat, err := e.pickupRun(ctx, lib, e.tag("pickup"), c.pickups)
			if err != nil {
				return fmt.Errorf("pickup, %s: %w", lib.name, err)
			}
			slices.Sort(lat)
			rows = append(rows, []string{lib.name, fmtDur(medianDur(lat)), fmtDur(lat[0]) + ".." + fmtDur(lat[len(lat)-1])})
		}
		report.Table(os.Stdout, rows)
	}
	notes(os.Stdout, libs)
	return nil
}

// tag names a run's queue (asynq) or group (ria), unique in this process.
func (e *env) tag(what string) string {
	e.seq++
	return fmt.Sprintf("qb%s-%d-%s", e.ID, e.seq, what)
}

// result is what one run of one library measured.
type result struct {
	server.Window
	tasks int64
	left  int64 // tasks not settled after the worker stopped
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
	m, err := e.Begin(ctx)
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
	r.Window, err = m.End(ctx)
	return r, err
}

// batchLine prints ria's EnqueueBatch throughput, which asynq has no
// counterpart of.
func (e *env) batchLine(ctx context.Context, d time.Duration) error {
	sys, err := openRia(e.rdb, e.Prefix, e.tag("batch"))
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
	fmt.Printf("ria EnqueueBatch of 100 (no asynq counterpart): %.0f tasks/s, %.3f rt/task\n",
		float64(n)/el.Seconds(), float64(e.RoundTrips()-rt0)/float64(n))
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
	m, err := e.Begin(ctx)
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
	r.Window, err = m.End(context.WithoutCancel(ctx))
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
