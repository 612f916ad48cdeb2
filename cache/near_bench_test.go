package cache_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// benchNear returns a Cache of jobs with a near cache of 1,000 entries
// (maxStale a minute), subscribed, with keys 0-99 cached in Redis and near.
func benchNear(b *testing.B) (*cache.Cache[job], *redistest.Backend) {
	b.Helper()
	be := redistest.New(b, redistest.Standalone)
	c, err := cache.New[job](be.Client, "bench", cache.WithPrefix(be.Prefix), cache.WithNear(1000, time.Minute))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for !c.NearReadyForTest() {
		if time.Now().After(deadline) {
			b.Fatal("near cache not subscribed")
		}
		time.Sleep(time.Millisecond) // setup only: waits for the subscription
	}
	load := func(context.Context) (job, error) { return benchJob, nil }
	for i := range 100 {
		if _, err := c.Get(b.Context(), strconv.Itoa(i), load); err != nil {
			b.Fatal(err)
		}
	}
	return c, be
}

// BenchmarkCache_Get_nearHit reads one entry held in the near cache: no
// round trip, a JSON decode (compare BenchmarkCache_Get_hit, a Redis hit).
func BenchmarkCache_Get_nearHit(b *testing.B) {
	c, be := benchNear(b)
	ctx := context.Background()
	load := func(context.Context) (job, error) { return benchJob, nil }
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		if _, err := c.Get(ctx, "7", load); err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, rt0)
}

// BenchmarkCache_Get_nearHit_parallel has 4×GOMAXPROCS goroutines read
// 100 entries held in the near cache (compare
// BenchmarkCache_Get_hit_parallel).
func BenchmarkCache_Get_nearHit_parallel(b *testing.B) {
	c, be := benchNear(b)
	ctx := context.Background()
	load := func(context.Context) (job, error) { return benchJob, nil }
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

// BenchmarkCache_Set_near stores one entry with a near cache on: the store
// script PUBLISHes the invalidation (compare with a Set without it,
// BenchmarkCache_Set_plain).
func BenchmarkCache_Set_near(b *testing.B) {
	c, be := benchNear(b)
	benchSet(b, c, be)
}

// BenchmarkCache_Set_plain stores one entry without a near cache.
func BenchmarkCache_Set_plain(b *testing.B) {
	c, be := benchCache(b)
	benchSet(b, c, be)
}

func benchSet(b *testing.B, c *cache.Cache[job], be *redistest.Backend) {
	ctx := context.Background()
	if err := c.Set(ctx, "s", benchJob); err != nil { // load the script
		b.Fatal(err)
	}
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		if err := c.Set(ctx, "s", benchJob); err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, rt0)
}
