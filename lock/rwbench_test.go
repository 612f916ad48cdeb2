package lock_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/lock"
)

// BenchmarkRW_RLockRelease measures an uncontended RLock+Release on a real
// redis-server (compare BenchmarkLock_AcquireRelease).
func BenchmarkRW_RLockRelease(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	rw := must(lock.New(be.Client, lock.WithPrefix(be.Prefix))).RW("bench")
	ctx := b.Context()
	b.ReportAllocs()
	start := be.Count.RoundTrips()
	for b.Loop() {
		h, err := rw.RLock(ctx, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, start)
}

// BenchmarkRW_LockRelease measures an uncontended Lock+Release (write).
func BenchmarkRW_LockRelease(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	rw := must(lock.New(be.Client, lock.WithPrefix(be.Prefix))).RW("bench")
	ctx := b.Context()
	b.ReportAllocs()
	start := be.Count.RoundTrips()
	for b.Loop() {
		h, err := rw.Lock(ctx, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, start)
}

// parallel8 makes RunParallel use 8 goroutines (at least GOMAXPROCS).
func parallel8(b *testing.B) { b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0))) }

// BenchmarkRW_readers8 has 8 goroutines RLock and Release one lock: readers
// share it, so none waits.
func BenchmarkRW_readers8(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	rw := must(lock.New(be.Client, lock.WithPrefix(be.Prefix))).RW("bench")
	ctx := b.Context()
	b.ReportAllocs()
	parallel8(b)
	start := be.Count.RoundTrips()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h, err := rw.RLock(ctx, time.Minute)
			if err != nil {
				b.Error(err)
				return
			}
			if err := h.Release(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	report(b, be, start)
}

// BenchmarkRW_exclusive8 is BenchmarkRW_readers8 with the exclusive lock:
// the 8 goroutines take turns.
func BenchmarkRW_exclusive8(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	locker := must(lock.New(be.Client, lock.WithPrefix(be.Prefix)))
	ctx := b.Context()
	b.ReportAllocs()
	parallel8(b)
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

// BenchmarkRW_ping8 is the physical limit of the two benchmarks above: 8
// goroutines sending two PINGs per operation.
func BenchmarkRW_ping8(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := b.Context()
	b.ReportAllocs()
	parallel8(b)
	start := be.Count.RoundTrips()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			for range 2 {
				if err := be.Client.Ping(ctx).Err(); err != nil {
					b.Error(err)
					return
				}
			}
		}
	})
	report(b, be, start)
}
