package counters_test

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// Package benchmarks on a real redis-server (redistest.Standalone). The
// machine is shared: compare numbers of one run only, and prefer
// BenchmarkUpdate_vsLimit, which interleaves the contenders.

// bookPrecisions are the book's, in seconds.
var bookPrecisions = []int64{1, 5, 60, 300, 3600, 18000, 86400}

// bookUpdate is the book's update_counter (listing 5.3): a transactional
// pipeline of ZADD known: and HINCRBY per precision, by the client's clock.
func bookUpdate(ctx context.Context, rdb redis.UniversalClient, prefix, name string, n int64) error {
	now := time.Now().Unix()
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, prec := range bookPrecisions {
			hash := strconv.FormatInt(prec, 10) + ":" + name
			p.ZAdd(ctx, prefix+"known:", redis.Z{Member: hash, Score: 0})
			p.HIncrBy(ctx, prefix+"count:"+hash, strconv.FormatInt(now/prec*prec, 10), n)
		}
		return nil
	})
	return err
}

// serverCalls returns the calls of every command since the last CONFIG
// RESETSTAT, from INFO commandstats (scripts' commands included).
func serverCalls(b *testing.B, rdb redis.UniversalClient) int64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok || name == "info" || strings.HasPrefix(name, "config") {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		c, _ := strconv.ParseInt(calls, 10, 64)
		n += c
	}
	return n
}

// measure runs op b.N times on one goroutine and reports ops/s, round
// trips and server commands per op.
func measure(b *testing.B, be *redistest.Backend, op func() error) {
	b.Helper()
	if err := op(); err != nil { // caches scripts
		b.Fatal(err)
	}
	ctx := context.Background()
	be.Client.ConfigResetStat(ctx)
	rt0 := be.Count.RoundTrips()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(serverCalls(b, be.Client)-1)/float64(b.N), "srvcmds/op")
}

func BenchmarkUpdate(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	c, err := counters.New(be.Client, counters.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	measure(b, be, func() error { return c.Update(b.Context(), "hits", 1) })
}

func BenchmarkUpdate_book(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	measure(b, be, func() error { return bookUpdate(b.Context(), be.Client, be.Prefix, "hits", 1) })
}

func BenchmarkIncr(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	measure(b, be, func() error { return be.Client.Incr(b.Context(), be.Prefix+"n").Err() })
}

func BenchmarkGet(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	c, err := counters.New(be.Client, counters.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Update(b.Context(), "hits", 1); err != nil {
		b.Fatal(err)
	}
	measure(b, be, func() error { _, err := c.Get(b.Context(), "hits", time.Second); return err })
}

func BenchmarkStats_Record(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	c, err := counters.New(be.Client, counters.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	st, err := c.Stats(counters.AccessTime)
	if err != nil {
		b.Fatal(err)
	}
	measure(b, be, func() error { return st.Record(b.Context(), "/cart", time.Millisecond) })
}

// bareLua is the least a one-round-trip atomic update of the book's seven
// precisions costs: one script, seven HINCRBYs by the server's TIME, with
// no checks, no retention and no reply record (so not safe to re-send).
var bareLua = redis.NewScript(`local t = tonumber(redis.call('time')[1])
for i = 1, #ARGV do
  local s = tonumber(ARGV[i])
  redis.call('hincrby', KEYS[1], ARGV[i] .. ':' .. (t - t % s), 1)
end
return 0`)

var rpsRe = regexp.MustCompile(`([0-9.]+) requests per second`)

// redisBenchmark runs redis-benchmark -c 1 -t incr for n requests against
// addr and returns its requests per second (false if it cannot run).
func redisBenchmark(addr string, n int) (float64, bool) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return 0, false
	}
	host, port, _ := strings.Cut(addr, ":")
	out, err := exec.Command(bin, "-h", host, "-p", port, "-c", "1", "-n", strconv.Itoa(n), "-t", "incr", "-q").Output()
	if err != nil {
		return 0, false
	}
	m := rpsRe.FindAllStringSubmatch(string(out), -1)
	if len(m) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[len(m)-1][1], 64)
	return v, err == nil
}

// BenchmarkUpdate_vsLimit interleaves, in each iteration (a round), a
// window of 300 ms of ria's Update, of the book's pipelined
// update_counter, of a bare script of seven HINCRBYs (bareLua: the floor of
// a one-round-trip atomic update), of a plain go-redis INCR loop (the
// one-round-trip limit), and a redis-benchmark
// -c 1 -t incr run of about as long, all at one client on the same server,
// and reports the medians over rounds of their ops/s and the ratios of
// ria's to each. Run it with -benchtime Nx for N rounds.
func BenchmarkUpdate_vsLimit(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := b.Context()
	c, err := counters.New(be.Client, counters.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	ops := map[string]func() error{
		"ria":  func() error { return c.Update(ctx, "hits", 1) },
		"book": func() error { return bookUpdate(ctx, be.Client, be.Prefix, "hits", 1) },
		"incr": func() error { return be.Client.Incr(ctx, be.Prefix+"n").Err() },
		"lua7": func() error {
			return bareLua.Run(ctx, be.Client, []string{be.Prefix + "{bare}:samples"}, 1, 5, 60, 300, 3600, 18000, 86400).Err()
		},
	}
	for _, op := range ops {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	const window = 300 * time.Millisecond
	got := map[string][]float64{}
	for b.Loop() {
		for _, name := range []string{"ria", "book", "lua7", "incr"} {
			n, start := 0, time.Now()
			for time.Since(start) < window {
				if err := ops[name](); err != nil {
					b.Fatal(err)
				}
				n++
			}
			got[name] = append(got[name], float64(n)/time.Since(start).Seconds())
		}
		if rps, ok := redisBenchmark(be.Addrs()[0], int(median(got["incr"])*window.Seconds())+1); ok {
			got["redis-benchmark"] = append(got["redis-benchmark"], rps)
		}
	}
	for name, v := range got {
		b.ReportMetric(median(v), name+"_ops/s")
	}
	b.ReportMetric(median(got["ria"])/median(got["incr"]), "ria/incr")
	b.ReportMetric(median(got["ria"])/median(got["book"]), "ria/book")
	b.ReportMetric(median(got["ria"])/median(got["lua7"]), "ria/lua7")
	if v := got["redis-benchmark"]; len(v) > 0 {
		b.ReportMetric(median(got["ria"])/median(v), "ria/redis-benchmark")
	}
}

// BenchmarkUpdate_parallel compares, at 32 goroutines on one client (a
// busy web service), ria's Update (updates made at the same time share
// MULTI/EXEC round trips), the book's pipelined update_counter and a plain
// go-redis INCR (each goroutine one command at a time: the limit without
// batching), in rounds of 300 ms each, and reports the medians of their
// ops/s and the ratios of ria's to each.
func BenchmarkUpdate_parallel(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := b.Context()
	c, err := counters.New(be.Client, counters.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	ops := map[string]func(g int) error{
		"ria":  func(g int) error { return c.Update(ctx, fmt.Sprint("hits", g%8), 1) },
		"book": func(g int) error { return bookUpdate(ctx, be.Client, be.Prefix, fmt.Sprint("hits", g%8), 1) },
		"incr": func(g int) error { return be.Client.Incr(ctx, fmt.Sprint(be.Prefix, "n", g%8)).Err() },
	}
	const goroutines, window = 32, 300 * time.Millisecond
	got := map[string][]float64{}
	for b.Loop() {
		for _, name := range []string{"ria", "book", "incr"} {
			var n atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			for g := range goroutines {
				wg.Go(func() {
					for time.Since(start) < window {
						if err := ops[name](g); err != nil {
							b.Error(err)
							return
						}
						n.Add(1)
					}
				})
			}
			wg.Wait()
			got[name] = append(got[name], float64(n.Load())/time.Since(start).Seconds())
		}
	}
	for name, v := range got {
		b.ReportMetric(median(v), name+"_ops/s")
	}
	b.ReportMetric(median(got["ria"])/median(got["book"]), "ria/book")
	b.ReportMetric(median(got["ria"])/median(got["incr"]), "ria/incr")
}

// BenchmarkUpdate_vsLimitRTT is BenchmarkUpdate_vsLimit's comparison of
// ria, the bare script and INCR through the fault proxy of redistest
// holding every reply back 200 µs (time.Sleep: about 1 ms per round trip
// on a loaded machine; it reports the measured round trip): a client on a
// network rather than on loopback, where the round trip, not the server's
// Lua work, dominates. The book's MULTI pipeline is left out: the proxy
// delays each of its 16 replies in turn, which a network would not.
func BenchmarkUpdate_vsLimitRTT(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := b.Context()
	rdb, _, f := be.FaultyClient()
	c, err := counters.New(rdb, counters.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	ops := map[string]func() error{
		"ria":  func() error { return c.Update(ctx, "hits", 1) },
		"incr": func() error { return rdb.Incr(ctx, be.Prefix+"n").Err() },
		"lua7": func() error {
			return bareLua.Run(ctx, rdb, []string{be.Prefix + "{bare}:samples"}, 1, 5, 60, 300, 3600, 18000, 86400).Err()
		},
	}
	for _, op := range ops {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	f.Delay(200 * time.Microsecond)
	const window = 300 * time.Millisecond
	got := map[string][]float64{}
	for b.Loop() {
		for _, name := range []string{"ria", "lua7", "incr"} {
			n, start := 0, time.Now()
			for time.Since(start) < window {
				if err := ops[name](); err != nil {
					b.Fatal(err)
				}
				n++
			}
			got[name] = append(got[name], float64(n)/time.Since(start).Seconds())
		}
	}
	for name, v := range got {
		b.ReportMetric(median(v), name+"_ops/s")
	}
	b.ReportMetric(1e6/median(got["incr"]), "µs/roundtrip")
	b.ReportMetric(median(got["ria"])/median(got["incr"]), "ria/incr")
	b.ReportMetric(median(got["ria"])/median(got["lua7"]), "ria/lua7")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkBatcher_Add: 8 goroutines add to 100 counters while Run
// flushes every 100 ms; reports increments/s and round trips per flush.
func BenchmarkBatcher_Add(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	c, err := counters.New(be.Client, counters.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	bt, err := c.Batcher(counters.WithInterval(100 * time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("page-%d", i)
	}
	ctx, stop := context.WithCancel(b.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = bt.Run(ctx) }()
	rt0 := be.Count.RoundTrips()
	b.ReportAllocs()
	b.ResetTimer()
	const goroutines = 8
	per := b.N/goroutines + 1
	start := time.Now()
	var adders sync.WaitGroup
	for g := range goroutines {
		adders.Add(1)
		go func() {
			defer adders.Done()
			for i := range per {
				if err := bt.Add(names[(g*7+i)%len(names)], 1); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	adders.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	wg.Wait()
	if err := bt.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	flushes := max(elapsed.Seconds()/0.1, 1)
	b.ReportMetric(float64(goroutines*per)/elapsed.Seconds(), "incr/s")
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/flushes, "roundtrips/flush")
	if st := bt.Stats(); st.Counted != int64(goroutines*per) {
		b.Fatalf("counted %d of %d", st.Counted, goroutines*per)
	}
}
