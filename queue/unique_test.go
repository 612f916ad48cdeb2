package queue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

const roleUnique = "queue unique lock"

// lockHolder returns the holder of the unique lock of key u ("" if none).
func lockHolder(t *testing.T, b *redistest.Backend, u string) string {
	t.Helper()
	v, err := b.Client.Get(t.Context(), key(b, "unique:"+u)).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	require.NoError(t, err)
	return v
}

// notUnique checks that err refuses a unique task held by holder.
func notUnique(t *testing.T, err error, holder, u string) {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, queue.ErrNotUnique)
	assert.ErrorIs(t, err, queue.ErrDuplicate)
	var nu *queue.NotUniqueError
	if assert.ErrorAs(t, err, &nu) {
		assert.Equal(t, holder, nu.Holder)
		assert.Equal(t, u, nu.Key)
	}
	assert.Contains(t, err.Error(), holder, "the error names the holder")
}

// A unique task excludes its twins (same queue, name and payload, or the
// same UniqueKey) while it is unfinished, in one round trip per Enqueue;
// other payloads, queues and names are other keys.
func TestGroup_Enqueue_unique(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		u := queue.UniqueKeyOf("default", "mail", []byte(`{"to":"a"}`))
		_, err := g.Enqueue(ctx, "warm", "up", 1, queue.Unique(time.Hour)) // the server caches the script
		require.NoError(t, err)
		var id string
		rt, _ := b.Count.Delta(func() {
			var err error
			id, err = g.Enqueue(ctx, "default", "mail", map[string]string{"to": "a"}, queue.Unique(time.Hour))
			require.NoError(t, err)
		})
		assert.Equal(t, int64(1), rt, "round trips of a unique Enqueue")
		assert.Equal(t, id, lockHolder(t, b, u))
		ttl, err := b.Client.PTTL(ctx, key(b, "unique:"+u)).Result()
		require.NoError(t, err)
		assert.True(t, ttl > 59*time.Minute && ttl <= time.Hour, "lock TTL %v", ttl)

		rt, _ = b.Count.Delta(func() {
			_, err = g.Enqueue(ctx, "default", "mail", map[string]string{"to": "a"}, queue.Unique(time.Hour), queue.Delay(time.Hour))
		})
		notUnique(t, err, id, u)
		assert.Equal(t, int64(1), rt, "round trips of a refused Enqueue")
		for _, other := range []struct{ q, name, to string }{{"default", "mail", "b"}, {"low", "mail", "a"}, {"default", "sms", "a"}} {
			_, err := g.Enqueue(ctx, other.q, other.name, map[string]string{"to": other.to}, queue.Unique(time.Hour))
			assert.NoError(t, err, "%+v", other)
		}
		// A task that is not unique is never refused.
		_, err = g.Enqueue(ctx, "default", "mail", map[string]string{"to": "a"})
		require.NoError(t, err)

		// A key of the caller's spans queues and names.
		k1, err := g.Enqueue(ctx, "default", "report", 1, queue.Unique(time.Hour), queue.UniqueKey("report:42"))
		require.NoError(t, err)
		_, err = g.Enqueue(ctx, "low", "other", 2, queue.Unique(time.Hour), queue.UniqueKey("report:42"), queue.ID("x"))
		notUnique(t, err, k1, "report:42")
		info, err := g.Task(ctx, k1)
		require.NoError(t, err)
		assert.Equal(t, "report", info.Name)
		assert.Equal(t, "1", string(info.Payload), "the payload reads back unchanged")
		assert.Equal(t, "report:42", info.Unique)
		_, err = g.Task(ctx, "x")
		assert.ErrorIs(t, err, queue.ErrNotFound, "nothing written")

		// A batch is all or nothing: one held key refuses it, naming the job.
		before := stats(t, g, "default", "low")
		_, err = g.EnqueueBatch(ctx, []queue.Job{
			{Queue: "default", Name: "n", Payload: 1, Options: []queue.EnqueueOption{queue.Unique(time.Hour)}},
			{Queue: "default", Name: "mail", Payload: map[string]string{"to": "a"}, Options: []queue.EnqueueOption{queue.Unique(time.Hour)}},
		})
		notUnique(t, err, id, u)
		var nu *queue.NotUniqueError
		require.ErrorAs(t, err, &nu)
		assert.Equal(t, 1, nu.Job)
		assert.Equal(t, before, stats(t, g, "default", "low"), "nothing written")
		assert.Empty(t, lockHolder(t, b, queue.UniqueKeyOf("default", "n", []byte("1"))))
		// Two jobs with one key: refused before anything is sent.
		_, err = g.EnqueueBatch(ctx, []queue.Job{
			{Queue: "q", Name: "n", Payload: 1, Options: []queue.EnqueueOption{queue.Unique(time.Hour), queue.UniqueKey("k")}},
			{Queue: "q", Name: "m", Payload: 2, Options: []queue.EnqueueOption{queue.Unique(time.Hour), queue.UniqueKey("k")}},
		})
		assert.ErrorIs(t, err, queue.ErrNotUnique)
		ids, err := g.EnqueueBatch(ctx, []queue.Job{
			{Queue: "q", Name: "n", Payload: 1, Options: []queue.EnqueueOption{queue.Unique(time.Hour), queue.UniqueKey("k")}},
			{Queue: "q", Name: "m", Payload: 2, Options: []queue.EnqueueOption{queue.Unique(time.Hour), queue.Delay(time.Hour)}},
		})
		require.NoError(t, err)
		assert.Equal(t, ids[0], lockHolder(t, b, "k"))
		assert.Equal(t, ids[1], lockHolder(t, b, queue.UniqueKeyOf("q", "m", []byte("2"))))

		// A lock whose holder is gone (deleted without releasing it) is free.
		require.NoError(t, b.Client.HDel(ctx, key(b, "tasks"), ids[0]).Err())
		again, err := g.Enqueue(ctx, "q", "n", 1, queue.Unique(time.Hour), queue.UniqueKey("k"))
		require.NoError(t, err)
		assert.Equal(t, again, lockHolder(t, b, "k"))
	})
}

// The lock is released by the script that settles its task: on ack, on
// death (a handler's outcome or a lease that expired with no retry left)
// and on Cancel; not on a retry. A lock that expired and was taken by a
// later task is never released by the older one.
func TestGroup_Enqueue_uniqueRelease(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		enqueue := func(q string, opts ...queue.EnqueueOption) string {
			t.Helper()
			id, err := g.Enqueue(ctx, q, "t", 1, append([]queue.EnqueueOption{queue.Unique(time.Hour), queue.UniqueKey(q)}, opts...)...)
			require.NoError(t, err)
			require.Equal(t, id, lockHolder(t, b, q))
			return id
		}
		take := func(q string, lease time.Duration) (queue.Task, string) {
			t.Helper()
			tok := queue.Nonce()
			tasks, _, err := g.TakeRuns(ctx, "w", []string{q}, 1, lease, tok)
			require.NoError(t, err)
			require.Len(t, tasks, 1)
			assert.Equal(t, q, queue.UniqueOf(tasks[0]))
			return tasks[0], tok
		}
		outcome := func(task queue.Task, tok string, kind byte) {
			t.Helper()
			_, _, err := g.TakeRuns(ctx, "w", []string{"none"}, 0, time.Minute, queue.Nonce(),
				queue.Outcome{ID: task.ID, Token: tok, Kind: kind, Attempts: "1", Backoff: time.Hour, Err: "e", Unique: queue.UniqueOf(task)})
			require.NoError(t, err)
		}

		enqueue("ack")
		task, tok := take("ack", time.Minute)
		outcome(task, tok, 'a')
		assert.Empty(t, lockHolder(t, b, "ack"), "released on ack")

		enqueue("retry")
		task, tok = take("retry", time.Minute)
		outcome(task, tok, 'r')
		assert.Equal(t, task.ID, lockHolder(t, b, "retry"), "kept while the task waits to retry")

		enqueue("dead")
		task, tok = take("dead", time.Minute)
		require.NoError(t, g.SettleForTest(ctx, "w", nil, queue.Outcome{ID: task.ID, Token: tok, Kind: 'd', Attempts: "1", Err: "e", Unique: queue.UniqueOf(task)}))
		assert.Empty(t, lockHolder(t, b, "dead"), "released on death")
		require.NoError(t, g.Requeue(ctx, task.ID))
		assert.Empty(t, lockHolder(t, b, "dead"), "a requeued task does not take it again")

		id := enqueue("cancel", queue.Delay(time.Hour))
		require.NoError(t, g.Cancel(ctx, id))
		assert.Empty(t, lockHolder(t, b, "cancel"), "released on cancel")

		// A lease that expires with no retry left: the recovery buries the
		// task and releases its lock.
		enqueue("lease", queue.MaxRetry(0))
		take("lease", 10*time.Millisecond)
		if b.Mini != nil {
			b.FastForward(time.Second)
		}
		waitFor(t, func() bool {
			n, err := g.Recover(ctx)
			require.NoError(t, err)
			return n == 1
		})
		assert.Empty(t, lockHolder(t, b, "lease"), "released when the task dies of an expired lease")

		// A lock that expired and was taken again belongs to the new task.
		old := enqueue("ttl", queue.Unique(50*time.Millisecond))
		task, tok = take("ttl", time.Minute)
		require.Equal(t, old, task.ID)
		if b.Mini != nil {
			b.FastForward(time.Second)
		}
		waitFor(t, func() bool { return lockHolder(t, b, "ttl") == "" })
		newer := enqueue("ttl")
		outcome(task, tok, 'a')
		assert.Equal(t, newer, lockHolder(t, b, "ttl"), "the older task does not release the newer one's lock")
		_, err := g.Enqueue(ctx, "ttl", "t", 1, queue.Unique(time.Hour), queue.UniqueKey("ttl"))
		notUnique(t, err, newer, "ttl")
	})
}

// A worker releases the lock of the tasks it runs: once the handler has
// returned, the same task can be enqueued again.
func TestWorker_uniqueRelease(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		ran := make(chan string, 10)
		w := newWorker(t, g, queue.Logger(discard))
		handle(t, w, "ok", func(_ context.Context, task *queue.Task) error { ran <- task.ID; return nil })
		handle(t, w, "fail", func(_ context.Context, task *queue.Task) error { ran <- task.ID; return queue.ErrNoRetry })
		start(t, w)
		for _, name := range []string{"ok", "fail"} {
			id, err := g.Enqueue(ctx, "default", name, 1, queue.Unique(time.Hour))
			require.NoError(t, err)
			select {
			case got := <-ran:
				require.Equal(t, id, got)
			case <-time.After(20 * time.Second):
				t.Fatal("the task did not run")
			}
			u := queue.UniqueKeyOf("default", name, []byte("1"))
			waitFor(t, func() bool { return lockHolder(t, b, u) == "" })
			again, err := g.Enqueue(ctx, "default", name, 1, queue.Unique(time.Hour))
			require.NoError(t, err)
			select {
			case got := <-ran:
				require.Equal(t, again, got)
			case <-time.After(20 * time.Second):
				t.Fatal("the task did not run")
			}
		}
	})
}

// Many producers on several clients enqueue the same unique task at once:
// exactly one succeeds; the others name it as the holder.
func TestGroup_Enqueue_uniqueConcurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const clients, producers = 3, 16
		var groups []*queue.Group
		for range clients {
			c, _ := b.NewClient()
			groups = append(groups, newGroup(t, b, c))
		}
		for round := range 3 {
			var mu sync.Mutex
			var won []string
			var refused []error
			var wg sync.WaitGroup
			for i := range producers {
				g := groups[i%clients]
				wg.Go(func() {
					id, err := g.Enqueue(ctx, "default", "t", round, queue.Unique(time.Hour))
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						won = append(won, id)
					} else {
						refused = append(refused, err)
					}
				})
			}
			wg.Wait()
			require.Len(t, won, 1, "round %d: exactly one enqueue wins", round)
			assert.Len(t, refused, producers-1)
			for _, err := range refused {
				notUnique(t, err, won[0], queue.UniqueKeyOf("default", "t", fmt.Appendf(nil, "%d", round)))
			}
		}
		assert.Equal(t, int64(3), stats(t, groups[0], "default").Ready["default"])
	})
}

// A unique Enqueue whose reply is lost is re-sent by go-redis: the re-send
// is recognised as the same call (it succeeds, and the task is there
// once, holding its lock), for a generated ID, a caller's ID and a batch.
func TestGroup_Enqueue_uniqueLostReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient()
		g := newGroup(t, b, c)
		h := redistest.NewHarness(t, f, "queue Enqueue unique")
		for i, opts := range [][]queue.EnqueueOption{
			{queue.Unique(time.Hour)},
			{queue.Unique(time.Hour), queue.ID("mine")},
			{queue.Unique(time.Hour), queue.UniqueKey("k"), queue.Delay(time.Hour)},
		} {
			var id string
			var err error
			h.Call(1, redistest.Scripts, func() { id, err = g.Enqueue(ctx, "default", "t", i, opts...) })
			if !h.Check(err == nil, "enqueue %d: %v", i, err) {
				continue
			}
			info, terr := g.Task(ctx, id)
			h.Check(terr == nil && info.ID == id, "enqueue %d: task %q: %v", i, id, terr)
			u := queue.UniqueKeyOf("default", "t", fmt.Appendf(nil, "%d", i))
			if i == 2 {
				u = "k"
			}
			h.Check(lockHolder(t, b, u) == id, "enqueue %d: lock held by %q, want %q", i, lockHolder(t, b, u), id)
			// A second call (not a re-send) is refused, naming it.
			var nu *queue.NotUniqueError
			second := opts
			if i == 1 {
				second = opts[:1] // without the ID, which would say ErrDuplicate
			}
			_, err = g.Enqueue(ctx, "default", "t", i, second...)
			h.Check(errors.As(err, &nu) && nu.Holder == id, "enqueue %d again: %v", i, err)
		}
		var ids []string
		var err error
		h.Call(1, redistest.Scripts, func() {
			ids, err = g.EnqueueBatch(ctx, []queue.Job{
				{Queue: "b", Name: "t", Payload: 1, Options: []queue.EnqueueOption{queue.Unique(time.Hour)}},
				{Queue: "b", Name: "t", Payload: 2, Options: []queue.EnqueueOption{queue.Unique(time.Hour), queue.ID("b2")}},
			})
		})
		if h.Check(err == nil, "batch: %v", err) {
			h.Check(stats(t, g, "b").Ready["b"] == 2, "batch: %d ready", stats(t, g, "b").Ready["b"])
			h.Check(lockHolder(t, b, queue.UniqueKeyOf("b", "t", []byte("1"))) == ids[0], "batch: lock 0")
			h.Check(lockHolder(t, b, queue.UniqueKeyOf("b", "t", []byte("2"))) == ids[1], "batch: lock 1")
		}
	})
}

// Bad input is refused before anything is written.
func TestGroup_Enqueue_uniqueBadInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		for name, opts := range map[string][]queue.EnqueueOption{
			"zero TTL":             {queue.Unique(0)},
			"negative TTL":         {queue.Unique(-time.Second)},
			"TTL above MaxDelay":   {queue.Unique(queue.MaxDelay + time.Hour)},
			"empty key":            {queue.Unique(time.Hour), queue.UniqueKey("")},
			"UniqueKey alone":      {queue.UniqueKey("k")},
			"UniqueKey and Delay":  {queue.UniqueKey("k"), queue.Delay(time.Hour)},
			"empty key and an ID":  {queue.Unique(time.Hour), queue.UniqueKey(""), queue.ID("x")},
			"zero TTL and a delay": {queue.Unique(0), queue.Delay(time.Hour)},
		} {
			_, err := g.Enqueue(ctx, "default", "t", 1, opts...)
			assert.Error(t, err, name)
			assert.NotErrorIs(t, err, queue.ErrDuplicate, name)
			_, err = g.EnqueueBatch(ctx, []queue.Job{{Queue: "default", Name: "t"}, {Queue: "default", Name: "t", Options: opts}})
			if assert.Error(t, err, name) {
				assert.Contains(t, err.Error(), "job 1", name)
			}
		}
		assert.Empty(t, keysWithPrefix(t, b), "nothing written")
	})
}
