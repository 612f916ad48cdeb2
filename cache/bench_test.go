package cache_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

var benchJob = job{ID: 42, Title: "Senior Gopher", Tags: []string{"go", "redis", "remote"}}

func benchCache(b *testing.B) (*cache.Cache[job], *redistest.Backend) {
	b.Helper()
	be := redistest.New(b, redistest.Standalone)
	c, err := cache.New[job](be.Client, "bench", cache.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	// Cache the scripts, so that round trips are those of steady state.
	if _, err := c.Get(b.Context(), "warm-up", func(context.Context) (job, error) { return benchJob, nil }); err != nil {
		b.Fatal(err)
	}
	return c, be
}

func report(b *testing.B, be *redistest.Backend, rt0 int64) {
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkCache_Get_hit reads one cached entry (a small JSON struct).
func BenchmarkCache_Get_hit(b *testing.B) {
	c, be := benchCache(b)
	ctx := context.Background()
	load := func(context.Context) (job, error) { return benchJob, nil }
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		if _, err := c.Get(ctx, "warm-up", load); err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, rt0)
}

// BenchmarkCache_Get_miss reads a new key each time: look (take the lease),
// load (returns at once), store.
func BenchmarkCache_Get_miss(b *testing.B) {
	c, be := benchCache(b)
	ctx := context.Background()
	load := func(context.Context) (job, error) { return benchJob, nil }
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	i := 0
	for b.Loop() {
		i++
		if _, err := c.Get(ctx, "k"+strconv.Itoa(i), load); err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, rt0)
}

// BenchmarkCache_Get_hit_parallel has 4×GOMAXPROCS goroutines read 100
// cached entries.
func BenchmarkCache_Get_hit_parallel(b *testing.B) {
	c, be := benchCache(b)
	ctx := context.Background()
	load := func(context.Context) (job, error) { return benchJob, nil }
	for i := range 100 {
		if _, err := c.Get(ctx, strconv.Itoa(i), load); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.SetParallelism(4)
	rt0 := be.Count.RoundTrips()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if _, err := c.Get(ctx, strconv.Itoa(i%100), load); err != nil {
				b.Error(err)
				return
			}
		}
	})
	report(b, be, rt0)
}

// BenchmarkCounter_Incr increments an existing counter.
func BenchmarkCounter_Incr(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	c, err := cache.NewCounter(be.Client, "bench", nil, cache.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Incr(ctx, "k", 1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		if _, err := c.Incr(ctx, "k", 1); err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, rt0)
}

// BenchmarkGuard_Allow asks for one key, refused after the first call.
func BenchmarkGuard_Allow(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	g, err := cache.NewGuard(be.Client, "bench", cache.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		if _, err := g.Allow(ctx, "k", time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, rt0)
}
