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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/bench/internal/server"
	"github.com/ria-go/ria/internal/roundtrip"
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

// env is the server connection shared by the runs.
type env struct {
	admin  *redis.Client // harness commands (INFO, CONFIG, SCAN/DEL); not counted
	rdb    *redis.Client // the libraries' client, with the round-trip hook
	count  *roundtrip.Counter
	prefix string // of every ria key this process writes
	seq    int
}

func run(ctx context.Context, c config) (err error) {
	srv, err := server.Start(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.Stop()) }()

	var b [6]byte
	_, _ = rand.Read(b[:])
	e := &env{
		admin:  redis.NewClient(&redis.Options{Addr: srv.Addr()}),
		rdb:    redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 64}),
		count:  &roundtrip.Counter{},
		prefix: "queuebench:" + hex.EncodeToString(b[:]) + ":",
	}
	e.rdb.AddHook(e.count)
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = errors.Join(err, e.cleanup(cctx))
		_ = e.rdb.Close()
		_ = e.admin.Close()
	}()
	version, err := server.Version(ctx, e.admin)
	if err != nil {
		return err
	}
	origin := `started by queuebench with --save "" --appendonly no`
	if srv.External() {
		origin = "from REDIS_ADDR"
	}
	fmt.Printf("queuebench: ria queue (this repository) vs %s\n", modVersion("github.com/hibiken/asynq"))
	fmt.Printf("Redis %s at %s (%s); %s; %s %s/%s, GOMAXPROCS=%d, %d CPUs shared by clients and server\n",
		version, srv.Addr(), origin, modVersion("github.com/redis/go-redis/v9"),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Printf("Medians of %d interleaved round(s) (ria, asynq, ria, ...) after a warm-up run of each; no-op handlers; one go-redis client (pool 64) per library run.\n",
		c.rounds)

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
		res := make([][]result, len(libs))
		for r := range c.rounds {
			for i, lib := range libs {
				got, err := sc.measure(ctx, e, lib, e.tag(fmt.Sprintf("%s-r%d", sc.name, r+1)))
				if err != nil {
					return fmt.Errorf("%s, %s, round %d: %w", sc.name, lib.name, r+1, err)
				}
				res[i] = append(res[i], got)
			}
		}
		report(os.Stdout, sc.name, sc.title, libs, res, c.verbose)
		if sc.name == "enqueue" {
			if err := e.batchLine(ctx, c.d); err != nil {
				return err
			}
		}
	}
	if c.pickups > 0 {
		fmt.Printf("\n== pickup: an idle worker (concurrency 1); %d tasks enqueued one at a time, each after the previous one ran ==\n\n", c.pickups)
		rows := [][]string{{"library", "median latency", "min..max"}}
		for _, lib := range libs {
			lat, err := e.pickupRun(ctx, lib, e.tag("pickup"), c.pickups)
			if err != nil {
				return fmt.Errorf("pickup, %s: %w", lib.name, err)
			}
			slices.Sort(lat)
			rows = append(rows, []string{lib.name, fmtDur(medianDur(lat)), fmtDur(lat[0]) + ".." + fmtDur(lat[len(lat)-1])})
		}
		table(os.Stdout, rows)
	}
	notes(os.Stdout, libs)
	return nil
}

// tag names a run's queue (asynq) or group (ria), unique in this process.
func (e *env) tag(what string) string {
	e.seq++
	return fmt.Sprintf("qb%s-%d-%s", e.prefix[len("queuebench:"):len(e.prefix)-1], e.seq, what)
}

// result is what one run of one library measured.
type result struct {
	elapsed    time.Duration
	tasks      int64
	roundTrips int64
	calls      server.Calls
	left       int64 // tasks not settled after the worker stopped
}

func (e *env) enqueueRun(ctx context.Context, lib library, tag string, d time.Duration) (result, error) {
	sys, err := lib.open(e.rdb, e.prefix, tag)
	if err != nil {
		return result{}, err
	}
	defer func() { _ = sys.cleanup(context.WithoutCancel(ctx)) }()
	if err := sys.enqueue(ctx, payload(0)); err != nil { // load the script
		return result{}, err
	}
	if err := server.ResetStats(ctx, e.admin); err != nil {
		return result{}, err
	}
	runtime.GC()
	var r result
	rt0 := e.count.RoundTrips()
	t0 := time.Now()
	for i := 1; time.Since(t0) < d; i++ {
		if err := sys.enqueue(ctx, payload(i)); err != nil {
			return result{}, err
		}
		r.tasks++
	}
	r.elapsed = time.Since(t0)
	r.roundTrips = e.count.RoundTrips() - rt0
	r.calls, err = server.CommandCalls(ctx, e.admin)
	return r, err
}

// batchLine prints ria's EnqueueBatch throughput, which asynq has no
// counterpart of.
func (e *env) batchLine(ctx context.Context, d time.Duration) error {
	sys, err := openRia(e.rdb, e.prefix, e.tag("batch"))
	if err != nil {
		return err
	}
	rs := sys.(*riaSystem)
	rt0 := e.count.RoundTrips()
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
		float64(n)/el.Seconds(), float64(e.count.RoundTrips()-rt0)/float64(n))
	return nil
}

func (e *env) processRun(ctx context.Context, lib library, tag string, concurrency, n int) (result, error) {
	sys, err := lib.open(e.rdb, e.prefix, tag)
	if err != nil {
		return result{}, err
	}
	defer func() { _ = sys.cleanup(context.WithoutCancel(ctx)) }()
	if err := sys.prefill(ctx, n); err != nil {
		return result{}, fmt.Errorf("prefill: %w", err)
	}
	if err := server.ResetStats(ctx, e.admin); err != nil {
		return result{}, err
	}
	runtime.GC()
	var (
		ran  atomic.Int64
		done = make(chan struct{})
	)
	rt0 := e.count.RoundTrips()
	t0 := time.Now()
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
	r := result{elapsed: time.Since(t0), tasks: ran.Load(), roundTrips: e.count.RoundTrips() - rt0}
	r.calls, err = server.CommandCalls(context.WithoutCancel(ctx), e.admin)
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
	sys, err := lib.open(e.rdb, e.prefix, tag)
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

// cleanup deletes every ria key this process wrote (asynq's queues are
// deleted after each run).
func (e *env) cleanup(ctx context.Context) error {
	iter := e.admin.Scan(ctx, 0, e.prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := e.admin.Del(ctx, keys[:n]...).Err(); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
		keys = keys[n:]
	}
	return nil
}

// modVersion returns "path version" of a module this binary was built with.
func modVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				return m.Path + " " + m.Version
			}
		}
	}
	return path + " (version unknown)"
}
