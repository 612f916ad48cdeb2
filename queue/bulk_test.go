package queue_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// deadIn makes n dead tasks of queue q, "<prefix>0" (the oldest) to
// "<prefix><n-1>", in one pipeline, and returns their IDs.
func deadIn(t *testing.T, b *redistest.Backend, q, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	_, err := b.Client.Pipelined(t.Context(), func(p redis.Pipeliner) error {
		for i := range ids {
			ids[i] = prefix + strconv.Itoa(i)
			p.HSet(t.Context(), key(b, "tasks"), ids[i], queue.Pack(q, "t", 0, "", []byte(`1`)),
				ids[i]+":a", "1", ids[i]+":e", "boom")
			p.ZAdd(t.Context(), key(b, "dead"), redis.Z{Score: float64(1000 + i), Member: ids[i]})
		}
		return nil
	})
	require.NoError(t, err)
	return ids
}

// readyIn enqueues n tasks (name "t") into queue q, "<prefix>0" to
// "<prefix><n-1>", in one batch, and returns their IDs.
func readyIn(t *testing.T, g *queue.Group, q, prefix string, n int) []string {
	t.Helper()
	jobs := make([]queue.Job, n)
	for i := range jobs {
		jobs[i] = queue.Job{Queue: q, Name: "t", Payload: i, Options: []queue.EnqueueOption{queue.ID(prefix + strconv.Itoa(i))}}
	}
	ids, err := g.EnqueueBatch(t.Context(), jobs)
	require.NoError(t, err)
	return ids
}

func hlen(t *testing.T, b *redistest.Backend) int64 {
	t.Helper()
	n, err := b.Client.HLen(t.Context(), key(b, "tasks")).Result()
	require.NoError(t, err)
	return n
}

func deadLeft(t *testing.T, b *redistest.Backend) int {
	t.Helper()
	n, err := b.Client.ZCard(t.Context(), key(b, "dead")).Result()
	require.NoError(t, err)
	return int(n)
}

// Purge deletes a queue's ready tasks with their fields and unique locks,
// in one round trip, and leaves everything else alone; Stats agree.
func TestGroup_Purge(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		inspectState(t, b, g)
		_, err := g.Enqueue(ctx, "default", "mail", "to", queue.ID("u"), queue.Unique(time.Hour))
		require.NoError(t, err)
		_, err = g.Enqueue(ctx, "default", "mail", "to", queue.Unique(time.Hour))
		require.ErrorIs(t, err, queue.ErrNotUnique)
		n, err := g.Purge(ctx, "warm") // loads the script
		require.NoError(t, err)
		assert.Zero(t, n)
		before := stats(t, g, "default", "other", "run", "doomed")

		rt, _ := b.Count.Delta(func() { n, err = g.Purge(ctx, "default") })
		require.NoError(t, err)
		assert.Equal(t, 4, n)
		assert.Equal(t, int64(1), rt, "round trips")
		after := stats(t, g, "default", "other", "run", "doomed")
		want := before
		want.Ready = map[string]int64{"default": 0, "other": 1, "run": 0, "doomed": 0}
		assert.Equal(t, want, after, "only the queue's ready tasks are gone")
		for _, id := range []string{"a", "b", "c", "u"} {
			assert.Empty(t, taskFields(t, b, id), id)
		}
		assert.Empty(t, b.Keys(key(b, "unique:")+"*"), "the unique lock is released")
		_, err = g.Enqueue(ctx, "default", "mail", "to", queue.Unique(time.Hour))
		require.NoError(t, err, "the same unique task is accepted again")
		for _, id := range []string{"o", "d1", "d2", "r", "x", "old"} {
			_, err := g.Task(ctx, id)
			assert.NoError(t, err, "%s is left alone", id)
		}

		rt, _ = b.Count.Delta(func() { n, err = g.Purge(ctx, "default") })
		require.NoError(t, err)
		assert.Equal(t, 1, n, "the unique task enqueued since")
		assert.Equal(t, int64(1), rt)
		n, err = g.Purge(ctx, "default")
		require.NoError(t, err)
		assert.Zero(t, n, "empty")
		n, err = g.Purge(ctx, "no such queue")
		require.NoError(t, err)
		assert.Zero(t, n)

		// A dangling ID (no fields) is taken out and not counted.
		require.NoError(t, b.Client.RPush(ctx, key(b, "ready:other"), "ghost").Err())
		n, err = g.Purge(ctx, "other")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		assert.Empty(t, readyIDs(t, b, "other"))

		// Bad input: nothing sent.
		rt, _ = b.Count.Delta(func() { n, err = g.Purge(ctx, "") })
		assert.ErrorContains(t, err, "queue name: empty name")
		assert.Zero(t, n)
		assert.Zero(t, rt, "nothing sent")
	})
}

// DeleteAllDead deletes the group's dead tasks with their fields (and a
// unique lock a dead task would still hold), in one round trip.
func TestGroup_DeleteAllDead(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		n, err := g.DeleteAllDead(ctx) // loads the script
		require.NoError(t, err)
		assert.Zero(t, n)
		inspectState(t, b, g)
		putU(t, b, "held", "doomed", 0, "u")
		zadd(t, b, "dead", 2000, "held")
		before := stats(t, g, "default", "other", "run", "doomed")

		rt, _ := b.Count.Delta(func() { n, err = g.DeleteAllDead(ctx) })
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		assert.Equal(t, int64(1), rt, "round trips")
		want := before
		want.Dead = 0
		assert.Equal(t, want, stats(t, g, "default", "other", "run", "doomed"))
		for _, id := range []string{"x", "old", "held"} {
			assert.Empty(t, taskFields(t, b, id), id)
		}
		assert.Empty(t, b.Keys(key(b, "unique:")+"*"), "the unique lock is released")
		for _, id := range []string{"a", "b", "c", "o", "d1", "d2", "r"} {
			_, err := g.Task(ctx, id)
			assert.NoError(t, err, "%s is left alone", id)
		}
		// A lock that a later task took is that task's.
		putU(t, b, "older", "doomed", 0, "v")
		zadd(t, b, "dead", 3000, "older")
		require.NoError(t, b.Client.Set(ctx, key(b, "unique:v"), "newer", time.Hour).Err())
		n, err = g.DeleteAllDead(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		holder, err := b.Client.Get(ctx, key(b, "unique:v")).Result()
		require.NoError(t, err)
		assert.Equal(t, "newer", holder)

		rt, _ = b.Count.Delta(func() { n, err = g.DeleteAllDead(ctx) })
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Equal(t, int64(1), rt)
	})
}

// RequeueAllDead puts the group's dead tasks back at the end of their
// queues, oldest death first, attempts and errors cleared, waking the
// queues' idle workers, in one round trip.
func TestGroup_RequeueAllDead(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		n, err := g.RequeueAllDead(ctx) // loads the script
		require.NoError(t, err)
		assert.Zero(t, n)
		inspectState(t, b, g)
		put(t, b, "y", "other", 2)
		zadd(t, b, "dead", 2000, "y")
		require.NoError(t, b.Client.Del(ctx, key(b, "signal:doomed"), key(b, "signal:other")).Err())
		before := stats(t, g, "default", "other", "run", "doomed")

		rt, _ := b.Count.Delta(func() { n, err = g.RequeueAllDead(ctx) })
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		assert.Equal(t, int64(1), rt, "round trips")
		want := before
		want.Dead = 0
		want.Ready = map[string]int64{"default": 3, "other": 2, "run": 0, "doomed": 2}
		assert.Equal(t, want, stats(t, g, "default", "other", "run", "doomed"))
		assert.Equal(t, []string{"old", "x"}, readyIDs(t, b, "doomed"), "oldest death first")
		assert.Equal(t, []string{"o", "y"}, readyIDs(t, b, "other"), "at the back")
		for _, id := range []string{"x", "old", "y"} {
			info, err := g.Task(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, queue.StateReady, info.State, id)
			assert.Zero(t, info.Attempts, id)
			assert.Empty(t, info.Error, id)
		}
		sig, err := b.Client.LLen(ctx, key(b, "signal:doomed")).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), sig, "the emptied queue's idle workers are woken")
		sig, err = b.Client.LLen(ctx, key(b, "signal:other")).Result()
		require.NoError(t, err)
		assert.Zero(t, sig, "a queue that had tasks has a worker on it already")

		// A dead ID without fields is deleted, not counted.
		zadd(t, b, "dead", 1, "ghost")
		n, err = g.RequeueAllDead(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Zero(t, stats(t, g).Dead)
	})
}

// Many tasks go in batches, one round trip each; counts and Stats are
// exact whether the count is a multiple of the batch or not.
func TestGroup_bulkBatches(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		g.SetBulkBatchForTest(7)
		for _, op := range []func() (int, error){
			func() (int, error) { return g.Purge(ctx, "warm") },
			func() (int, error) { return g.DeleteAllDead(ctx) },
			func() (int, error) { return g.RequeueAllDead(ctx) },
		} {
			_, err := op() // loads the script
			require.NoError(t, err)
		}
		for _, size := range []int{50, 49, 1} {
			trips := int64((size + 6) / 7)
			b.Flush()
			readyIn(t, g, "q", "p", size)
			readyIn(t, g, "keep", "k", 3)
			var n int
			var err error
			rt, _ := b.Count.Delta(func() { n, err = g.Purge(ctx, "q") })
			require.NoError(t, err)
			assert.Equal(t, size, n, "purged of %d", size)
			assert.Equal(t, trips, rt, "round trips for %d", size)
			assert.Equal(t, map[string]int64{"q": 0, "keep": 3}, stats(t, g, "q", "keep").Ready)
			assert.Equal(t, int64(3), hlen(t, b))

			b.Flush()
			deadIn(t, b, "q", "x", size)
			rt, _ = b.Count.Delta(func() { n, err = g.RequeueAllDead(ctx) })
			require.NoError(t, err)
			assert.Equal(t, size, n, "requeued of %d", size)
			assert.Equal(t, trips, rt, "round trips for %d", size)
			s := stats(t, g, "q")
			assert.Equal(t, int64(size), s.Ready["q"])
			assert.Zero(t, s.Dead)
			ids := readyIDs(t, b, "q")
			for i, id := range ids {
				assert.Equal(t, "x"+strconv.Itoa(i), id, "in order of death")
			}

			b.Flush()
			deadIn(t, b, "q", "x", size)
			rt, _ = b.Count.Delta(func() { n, err = g.DeleteAllDead(ctx) })
			require.NoError(t, err)
			assert.Equal(t, size, n, "deleted of %d", size)
			assert.Equal(t, trips, rt, "round trips for %d", size)
			assert.Zero(t, stats(t, g).Dead)
			assert.Zero(t, hlen(t, b))
		}
	})
}

// With the default batch (MaxBulkBatch), 2001 tasks take 3 round trips.
func TestGroup_bulkDefaultBatch(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		const size = 2*queue.MaxBulkBatch + 1
		_, err := g.DeleteAllDead(ctx) // loads the script
		require.NoError(t, err)
		for _, c := range []struct {
			name  string
			setup func()
			call  func() (int, error)
		}{
			{"RequeueAllDead", func() { deadIn(t, b, "q", "x", size) }, func() (int, error) { return g.RequeueAllDead(ctx) }},
			{"Purge", func() {}, func() (int, error) { return g.Purge(ctx, "q") }},
			{"DeleteAllDead", func() { deadIn(t, b, "q", "x", size) }, func() (int, error) { return g.DeleteAllDead(ctx) }},
		} {
			c.setup()
			var n int
			var err error
			start := time.Now()
			rt, _ := b.Count.Delta(func() { n, err = c.call() })
			took := time.Since(start)
			require.NoError(t, err)
			assert.Equal(t, size, n, c.name)
			assert.Equal(t, int64(3), rt, "%s round trips", c.name)
			t.Logf("%s of %d tasks: %d round trips, %v", c.name, size, rt, took)
		}
		s := stats(t, g, "q")
		assert.Zero(t, s.Ready["q"])
		assert.Zero(t, s.Dead)
		assert.Zero(t, hlen(t, b))
	})
}

// A worker taking tasks while Purge runs, and Requeue or Delete of single
// tasks racing RequeueAllDead and DeleteAllDead: every task ends in
// exactly one final state, counted once.
func TestGroup_bulkConcurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		g.SetBulkBatchForTest(5)
		const n = 200

		// Purge with a worker on the queue. The worker's first task is held
		// (in flight) until Purge returns: Purge leaves it alone.
		var mu sync.Mutex
		ran := map[string]int{}
		first := make(chan string, 1)
		purged := make(chan struct{})
		w := newWorker(t, g, queue.Queues("q"), queue.Concurrency(4), queue.Lease(time.Minute))
		handle(t, w, "t", func(ctx context.Context, task *queue.Task) error {
			mu.Lock()
			ran[task.ID]++
			hold := len(ran) == 1
			mu.Unlock()
			if hold {
				first <- task.ID
				<-purged
			}
			return nil
		})
		readyIn(t, g, "q", "p", n)
		s := start(t, w)
		var held string
		select {
		case held = <-first:
		case <-time.After(30 * time.Second):
			t.Fatal("the worker took no task")
		}
		deleted, err := g.Purge(ctx, "q")
		close(purged)
		require.NoError(t, err)
		waitSettled(t, b)
		require.NoError(t, s.stop(t))
		mu.Lock()
		for id, c := range ran {
			assert.Equal(t, 1, c, "task %s ran %d times", id, c)
		}
		assert.Equal(t, n, deleted+len(ran), "purged %d, ran %d", deleted, len(ran))
		assert.Contains(t, ran, held)
		t.Logf("purge beside a worker: purged %d, ran %d", deleted, len(ran))
		mu.Unlock()
		st := stats(t, g, "q")
		assert.Zero(t, st.Ready["q"])
		assert.Zero(t, st.InFlight)

		// RequeueAllDead with single Requeues racing it and a worker running
		// what they requeue.
		b.Flush()
		ids := deadIn(t, b, "q", "x", n)
		clear(ran)
		w = newWorker(t, g, queue.Queues("q"), queue.Concurrency(4), queue.Lease(time.Minute))
		handle(t, w, "t", func(ctx context.Context, task *queue.Task) error {
			mu.Lock()
			ran[task.ID]++
			mu.Unlock()
			return nil
		})
		s = start(t, w)
		var single int
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := len(ids) - 1; i >= 0; i-- {
				err := g.Requeue(ctx, ids[i])
				if err == nil {
					single++
				} else if !errors.Is(err, queue.ErrNotFound) {
					t.Error(err)
				}
			}
		}()
		requeued, err := g.RequeueAllDead(ctx)
		<-done
		require.NoError(t, err)
		assert.Equal(t, n, requeued+single, "bulk %d, single %d", requeued, single)
		waitSettled(t, b)
		require.NoError(t, s.stop(t))
		mu.Lock()
		assert.Len(t, ran, n)
		for id, c := range ran {
			assert.Equal(t, 1, c, "task %s ran %d times", id, c)
		}
		mu.Unlock()
		st = stats(t, g, "q")
		assert.Zero(t, st.Dead)
		assert.Zero(t, st.Ready["q"])
		t.Logf("requeue all beside single requeues: bulk %d, single %d", requeued, single)

		// DeleteAllDead with single Requeues racing it: each task is
		// deleted whole or requeued whole.
		b.Flush()
		ids = deadIn(t, b, "q", "x", n)
		single = 0
		done = make(chan struct{})
		go func() {
			defer close(done)
			for i := len(ids) - 1; i >= 0; i-- {
				err := g.Requeue(ctx, ids[i])
				if err == nil {
					single++
				} else if !errors.Is(err, queue.ErrNotFound) {
					t.Error(err)
				}
			}
		}()
		deleted, err = g.DeleteAllDead(ctx)
		<-done
		require.NoError(t, err)
		assert.Equal(t, n, deleted+single, "deleted %d, requeued %d", deleted, single)
		st = stats(t, g, "q")
		assert.Zero(t, st.Dead)
		assert.Equal(t, int64(single), st.Ready["q"])
		assert.Equal(t, int64(single), hlen(t, b), "a requeued task has its fields, a deleted one none")
		for _, id := range readyIDs(t, b, "q") {
			assert.Len(t, taskFields(t, b, id), 1, "requeued %s: its fields, attempts cleared", id)
		}
		t.Logf("delete all beside single requeues: deleted %d, requeued %d", deleted, single)
	})
}

// RequeueAllDead ends although the tasks it requeues die again at once:
// it takes out no more than the dead set held at its start.
func TestGroup_RequeueAllDeadBounded(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		g.SetBulkBatchForTest(3)
		const n = 30
		deadIn(t, b, "q", "x", n)
		var mu sync.Mutex
		runs := 0
		w := newWorker(t, g, queue.Queues("q"), queue.Concurrency(4), queue.Logger(discard))
		handle(t, w, "t", func(ctx context.Context, task *queue.Task) error {
			mu.Lock()
			runs++
			mu.Unlock()
			return fmt.Errorf("again: %w", queue.ErrNoRetry)
		})
		s := start(t, w)
		requeued, err := g.RequeueAllDead(ctx)
		require.NoError(t, err)
		assert.Equal(t, n, requeued, "each task dead at the start once")
		require.Eventually(t, func() bool { return stats(t, g).Dead == n }, 30*time.Second, time.Millisecond,
			"every requeued task dies again")
		require.NoError(t, s.stop(t))
		mu.Lock()
		assert.Equal(t, n, runs)
		mu.Unlock()
	})
}

// The bulk actions refuse keys of the wrong type, changing nothing;
// RequeueAllDead refuses a dead task whose fields do not parse, which
// Purge and DeleteAllDead delete.
func TestGroup_bulkWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		k := func(part, typ, role string) redistest.KeyRole {
			return redistest.KeyRole{Key: key(b, part), Type: typ, Role: role}
		}
		tasks, dead, unique := k("tasks", "hash", "queue tasks"), k("dead", "zset", "queue dead set"),
			k("unique:u", "string", "queue unique lock")
		ready, signal := k("ready:default", "list", "queue ready list"), k("signal:default", "list", "queue signal list")
		errOf := func(f func() (int, error)) func() error {
			return func() error {
				n, err := f()
				assert.Zero(t, n)
				return err
			}
		}
		purge := errOf(func() (int, error) { return g.Purge(ctx, "default") })
		b.CheckWrongTypes(t, func() {
			_, err := g.Enqueue(ctx, "default", "t", 1, queue.ID("a"), queue.Unique(time.Hour), queue.UniqueKey("u"))
			require.NoError(t, err)
		}, purge, tasks, ready, unique)
		deadU := func() {
			putU(t, b, "a", "default", 1, "u")
			zadd(t, b, "dead", 1, "a")
		}
		b.CheckWrongTypes(t, deadU, errOf(func() (int, error) { return g.DeleteAllDead(ctx) }), tasks, dead, unique)
		b.CheckWrongTypes(t, deadU, errOf(func() (int, error) { return g.RequeueAllDead(ctx) }), tasks, dead, ready, signal)

		b.Flush()
		require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), "a", "9:bad").Err())
		zadd(t, b, "dead", 1, "a")
		before := b.Snapshot()
		n, err := g.RequeueAllDead(ctx)
		assert.ErrorIs(t, err, ria.ErrCorrupt)
		assert.Zero(t, n)
		assert.Equal(t, before, b.Snapshot())
		n, err = g.DeleteAllDead(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "a corrupt dead task can be deleted")
		require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), "a", "9:bad").Err())
		require.NoError(t, b.Client.RPush(ctx, key(b, "ready:default"), "a").Err())
		n, err = g.Purge(ctx, "default")
		require.NoError(t, err)
		assert.Equal(t, 1, n, "a corrupt ready task can be purged")
		assert.Zero(t, hlen(t, b))
	})
}

// A batch whose reply is lost is re-sent by go-redis and answered from
// its record: counts stay exact. Stalled replies give a true count or an
// unknown outcome.
func TestGroup_bulkLostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ops := []struct {
			name  string
			setup func(g *queue.Group) int
			call  func(g *queue.Group) (int, error)
			left  func() int
		}{
			{"Purge", func(g *queue.Group) int { return len(readyIn(t, g, "q", "p", 12)) },
				func(g *queue.Group) (int, error) { return g.Purge(ctx, "q") },
				func() int { return len(readyIDs(t, b, "q")) }},
			{"DeleteAllDead", func(*queue.Group) int { return len(deadIn(t, b, "q", "x", 12)) },
				func(g *queue.Group) (int, error) { return g.DeleteAllDead(ctx) }, func() int { return deadLeft(t, b) }},
			{"RequeueAllDead", func(*queue.Group) int { return len(deadIn(t, b, "q", "x", 12)) },
				func(g *queue.Group) (int, error) { return g.RequeueAllDead(ctx) }, func() int { return deadLeft(t, b) }},
		}
		for _, op := range ops {
			c, _, f := b.FaultyClient()
			g := newGroup(t, b, c)
			g.SetBulkBatchForTest(5)
			_, err := op.call(g) // loads the script
			require.NoError(t, err)
			h := redistest.NewHarness(t, f, "queue "+op.name)
			for _, lost := range []int{1, 2} {
				b.Flush()
				total := op.setup(g)
				var n int
				h.Call(lost, redistest.Scripts, func() { n, err = op.call(g) })
				left := op.left()
				h.Check(err == nil && n == total && left == 0, "%s, %d lost: n %d of %d, %d left, err %v", op.name, lost, n, total, left, err)
				if op.name == "RequeueAllDead" {
					h.Check(len(readyIDs(t, b, "q")) == total, "%s: %d ready of %d", op.name, len(readyIDs(t, b, "q")), total)
				}
			}

			sc, _, sf := b.FaultyClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 100 * time.Millisecond })
			sg := newGroup(t, b, sc)
			sg.SetBulkBatchForTest(5)
			_, err = op.call(sg)
			require.NoError(t, err)
			b.Flush()
			total := op.setup(g)
			sf.Delay(300 * time.Millisecond)
			n, err := op.call(sg)
			sf.Delay(0)
			left := op.left()
			// The first batch ran, its reply never came: outcome unknown,
			// no batch answered, and the re-sends (answered from its
			// record) took out no more than that batch.
			assert.True(t, errors.Is(err, ria.ErrOutcomeUnknown) && n == 0 && left == max(total-5, 0),
				"%s stalled: n %d of %d, %d left, err %v", op.name, n, total, left, err)
			t.Logf("stalled replies: %s n=%d of %d err=%v", op.name, n, total, err)
		}
	})
}
