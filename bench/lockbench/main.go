// Command lockbench compares ria's lock with bsm/redislock and
// go-redsync/redsync on one Redis server: uncontended acquire+release, and
// 32 goroutines contending for one lock. For each contender it prints
// attempts and successful acquisitions per second, the ratio of ria's
// acquisitions per second to the contender's, round trips and server
// commands per acquisition, errors and mutual-exclusion violations: the
// medians of interleaved rounds. Each scenario also measures, in the same
// rounds, the physical limit (a plain go-redis PING loop at the same
// concurrency) and prints every result as a fraction of it; the scenario
// with work under the lock also prints the lock limit that the work's
// measured time and one round trip allow, and each result as a fraction of
// that. It prints ratios, not verdicts.
//
// Usage (from the bench module):
//
//	go run ./lockbench [-d 2s] [-rounds 3] [-v] [-only contended]
//
// It starts a throwaway redis-server on a loopback port, or uses $REDIS_ADDR
// (whose statistics it resets with CONFIG RESETSTAT).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/bench/internal/block"
	"github.com/ria-go/ria/bench/internal/report"
	"github.com/ria-go/ria/bench/internal/server"
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
	// handoff adds the hand-off limit's row: the scenario's goroutines
	// pass a token round through Redis lists.
	handoff bool
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
			goroutines: 32, clients: 2, wait: true, handoff: true,
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
			goroutines: 32, clients: 2, wait: true, hold: 500 * time.Microsecond, think: 5 * time.Millisecond, handoff: true,
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
		{
			// No Go library has a read/write lock on Redis (Redisson's
			// RReadWriteLock is Java): the read side of ria's is compared with
			// ria's exclusive lock on the same workload, and the limit.
			name: "rw-read",
			title: "8 goroutines over 2 clients, one lock name: ria's read/write lock taken shared (RLock) + release " +
				"in a loop, next to ria's exclusive lock (Acquire) on the same loop",
			goroutines: 8, clients: 2, wait: true,
			contenders: []contender{riaRead(), ria(true)},
		},
	}
}

// runs returns the contenders of sc, then the hand-off limit (if sc has
// one) and the physical limit, in the order of a round.
func (sc scenario) runs() []contender {
	runs := slices.Clone(sc.contenders)
	if sc.handoff {
		runs = append(runs, handoffLimit(sc.goroutines))
	}
	return append(runs, physicalLimit())
}

func main() {
	d := flag.Duration("d", 2*time.Second, "duration of one run of one contender")
	rounds := flag.Int("rounds", 3, "interleaved rounds per scenario; the tables show medians over them")
	verbose := flag.Bool("v", false, "also break server commands per acquisition down by command")
	only := flag.String("only", "", "run only the scenario of this name (uncontended, contended, contended-work, rw-read)")
	flag.Parse()
	if *d <= 0 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "lockbench: -d must be positive and -rounds at least 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *d, *rounds, *verbose, *only)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, d time.Duration, rounds int, verbose bool, only string) (err error) {
	e, err := server.Open(ctx, "lockbench", 2)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, e.Close()) }()

	warm := min(d/4, 250*time.Millisecond)
	report.Header(os.Stdout, e, "lock", []string{"github.com/bsm/redislock", "github.com/go-redsync/redsync/v4"},
		[]string{"github.com/redis/go-redis/v9"})
	fmt.Printf("Every number is the median of %d interleaved round(s) (ria, then each other contender, then again) of %v per contender, on one machine and one server, after a %v warm-up run of each.\n",
		rounds, d, warm)

	for _, sc := range scenarios() {
		if only != "" && sc.name != only {
			continue
		}
		runs := sc.runs()
		res, err := report.Interleave(len(runs), rounds, true, func(i, round int) (result, error) {
			if round == 0 {
				return measure(ctx, e, sc, runs[i], "warmup", warm)
			}
			return measure(ctx, e, sc, runs[i], fmt.Sprintf("r%d", round), d)
		})
		if err != nil {
			return err
		}
		printReport(os.Stdout, sc, res, verbose)
	}
	notes(os.Stdout)
	return nil
}

// result is what one run of one contender measured. The rates and per-
// acquisition counts cover the run's duration exactly: counters are read
// when it ends, before the goroutines finish their last iteration.
type result struct {
	server.Window       // round trips: client side, all clients
	acquired      int64 // successful acquisitions
	failed        int64 // failed attempts (when observable)
	// perGoroutine is the fewest and most acquisitions of one goroutine.
	minPer, maxPer int64
	// errors and violations also count the goroutines' last iteration.
	errors     int64
	violations int64
	firstErr   error
	// hold is the mean time the work under the lock actually took (0: no
	// work); rtt, for the limit's run, the median round trip of one PING
	// alone on one client, measured just before the run.
	hold, rtt time.Duration
}

// measure runs contender c of scenario sc for d on e. tag tells the run's
// lock name apart from other runs'.
func measure(ctx context.Context, e *server.Env, sc scenario, c contender, tag string, d time.Duration) (result, error) {
	var cnt counters
	name := sc.name + "-" + tag
	sessions := make([]session, sc.goroutines)
	for i := range sessions {
		sessions[i] = c.newSession(e.Clients[i%sc.clients], e.Prefix, name, &cnt)
	}
	if err := e.Settle(ctx); err != nil {
		return result{}, err
	}
	var rtt time.Duration
	if c.limit {
		var err error
		if rtt, err = roundTrip(ctx, e.Clients[0]); err != nil {
			return result{}, err
		}
	}

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
					if ctx.Err() == nil && !errors.Is(err, errStopped) && (sc.wait || !errors.Is(err, errNotObtained)) {
						fail(fmt.Errorf("acquire: %w", err))
					}
					continue
				}
				if c.limit { // no lock: one round trip, as fast as it goes
					cnt.acquired.Add(1)
					per[i].Add(1)
					continue
				}
				if inCS.Add(1) != 1 && !c.shared {
					cnt.violations.Add(1)
				}
				if sc.hold > 0 {
					t0 := time.Now()
					block.For(sc.hold) // the work the lock protects
					cnt.holdNs.Add(int64(time.Since(t0)))
					cnt.holds.Add(1)
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
					block.For(sc.think) // work outside the lock
				}
			}
		})
	}

	// Read every counter at the end of the window; the goroutines then finish
	// the iteration they are in (waiters get the lock in turn) and stop.
	r := result{minPer: math.MaxInt64}
	w, err := e.Timed(ctx, d, func() { close(start) }, func() {
		stop.Store(true)
		cnt.stopped.Store(true) // a hand-off session waiting for the token gives up
		r.acquired, r.failed = cnt.acquired.Load(), cnt.failed.Load()
		for i := range per {
			n := per[i].Load()
			r.minPer, r.maxPer = min(r.minPer, n), max(r.maxPer, n)
		}
	})
	wg.Wait()
	r.Window = w
	r.errors, r.violations, r.firstErr = cnt.errors.Load(), cnt.violations.Load(), firstErr
	if n := cnt.holds.Load(); n > 0 {
		r.hold = time.Duration(cnt.holdNs.Load() / n)
	}
	r.rtt = rtt
	return r, e.Finish(ctx, err)
}

// roundTrip returns the median of 201 PINGs sent one after another on c:
// one round trip with nothing else going on.
func roundTrip(ctx context.Context, c *redis.Client) (time.Duration, error) {
	d := make([]time.Duration, 201)
	for i := range d {
		t0 := time.Now()
		if err := c.Ping(ctx).Err(); err != nil {
			return 0, fmt.Errorf("ping: %w", err)
		}
		d[i] = time.Since(t0)
	}
	slices.Sort(d)
	return d[len(d)/2], nil
}
