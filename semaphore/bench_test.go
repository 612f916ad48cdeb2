package semaphore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/semaphore"
)

func benchSem(b *testing.B, limit int) (*semaphore.Semaphore, *redistest.Backend) {
	b.Helper()
	be := redistest.New(b, redistest.Standalone)
	s, err := semaphore.New(be.Client, "bench", limit, time.Minute, semaphore.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	// Cache the scripts, so that round trips are those of steady state.
	p, err := s.TryAcquire(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Release(b.Context()); err != nil {
		b.Fatal(err)
	}
	return s, be
}

// BenchmarkSemaphore_AcquireRelease is one uncontended Acquire and Release.
func BenchmarkSemaphore_AcquireRelease(b *testing.B) {
	s, be := benchSem(b, 3)
	ctx := context.Background()
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		p, err := s.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkSemaphore_AcquireRelease_parallel is 4×GOMAXPROCS goroutines
// contending for 3 permits, waiting on the wake list when it is full.
func BenchmarkSemaphore_AcquireRelease_parallel(b *testing.B) {
	s, be := benchSem(b, 3)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(4)
	rt0 := be.Count.RoundTrips()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p, err := s.Acquire(ctx, semaphore.WithWait(time.Minute))
			if err != nil {
				b.Error(err)
				return
			}
			if err := p.Release(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
