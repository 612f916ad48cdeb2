package queue_test

import (
	"context"
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

// replayer is a redis.Hook that, once armed, sends the next script call
// twice, as go-redis does when the reply of the first send is lost (it
// re-sends a command that failed with io.EOF): the caller sees the second
// reply.
type replayer struct{ armed atomic.Bool }

func (r *replayer) hook() hook {
	return hook{process: func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if isScript(cmd) && r.armed.CompareAndSwap(true, false) {
			if err := next(ctx, cmd); err != nil {
				return err
			}
		}
		return next(ctx, cmd)
	}}
}

// An Enqueue that reaches the server twice enqueues its tasks once: with
// generated IDs, with IDs of the caller's (no ErrDuplicate for its own
// re-send), delayed or not; and each task runs once.
func TestGroup_Enqueue_replayed(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := b.NewClient()
		r := &replayer{}
		c.AddHook(r.hook())
		g := newGroup(t, b, c)
		_, err := g.Enqueue(ctx, "warm-up", "t", nil) // load the script
		require.NoError(t, err)

		r.armed.Store(true)
		id, err := g.Enqueue(ctx, "default", "t", nil)
		require.NoError(t, err)
		require.False(t, r.armed.Load(), "replayed")
		assert.Equal(t, []string{id}, readyIDs(t, b, "default"))

		r.armed.Store(true)
		custom, err := g.Enqueue(ctx, "default", "t", nil, queue.ID("order-1"))
		assert.NoError(t, err, "its own re-send is no duplicate")
		assert.Equal(t, []string{id, custom}, readyIDs(t, b, "default"))
		_, err = g.Enqueue(ctx, "default", "t", nil, queue.ID("order-1"))
		assert.ErrorIs(t, err, queue.ErrDuplicate, "another call")

		r.armed.Store(true)
		ids, err := g.EnqueueBatch(ctx, []queue.Job{
			{Queue: "default", Name: "t"},
			{Queue: "default", Name: "t", Options: []queue.EnqueueOption{queue.ID("order-2")}},
			{Queue: "default", Name: "t", Options: []queue.EnqueueOption{queue.Delay(100 * time.Millisecond)}},
		})
		require.NoError(t, err)
		assert.Equal(t, []string{id, custom, ids[0], ids[1]}, readyIDs(t, b, "default"))
		assert.Equal(t, int64(1), stats(t, g).Delayed)

		w := newWorker(t, g, queue.Queues("default", "warm-up"), queue.Concurrency(8))
		var (
			mu   sync.Mutex
			runs = map[string]int{}
		)
		handle(t, w, "t", func(_ context.Context, task *queue.Task) error {
			mu.Lock()
			runs[task.ID]++
			mu.Unlock()
			return nil
		})
		start(t, w)
		b.FastForward(150 * time.Millisecond)
		waitSettled(t, b)
		mu.Lock()
		defer mu.Unlock()
		for _, id := range append([]string{id, custom}, ids...) {
			assert.Equal(t, 1, runs[id], id)
		}
	})
}

// A task ID found twice in a ready list (by whatever accident) is handed
// out once by a take that pops both, and run once.
func TestWorker_sameIDTwiceInOneTake(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		id, err := g.Enqueue(ctx, "a", "t", nil)
		require.NoError(t, err)
		require.NoError(t, b.Client.RPush(ctx, key(b, "ready:a"), id).Err())
		tasks, err := g.TakeForTest(ctx, []string{"a"}, 4, time.Minute)
		require.NoError(t, err)
		assert.Len(t, tasks, 1, "handed out once")
		assert.Equal(t, int64(1), stats(t, g).InFlight)

		id, err = g.Enqueue(ctx, "default", "t", nil)
		require.NoError(t, err)
		require.NoError(t, b.Client.RPush(ctx, key(b, "ready:default"), id).Err())

		w := newWorker(t, g, queue.Concurrency(4))
		var runs atomic.Int64
		running, release := make(chan struct{}, 2), make(chan struct{})
		handle(t, w, "t", func(context.Context, *queue.Task) error {
			runs.Add(1)
			running <- struct{}{}
			<-release
			return nil
		})
		start(t, w)
		receive(t, running)
		require.Eventually(t, func() bool { return len(readyIDs(t, b, "default")) == 0 }, 5*time.Second, time.Millisecond)
		close(release)
		require.Eventually(t, func() bool { return stats(t, g).InFlight == 1 }, 10*time.Second, time.Millisecond)
		assert.Equal(t, int64(1), runs.Load())
		assert.Empty(t, readyIDs(t, b, "default"))
	})
}

// Lease tokens are new for every take, whatever Redis has kept: they are
// the worker's own nonces (a random prefix of its process and a counter),
// not a counter in Redis that a restart without persistence or a failover
// could set back. A stale run never shares its token with a newer run of
// the same task.
func TestGroup_leaseToken_new(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		id, err := g.Enqueue(ctx, "default", "t", nil)
		require.NoError(t, err)
		token := func() string {
			t.Helper()
			tasks, err := g.TakeForTest(ctx, []string{"default"}, 1, 100*time.Millisecond)
			require.NoError(t, err)
			require.Len(t, tasks, 1)
			runs, err := b.Client.ZRange(ctx, key(b, "inflight"), 0, -1).Result()
			require.NoError(t, err)
			require.Len(t, runs, 1)
			tok, ok := strings.CutPrefix(runs[0], id+":")
			require.True(t, ok, runs[0])
			require.NotEmpty(t, tok)
			return tok
		}
		seen := map[string]bool{}
		for range 3 {
			tok := token()
			assert.False(t, seen[tok], "token %s handed out twice", tok)
			seen[tok] = true
			b.FastForward(150 * time.Millisecond) // the lease expires
			n, err := g.Recover(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)
		}
	})
}
