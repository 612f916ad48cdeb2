// Command lockbench compares ria's lock with bsm/redislock and
// go-redsync/redsync on one Redis server: uncontended acquire+release, and
// 32 goroutines contending for one lock. For each contender it prints
// attempts and successful acquisitions per second, the ratio of ria's
// acquisitions per second to the contender's, round trips and server
// commands per acquisition, errors and mutual-exclusion violations: the
// medians of interleaved rounds. It prints ratios, not verdicts.
//
// Usage (from the bench module):
//
//	go run ./lockbench [-d 2s] [-rounds 3] [-v]
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
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/bench/internal/server"
	"github.com/ria-go/ria/internal/roundtrip"
)

// scenario is one workload, run by each of its contenders.
type scenario struct {
	name       string
	title      string
	goroutines int
	clients    int
	wait       bool // acquisitions wait for the lock (contended); else one attempt each
	// hold is the work done while holding the lock (0: just a yield), and
	// think the work done between a release and the next acquisition.
	hold, think time.Duration
	contenders  []contender
}

func scenarios() []scenario {
	return []scenario{
		{
			name:       "uncontended",
			title:      "1 goroutine, 1 client: acquire + release of one lock in a loop, no retry",
			goroutines: 1, clients: 1,
			contenders: []contender{
				ria(false),
				redislockContender("redislock", "Obtain(ttl 10s, no retry)", redislock.NoRetry),
				redsyncContender("redsync", "TryLockContext, WithExpiry(10s)", 0),
			},
		},
		{
			name:       "contended",
			title:      "32 goroutines over 2 clients, one lock name: acquire (waiting) + release in a loop",
			goroutines: 32, clients: 2, wait: true,
			contenders: []contender{
				ria(true),
				redislockContender("redislock-linear1ms", "Obtain(ttl 10s, LinearBackoff(1ms)): polls every 1ms",
					func() redislock.RetryStrategy { return redislock.LinearBackoff(time.Millisecond) }),
				redislockContender("redislock-exp1-64ms", "Obtain(ttl 10s, ExponentialBackoff(1ms, 64ms)), a new strategy per Obtain: polls after 4, 8, 16, 32, 64, 64... ms",
					func() redislock.RetryStrategy {
						return redislock.ExponentialBackoff(time.Millisecond, 64*time.Millisecond)
					}),
				redsyncContender("redsync-1ms", "LockContext, WithExpiry(10s), WithTries(MaxInt32), retry delay 1ms", time.Millisecond),
			},
		},
		{
			name: "contended-work",
			title: "32 goroutines over 2 clients, one lock name: acquire (waiting), 500µs of work, release, " +
				"5ms of work outside the lock; the lock is the bottleneck (at most 2000 acq/s)",
			goroutines: 32, clients: 2, wait: true, hold: 500 * time.Microsecond, think: 5 * time.Millisecond,
			contenders: []contender{
				ria(true),
				redislockContender("redislock-linear1ms", "Obtain(ttl 10s, LinearBackoff(1ms))",
					func() redislock.RetryStrategy { return redislock.LinearBackoff(time.Millisecond) }),
				redislockContender("redislock-exp1-64ms", "Obtain(ttl 10s, ExponentialBackoff(1ms, 64ms))",
					func() redislock.RetryStrategy {
						return redislock.ExponentialBackoff(time.Millisecond, 64*time.Millisecond)
					}),
				redsyncContender("redsync-1ms", "LockContext, WithExpiry(10s), WithTries(MaxInt32), retry delay 1ms", time.Millisecond),
			},
		},
	}
}

func main() {
	d := flag.Duration("d", 2*time.Second, "duration of one run of one contender")
	rounds := flag.Int("rounds", 3, "interleaved rounds per scenario; the tables show medians over them")
	verbose := flag.Bool("v", false, "also break server commands per acquisition down by command")
	flag.Parse()
	if *d <= 0 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "lockbench: -d must be positive and -rounds at least 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *d, *rounds, *verbose)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, d time.Duration, rounds int, verbose bool) (err error) {
	srv, err := server.Start(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.Stop()) }()

	e, err := newEnv(ctx, srv.Addr())
	if err != nil {
		return err
	}
	defer e.close()
	version, err := server.Version(ctx, e.admin)
	if err != nil {
		return err
	}

	origin := "started by lockbench with --save \"\" --appendonly no"
	if srv.External() {
		origin = "from REDIS_ADDR"
	}
	warm := min(d/4, 250*time.Millisecond)
	fmt.Printf("lockbench: ria lock (this repository) vs %s vs %s\n", modVersion("github.com/bsm/redislock"), modVersion("github.com/go-redsync/redsync/v4"))
	fmt.Printf("Redis %s at %s (%s); %s; %s %s/%s, GOMAXPROCS=%d, %d CPUs shared by clients and server\n",
		version, srv.Addr(), origin, modVersion("github.com/redis/go-redis/v9"),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Printf("Every number is the median of %d interleaved round(s) (ria, then each other contender, then again) of %v per contender, on one machine and one server, after a %v warm-up run of each.\n",
		rounds, d, warm)

	for _, sc := range scenarios() {
		res := make([][]result, len(sc.contenders))
		for i, c := range sc.contenders {
			if _, err := e.run(ctx, sc, c, "warmup", warm); err != nil {
				return err
			}
			res[i] = make([]result, 0, rounds)
		}
		for r := range rounds {
			for i, c := range sc.contenders {
				got, err := e.run(ctx, sc, c, fmt.Sprintf("r%d", r+1), d)
				if err != nil {
					return err
				}
				res[i] = append(res[i], got)
			}
		}
		report(os.Stdout, sc, res, verbose)
	}
	notes(os.Stdout)
	return nil
}

// env holds the connections a benchmark runs on.
type env struct {
	admin   *redis.Client   // harness commands (INFO, CONFIG, SCAN/DEL); not counted
	clients []*redis.Client // the contenders' clients, each with a hook
	hooks   []*roundtrip.Counter
	prefix  string // of every key this process writes
	blocked int64  // blocked clients on the server before we started
}

func newEnv(ctx context.Context, addr string) (*env, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	e := &env{
		admin:  redis.NewClient(&redis.Options{Addr: addr}),
		prefix: "lockbench:" + hex.EncodeToString(b[:]) + ":",
	}
	for range 2 {
		// PoolSize above the goroutines per client: a ria waiter holds a
		// connection while it blocks in BLPOP.
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})
		h := &roundtrip.Counter{}
		c.AddHook(h)
		e.clients, e.hooks = append(e.clients, c), append(e.hooks, h)
	}
	var err error
	if e.blocked, err = server.BlockedClients(ctx, e.admin); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *env) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = e.cleanup(ctx)
	for _, c := range e.clients {
		_ = c.Close()
	}
	_ = e.admin.Close()
}

func (e *env) roundTrips() int64 {
	var n int64
	for _, h := range e.hooks {
		n += h.RoundTrips()
	}
	return n
}

// cleanup deletes every key this process wrote.
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

// settle waits until no client of ours is blocked on the server, so that a
// previous run's BLPOP cannot land in the next run's counts.
func (e *env) settle(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		n, err := server.BlockedClients(ctx, e.admin)
		if err != nil {
			return err
		}
		if n <= e.blocked {
			return nil
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "lockbench: warning: %d clients still blocked after 15s; going on\n", n-e.blocked)
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// result is what one run of one contender measured. The rates and per-
// acquisition counts cover the run's duration exactly: counters are read
// when it ends, before the goroutines finish their last iteration.
type result struct {
	elapsed    time.Duration
	acquired   int64 // successful acquisitions
	failed     int64 // failed attempts (when observable)
	roundTrips int64 // client side, all clients
	calls      server.Calls
	// perGoroutine is the fewest and most acquisitions of one goroutine.
	minPer, maxPer int64
	// errors and violations also count the goroutines' last iteration.
	errors     int64
	violations int64
	firstErr   error
}

// run runs contender c of scenario sc for d and measures it. tag tells the
// run's lock name apart from other runs'.
func (e *env) run(ctx context.Context, sc scenario, c contender, tag string, d time.Duration) (result, error) {
	var cnt counters
	name := sc.name + "-" + tag
	sessions := make([]session, sc.goroutines)
	for i := range sessions {
		sessions[i] = c.newSession(e.clients[i%sc.clients], e.prefix, name, &cnt)
	}
	if err := e.settle(ctx); err != nil {
		return result{}, err
	}
	runtime.GC()

	var (
		start    = make(chan struct{})
		stop     atomic.Bool
		inCS     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
		per      = make([]atomic.Int64, len(sessions)) // acquisitions per goroutine
	)
	fail := func(err error) {
		cnt.errors.Add(1)
		errOnce.Do(func() { firstErr = err })
	}
	for i, s := range sessions {
		wg.Go(func() {
			<-start
			for !stop.Load() && ctx.Err() == nil {
				actx, cancel := context.WithTimeout(ctx, wait)
				err := s.lock(actx)
				cancel()
				if err != nil {
					if ctx.Err() == nil && (sc.wait || !errors.Is(err, errNotObtained)) {
						fail(fmt.Errorf("acquire: %w", err))
					}
					continue
				}
				if inCS.Add(1) != 1 {
					cnt.violations.Add(1)
				}
				if sc.hold > 0 {
					time.Sleep(sc.hold) // the work the lock protects
				} else {
					runtime.Gosched() // stay in the critical section a moment
				}
				inCS.Add(-1)
				cnt.acquired.Add(1)
				per[i].Add(1)
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				if err := s.unlock(rctx); err != nil {
					fail(fmt.Errorf("release: %w", err))
				}
				cancel()
				if sc.think > 0 {
					time.Sleep(sc.think) // work outside the lock
				}
			}
		})
	}

	if err := server.ResetStats(ctx, e.admin); err != nil {
		stop.Store(true)
		close(start)
		wg.Wait()
		return result{}, err
	}
	rt0 := e.roundTrips()
	t0 := time.Now()
	close(start)
	timer := time.NewTimer(d)
	select {
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
	}
	// Read every counter at the end of the window; the goroutines then finish
	// the iteration they are in (waiters get the lock in turn) and stop.
	stop.Store(true)
	r := result{
		elapsed:    time.Since(t0),
		acquired:   cnt.acquired.Load(),
		failed:     cnt.failed.Load(),
		roundTrips: e.roundTrips() - rt0,
		minPer:     math.MaxInt64,
	}
	for i := range per {
		n := per[i].Load()
		r.minPer, r.maxPer = min(r.minPer, n), max(r.maxPer, n)
	}
	calls, err := server.CommandCalls(context.WithoutCancel(ctx), e.admin)
	wg.Wait()
	r.calls = calls
	r.errors, r.violations, r.firstErr = cnt.errors.Load(), cnt.violations.Load(), firstErr
	if cerr := e.cleanup(context.WithoutCancel(ctx)); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err == nil {
		err = ctx.Err()
	}
	return r, err
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
