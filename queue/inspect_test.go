package queue_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// inspectState builds tasks in every state: ready a, b, c in "default"
// and o in "other"; delayed d1 (due in 2h) and d2 (in 1h); r running (in
// "run"); dead x (error "boom", 1 attempt, just now) and old (long ago).
func inspectState(t *testing.T, b *redistest.Backend, g *queue.Group) {
	t.Helper()
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c"} {
		_, err := g.Enqueue(ctx, "default", "send", map[string]string{"to": id}, queue.ID(id))
		require.NoError(t, err)
	}
	_, err := g.Enqueue(ctx, "other", "t", 1, queue.ID("o"))
	require.NoError(t, err)
	_, err = g.Enqueue(ctx, "default", "later", 2, queue.ID("d1"), queue.Delay(2*time.Hour))
	require.NoError(t, err)
	_, err = g.Enqueue(ctx, "default", "soon", 3, queue.ID("d2"), queue.Delay(time.Hour), queue.MaxRetry(7))
	require.NoError(t, err)
	_, err = g.Enqueue(ctx, "run", "t", "running", queue.ID("r"))
	require.NoError(t, err)
	ts, err := g.TakeForTest(ctx, []string{"run"}, 1, time.Hour)
	require.NoError(t, err)
	require.Len(t, ts, 1)
	_, err = g.Enqueue(ctx, "doomed", "t", "x", queue.ID("x"))
	require.NoError(t, err)
	dt, _, err := g.TakeRuns(ctx, "w", []string{"doomed"}, 1, time.Hour, "tok")
	require.NoError(t, err)
	require.Len(t, dt, 1)
	require.NoError(t, g.SettleForTest(ctx, "w", nil, queue.Outcome{ID: "x", Token: "tok", Kind: 'd', Attempts: "1", Err: "boom"}))
	require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), "old", queue.Pack("doomed", "t", 0, "", []byte(`"old"`)),
		"old:e", "long ago").Err())
	require.NoError(t, b.Client.ZAdd(ctx, key(b, "dead"), redis.Z{Score: 1000, Member: "old"}).Err())
}

func taskIDs(ts []queue.TaskInfo) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

// List lists each state in its order with the tasks' fields, pages, skips
// dangling IDs, costs one round trip, refuses bad input without sending
// anything, and refuses keys of the wrong type.
func TestGroup_List(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		inspectState(t, b, g)
		list := func(s queue.State, q string, offset, limit int) []queue.TaskInfo {
			t.Helper()
			ts, err := g.List(ctx, s, q, offset, limit)
			require.NoError(t, err)
			return ts
		}

		_ = list(queue.StateReady, "default", 0, 1) // the script's first call on the server loads it
		var (
			ready []queue.TaskInfo
			err   error
		)
		rt, _ := b.Count.Delta(func() { ready, err = g.List(ctx, queue.StateReady, "default", 0, 10) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "round trips")
		assert.Equal(t, []string{"a", "b", "c"}, taskIDs(ready))
		assert.Equal(t, queue.TaskInfo{ID: "a", Queue: "default", Name: "send", Payload: []byte(`{"to":"a"}`), MaxRetry: 5,
			State: queue.StateReady}, ready[0])
		assert.Equal(t, []string{"b"}, taskIDs(list(queue.StateReady, "default", 1, 1)))
		assert.Equal(t, []string{"c"}, taskIDs(list(queue.StateReady, "default", 2, 5)))
		assert.Empty(t, list(queue.StateReady, "default", 3, 5))
		assert.Equal(t, []string{"o"}, taskIDs(list(queue.StateReady, "other", 0, 5)))
		assert.Empty(t, list(queue.StateReady, "none", 0, 5))

		delayed := list(queue.StateDelayed, "", 0, 10)
		assert.Equal(t, []string{"d2", "d1"}, taskIDs(delayed), "the earliest due first")
		assert.Equal(t, "soon", delayed[0].Name)
		assert.Equal(t, 7, delayed[0].MaxRetry)
		assert.Equal(t, []byte(`3`), delayed[0].Payload)
		assert.Greater(t, time.Until(delayed[0].At), 50*time.Minute)
		assert.True(t, delayed[1].At.After(delayed[0].At))
		assert.Equal(t, []string{"d1"}, taskIDs(list(queue.StateDelayed, "", 1, 10)))

		running := list(queue.StateRunning, "", 0, 10)
		require.Equal(t, []string{"r"}, taskIDs(running))
		assert.Equal(t, "run", running[0].Queue)
		assert.Equal(t, queue.StateRunning, running[0].State)
		assert.Greater(t, time.Until(running[0].At), 50*time.Minute, "the lease deadline")

		dead := list(queue.StateDead, "", 0, 10)
		require.Equal(t, []string{"x", "old"}, taskIDs(dead), "the most recent first")
		assert.Equal(t, "boom", dead[0].Error)
		assert.Equal(t, 1, dead[0].Attempts)
		assert.Equal(t, []byte(`"x"`), dead[0].Payload)
		assert.Equal(t, "long ago", dead[1].Error)
		assert.Equal(t, time.UnixMilli(1000), dead[1].At)
		assert.Equal(t, []string{"old"}, taskIDs(list(queue.StateDead, "", 1, 1)))

		// Each listed task is what Task tells.
		for _, s := range []queue.State{queue.StateDelayed, queue.StateRunning, queue.StateDead} {
			for _, ti := range list(s, "", 0, 10) {
				one, err := g.Task(ctx, ti.ID)
				require.NoError(t, err)
				assert.Equal(t, one, ti)
			}
		}

		// Dangling IDs (no fields) are left out.
		require.NoError(t, b.Client.ZAdd(ctx, key(b, "delayed"), redis.Z{Score: 1, Member: "ghost"}).Err())
		require.NoError(t, b.Client.RPush(ctx, key(b, "ready:default"), "ghost").Err())
		assert.Equal(t, []string{"d2", "d1"}, taskIDs(list(queue.StateDelayed, "", 0, 10)))
		assert.Equal(t, []string{"a", "b", "c"}, taskIDs(list(queue.StateReady, "default", 0, 10)))

		// A task whose fields do not parse is an error naming it.
		require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), "ghost", "9:bad").Err())
		_, err = g.List(ctx, queue.StateReady, "default", 0, 10)
		assert.ErrorContains(t, err, `"ghost"`)

		// Bad input: an error, nothing sent.
		for _, c := range []struct {
			s             queue.State
			q             string
			offset, limit int
			want          string
		}{
			{"bogus", "", 0, 1, "unknown state"},
			{queue.StateReady, "", 0, 1, "queue name"},
			{queue.StateDead, "default", 0, 1, "must be empty"},
			{queue.StateDelayed, "", -1, 1, "offset -1"},
			{queue.StateDelayed, "", queue.MaxListOffset + 1, 1, "offset"},
			{queue.StateDelayed, "", 0, 0, "limit 0"},
			{queue.StateDelayed, "", 0, queue.MaxListPage + 1, "limit"},
		} {
			rt, _ := b.Count.Delta(func() { _, err = g.List(ctx, c.s, c.q, c.offset, c.limit) })
			assert.ErrorContains(t, err, c.want)
			assert.Zero(t, rt, "nothing sent for %+v", c)
		}
		_, err = g.List(ctx, queue.StateDead, "", queue.MaxListOffset, queue.MaxListPage)
		assert.NoError(t, err, "the bounds themselves")

		// Wrong types.
		setup := func() { inspectState(t, b, g) }
		for _, c := range []struct {
			s     queue.State
			q     string
			part  string
			typ   string
			role  string
			hasQ  bool
			label string
		}{
			{queue.StateReady, "default", "ready:default", "list", "queue ready list", true, "ready"},
			{queue.StateDelayed, "", "delayed", "zset", "queue delayed set", false, "delayed"},
			{queue.StateRunning, "", "inflight", "zset", "queue in-flight set", false, "running"},
			{queue.StateDead, "", "dead", "zset", "queue dead set", false, "dead"},
		} {
			b.CheckWrongTypes(t, setup, func() error { _, err := g.List(ctx, c.s, c.q, 0, 10); return err },
				redistest.KeyRole{Key: key(b, "tasks"), Type: "hash", Role: "queue tasks"},
				redistest.KeyRole{Key: key(b, c.part), Type: c.typ, Role: c.role},
			)
		}
	})
}

// taskFields returns the fields of task id left in the tasks hash.
func taskFields(t *testing.T, b *redistest.Backend, id string) []any {
	t.Helper()
	v, err := b.Client.HMGet(t.Context(), key(b, "tasks"), id, id+":a", id+":e").Result()
	require.NoError(t, err)
	var out []any
	for _, x := range v {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

// Delete deletes a ready, delayed or dead task with all it leaves, in one
// round trip; refuses a running one, changing nothing; releases a unique
// task's lock; and tells unknown tasks.
func TestGroup_Delete(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		inspectState(t, b, g)
		require.ErrorIs(t, g.Delete(ctx, "warm"), queue.ErrNotFound) // loads the script

		var err error
		rt, _ := b.Count.Delta(func() { err = g.Delete(ctx, "b") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "round trips")
		assert.Equal(t, []string{"a", "c"}, readyIDs(t, b, "default"))
		assert.Empty(t, taskFields(t, b, "b"))
		require.NoError(t, g.Delete(ctx, "o"))
		n, err := b.Client.Exists(ctx, key(b, "ready:other")).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "the emptied ready list is gone")

		require.NoError(t, g.Delete(ctx, "d2"))
		s := stats(t, g)
		assert.Equal(t, int64(1), s.Delayed)
		assert.Empty(t, taskFields(t, b, "d2"))

		require.NoError(t, g.Delete(ctx, "x")) // dead, with attempts and error fields
		assert.Empty(t, taskFields(t, b, "x"))
		assert.Equal(t, []string{"old"}, taskIDs(inspectMust(g.List(ctx, queue.StateDead, "", 0, 10))))

		before := b.Snapshot()
		assert.ErrorIs(t, g.Delete(ctx, "r"), queue.ErrInFlight)
		assert.Equal(t, before, withoutOnce(b.Snapshot(), before), "a running task is left alone")
		info, err := g.Task(ctx, "r")
		require.NoError(t, err)
		assert.Equal(t, queue.StateRunning, info.State)

		assert.ErrorIs(t, g.Delete(ctx, "x"), queue.ErrNotFound, "deleted already")
		assert.ErrorIs(t, g.Delete(ctx, "nope"), queue.ErrNotFound)
		assert.ErrorContains(t, g.Delete(ctx, ""), "empty ID")

		// IDs that prefix one another, with SCAN pattern characters.
		_, err = g.Enqueue(ctx, "run", "t", 1, queue.ID("p*"))
		require.NoError(t, err)
		_, err = g.TakeForTest(ctx, []string{"run"}, 1, time.Hour)
		require.NoError(t, err)
		put(t, b, "p", "run", 1) // in no list or set: deleted
		require.NoError(t, g.Delete(ctx, "p"))
		assert.ErrorIs(t, g.Delete(ctx, "p*"), queue.ErrInFlight)

		// A unique task's lock goes with it: the same task is accepted again.
		for _, delay := range []time.Duration{0, time.Hour} {
			id, err := g.Enqueue(ctx, "u", "mail", "to", queue.Unique(time.Hour), queue.Delay(delay))
			require.NoError(t, err)
			_, err = g.Enqueue(ctx, "u", "mail", "to", queue.Unique(time.Hour))
			require.ErrorIs(t, err, queue.ErrNotUnique)
			require.NoError(t, g.Delete(ctx, id))
			assert.Empty(t, b.Keys(key(b, "unique:")+"*"), "the unique lock is released")
			id2, err := g.Enqueue(ctx, "u", "mail", "to", queue.Unique(time.Hour))
			require.NoError(t, err)
			require.NoError(t, g.Delete(ctx, id2))
		}
	})
}

func inspectMust[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// withoutOnce returns snap without the once-script reply records that are
// not in before.
func withoutOnce(snap, before map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range snap {
		if _, ok := before[k]; ok || !isOnce(k) {
			out[k] = v
		}
	}
	return out
}

func isOnce(k string) bool {
	for i := 0; i+6 <= len(k); i++ {
		if k[i:i+6] == ":once:" {
			return true
		}
	}
	return false
}

// RunNow makes a delayed or retrying task ready at the back of its queue,
// waking the queue's workers, keeping its attempts, in one round trip.
func TestGroup_RunNow(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		inspectState(t, b, g)
		require.ErrorIs(t, g.RunNow(ctx, "warm"), queue.ErrNotFound) // loads the script

		var err error
		rt, _ := b.Count.Delta(func() { err = g.RunNow(ctx, "d1") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "round trips")
		assert.Equal(t, []string{"a", "b", "c", "d1"}, readyIDs(t, b, "default"), "at the back")
		info, err := g.Task(ctx, "d1")
		require.NoError(t, err)
		assert.Equal(t, queue.StateReady, info.State)

		// A retrying task keeps its attempts and error; an empty queue's
		// idle workers are woken.
		_, err = g.Enqueue(ctx, "retry", "t", 1, queue.ID("rt"))
		require.NoError(t, err)
		_, _, err = g.TakeRuns(ctx, "w2", []string{"retry"}, 1, time.Hour, "tok2")
		require.NoError(t, err)
		require.NoError(t, g.SettleForTest(ctx, "w2", nil,
			queue.Outcome{ID: "rt", Token: "tok2", Kind: 'r', Attempts: "1", Backoff: time.Hour, Err: "flaky"}))
		require.NoError(t, b.Client.Del(ctx, key(b, "signal:retry")).Err())
		require.NoError(t, g.RunNow(ctx, "rt"))
		assert.Equal(t, []string{"rt"}, readyIDs(t, b, "retry"))
		sig, err := b.Client.LLen(ctx, key(b, "signal:retry")).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), sig, "a wake token for the queue's idle workers")
		info, err = g.Task(ctx, "rt")
		require.NoError(t, err)
		assert.Equal(t, 1, info.Attempts)
		assert.Equal(t, "flaky", info.Error)
		tasks, _, err := g.TakeRuns(ctx, "w3", []string{"retry"}, 1, time.Hour, "tok3")
		require.NoError(t, err)
		assert.Equal(t, []string{"rt"}, []string{tasks[0].ID}, "a worker takes it")

		for _, id := range []string{"a", "r", "x", "nope", "d1"} {
			assert.ErrorIs(t, g.RunNow(ctx, id), queue.ErrNotFound, id)
		}
		assert.ErrorContains(t, g.RunNow(ctx, ""), "empty ID")
	})
}

// Delete and RunNow refuse keys of the wrong type, changing nothing.
func TestGroup_inspectWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		k := func(part, typ, role string) redistest.KeyRole {
			return redistest.KeyRole{Key: key(b, part), Type: typ, Role: role}
		}
		tasks, delayed, inflight, dead := k("tasks", "hash", "queue tasks"), k("delayed", "zset", "queue delayed set"),
			k("inflight", "zset", "queue in-flight set"), k("dead", "zset", "queue dead set")
		enqueue := func(opts ...queue.EnqueueOption) func() {
			return func() {
				_, err := g.Enqueue(ctx, "default", "t", 1, append([]queue.EnqueueOption{queue.ID("a")}, opts...)...)
				require.NoError(t, err)
			}
		}
		del := func() error { return g.Delete(ctx, "a") }
		b.CheckWrongTypes(t, enqueue(), del, tasks, delayed, inflight, dead, k("ready:default", "list", "queue ready list"))
		b.CheckWrongTypes(t, enqueue(queue.Delay(time.Hour)), del, tasks, delayed, inflight, dead)
		b.CheckWrongTypes(t, func() {
			put(t, b, "a", "default", 1)
			zadd(t, b, "dead", 1, "a")
		}, del, tasks, delayed, inflight, dead)
		unique := func() {
			_, err := g.Enqueue(ctx, "default", "t", 1, queue.ID("a"), queue.Unique(time.Hour), queue.UniqueKey("u"))
			require.NoError(t, err)
		}
		b.CheckWrongTypes(t, unique, del, k("unique:u", "string", "queue unique lock"))

		b.CheckWrongTypes(t, enqueue(queue.Delay(time.Hour)), func() error { return g.RunNow(ctx, "a") },
			tasks, delayed, k("ready:default", "list", "queue ready list"), k("signal:default", "list", "queue signal list"))

		// A task whose fields do not parse: refused, nothing changed.
		for _, c := range []struct {
			setup func()
			call  func() error
		}{
			{func() { _ = b.Client.HSet(ctx, key(b, "tasks"), "a", "9:bad"); zadd(t, b, "delayed", far, "a") }, func() error { return g.RunNow(ctx, "a") }},
			{func() {
				_ = b.Client.HSet(ctx, key(b, "tasks"), "a", "9:bad")
				_ = b.Client.RPush(ctx, key(b, "ready:q"), "a")
			}, del},
		} {
			b.Flush()
			c.setup()
			before := b.Snapshot()
			err := c.call()
			assert.ErrorIs(t, err, ria.ErrCorrupt)
			assert.Equal(t, before, b.Snapshot())
		}
	})
}

// Delete and RunNow answer truly when their reply is lost and go-redis
// re-sends them, or when every reply stalls past the client's timeout.
func TestGroup_inspectLostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient()
		g := newGroup(t, b, c)
		require.ErrorIs(t, g.Delete(ctx, "warm"), queue.ErrNotFound)

		h := redistest.NewHarness(t, f, "queue Delete")
		for i, delay := range []time.Duration{0, time.Hour, 0} {
			id := "del-" + strconv.Itoa(i)
			_, err := g.Enqueue(ctx, "default", "t", 1, queue.ID(id), queue.Delay(delay))
			require.NoError(t, err)
			if i == 2 { // dead
				require.NoError(t, b.Client.LRem(ctx, key(b, "ready:default"), 0, id).Err())
				zadd(t, b, "dead", 1, id)
			}
			h.Call(1, redistest.Scripts, func() { err = g.Delete(ctx, id) })
			h.Check(err == nil && len(taskFields(t, b, id)) == 0 && count(t, b, "ready:default", id) == 0 &&
				count(t, b, "delayed", id) == 0 && count(t, b, "dead", id) == 0, "Delete %s: err %v", id, err)
			h.Call(1, redistest.Scripts, func() { err = g.Delete(ctx, id) })
			h.Check(errors.Is(err, queue.ErrNotFound), "Delete %s again: err %v", id, err)
		}

		c2, _, f2 := b.FaultyClient()
		g = newGroup(t, b, c2)
		require.ErrorIs(t, g.RunNow(ctx, "warm"), queue.ErrNotFound)
		h = redistest.NewHarness(t, f2, "queue RunNow")
		for i := range 3 {
			id := "now-" + strconv.Itoa(i)
			_, err := g.Enqueue(ctx, "now", "t", 1, queue.ID(id), queue.Delay(time.Hour))
			require.NoError(t, err)
			h.Call(1, redistest.Scripts, func() { err = g.RunNow(ctx, id) })
			h.Check(err == nil && count(t, b, "ready:now", id) == 1 && count(t, b, "delayed", id) == 0, "RunNow %s: err %v", id, err)
			h.Call(1, redistest.Scripts, func() { err = g.RunNow(ctx, id) })
			h.Check(errors.Is(err, queue.ErrNotFound) && count(t, b, "ready:now", id) == 1, "RunNow %s again: err %v", id, err)
		}

		// Every reply stalls past the client's read timeout: the outcome
		// is unknown, or the answer is true.
		sc, _, sf := b.FaultyClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 100 * time.Millisecond })
		sg := newGroup(t, b, sc)
		require.ErrorIs(t, sg.Delete(ctx, "warm"), queue.ErrNotFound)
		require.ErrorIs(t, sg.RunNow(ctx, "warm"), queue.ErrNotFound)
		_, err := g.Enqueue(ctx, "stall", "t", 1, queue.ID("s1"), queue.Delay(time.Hour))
		require.NoError(t, err)
		_, err = g.Enqueue(ctx, "stall", "t", 1, queue.ID("s2"), queue.Delay(time.Hour))
		require.NoError(t, err)
		sf.Delay(300 * time.Millisecond)
		errRun := sg.RunNow(ctx, "s1")
		errDel := sg.Delete(ctx, "s2")
		sf.Delay(0)
		n := count(t, b, "ready:stall", "s1")
		assert.True(t, errRun == nil && n == 1 || errors.Is(errRun, ria.ErrOutcomeUnknown) && n <= 1, "RunNow: err %v, %d ready", errRun, n)
		gone := len(taskFields(t, b, "s2")) == 0
		assert.True(t, errDel == nil && gone || errors.Is(errDel, ria.ErrOutcomeUnknown), "Delete: err %v, gone %v", errDel, gone)
		t.Logf("stalled replies: RunNow err=%v, Delete err=%v", errRun, errDel)
	})
}

// The inspector: list the delayed tasks, run one now, delete another.
func ExampleGroup_List() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	g, err := queue.New(rdb, "reports")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, day := range []string{"mon", "tue", "wed"} {
		_, err := g.Enqueue(ctx, "default", "digest", day, queue.ID("digest-"+day), queue.Delay(time.Hour))
		if err != nil {
			panic(err)
		}
	}
	delayed, err := g.List(ctx, queue.StateDelayed, "", 0, queue.MaxListPage)
	if err != nil {
		panic(err)
	}
	for _, t := range delayed {
		fmt.Printf("%s %s %s\n", t.ID, t.Name, t.Payload)
	}
	fmt.Println("run now:", g.RunNow(ctx, "digest-mon"))
	fmt.Println("delete:", g.Delete(ctx, "digest-tue"))
	ready, _ := g.List(ctx, queue.StateReady, "default", 0, 10)
	fmt.Println("ready:", ready[0].ID)
	s, _ := g.Stats(ctx)
	fmt.Println("delayed:", s.Delayed)
	// Output:
	// digest-mon digest "mon"
	// digest-tue digest "tue"
	// digest-wed digest "wed"
	// run now: <nil>
	// delete: <nil>
	// ready: digest-mon
	// delayed: 1
}

// List returns TaskInfo, whose Unique field is documented as "its
// uniqueness key, \"\" if none": List fills it as Task does.
func TestGroup_List_unique(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		id, err := g.Enqueue(ctx, "default", "t", 1, queue.Unique(time.Hour), queue.UniqueKey("k"))
		require.NoError(t, err)
		info, err := g.Task(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "k", info.Unique)
		list, err := g.List(ctx, queue.StateReady, "default", 0, 10)
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.Equal(t, "k", list[0].Unique, "List tells the uniqueness key as Task does")
	})
}
