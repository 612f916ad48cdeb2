package queue_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// discard is a logger that logs nowhere, for workers whose failures are
// the test.
var discard = slog.New(slog.DiscardHandler)

// started is a running Worker.Run.
type started struct {
	cancel context.CancelFunc
	done   chan error
}

// start runs w until the test ends or stop is called.
func start(t *testing.T, w *queue.Worker) *started {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &started{cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			t.Error("worker did not stop")
		}
	})
	return s
}

// stop cancels the run and returns what Run returned.
func (s *started) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after its ctx ended")
		return nil
	}
}

func newWorker(t *testing.T, g *queue.Group, opts ...queue.WorkerOption) *queue.Worker {
	t.Helper()
	w, err := queue.NewWorker(g, opts...)
	require.NoError(t, err)
	return w
}

func handle(t *testing.T, w *queue.Worker, name string, fn func(ctx context.Context, task *queue.Task) error) {
	t.Helper()
	require.NoError(t, w.Handle(name, queue.HandlerFunc(fn)))
}

// waitSettled waits until every task of the test's group is done (no
// payload left).
func waitSettled(t *testing.T, b *redistest.Backend) { waitSettledIn(t, b, group) }

// waitSettledIn waits until every task of group name is done.
func waitSettledIn(t *testing.T, b *redistest.Backend, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		n, err := b.Client.HLen(context.Background(), keyIn(b, name, "tasks")).Result()
		return err == nil && n == 0
	}, 30*time.Second, time.Millisecond, "tasks not settled")
}

// logTo is a slog.Handler that sends the message of every record to ch
// (dropping it if ch is full).
type logTo chan<- string

func (h logTo) Enabled(context.Context, slog.Level) bool { return true }
func (h logTo) Handle(_ context.Context, r slog.Record) error {
	select {
	case h <- r.Message:
	default:
	}
	return nil
}
func (h logTo) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logTo) WithGroup(string) slog.Handler      { return h }

// waitLog waits for a log message starting with prefix.
func waitLog(t *testing.T, logs <-chan string, prefix string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-logs:
			if strings.HasPrefix(m, prefix) {
				return
			}
		case <-timeout:
			t.Fatalf("no log message %q within 10s", prefix)
		}
	}
}

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing received within 10s")
		var zero T
		return zero
	}
}

func TestWorker_process(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		w := newWorker(t, g, queue.Concurrency(4))
		type sold struct {
			Seller, Item string
			Price        int
		}
		var (
			mu   sync.Mutex
			got  []sold
			seen *queue.Task
		)
		require.NoError(t, w.Handle("send_sold_email", queue.Typed(func(_ context.Context, s sold) error {
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
			return nil
		})))
		handle(t, w, "inspect", func(_ context.Context, task *queue.Task) error {
			mu.Lock()
			seen = task
			mu.Unlock()
			return nil
		})
		var want []sold
		for i := range 20 {
			s := sold{"17", fmt.Sprintf("Item%d", i), 10 + i}
			want = append(want, s)
			_, err := g.Enqueue(ctx, "default", "send_sold_email", s)
			require.NoError(t, err)
		}
		id, err := g.Enqueue(ctx, "default", "inspect", []byte("raw"), queue.MaxRetry(2))
		require.NoError(t, err)

		run := start(t, w)
		waitSettled(t, b)
		require.NoError(t, run.stop(t))
		mu.Lock()
		defer mu.Unlock()
		assert.ElementsMatch(t, want, got)
		require.NotNil(t, seen)
		assert.Equal(t, id, seen.ID)
		assert.Equal(t, "default", seen.Queue)
		assert.Equal(t, "inspect", seen.Name)
		assert.Equal(t, 0, seen.Attempt)
		assert.Equal(t, 2, seen.MaxRetry)
		var raw []byte
		require.NoError(t, seen.Decode(&raw))
		assert.Equal(t, []byte("raw"), raw)
		assertEmpty(t, b, "default")
	})
}

// A busy worker pays one round trip per task at concurrency 1 (the ack
// rides on the next take), and less than one at concurrency 32.
func TestWorker_roundTrips(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		for _, tc := range []struct {
			concurrency, tasks int
		}{{1, 40}, {32, 640}} {
			t.Run(fmt.Sprintf("concurrency=%d", tc.concurrency), func(t *testing.T) {
				ctx := t.Context()
				name := fmt.Sprintf("c%d", tc.concurrency)
				producer := newGroupNamed(t, b, b.Client, name)
				c, count := b.NewClient()
				g := newGroupNamed(t, b, c, name)
				// A long lease: no heartbeat lands in the counted rounds.
				w := newWorker(t, g, queue.Concurrency(tc.concurrency), queue.Lease(10*time.Minute))
				var processed atomic.Int64
				handle(t, w, "t", func(context.Context, *queue.Task) error { processed.Add(1); return nil })
				start(t, w)
				// Warm up: load the scripts, then let the worker go idle.
				_, err := producer.Enqueue(ctx, "default", "t", 0)
				require.NoError(t, err)
				waitSettledIn(t, b, name)

				jobs := make([]queue.Job, tc.tasks)
				for i := range jobs {
					jobs[i] = queue.Job{Queue: "default", Name: "t", Payload: i}
				}
				rt0 := count.RoundTrips()
				_, err = producer.EnqueueBatch(ctx, jobs)
				require.NoError(t, err)
				waitSettledIn(t, b, name)
				rt := count.RoundTrips() - rt0
				assert.Equal(t, int64(tc.tasks+1), processed.Load())
				t.Logf("%d tasks at concurrency %d: %d round trips (%.2f per task)", tc.tasks, tc.concurrency, rt, float64(rt)/float64(tc.tasks))
				if tc.concurrency == 1 {
					// One take per task carrying the previous ack, one take
					// that finds the queue empty and the BLPOP after it; the
					// BLPOP that followed the warm-up may be sent after rt0
					// was read.
					assert.GreaterOrEqual(t, rt, int64(tc.tasks+1))
					assert.LessOrEqual(t, rt, int64(tc.tasks+3))
				} else {
					assert.Less(t, rt, int64(tc.tasks/2), "amortised below half a round trip per task")
				}
			})
		}
	})
}

// Strict priority, as the book's worker_watch_queues: a queue is served
// only when every queue before it is empty; FIFO within a queue.
func TestWorker_priority(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		for i := 1; i <= 3; i++ {
			for _, q := range []string{"low", "default", "high"} {
				_, err := g.Enqueue(ctx, q, "t", fmt.Sprintf("%s%d", q, i))
				require.NoError(t, err)
			}
		}
		w := newWorker(t, g, queue.Queues("high", "default", "low"), queue.Concurrency(1))
		var (
			mu    sync.Mutex
			order []string
		)
		require.NoError(t, w.Handle("t", queue.Typed(func(_ context.Context, s string) error {
			mu.Lock()
			order = append(order, s)
			mu.Unlock()
			return nil
		})))
		run := start(t, w)
		waitSettled(t, b)
		require.NoError(t, run.stop(t))
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []string{"high1", "high2", "high3", "default1", "default2", "default3", "low1", "low2", "low3"}, order)

		// One take of several tasks follows the same order.
		for _, q := range []string{"low", "default", "high", "high"} {
			_, err := g.Enqueue(ctx, q, "t", q)
			require.NoError(t, err)
		}
		tasks, err := g.TakeForTest(ctx, []string{"high", "default", "low"}, 3, time.Minute)
		require.NoError(t, err)
		var queues []string
		for _, task := range tasks {
			queues = append(queues, task.Queue)
		}
		assert.Equal(t, []string{"high", "high", "default"}, queues)
	})
}

// The book's delayed-task scenario run by a worker: delays 0, 0.5, 0 and
// 1.5 s; two tasks run at once, the others once the server's clock has
// passed their due time (the worker wakes at the earliest due time). Each
// task checks the server's clock when it runs, so the test does not depend
// on how fast a loaded machine runs it.
func TestWorker_delayed(t *testing.T) {
	t.Parallel() // it waits out real time on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		w := newWorker(t, g)
		type run struct {
			i  int
			at int64 // server time, Unix ms
		}
		ran := make(chan run, 4)
		require.NoError(t, w.Handle("t", queue.Typed(func(ctx context.Context, i int) error {
			now, err := b.Client.Time(ctx).Result()
			if err != nil {
				return err
			}
			ran <- run{i, now.UnixMilli()}
			return nil
		})))
		delays := []time.Duration{0, 500 * time.Millisecond, 0, 1500 * time.Millisecond}
		enqueued := serverNow(t, b)
		for i, d := range delays {
			_, err := g.Enqueue(ctx, "default", "t", i, queue.Delay(d))
			require.NoError(t, err)
		}
		start(t, w)
		first := []run{receive(t, ran), receive(t, ran)}
		assert.ElementsMatch(t, []int{0, 2}, []int{first[0].i, first[1].i}, "the tasks without delay run first")
		if !b.Real() { // the server's clock stands still until FastForward
			assert.Equal(t, int64(2), stats(t, g).Delayed)
		}
		b.FastForward(600 * time.Millisecond)
		later := []run{receive(t, ran)}
		if !b.Real() {
			assert.Equal(t, 1, later[0].i, "due before the other")
		}
		b.FastForward(time.Second)
		later = append(later, receive(t, ran))
		assert.ElementsMatch(t, []int{1, 3}, []int{later[0].i, later[1].i})
		for _, r := range later {
			assert.GreaterOrEqual(t, r.at, enqueued+delays[r.i].Milliseconds(), "task %d ran before it was due", r.i)
		}
		waitSettled(t, b)
		assertEmpty(t, b, "default")
	})
}

// A busy worker still promotes due tasks (at least every 50ms): a delayed
// high-priority task runs while the low queue is far from drained.
func TestWorker_delayed_busy(t *testing.T) {
	t.Parallel() // it waits out real time on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		const low = 3000
		jobs := make([]queue.Job, low)
		for i := range jobs {
			jobs[i] = queue.Job{Queue: "low", Name: "low", Payload: i}
		}
		_, err := g.EnqueueBatch(ctx, jobs)
		require.NoError(t, err)
		_, err = g.Enqueue(ctx, "high", "high", nil, queue.Delay(100*time.Millisecond))
		require.NoError(t, err)
		w := newWorker(t, g, queue.Queues("high", "low"), queue.Concurrency(1))
		var lowDone atomic.Int64
		highAt := make(chan int64, 1)
		handle(t, w, "low", func(context.Context, *queue.Task) error {
			lowDone.Add(1)
			time.Sleep(time.Millisecond) // some work
			return nil
		})
		handle(t, w, "high", func(context.Context, *queue.Task) error { highAt <- lowDone.Load(); return nil })
		run := start(t, w)
		require.Eventually(t, func() bool { return lowDone.Load() > 0 }, 5*time.Second, time.Millisecond)
		b.FastForward(150 * time.Millisecond)
		n := receive(t, highAt)
		t.Logf("the delayed high-priority task ran after %d low tasks", n)
		assert.Less(t, n, int64(low/2), "promoted while the worker was busy")
		require.NoError(t, run.stop(t))
	})
}

// Failures retry with backoff up to MaxRetry, then the task is dead with its
// last error; Requeue sends it back with its attempts reset.
func TestWorker_retryThenDead(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		w := newWorker(t, g, queue.Backoff(10*time.Millisecond, 40*time.Millisecond))
		var (
			mu       sync.Mutex
			attempts []int
			heal     bool
		)
		handle(t, w, "t", func(_ context.Context, task *queue.Task) error {
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, task.Attempt)
			if heal {
				return nil
			}
			return fmt.Errorf("boom %d", task.Attempt+1)
		})
		id, err := g.Enqueue(ctx, "default", "t", nil, queue.MaxRetry(2))
		require.NoError(t, err)
		start(t, w)
		require.Eventually(t, func() bool {
			b.FastForward(50 * time.Millisecond) // past the backoff
			s, err := g.Stats(ctx)
			return err == nil && s.Dead == 1
		}, 20*time.Second, time.Millisecond)
		dead, err := g.Dead(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, dead, 1)
		assert.Equal(t, id, dead[0].ID)
		assert.Equal(t, "default", dead[0].Queue)
		assert.Equal(t, "t", dead[0].Name)
		assert.Equal(t, 3, dead[0].Attempts)
		assert.Equal(t, "boom 3", dead[0].Error)
		assert.WithinDuration(t, time.UnixMilli(serverNow(t, b)), dead[0].Died, 5*time.Second)
		mu.Lock()
		assert.Equal(t, []int{0, 1, 2}, attempts)
		heal = true
		mu.Unlock()

		require.NoError(t, g.Requeue(ctx, id))
		assert.ErrorIs(t, g.Requeue(ctx, id), queue.ErrNotFound)
		waitSettled(t, b)
		mu.Lock()
		assert.Equal(t, []int{0, 1, 2, 0}, attempts, "requeued with attempts reset")
		mu.Unlock()
		assertEmpty(t, b, "default")
	})
}

// Unknown task names, payloads that do not decode and errors wrapping
// ErrNoRetry go to dead at once; a panic is a failure; the worker carries on.
func TestWorker_deadAtOnce(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		w := newWorker(t, g, queue.Concurrency(1))
		type msg struct{ N int }
		ok := make(chan int, 1)
		require.NoError(t, w.Handle("typed", queue.Typed(func(_ context.Context, m msg) error { ok <- m.N; return nil })))
		handle(t, w, "refuse", func(context.Context, *queue.Task) error {
			return fmt.Errorf("bad address: %w", queue.ErrNoRetry)
		})
		handle(t, w, "panic", func(context.Context, *queue.Task) error { panic("kaboom") })

		ids := map[string]string{}
		for _, j := range []struct {
			name, task string
			payload    any
		}{
			{"unknown", "nobody", 1},
			{"bad payload", "typed", "not an object"},
			{"no retry", "refuse", 1},
			{"panic", "panic", 1},
		} {
			id, err := g.Enqueue(ctx, "default", j.task, j.payload, queue.MaxRetry(3))
			require.NoError(t, err)
			ids[id] = j.name
		}
		_, err := g.Enqueue(ctx, "default", "typed", msg{7})
		require.NoError(t, err)
		start(t, w)
		assert.Equal(t, 7, receive(t, ok), "the worker carried on")
		require.Eventually(t, func() bool {
			s, err := g.Stats(ctx)
			return err == nil && s.Dead == 3 && s.Delayed == 1 && s.InFlight == 0
		}, 10*time.Second, time.Millisecond)
		dead, err := g.Dead(ctx, 0, 10)
		require.NoError(t, err)
		errs := map[string]string{}
		for _, d := range dead {
			errs[ids[d.ID]] = d.Error
			assert.Equal(t, 1, d.Attempts, ids[d.ID])
		}
		assert.Equal(t, `queue: unknown task name "nobody"`, errs["unknown"])
		assert.Contains(t, errs["bad payload"], "queue: payload does not decode: json:")
		assert.Equal(t, "bad address: queue: no retry", errs["no retry"])

		// The panic is an ordinary failure: it waits for its retry.
		var pid string
		for id, name := range ids {
			if name == "panic" {
				pid = id
			}
		}
		e, err := b.Client.HGet(ctx, key(b, "tasks"), pid+":e").Result()
		require.NoError(t, err)
		assert.Equal(t, "panic: kaboom", e)
	})
}

// Heartbeats keep a long task's lease: recovery does not take it back and
// it runs once.
func TestWorker_heartbeat(t *testing.T) {
	t.Parallel() // it waits out real time on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		// Heartbeats every lease/3: a stall of the heartbeat goroutine of
		// up to 2/3 of the lease (on a loaded machine) is harmless.
		const lease = time.Second
		w := newWorker(t, g, queue.Lease(lease))
		var runs atomic.Int64
		running, finish := make(chan struct{}, 1), make(chan struct{})
		handle(t, w, "long", func(context.Context, *queue.Task) error {
			runs.Add(1)
			running <- struct{}{}
			<-finish
			return nil
		})
		id, err := g.Enqueue(ctx, "default", "long", nil)
		require.NoError(t, err)
		start(t, w)
		receive(t, running)
		for range 6 { // three leases
			b.FastForward(lease / 2)
			require.Eventually(t, func() bool {
				runs, err := b.Client.ZRangeWithScores(ctx, key(b, "inflight"), 0, -1).Result()
				now, terr := b.Client.Time(ctx).Result()
				return err == nil && terr == nil && len(runs) == 1 && strings.HasPrefix(runs[0].Member.(string), id+":") &&
					int64(runs[0].Score)-now.UnixMilli() > (lease*2/3).Milliseconds()
			}, 5*time.Second, time.Millisecond, "lease not extended")
			n, err := g.Recover(ctx)
			require.NoError(t, err)
			assert.Zero(t, n)
		}
		close(finish)
		waitSettled(t, b)
		assert.Equal(t, int64(1), runs.Load())
		assertEmpty(t, b, "default")
	})
}

// A worker that finds its lease lost cancels the handler's context with
// ErrLeaseLost.
func TestWorker_leaseLost(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		w := newWorker(t, g, queue.Lease(300*time.Millisecond))
		running := make(chan string, 1)
		cause := make(chan error, 1)
		handle(t, w, "long", func(ctx context.Context, task *queue.Task) error {
			running <- task.ID
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		})
		_, err := g.Enqueue(ctx, "default", "long", nil)
		require.NoError(t, err)
		run := start(t, w)
		id := receive(t, running)
		// Another run took the task over, as after a recovery: its lease
		// has another token.
		runs, err := b.Client.ZRangeWithScores(ctx, key(b, "inflight"), 0, -1).Result()
		require.NoError(t, err)
		require.Len(t, runs, 1)
		_, err = b.Client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZRem(ctx, key(b, "inflight"), runs[0].Member)
			// Far in the future: the other run's lease does not expire and
			// come back to this worker while the test looks.
			p.ZAdd(ctx, key(b, "inflight"), redis.Z{Member: id + ":other", Score: far})
			return nil
		})
		require.NoError(t, err)
		assert.ErrorIs(t, receive(t, cause), queue.ErrLeaseLost)
		// The stale run's outcome (a failure, settled at the latest when
		// Run returns) changed nothing.
		require.NoError(t, run.stop(t))
		exists, err := b.Client.HExists(ctx, key(b, "tasks"), id+":a").Result()
		require.NoError(t, err)
		assert.False(t, exists, "no attempt counted")
		s := stats(t, g)
		assert.Equal(t, int64(1), s.InFlight)
		assert.Zero(t, s.Delayed)
	})
}

func TestWorker_shutdown(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		t.Run("finishes within grace", func(t *testing.T) {
			g := newGroupNamed(t, b, b.Client, "a")
			logs := make(chan string, 100)
			w := newWorker(t, g, queue.Concurrency(1), queue.Grace(time.Minute), queue.Logger(slog.New(logTo(logs))))
			running, finish := make(chan context.Context, 1), make(chan struct{})
			ctxErr := make(chan error, 1)
			handle(t, w, "t", func(ctx context.Context, _ *queue.Task) error {
				running <- ctx
				select {
				case <-finish:
					ctxErr <- ctx.Err()
				case <-ctx.Done():
					ctxErr <- fmt.Errorf("cancelled before the handler finished: %w", context.Cause(ctx))
				}
				return nil
			})
			_, err := g.Enqueue(ctx, "default", "t", nil)
			require.NoError(t, err)
			run := start(t, w)
			hctx := receive(t, running)
			run.cancel()
			waitLog(t, logs, "queue: stopping")
			// The worker is stopping, the handler still runs: Run waits for
			// it and leaves its context alone.
			select {
			case err := <-run.done:
				run.done <- err
				t.Fatalf("Run returned (%v) while a task ran within the grace period", err)
			default:
			}
			assert.NoError(t, hctx.Err(), "the handler's context during the grace period")
			close(finish)
			assert.NoError(t, run.stop(t))
			assert.NoError(t, receive(t, ctxErr), "not cancelled within the grace period")
			s := stats(t, g, "default")
			assert.Zero(t, s.InFlight)
			assert.Zero(t, s.Ready["default"])
			n, err := b.Client.HLen(ctx, keyIn(b, "a", "tasks")).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "acknowledged")
		})
		t.Run("given back after grace", func(t *testing.T) {
			g := newGroupNamed(t, b, b.Client, "b")
			w := newWorker(t, g, queue.Concurrency(1), queue.Grace(50*time.Millisecond))
			running := make(chan string, 1)
			handle(t, w, "t", func(ctx context.Context, task *queue.Task) error {
				running <- task.ID
				<-ctx.Done()
				return ctx.Err()
			})
			first, err := g.Enqueue(ctx, "default", "t", 1)
			require.NoError(t, err)
			second, err := g.Enqueue(ctx, "default", "t", 2)
			require.NoError(t, err)
			run := start(t, w)
			assert.Equal(t, first, receive(t, running))
			assert.NoError(t, run.stop(t))
			ready, err := b.Client.LRange(ctx, keyIn(b, "b", "ready:default"), 0, -1).Result()
			require.NoError(t, err)
			assert.Equal(t, []string{first, second}, ready, "given back to the front")
			assert.Zero(t, stats(t, g).InFlight)
			exists, err := b.Client.HExists(ctx, keyIn(b, "b", "tasks"), first+":a").Result()
			require.NoError(t, err)
			assert.False(t, exists, "no attempt counted")
		})
	})
}

// An idle worker blocks on the signal lists: an enqueued task is picked up
// well within a second, in a few round trips, without polling.
func TestWorker_pickup(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		producer := newGroup(t, b, b.Client)
		c, count := b.NewClient()
		// A long lease: no heartbeat lands in the counted rounds.
		w := newWorker(t, newGroup(t, b, c), queue.Queues("high", "default"), queue.Lease(10*time.Minute))
		picked := make(chan time.Time, 1)
		handle(t, w, "t", func(context.Context, *queue.Task) error { picked <- time.Now(); return nil })
		start(t, w)
		_, err := producer.Enqueue(ctx, "default", "t", nil) // warm-up
		require.NoError(t, err)
		receive(t, picked)
		waitSettled(t, b)
		for i := range 4 {
			q := []string{"default", "high"}[i%2]
			rt0 := count.RoundTrips()
			sent := time.Now()
			_, err := producer.Enqueue(ctx, q, "t", i)
			require.NoError(t, err)
			latency := receive(t, picked).Sub(sent)
			waitSettled(t, b)
			rt := count.RoundTrips() - rt0
			t.Logf("pickup from %s: %v, %d round trips", q, latency, rt)
			assert.Less(t, latency, time.Second)
			// take, settle, the next BLPOP (3; 4 if the BLPOP of the
			// previous round was sent after rt0 was read): no polling
			assert.LessOrEqual(t, rt, int64(4), "no polling")
		}
	})
}
