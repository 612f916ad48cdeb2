package queue_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// group is the name of the group every test uses, under its own prefix.
const group = "g"

func newGroup(t testing.TB, b *redistest.Backend, rdb queue.Client, opts ...queue.Option) *queue.Group {
	t.Helper()
	return newGroupNamed(t, b, rdb, group, opts...)
}

func newGroupNamed(t testing.TB, b *redistest.Backend, rdb queue.Client, name string, opts ...queue.Option) *queue.Group {
	t.Helper()
	g, err := queue.New(rdb, name, append([]queue.Option{queue.WithPrefix(b.Prefix)}, opts...)...)
	require.NoError(t, err)
	return g
}

// key returns the name of one of the keys of the test's group (see doc.go).
func key(b *redistest.Backend, part string) string { return keyIn(b, group, part) }

// keyIn returns the name of one of the keys of group name.
func keyIn(b *redistest.Backend, name, part string) string {
	return b.Prefix + "{" + name + "}:" + part
}

func readyIDs(t *testing.T, b *redistest.Backend, q string) []string {
	t.Helper()
	ids, err := b.Client.LRange(t.Context(), key(b, "ready:"+q), 0, -1).Result()
	require.NoError(t, err)
	return ids
}

func stats(t *testing.T, g *queue.Group, queues ...string) queue.Stats {
	t.Helper()
	s, err := g.Stats(context.Background(), queues...)
	require.NoError(t, err)
	return s
}

// serverNow returns the server's clock in Unix ms.
func serverNow(t *testing.T, b *redistest.Backend) int64 {
	t.Helper()
	now, err := b.Client.Time(t.Context()).Result()
	require.NoError(t, err)
	return now.UnixMilli()
}

// assertEmpty checks that no task is left: no payload, field, ready task
// or member of delayed, inflight or dead.
func assertEmpty(t *testing.T, b *redistest.Backend, queues ...string) {
	t.Helper()
	ctx := t.Context()
	n, err := b.Client.HLen(ctx, key(b, "tasks")).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "tasks")
	for _, k := range []string{"delayed", "inflight", "dead"} {
		n, err := b.Client.ZCard(ctx, key(b, k)).Result()
		require.NoError(t, err)
		assert.Zero(t, n, k)
	}
	for _, q := range queues {
		assert.Empty(t, readyIDs(t, b, q), "ready:"+q)
	}
}

func TestGroup_Enqueue(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		type sold struct {
			Item  string
			Price int
		}
		id, err := g.Enqueue(ctx, "default", "send_sold_email", sold{"ItemA", 35})
		require.NoError(t, err)
		assert.Len(t, id, 36, "a UUID")
		fields, err := b.Client.HGetAll(ctx, key(b, "tasks")).Result()
		require.NoError(t, err)
		assert.Equal(t, map[string]string{id: queue.Pack("default", "send_sold_email", 5, "", []byte(`{"Item":"ItemA","Price":35}`))},
			fields, "one field per task: its packed fields and payload")

		ids, err := g.EnqueueBatch(ctx, []queue.Job{
			{Queue: "default", Name: "a", Payload: 1},
			{Queue: "high", Name: "b", Payload: 2},
			{Queue: "default", Name: "c", Payload: 3, Options: []queue.EnqueueOption{queue.ID("c-1"), queue.MaxRetry(0)}},
			{Queue: "default", Name: "d", Payload: 4, Options: []queue.EnqueueOption{queue.Delay(time.Hour)}},
		})
		require.NoError(t, err)
		require.Len(t, ids, 4)
		assert.Equal(t, "c-1", ids[2])
		assert.Equal(t, []string{id, ids[0], ids[2]}, readyIDs(t, b, "default"), "FIFO order of enqueue")
		assert.Equal(t, []string{ids[1]}, readyIDs(t, b, "high"))
		s := stats(t, g, "default", "high", "low")
		assert.Equal(t, map[string]int64{"default": 3, "high": 1, "low": 0}, s.Ready)
		assert.Equal(t, int64(1), s.Delayed)
		assert.Zero(t, s.InFlight)
		assert.Zero(t, s.Dead)

		// One wake token per queue that got ready tasks, at most.
		for q, want := range map[string]int64{"default": 1, "high": 1, "low": 0} {
			n, err := b.Client.LLen(ctx, key(b, "signal:"+q)).Result()
			require.NoError(t, err)
			assert.Equal(t, want, n, "signal:"+q)
		}
		ids, err = g.EnqueueBatch(ctx, nil)
		assert.NoError(t, err)
		assert.Empty(t, ids)
	})
}

// The book's delayed-task scenario: four tasks with delays 0, 0.5, 0 and
// 1.5 s: two are ready at once, all four once promotion has run past their
// due times. The server's clock decides (miniredis: moved by FastForward):
// each Promote moves exactly the tasks due by the server's clock when it
// ran, whatever time a loaded machine takes between the calls.
func TestGroup_delayed(t *testing.T) {
	t.Parallel() // it waits out real time on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		delays := []time.Duration{0, 500 * time.Millisecond, 0, 1500 * time.Millisecond}
		ids := make([]string, len(delays))
		for i, d := range delays {
			var err error
			ids[i], err = g.Enqueue(ctx, "default", "task", i, queue.Delay(d))
			require.NoError(t, err)
		}
		s := stats(t, g, "default")
		assert.Equal(t, int64(2), s.Ready["default"], "delays 0 are ready at once")
		assert.Equal(t, int64(2), s.Delayed)
		promoteDue(t, b, g)
		b.FastForward(600 * time.Millisecond)
		promoteDue(t, b, g)
		b.FastForward(time.Second)
		promoteDue(t, b, g)
		assert.Equal(t, []string{ids[0], ids[2], ids[1], ids[3]}, readyIDs(t, b, "default"))
		assert.Zero(t, stats(t, g).Delayed)

		// At: a past time is ready at once, a future one waits.
		now := time.UnixMilli(serverNow(t, b))
		past, err := g.Enqueue(ctx, "default", "task", 5, queue.At(now.Add(-time.Hour)))
		require.NoError(t, err)
		_, err = g.Enqueue(ctx, "default", "task", 6, queue.At(now.Add(time.Hour)))
		require.NoError(t, err)
		assert.Equal(t, past, readyIDs(t, b, "default")[4])
		assert.Equal(t, int64(1), stats(t, g).Delayed)
	})
}

// promoteDue runs Promote and checks that it moved every task due by the
// server's clock before the call and none due after it (a task due in
// between may go either way).
func promoteDue(t *testing.T, b *redistest.Backend, g *queue.Group) {
	t.Helper()
	ctx := t.Context()
	due, err := b.Client.ZRangeWithScores(ctx, key(b, "delayed"), 0, -1).Result()
	require.NoError(t, err)
	before := serverNow(t, b)
	n, err := g.Promote(ctx)
	require.NoError(t, err)
	after := serverNow(t, b)
	moved := 0
	for _, z := range due {
		promoted := b.Client.ZScore(ctx, key(b, "delayed"), z.Member.(string)).Err() == redis.Nil
		switch at := int64(z.Score); {
		case at <= before:
			assert.True(t, promoted, "task due at %d not promoted at %d", at, before)
		case at > after:
			assert.False(t, promoted, "task due at %d promoted by %d", at, after)
		}
		if promoted {
			moved++
		}
	}
	assert.Equal(t, moved, n, "Promote counts what it moved")
}

// With several promoters at once, each delayed task is promoted exactly once.
func TestGroup_Promote_concurrent(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		const (
			promoters = 4
			tasks     = 1000
		)
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		jobs := make([]queue.Job, tasks)
		for i := range jobs {
			jobs[i] = queue.Job{Queue: "default", Name: "t", Payload: i, Options: []queue.EnqueueOption{queue.Delay(100 * time.Millisecond)}}
		}
		ids, err := g.EnqueueBatch(ctx, jobs)
		require.NoError(t, err)
		b.FastForward(150 * time.Millisecond)

		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			total  int
			errs   = make(chan error, promoters)
			starts = make(chan struct{})
		)
		for range promoters {
			c, _ := b.NewClient()
			gp := newGroup(t, b, c)
			wg.Go(func() {
				<-starts
				n, err := gp.Promote(ctx)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
			})
		}
		close(starts)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		assert.Equal(t, tasks, total, "promotions summed over the promoters")
		ready := readyIDs(t, b, "default")
		assert.Len(t, ready, tasks)
		assert.ElementsMatch(t, ids, ready, "each task once")
		assert.Zero(t, stats(t, g).Delayed)
	})
}

// Tasks of a crashed worker come back when their lease expires, at the
// front of their queue, counting an attempt; several recoverers at once
// recover each exactly once.
func TestGroup_Recover_concurrent(t *testing.T) {
	t.Parallel() // it waits out real time on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		// Long enough that no lease expires before the test has taken
		// every task and checked, even on a loaded machine.
		const lease = 2 * time.Second
		const (
			recoverers = 4
			tasks      = 300
		)
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		jobs := make([]queue.Job, tasks)
		for i := range jobs {
			jobs[i] = queue.Job{Queue: "default", Name: "t", Payload: i}
		}
		_, err := g.EnqueueBatch(ctx, jobs)
		require.NoError(t, err)
		var took []string
		for len(took) < tasks {
			ts, err := g.TakeForTest(ctx, []string{"default"}, 64, lease)
			require.NoError(t, err)
			require.NotEmpty(t, ts)
			for _, task := range ts {
				took = append(took, task.ID)
			}
		}
		later, err := g.Enqueue(ctx, "default", "t", "later")
		require.NoError(t, err)
		n, err := g.Recover(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "no lease has expired yet")
		assert.Equal(t, int64(tasks), stats(t, g).InFlight)

		b.FastForward(lease + 50*time.Millisecond)
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			total int
			errs  = make(chan error, recoverers)
		)
		for range recoverers {
			c, _ := b.NewClient()
			gr := newGroup(t, b, c)
			wg.Go(func() {
				n, err := gr.Recover(ctx)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		assert.Equal(t, tasks, total)
		ready := readyIDs(t, b, "default")
		require.Len(t, ready, tasks+1)
		assert.ElementsMatch(t, took, ready[:tasks], "recovered tasks go to the front, each once")
		assert.Equal(t, later, ready[tasks])
		attempts, err := b.Client.HGet(ctx, key(b, "tasks"), took[0]+":a").Result()
		require.NoError(t, err)
		assert.Equal(t, "1", attempts)
		assert.Zero(t, stats(t, g).InFlight)

		// Without retries left, an expired lease sends the task to dead.
		id, err := g.Enqueue(ctx, "solo", "t", nil, queue.MaxRetry(0))
		require.NoError(t, err)
		_, err = g.TakeForTest(ctx, []string{"solo"}, 1, 100*time.Millisecond)
		require.NoError(t, err)
		b.FastForward(150 * time.Millisecond)
		n, err = g.Recover(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		dead, err := g.Dead(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, dead, 1)
		assert.Equal(t, id, dead[0].ID)
		assert.Equal(t, "lease expired", dead[0].Error)
		assert.Equal(t, 1, dead[0].Attempts)
	})
}

func TestGroup_Cancel(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		delayed, err := g.Enqueue(ctx, "default", "t", "x", queue.Delay(time.Hour))
		require.NoError(t, err)
		ready, err := g.Enqueue(ctx, "default", "t", "y")
		require.NoError(t, err)

		require.NoError(t, g.Cancel(ctx, delayed))
		assert.ErrorIs(t, g.Cancel(ctx, delayed), queue.ErrNotFound, "twice")
		assert.ErrorIs(t, g.Cancel(ctx, ready), queue.ErrNotFound, "a ready task is not cancelled")
		assert.ErrorIs(t, g.Cancel(ctx, "nope"), queue.ErrNotFound)
		fields, err := b.Client.HKeys(ctx, key(b, "tasks")).Result()
		require.NoError(t, err)
		assert.NotEmpty(t, fields)
		for _, f := range fields {
			assert.NotContains(t, f, delayed, "deleted")
		}
		s := stats(t, g, "default")
		assert.Zero(t, s.Delayed)
		assert.Equal(t, int64(1), s.Ready["default"])
	})
}

func TestGroup_duplicateID(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		id, err := g.Enqueue(ctx, "default", "t", 1, queue.ID("order-17"))
		require.NoError(t, err)
		assert.Equal(t, "order-17", id)
		_, err = g.Enqueue(ctx, "default", "t", 2, queue.ID("order-17"))
		assert.ErrorIs(t, err, queue.ErrDuplicate)

		// All or nothing: a taken ID anywhere in a batch writes nothing.
		_, err = g.EnqueueBatch(ctx, []queue.Job{
			{Queue: "other", Name: "t", Payload: 3, Options: []queue.EnqueueOption{queue.ID("new")}},
			{Queue: "other", Name: "t", Payload: 4, Options: []queue.EnqueueOption{queue.ID("order-17")}},
		})
		assert.ErrorIs(t, err, queue.ErrDuplicate)
		assert.ErrorContains(t, err, "job 1")
		_, err = g.EnqueueBatch(ctx, []queue.Job{
			{Queue: "other", Name: "t", Options: []queue.EnqueueOption{queue.ID("x")}},
			{Queue: "other", Name: "t", Options: []queue.EnqueueOption{queue.ID("x")}},
		})
		assert.ErrorIs(t, err, queue.ErrDuplicate)
		s := stats(t, g, "default", "other")
		assert.Equal(t, map[string]int64{"default": 1, "other": 0}, s.Ready)
		n, err := b.Client.HLen(ctx, key(b, "tasks")).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "the field of one task")
	})
}

type nilHandler struct{}

func (*nilHandler) Process(context.Context, *queue.Task) error { return nil }

func TestGroup_badInput(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		for _, tc := range []struct {
			name, queue, task string
			payload           any
			opts              []queue.EnqueueOption
			want              string
		}{
			{"empty queue", "", "t", 1, nil, "queue name"},
			{"empty task name", "default", "", 1, nil, "task name"},
			{"negative delay", "default", "t", 1, []queue.EnqueueOption{queue.Delay(-time.Second)}, "delay"},
			{"huge delay", "default", "t", 1, []queue.EnqueueOption{queue.Delay(math.MaxInt64)}, "delay"},
			{"zero time", "default", "t", 1, []queue.EnqueueOption{queue.At(time.Time{})}, "zero time"},
			{"far time", "default", "t", 1, []queue.EnqueueOption{queue.At(time.Now().AddDate(200, 0, 0))}, "at"},
			{"negative retries", "default", "t", 1, []queue.EnqueueOption{queue.MaxRetry(-1)}, "max retry"},
			{"huge retries", "default", "t", 1, []queue.EnqueueOption{queue.MaxRetry(math.MaxInt)}, "max retry"},
			{"empty ID", "default", "t", 1, []queue.EnqueueOption{queue.ID("")}, "empty ID"},
			{"ID ending in :a", "default", "t", 1, []queue.EnqueueOption{queue.ID("job:a")}, `ID "job:a": must not end in ":a" or ":e"`},
			{"ID ending in :e", "default", "t", 1, []queue.EnqueueOption{queue.ID("job:e")}, `ID "job:e": must not end in ":a" or ":e"`},
			{"payload", "default", "t", make(chan int), nil, "payload"},
		} {
			_, err := g.Enqueue(ctx, tc.queue, tc.task, tc.payload, tc.opts...)
			assert.ErrorContains(t, err, tc.want, tc.name)
			_, err = g.EnqueueBatch(ctx, []queue.Job{
				{Queue: "default", Name: "ok", Payload: 1},
				{Queue: tc.queue, Name: tc.task, Payload: tc.payload, Options: tc.opts},
			})
			assert.ErrorContains(t, err, tc.want, tc.name+" (batch)")
			assert.ErrorContains(t, err, "job 1", tc.name+" (batch)")
		}
		_, err := g.EnqueueBatch(ctx, make([]queue.Job, queue.MaxBatch+1))
		assert.ErrorContains(t, err, "batch of 10001 jobs")

		for _, tc := range []struct {
			offset, limit int
			want          string
		}{
			{-1, 10, "offset -1"}, {math.MaxInt, 10, "offset"}, {0, 0, "limit 0"},
			{0, math.MaxInt, "limit"}, {0, queue.MaxDeadPage + 1, "limit"},
		} {
			_, err = g.Dead(ctx, tc.offset, tc.limit)
			assert.ErrorContains(t, err, tc.want, "Dead(%d, %d)", tc.offset, tc.limit)
			assert.NotContains(t, err.Error(), "script", "a Go-side error, not a Lua one")
		}
		_, err = g.Stats(ctx, "default", "")
		assert.ErrorContains(t, err, "queue name: empty name", "Stats of an empty queue name")
		assert.ErrorContains(t, g.Cancel(ctx, ""), "empty ID")
		assert.NotErrorIs(t, g.Cancel(ctx, ""), queue.ErrNotFound)
		assert.ErrorContains(t, g.Requeue(ctx, ""), "empty ID")
		assert.NotErrorIs(t, g.Requeue(ctx, ""), queue.ErrNotFound)

		for _, tc := range []struct {
			name string
			opts []queue.WorkerOption
			want string
		}{
			{"zero concurrency", []queue.WorkerOption{queue.Concurrency(0)}, "concurrency"},
			{"max concurrency", []queue.WorkerOption{queue.Concurrency(math.MaxInt)}, "concurrency"},
			{"huge concurrency", []queue.WorkerOption{queue.Concurrency(1 << 27)}, "concurrency"},
			{"negative prefetch", []queue.WorkerOption{queue.Prefetch(-1)}, "prefetch"},
			{"huge prefetch", []queue.WorkerOption{queue.Prefetch(queue.MaxPrefetch + 1)}, "prefetch"},
			{"no queues", []queue.WorkerOption{queue.Queues()}, "queues"},
			{"empty queue", []queue.WorkerOption{queue.Queues("high", "")}, "queue name"},
			{"queue twice", []queue.WorkerOption{queue.Queues("a", "a")}, "given twice"},
			{"short lease", []queue.WorkerOption{queue.Lease(time.Millisecond)}, "lease"},
			{"long lease", []queue.WorkerOption{queue.Lease(queue.MaxLease + time.Second)}, "lease"},
			{"negative grace", []queue.WorkerOption{queue.Grace(-time.Second)}, "grace"},
			{"backoff", []queue.WorkerOption{queue.Backoff(time.Second, time.Millisecond)}, "backoff"},
			{"zero backoff", []queue.WorkerOption{queue.Backoff(0, time.Second)}, "backoff"},
			{"huge backoff", []queue.WorkerOption{queue.Backoff(time.Second, math.MaxInt64)}, "backoff"},
		} {
			_, err := queue.NewWorker(g, tc.opts...)
			assert.ErrorContains(t, err, tc.want, tc.name)
		}
		w, err := queue.NewWorker(g, queue.Concurrency(queue.MaxConcurrency), queue.Prefetch(queue.MaxPrefetch))
		require.NoError(t, err, "the bounds themselves are fine")
		assert.ErrorContains(t, w.Handle("", queue.HandlerFunc(func(context.Context, *queue.Task) error { return nil })), "task name")
		assert.ErrorContains(t, w.Handle("t", nil), "nil handler")
		assert.ErrorContains(t, w.Handle("t", queue.HandlerFunc(nil)), "nil")
		assert.ErrorContains(t, w.Handle("t", queue.Typed[int](nil)), "nil func")
		assert.ErrorContains(t, w.Handle("t", (*nilHandler)(nil)), "nil")
		assert.ErrorContains(t, w.Run(ctx), "no handler", "no bad handler was registered")

		_, err = queue.New(b.Client, "")
		assert.ErrorContains(t, err, "group name")
		_, err = queue.New(b.Client, "}g")
		assert.ErrorContains(t, err, "group name")
		_, err = queue.New(b.Client, "g", queue.WithPrefix("a{b"))
		assert.ErrorContains(t, err, "prefix")
		_, err = queue.New(b.Client, "g", queue.WithCodec(nil))
		assert.ErrorContains(t, err, "codec")
		_, err = queue.New(b.Client, "g", queue.WithDeadLimit(0))
		assert.ErrorContains(t, err, "dead limit")
		_, err = queue.New(b.Client, "g", queue.WithDeadLimit(queue.MaxDeadLimit+1))
		assert.ErrorContains(t, err, "dead limit")

		assert.Empty(t, keysWithPrefix(t, b), "bad input wrote nothing")
	})
	assert.Panics(t, func() { _, _ = queue.New(nil, "g") })
	assert.Panics(t, func() { _, _ = queue.NewWorker(nil) })
}

// A caller's ID cannot name another task's fields: task "job" keeps its
// failed attempts and last error in fields "job:a" and "job:e" of the
// tasks hash, so IDs ending so are refused, in a batch too, and nothing
// is written; other IDs holding ':' are fine.
func TestGroup_Enqueue_IDFieldSuffix(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		_, err := g.Enqueue(ctx, "default", "t", 1, queue.ID("job"))
		require.NoError(t, err)
		for _, id := range []string{"job:a", "job:e", ":a", "x:e:a"} {
			_, err = g.Enqueue(ctx, "default", "t", 2, queue.ID(id))
			assert.ErrorContains(t, err, "must not end in", id)
			_, err = g.EnqueueBatch(ctx, []queue.Job{{Queue: "default", Name: "t", Payload: 2, Options: []queue.EnqueueOption{queue.ID(id)}}})
			assert.ErrorContains(t, err, "must not end in", id)
		}
		assert.Equal(t, []string{"job"}, readyIDs(t, b, "default"), "nothing written")
		for _, id := range []string{"job:ab", "job:A", "a", "e", "job:", "job:1"} {
			_, err = g.Enqueue(ctx, "default", "t", 3, queue.ID(id))
			assert.NoError(t, err, id)
		}
		// Settling "job" leaves the others whole.
		ts, _, err := g.TakeRuns(ctx, "w", []string{"default"}, 1, time.Hour, "tok")
		require.NoError(t, err)
		require.Len(t, ts, 1)
		require.Equal(t, "job", ts[0].ID)
		require.NoError(t, g.SettleForTest(ctx, "w", nil, queue.Outcome{ID: "job", Token: "tok", Kind: 'r', Attempts: "1", Err: "boom"}))
		for _, id := range []string{"job:ab", "job:A", "a", "e", "job:", "job:1"} {
			info, err := g.Task(ctx, id)
			if assert.NoError(t, err, id) {
				assert.Equal(t, 0, info.Attempts, id)
				assert.Equal(t, queue.StateReady, info.State, id)
			}
		}
	})
}

// Names cannot make two namespaces share a key: the ready list of queue
// "a}:tasks" in group "g" would be the tasks hash of group "g}:ready:a" if
// group names could hold braces; they cannot.
func TestGroup_namesCannotCollide(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		id, err := g.Enqueue(ctx, "a}:tasks", "t", 1)
		require.NoError(t, err, "queue names may hold braces: the group's closes the hash tag first")
		_, err = queue.New(b.Client, "g}:ready:a", queue.WithPrefix(b.Prefix))
		assert.ErrorContains(t, err, "must not contain '{' or '}'")
		assert.ElementsMatch(t, []string{key(b, "tasks"), key(b, "ready:a}:tasks"), key(b, "signal:a}:tasks")}, keysWithPrefix(t, b))
		assert.Equal(t, []string{id}, readyIDs(t, b, "a}:tasks"))
	})
}

func TestGroup_roundTrips(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		// Load the scripts.
		_, err := g.Enqueue(ctx, "warm", "t", 0)
		require.NoError(t, err)
		warm, err := g.Enqueue(ctx, "default", "t", 0, queue.Delay(time.Hour))
		require.NoError(t, err)
		require.NoError(t, g.Cancel(ctx, warm))
		_, err = g.Promote(ctx)
		require.NoError(t, err)
		_, err = g.Recover(ctx)
		require.NoError(t, err)
		_, err = g.Dead(ctx, 0, 1)
		require.NoError(t, err)
		assert.ErrorIs(t, g.Requeue(ctx, "nope"), queue.ErrNotFound)

		count := func(name string, want int64, fn func() error) {
			t.Helper()
			var err error
			rt, _ := b.Count.Delta(func() { err = fn() })
			require.NoError(t, err, name)
			assert.Equal(t, want, rt, name)
		}
		count("Enqueue", 1, func() error { _, err := g.Enqueue(ctx, "default", "t", 1); return err })
		count("Enqueue with an ID", 1, func() error { _, err := g.Enqueue(ctx, "default", "t", 1, queue.ID("x")); return err })
		count("Enqueue delayed", 1, func() error { _, err := g.Enqueue(ctx, "default", "t", 1, queue.Delay(time.Hour)); return err })
		jobs := make([]queue.Job, 500)
		for i := range jobs {
			jobs[i] = queue.Job{Queue: []string{"high", "default", "low"}[i%3], Name: "t", Payload: i}
		}
		count("EnqueueBatch of 500", 1, func() error { _, err := g.EnqueueBatch(ctx, jobs); return err })
		id, err := g.Enqueue(ctx, "default", "t", 1, queue.Delay(time.Hour))
		require.NoError(t, err)
		count("Cancel", 1, func() error { return g.Cancel(ctx, id) })
		put(t, b, "dead-1", "default", 5)
		zadd(t, b, "dead", 1, "dead-1")
		count("Requeue", 1, func() error { return g.Requeue(ctx, "dead-1") })
		count("Stats", 1, func() error { _, err := g.Stats(ctx, "high", "default", "low"); return err })
		count("Promote", 1, func() error { _, err := g.Promote(ctx); return err })
		count("Recover", 1, func() error { _, err := g.Recover(ctx); return err })
		count("Dead", 1, func() error { _, err := g.Dead(ctx, 0, 100); return err })
	})
}

// keysWithPrefix lists the test's keys on every master.
func keysWithPrefix(t *testing.T, b *redistest.Backend) []string {
	t.Helper()
	var (
		mu  sync.Mutex
		out []string
	)
	scan := func(ctx context.Context, c redis.UniversalClient) error {
		ks, err := c.Keys(ctx, b.Prefix+"*").Result()
		mu.Lock()
		out = append(out, ks...)
		mu.Unlock()
		return err
	}
	if cc, ok := b.Client.(*redis.ClusterClient); ok {
		require.NoError(t, cc.ForEachMaster(t.Context(), func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) }))
	} else {
		require.NoError(t, scan(t.Context(), b.Client))
	}
	return out
}

// Beyond the dead limit, the oldest dead tasks are deleted.
func TestGroup_deadLimit(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client, queue.WithDeadLimit(2))
		var ids []string
		for i := range 3 {
			id, err := g.Enqueue(ctx, "default", "t", i, queue.MaxRetry(0))
			require.NoError(t, err)
			ids = append(ids, id)
			_, err = g.TakeForTest(ctx, []string{"default"}, 1, 100*time.Millisecond)
			require.NoError(t, err)
			b.FastForward(150 * time.Millisecond) // the lease expires: dead
			n, err := g.Recover(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)
		}
		dead, err := g.Dead(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, dead, 2)
		assert.Equal(t, []string{ids[2], ids[1]}, []string{dead[0].ID, dead[1].ID}, "most recent first")
		fields, err := b.Client.HKeys(ctx, key(b, "tasks")).Result()
		require.NoError(t, err)
		for _, f := range fields {
			assert.NotContains(t, f, ids[0], "the oldest dead task is deleted")
		}
		page, err := g.Dead(ctx, 1, 10)
		require.NoError(t, err)
		require.Len(t, page, 1)
		assert.Equal(t, ids[1], page[0].ID)
	})
}
