// Command cachebench compares ria's cache package with go-redis/cache (a
// read-through cache) and redis_rate (as a once-per-window guard) on one
// Redis server: cache hits and misses, a stampede of callers in several
// processes on one missing key, and the guard. For each contender it prints
// operations per second, the ratio of ria's to the other library's and to
// the physical limit measured in the same run (plain go-redis commands at
// the same concurrency: a GET for a hit, a GET and a SET for a miss), round
// trips and server commands per operation, and what each scenario checks
// (loads per key, requests allowed): the medians of interleaved rounds. It
// prints ratios, not verdicts.
//
// Usage (from the bench module):
//
//	go run ./cachebench [-d 2s] [-rounds 3] [-v] [-s hit,miss,...] [-cpuprofile file]
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
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ria-go/ria/bench/internal/report"
	"github.com/ria-go/ria/bench/internal/server"
	"github.com/ria-go/ria/cache"
)

// The kinds of workload.
const (
	kindHit      = "hit"      // Get of one of hitKeys cached keys
	kindMiss     = "miss"     // Get of a new key each time
	kindStampede = "stampede" // every goroutine Gets the same new key at once
	kindGuard    = "guard"    // Allow of one of guardKeys keys
)

const (
	hitKeys   = 1000
	guardKeys = 1000
	loadDelay = 2 * time.Millisecond // the stampede's database query
)

// scenario is one workload, run by each of its contenders.
type scenario struct {
	name       string
	title      string
	kind       string
	goroutines int
	clients    int // "processes": one go-redis client and one library instance each
	contenders []contender
}

// runs returns the contenders of sc and then the physical limit, in the
// order they run.
func (sc scenario) runs() []contender { return append(slices.Clone(sc.contenders), physicalLimit()) }

func cacheContenders() []contender {
	return []contender{
		riaCache("ria", "JSON (default)", cache.JSON),
		riaCache("ria-msgpack", "msgpack", msgpackCodec{}),
		goRedisCacheJSON(),
		goRedisCacheMsgpack(),
		goRedisCache(),
	}
}

// nearContenders are those of the near-hit scenarios: ria with and without
// its near cache, and go-redis/cache with its local cache (the library
// compared with).
func nearContenders() []contender {
	return []contender{
		riaNear("ria-near", "JSON (default)", cache.JSON),
		riaNear("ria-near-msgpack", "msgpack", msgpackCodec{}),
		riaCache("ria", "JSON (default)", cache.JSON),
		goRedisCacheLocal(),
	}
}

func scenarios() []scenario {
	return []scenario{
		{
			name: "hit", kind: kindHit, goroutines: 1, clients: 1, contenders: cacheContenders(),
			title: fmt.Sprintf("1 goroutine, 1 client: read-through Get of one of %d cached keys", hitKeys),
		},
		{
			name: "hit-parallel", kind: kindHit, goroutines: 32, clients: 2, contenders: append(cacheContenders(), physicalLimitBatched()),
			title: fmt.Sprintf("32 goroutines over 2 clients (2 processes): Get of one of %d cached keys", hitKeys),
		},
		{
			name: "near-hit", kind: kindHit, goroutines: 1, clients: 1, contenders: nearContenders(),
			title: fmt.Sprintf("1 goroutine, 1 client: Get of one of %d cached keys, with a near (local) cache of %d entries", hitKeys, nearSize),
		},
		{
			name: "near-hit-parallel", kind: kindHit, goroutines: 32, clients: 2, contenders: nearContenders(),
			title: fmt.Sprintf("32 goroutines over 2 clients (2 processes): Get of one of %d cached keys, with a near (local) cache of %d entries", hitKeys, nearSize),
		},
		{
			name: "miss", kind: kindMiss, goroutines: 1, clients: 1, contenders: cacheContenders(),
			title: "1 goroutine, 1 client: Get of a new key each time; the load returns at once",
		},
		{
			name: "stampede", kind: kindStampede, goroutines: 32, clients: 4, contenders: cacheContenders(),
			title: fmt.Sprintf("32 goroutines in 4 processes (8 each) Get the same new key at once; the load takes %v; "+
				"ops/s counts keys", loadDelay),
		},
		{
			name: "guard", kind: kindGuard, goroutines: 1, clients: 1,
			contenders: []contender{riaGuard(), redisRate()},
			title:      fmt.Sprintf("1 goroutine, 1 client: once-per-minute guard over %d keys (the first call per key is allowed)", guardKeys),
		},
		{
			name: "guard-parallel", kind: kindGuard, goroutines: 32, clients: 2,
			contenders: []contender{riaGuard(), redisRate()},
			title:      fmt.Sprintf("32 goroutines over 2 clients: once-per-minute guard over %d keys", guardKeys),
		},
		{
			name: "rate", kind: kindGuard, goroutines: 1, clients: 1,
			contenders: []contender{riaLimiter(), redisRateGCRA()},
			title:      fmt.Sprintf("1 goroutine, 1 client: GCRA limiter, 100/s per key with bursts of 100, over %d keys", guardKeys),
		},
		{
			name: "rate-parallel", kind: kindGuard, goroutines: 32, clients: 2,
			contenders: []contender{riaLimiter(), redisRateGCRA(), physicalLimitBatched()},
			title:      fmt.Sprintf("32 goroutines over 2 clients: GCRA limiter, 100/s per key with bursts of 100, over %d keys", guardKeys),
		},
	}
}

func main() {
	d := flag.Duration("d", 2*time.Second, "duration of one run of one contender")
	rounds := flag.Int("rounds", 3, "interleaved rounds per scenario; the tables show medians over them")
	verbose := flag.Bool("v", false, "also break server commands per operation down by command")
	only := flag.String("s", "", "run only these scenarios (comma-separated names, e.g. hit,guard)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (all contenders) to this file")
	flag.Parse()
	if *d <= 0 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "cachebench: -d must be positive and -rounds at least 1")
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cachebench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *d, *rounds, *verbose, *only)
	stop()
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "cachebench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, d time.Duration, rounds int, verbose bool, only string) (err error) {
	var run []scenario
	for _, sc := range scenarios() {
		if only == "" || slices.Contains(strings.Split(only, ","), sc.name) {
			run = append(run, sc)
		}
	}
	if len(run) == 0 {
		return fmt.Errorf("no scenario named %q", only)
	}
	e, err := server.Open(ctx, "cachebench", 4)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, e.Close()) }()
	e.Patterns = append(e.Patterns, "rate:"+e.Prefix+"*") // redis_rate puts "rate:" before the keys it is given

	warm := min(d/4, 250*time.Millisecond)
	report.Header(os.Stdout, e, "cache", []string{"github.com/go-redis/cache/v9", "github.com/go-redis/redis_rate/v10"},
		[]string{"github.com/redis/go-redis/v9", "github.com/vmihailenco/msgpack/v5"})
	fmt.Printf("Every number is the median of %d interleaved round(s) (each contender in turn, then again) of %v per contender, on one machine and one server, after a %v warm-up run of each.\n",
		rounds, d, warm)

	for _, sc := range run {
		runs := sc.runs()
		res, err := report.Interleave(len(runs), rounds, true, func(i, round int) (result, error) {
			c := runs[i]
			tag, rd := "r"+strconv.Itoa(round), d
			if round == 0 {
				tag, rd = "warmup", warm
			}
			got, err := measure(ctx, e, sc, c, tag, rd)
			if err != nil {
				return got, fmt.Errorf("%s %s: %w", sc.name, c.name, err)
			}
			return got, nil
		})
		if err != nil {
			return err
		}
		printReport(os.Stdout, sc, runs, res, verbose)
	}
	notes(os.Stdout)
	return nil
}

// result is what one run of one contender measured. The rates and per-op
// counts cover the run's duration exactly: counters are read when it ends,
// before the goroutines finish their last operation.
type result struct {
	server.Window       // round trips: client side, all clients
	ops           int64 // operations (stampede: keys)
	loads         int64 // loads from the system of record (cache scenarios)
	allowed       int64 // guard: calls allowed
	keys          int64 // guard: distinct keys asked about
	errors        int64
	firstErr      error
}

// measure runs contender c of scenario sc for d on e. tag tells the run's
// keys apart from other runs'.
func measure(ctx context.Context, e *server.Env, sc scenario, c contender, tag string, d time.Duration) (result, error) {
	prefix := e.Prefix + sc.name + ":" + tag + ":"
	procs := make([]proc, sc.clients)
	for i := range procs {
		p, err := c.newProc(e.Clients[i], prefix)
		if err != nil {
			return result{}, err
		}
		procs[i] = p
	}
	defer func() { // stop near cache subscribers
		for _, p := range procs {
			if c, ok := p.(interface{ close() }); ok {
				c.close()
			}
		}
	}()
	for _, p := range procs {
		if w, ok := p.(interface{ waitReady(context.Context) error }); ok {
			if err := w.waitReady(ctx); err != nil {
				return result{}, err
			}
		}
	}
	l := &loader{}
	if sc.kind == kindStampede {
		l.delay = loadDelay
	}
	if sc.kind == kindHit { // fill the cache, outside the measured window
		for i := range hitKeys {
			if err := procs[0].get(ctx, "h"+strconv.Itoa(i), i, l); err != nil {
				return result{}, fmt.Errorf("fill: %w", err)
			}
		}
		l.loads.Store(0)
	}

	var (
		stop     atomic.Bool
		ops      atomic.Int64
		next     atomic.Int64 // the next operation's number
		allowed  atomic.Int64
		errs     atomic.Int64
		loaded   atomic.Int64 // stampede: loads of the keys completed
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	fail := func(err error) {
		errs.Add(1)
		errOnce.Do(func() { firstErr = err })
	}
	if sc.kind == kindStampede {
		wg.Go(func() {
			<-start
			for k := 0; !stop.Load() && ctx.Err() == nil; k++ {
				key := "s" + strconv.Itoa(k)
				var kwg sync.WaitGroup
				gate := make(chan struct{})
				for g := range sc.goroutines {
					p := procs[g%sc.clients]
					kwg.Go(func() {
						<-gate
						if err := p.get(ctx, key, k, l); err != nil {
							fail(err)
						}
					})
				}
				close(gate)
				kwg.Wait()
				loaded.Store(l.loads.Load())
				ops.Add(1)
			}
		})
	} else {
		for g := range sc.goroutines {
			p := procs[g%sc.clients]
			wg.Go(func() {
				<-start
				for !stop.Load() && ctx.Err() == nil {
					i := int(next.Add(1) - 1)
					var err error
					switch sc.kind {
					case kindHit:
						err = p.get(ctx, "h"+strconv.Itoa(i%hitKeys), i%hitKeys, l)
					case kindMiss:
						err = p.get(ctx, "m"+strconv.Itoa(i), i, l)
					case kindGuard:
						var ok bool
						ok, err = p.allow(ctx, "u"+strconv.Itoa(i%guardKeys))
						if ok {
							allowed.Add(1)
						}
					}
					if err != nil {
						fail(err)
						continue
					}
					ops.Add(1)
				}
			})
		}
	}

	var r result
	w, err := e.Timed(ctx, d, func() { close(start) }, func() {
		stop.Store(true)
		r.ops, r.loads, r.allowed, r.keys = ops.Load(), l.loads.Load(), allowed.Load(), min(next.Load(), guardKeys)
		if sc.kind == kindStampede {
			r.loads = loaded.Load() // the keys counted in ops
		}
	})
	wg.Wait()
	r.Window = w
	r.errors, r.firstErr = errs.Load(), firstErr
	return r, e.Finish(ctx, err)
}
