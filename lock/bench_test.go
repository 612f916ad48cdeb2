package lock_test

import (
	"testing"
	"time"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/lock"
)

// BenchmarkLock_AcquireRelease measures an uncontended acquire+release on a
// real redis-server.
func BenchmarkLock_AcquireRelease(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	locker := must(lock.New(be.Client, lock.WithPrefix(be.Prefix)))
	ctx := b.Context()
	b.ReportAllocs()
	start := be.Count.RoundTrips()
	for b.Loop() {
		l, err := locker.Acquire(ctx, "bench", time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, start)
}

// BenchmarkLock_contended has every parallel goroutine (GOMAXPROCS x 16)
// contend for one lock on a real redis-server.
func BenchmarkLock_contended(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	locker := must(lock.New(be.Client, lock.WithPrefix(be.Prefix)))
	ctx := b.Context()
	b.ReportAllocs()
	b.SetParallelism(16)
	start := be.Count.RoundTrips()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l, err := locker.Acquire(ctx, "bench", time.Minute)
			if err != nil {
				b.Error(err)
				return
			}
			if err := l.Release(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	report(b, be, start)
}

func report(b *testing.B, be *redistest.Backend, start int64) {
	b.ReportMetric(float64(be.Count.RoundTrips()-start)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
