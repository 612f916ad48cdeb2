package geoip_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/geoip"
	"github.com/ria-go/ria/internal/redistest"
)

// writeRanges streams n sorted IPv4 ranges as CSV to w.
func writeRanges(w io.Writer, n int) error {
	step := uint32((1<<32 - 1) / uint64(n+1))
	var b strings.Builder
	for i := range n {
		s := uint32(i+1) * step
		e := s + step/2
		b.Reset()
		fmt.Fprintf(&b, "%s,%s,C%d\n", netip.AddrFrom4([4]byte{byte(s >> 24), byte(s >> 16), byte(s >> 8), byte(s)}),
			netip.AddrFrom4([4]byte{byte(e >> 24), byte(e >> 16), byte(e >> 8), byte(e)}), i%250)
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkImport1M imports 1,000,000 ranges streamed from a generator,
// reports ranges/s, the process's peak heap, and, measured in the same
// run, the limit: the same members sent by plain pipelined ZADDs of the
// same batch size and depth.
func BenchmarkImport1M(b *testing.B) {
	const n = 1_000_000
	be := redistest.New(b, redistest.Standalone)
	ctx := context.Background()
	db, err := geoip.New(be.Client, "bench", geoip.WithPrefix(be.Prefix))
	require.NoError(b, err)
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() { // samples the heap while the import runs
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var importTime, limitTime time.Duration
	for range b.N {
		runtime.GC()
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeRanges(pw, n)) }()
		start := time.Now()
		var reports int
		p, err := db.ImportRanges(ctx, pr, geoip.WithProgress(func(geoip.Progress) { reports++ }))
		importTime += time.Since(start)
		require.NoError(b, err)
		require.EqualValues(b, n, p.Ranges)
		require.Positive(b, reports)

		// The limit: pipelines of 8 ZADDs of 1,000 members of the same size.
		start = time.Now()
		pipe := be.Client.Pipeline()
		members := make([]redis.Z, 0, 1000)
		for i := range n {
			members = append(members, redis.Z{Member: fmt.Sprintf("%032d%04d", i, i%250)})
			if len(members) == 1000 {
				pipe.ZAdd(ctx, be.Prefix+"limit", members...)
				members = make([]redis.Z, 0, 1000)
				if pipe.Len() == 8 {
					_, err := pipe.Exec(ctx)
					require.NoError(b, err)
				}
			}
		}
		_, err = pipe.Exec(ctx)
		require.NoError(b, err)
		limitTime += time.Since(start)
		require.NoError(b, be.Client.Del(ctx, be.Prefix+"limit").Err())
	}
	close(stop)
	rate := float64(n*b.N) / importTime.Seconds()
	limit := float64(n*b.N) / limitTime.Seconds()
	b.ReportMetric(rate, "ranges/s")
	b.ReportMetric(limit, "limit-zadd/s")
	b.ReportMetric(rate/limit, "x-limit")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}

// BenchmarkLookup: one goroutine's Lookups/s next to, measured in the
// same run on 100,000 ranges, its PINGs/s (the one-round-trip limit) and
// the same ZREVRANGEBYLEX written by hand with go-redis (the floor of this
// layout: Lookup's cost beyond it is its own).
func BenchmarkLookup(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := context.Background()
	db, err := geoip.New(be.Client, "bench", geoip.WithPrefix(be.Prefix))
	require.NoError(b, err)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeRanges(pw, 100_000)) }()
	_, err = db.ImportRanges(ctx, pr)
	require.NoError(b, err)
	rng := rand.New(rand.NewPCG(1, 1))
	addrs := make([]netip.Addr, 4096)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())})
	}
	key := be.Prefix + "{bench}:ranges" // the key schema of the package doc
	top := strings.Repeat("\xff", 17)
	b.ResetTimer()
	// The three run interleaved, so all see the same machine, in an order
	// that rotates every iteration, and the two lookups on different
	// addresses: the first command on an address pays for walking the
	// skiplist cold, a second one on the same address finds it warm
	// (measured: the same hand-written command is 0.77-0.81x of the PING
	// loop when first, 0.85-0.92x when second), which a fixed order
	// charges to whichever comes first.
	var lookups, hands, pings time.Duration
	ops := [3]func(i int){
		func(i int) {
			a := addrs[i%len(addrs)]
			start := time.Now()
			_, err := db.Lookup(ctx, a)
			lookups += time.Since(start)
			if err != nil && !errors.Is(err, geoip.ErrNotFound) {
				b.Fatal(err)
			}
		},
		func(i int) {
			a16 := addrs[(i+len(addrs)/2)%len(addrs)].As16()
			start := time.Now()
			err := be.Client.ZRevRangeByLex(ctx, key, &redis.ZRangeBy{Max: "[" + string(a16[:]) + top, Min: "-", Count: 1}).Err()
			hands += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
		},
		func(int) {
			start := time.Now()
			err := be.Client.Ping(ctx).Err()
			pings += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
		},
	}
	for i := range b.N {
		for j := range ops {
			ops[(i+j)%len(ops)](i)
		}
	}
	b.ReportMetric(float64(b.N)/lookups.Seconds(), "lookups/s")
	b.ReportMetric(float64(b.N)/hands.Seconds(), "hand-zrevrangebylex/s")
	b.ReportMetric(float64(b.N)/pings.Seconds(), "limit-ping/s")
	b.ReportMetric(pings.Seconds()/lookups.Seconds(), "x-limit")
	b.ReportMetric(hands.Seconds()/lookups.Seconds(), "x-hand")
}

// BenchmarkDrop1M: the time Drop of 1,000,000 ranges holds the server (one
// round trip: its script unlinks the live keys, freed in the background),
// next to, measured in the same run, a plain DEL of the same data set's
// ranges (freed while the server waits).
func BenchmarkDrop1M(b *testing.B) {
	const n = 1_000_000
	be := redistest.New(b, redistest.Standalone)
	ctx := context.Background()
	db, err := geoip.New(be.Client, "bench", geoip.WithPrefix(be.Prefix))
	require.NoError(b, err)
	load := func() {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeRanges(pw, n)) }()
		_, err := db.ImportRanges(ctx, pr)
		require.NoError(b, err)
	}
	require.NoError(b, db.Drop(ctx)) // loads the script
	var drops, dels time.Duration
	for range b.N {
		load()
		start := time.Now()
		require.NoError(b, db.Drop(ctx))
		drops += time.Since(start)
		load()
		start = time.Now()
		require.NoError(b, be.Client.Del(ctx, be.Prefix+"{bench}:ranges").Err())
		dels += time.Since(start)
		require.NoError(b, db.Drop(ctx))
	}
	b.ReportMetric(drops.Seconds()*1000/float64(b.N), "drop-ms")
	b.ReportMetric(dels.Seconds()*1000/float64(b.N), "del-ms")
	b.ReportMetric(dels.Seconds()/drops.Seconds(), "x-del")
}
