package queue_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// order records the payloads of the tasks a handler ran, in order.
type order struct {
	mu  sync.Mutex
	got []string
}

func (o *order) add(s string) {
	o.mu.Lock()
	o.got = append(o.got, s)
	o.mu.Unlock()
}

func (o *order) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.got...)
}

// With Prefetch, a worker of concurrency 1 takes several tasks per round
// trip and starts the next one without waiting for Redis: well under one
// round trip per task, each task once, in queue order.
func TestWorker_prefetch_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const tasks = 200
		producer := newGroup(t, b, b.Client)
		c, count := b.NewClient()
		w := newWorker(t, newGroup(t, b, c), queue.Concurrency(1), queue.Prefetch(16), queue.Lease(10*time.Minute))
		var ran order
		require.NoError(t, w.Handle("t", queue.Typed(func(_ context.Context, s string) error { ran.add(s); return nil })))
		start(t, w)
		_, err := producer.Enqueue(ctx, "default", "t", "warm-up")
		require.NoError(t, err)
		waitSettled(t, b)

		jobs := make([]queue.Job, tasks)
		var want []string
		for i := range jobs {
			jobs[i] = queue.Job{Queue: "default", Name: "t", Payload: fmt.Sprint(i)}
			want = append(want, fmt.Sprint(i))
		}
		rt0 := count.RoundTrips()
		_, err = producer.EnqueueBatch(ctx, jobs)
		require.NoError(t, err)
		waitSettled(t, b)
		rt := count.RoundTrips() - rt0
		t.Logf("%d tasks at concurrency 1 with prefetch 16: %d round trips (%.3f per task)", tasks, rt, float64(rt)/tasks)
		assert.Equal(t, append([]string{"warm-up"}, want...), ran.list(), "each once, in order")
		// A take of 17, then one of about 8 each time half the buffer has
		// started: about 25, plus the wait and the last settle.
		assert.Less(t, rt, int64(tasks/4))
	})
}

// Prefetched tasks are leased from their take: the heartbeat keeps their
// leases while they wait, so nobody recovers them, and each runs once.
func TestWorker_prefetch_leases(t *testing.T) {
	t.Parallel() // it waits out real time on the real servers
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		const lease = time.Second
		w := newWorker(t, g, queue.Concurrency(1), queue.Prefetch(4), queue.Lease(lease))
		var ran order
		first, release := make(chan struct{}), make(chan struct{})
		require.NoError(t, w.Handle("t", queue.Typed(func(_ context.Context, s string) error {
			if s == "0" {
				close(first)
				<-release
			}
			ran.add(s)
			return nil
		})))
		for i := range 5 {
			_, err := g.Enqueue(ctx, "default", "t", fmt.Sprint(i))
			require.NoError(t, err)
		}
		start(t, w)
		receive(t, first)
		waitFor(t, func() bool { return stats(t, g).InFlight == 5 }) // 1 running, 4 prefetched
		for range 4 {
			b.FastForward(lease / 2)
			waitFor(t, func() bool { // a heartbeat since: every lease pushed back
				runs, err := b.Client.ZRangeWithScores(ctx, key(b, "inflight"), 0, -1).Result()
				return err == nil && len(runs) == 5 && int64(runs[0].Score)-serverNow(t, b) > (lease/2).Milliseconds()
			})
			n, err := g.Recover(ctx)
			require.NoError(t, err)
			assert.Zero(t, n, "no lease expired")
		}
		close(release)
		waitSettled(t, b)
		assert.Equal(t, []string{"0", "1", "2", "3", "4"}, ran.list())
		assertEmpty(t, b, "default")
	})
}

// When Run's ctx ends, the prefetched tasks go back to the front of their
// queue at once, in order, without an attempt counted, while the running
// one finishes within the grace period.
func TestWorker_prefetch_shutdown(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		w := newWorker(t, g, queue.Concurrency(1), queue.Prefetch(4), queue.Grace(time.Minute))
		first, release := make(chan struct{}), make(chan struct{})
		var ran order
		require.NoError(t, w.Handle("t", queue.Typed(func(_ context.Context, s string) error {
			if s == "0" {
				close(first)
				<-release
			}
			ran.add(s)
			return nil
		})))
		var ids []string
		for i := range 6 {
			id, err := g.Enqueue(ctx, "default", "t", fmt.Sprint(i))
			require.NoError(t, err)
			ids = append(ids, id)
		}
		s := start(t, w)
		receive(t, first)
		waitFor(t, func() bool { return stats(t, g).InFlight == 5 })
		s.cancel()
		// Given back before the running task has finished.
		waitFor(t, func() bool { return len(readyIDs(t, b, "default")) == 5 })
		assert.Equal(t, ids[1:], readyIDs(t, b, "default"), "at the front, in order")
		assert.Equal(t, int64(1), stats(t, g).InFlight, "the running one")
		close(release)
		require.NoError(t, s.stop(t))
		assert.Equal(t, []string{"0"}, ran.list(), "prefetched tasks do not start after the ctx ended")
		for _, id := range ids[1:] {
			exists, err := b.Client.HExists(ctx, key(b, "tasks"), id+":a").Result()
			require.NoError(t, err)
			assert.False(t, exists, "no attempt counted")
		}
		s1 := stats(t, g, "default")
		assert.Zero(t, s1.InFlight)
		assert.Equal(t, int64(5), s1.Ready["default"])
	})
}

// What Prefetch documents for priority: tasks prefetched from a lower
// queue run before a higher-priority task enqueued after they were taken.
func TestWorker_prefetch_priority(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		w := newWorker(t, g, queue.Queues("high", "low"), queue.Concurrency(1), queue.Prefetch(2))
		first, release := make(chan struct{}), make(chan struct{})
		var ran order
		require.NoError(t, w.Handle("t", queue.Typed(func(_ context.Context, s string) error {
			if s == "low1" {
				close(first)
				<-release
			}
			ran.add(s)
			return nil
		})))
		for _, s := range []string{"low1", "low2", "low3"} {
			_, err := g.Enqueue(ctx, "low", "t", s)
			require.NoError(t, err)
		}
		start(t, w)
		receive(t, first)
		waitFor(t, func() bool { return stats(t, g).InFlight == 3 })
		_, err := g.Enqueue(ctx, "high", "t", "high")
		require.NoError(t, err)
		close(release)
		waitSettled(t, b)
		assert.Equal(t, []string{"low1", "low2", "low3", "high"}, ran.list())
	})
}

// A prefetched task whose lease is lost before it starts (another run took
// it over) is not started.
func TestWorker_prefetch_leaseLost(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		logs := &records{}
		w := newWorker(t, g, queue.Concurrency(1), queue.Prefetch(1), queue.Lease(300*time.Millisecond), queue.Logger(slog.New(logs)))
		first, release := make(chan struct{}), make(chan struct{})
		var ran order
		require.NoError(t, w.Handle("t", queue.Typed(func(_ context.Context, s string) error {
			if s == "first" {
				close(first)
				<-release
			}
			ran.add(s)
			return nil
		})))
		_, err := g.Enqueue(ctx, "default", "t", "first")
		require.NoError(t, err)
		second, err := g.Enqueue(ctx, "default", "t", "second")
		require.NoError(t, err)
		start(t, w)
		receive(t, first)
		waitFor(t, func() bool { return stats(t, g).InFlight == 2 })
		// Another run takes the prefetched task over, as after a recovery.
		run := inflightRun(t, b, second)
		_, err = b.Client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZRem(ctx, key(b, "inflight"), run)
			p.ZAdd(ctx, key(b, "inflight"), redis.Z{Member: second + ":other", Score: far})
			return nil
		})
		require.NoError(t, err)
		waitFor(t, func() bool { return logs.has(slog.LevelWarn, "queue: lease lost") })
		close(release)
		waitFor(t, func() bool { return stats(t, g).InFlight == 1 }) // "first" acknowledged
		assert.Equal(t, []string{"first"}, ran.list(), "the task whose lease was lost did not start")
	})
}
