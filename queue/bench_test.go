package queue_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

func benchGroup(b *testing.B, be *redistest.Backend, rdb queue.Client) *queue.Group {
	b.Helper()
	g, err := queue.New(rdb, "bench", queue.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkGroup_Enqueue is one Enqueue of a small payload.
func BenchmarkGroup_Enqueue(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	g := benchGroup(b, be, be.Client)
	ctx := context.Background()
	if _, err := g.Enqueue(ctx, "default", "t", 0); err != nil { // load the script
		b.Fatal(err)
	}
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		if _, err := g.Enqueue(ctx, "default", "t", 42); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkGroup_Enqueue_unique is one Enqueue of a small payload with
// Unique (a new payload each time, so that none is refused).
func BenchmarkGroup_Enqueue_unique(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	g := benchGroup(b, be, be.Client)
	ctx := context.Background()
	if _, err := g.Enqueue(ctx, "default", "t", -1, queue.Unique(time.Hour)); err != nil { // load the script
		b.Fatal(err)
	}
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	i := 0
	for b.Loop() {
		i++
		if _, err := g.Enqueue(ctx, "default", "t", i, queue.Unique(time.Hour)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkGroup_EnqueueBatch enqueues in batches of 100; an op is one task.
func BenchmarkGroup_EnqueueBatch(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	g := benchGroup(b, be, be.Client)
	ctx := context.Background()
	jobs := make([]queue.Job, 100)
	for i := range jobs {
		jobs[i] = queue.Job{Queue: "default", Name: "t", Payload: i}
	}
	if _, err := g.EnqueueBatch(ctx, jobs[:1]); err != nil { // load the script
		b.Fatal(err)
	}
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	b.ResetTimer()
	for n := 0; n < b.N; n += len(jobs) {
		if _, err := g.EnqueueBatch(ctx, jobs[:min(len(jobs), b.N-n)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkWorker measures enqueue-to-processed throughput: a producer
// enqueues b.N tasks in batches of 100 while a running worker of the given
// concurrency (and prefetch) processes them with a no-op handler; an op is
// one task, done when its handler has returned. roundtrips/op counts the
// worker's and the producer's round trips.
func BenchmarkWorker(b *testing.B) {
	for _, tc := range []struct{ concurrency, prefetch int }{{1, 0}, {1, 32}, {32, 0}} {
		concurrency := tc.concurrency
		b.Run(fmt.Sprintf("concurrency=%d/prefetch=%d", tc.concurrency, tc.prefetch), func(b *testing.B) {
			be := redistest.New(b, redistest.Standalone)
			producer := benchGroup(b, be, be.Client)
			wc, wcount := be.NewClient()
			w, err := queue.NewWorker(benchGroup(b, be, wc), queue.Concurrency(concurrency), queue.Prefetch(tc.prefetch))
			if err != nil {
				b.Fatal(err)
			}
			var processed atomic.Int64
			_ = w.Handle("t", queue.HandlerFunc(func(context.Context, *queue.Task) error {
				processed.Add(1)
				return nil
			}))
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			defer func() {
				stop()
				if err := <-done; err != nil {
					b.Error(err)
				}
			}()
			// Warm up: load the scripts.
			if _, err := producer.Enqueue(ctx, "default", "t", 0); err != nil {
				b.Fatal(err)
			}
			for processed.Load() < 1 {
				time.Sleep(time.Millisecond) // benchmark set-up, not a test
			}
			processed.Store(0)
			jobs := make([]queue.Job, 100)
			for i := range jobs {
				jobs[i] = queue.Job{Queue: "default", Name: "t", Payload: i}
			}
			b.ReportAllocs()
			rt0 := be.Count.RoundTrips() + wcount.RoundTrips()
			b.ResetTimer()
			for n := 0; n < b.N; n += len(jobs) {
				if _, err := producer.EnqueueBatch(ctx, jobs[:min(len(jobs), b.N-n)]); err != nil {
					b.Fatal(err)
				}
			}
			for processed.Load() < int64(b.N) {
				time.Sleep(100 * time.Microsecond) // the last tasks
			}
			b.StopTimer()
			b.ReportMetric(float64(be.Count.RoundTrips()+wcount.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
