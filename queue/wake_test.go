package queue_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// hook is a redis.Hook made of functions; a nil one passes the call on.
type hook struct {
	process  func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error
	pipeline func(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error
}

func (h hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	if h.process == nil {
		return next
	}
	return func(ctx context.Context, cmd redis.Cmder) error { return h.process(ctx, cmd, next) }
}

func (h hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	if h.pipeline == nil {
		return next
	}
	return func(ctx context.Context, cmds []redis.Cmder) error { return h.pipeline(ctx, cmds, next) }
}

func isScript(cmd redis.Cmder) bool { return strings.HasPrefix(cmd.Name(), "eval") }

// afterFirstScript returns a channel closed when the first script call on c
// has returned a reply: for a worker's client, when its first take is done,
// so that what the test does next is unknown to it unless something tells
// it.
func afterFirstScript(c redis.UniversalClient) <-chan struct{} {
	done := make(chan struct{})
	var once atomic.Bool
	c.AddHook(hook{process: func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		err := next(ctx, cmd)
		if err == nil && isScript(cmd) && once.CompareAndSwap(false, true) {
			close(done)
		}
		return err
	}})
	return done
}

// within fails the test if nothing comes on ch within d, and returns how
// long it took.
func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-ch:
		return time.Since(start)
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
		return 0
	}
}

// An enqueued delayed task, a retry and a lease that an idle worker does
// not know of push a wake token to the group's schedule list only when
// they may be due before the time the idle workers wait for: before every
// delayed task. At most one token is pending.
func TestGroup_scheduleToken(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		tokens := func() int64 {
			n, err := b.Client.LLen(ctx, key(b, "schedule")).Result()
			require.NoError(t, err)
			return n
		}
		enqueue := func(d time.Duration) {
			_, err := g.Enqueue(ctx, "default", "t", nil, queue.Delay(d))
			require.NoError(t, err)
		}
		enqueue(0)
		assert.Zero(t, tokens(), "a ready task wakes its queue only")
		enqueue(time.Hour)
		assert.Equal(t, int64(1), tokens(), "the first delayed task")
		enqueue(30 * time.Minute)
		assert.Equal(t, int64(1), tokens(), "at most one token")
		require.NoError(t, b.Client.Del(ctx, key(b, "schedule")).Err())
		enqueue(2 * time.Hour)
		assert.Zero(t, tokens(), "later than a delayed task: whoever waits for that one learns it")
		enqueue(10 * time.Minute)
		assert.Equal(t, int64(1), tokens(), "earlier than every delayed task")

		// A take that reports the due times to its worker makes the token
		// stale: the worker waits for the first one.
		_, err := g.TakeForTest(ctx, []string{"default"}, 2, time.Minute)
		require.NoError(t, err)
		assert.Zero(t, tokens())
	})
}

// A take that empties its last queue does not wake the idle workers of that
// queue for nothing; one that leaves tasks there does.
func TestGroup_take_wakesOnlyForWork(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		tokens := func() int64 {
			n, err := b.Client.LLen(ctx, key(b, "signal:default")).Result()
			require.NoError(t, err)
			return n
		}
		for range 3 {
			_, err := g.Enqueue(ctx, "default", "t", nil)
			require.NoError(t, err)
		}
		assert.Equal(t, int64(1), tokens())
		tasks, err := g.TakeForTest(ctx, []string{"default"}, 2, time.Minute)
		require.NoError(t, err)
		require.Len(t, tasks, 2)
		assert.Equal(t, int64(1), tokens(), "one task left: wake the next idle worker")
		tasks, err = g.TakeForTest(ctx, []string{"default"}, 1, time.Minute)
		require.NoError(t, err)
		require.Len(t, tasks, 1)
		assert.Zero(t, tokens(), "the queue is empty: nobody to wake")
	})
}

// A task enqueued with a delay while the worker waits for work runs when
// it is due, not when the worker's wait would have ended (up to 30s).
func TestWorker_delayedWhileIdle(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := b.NewClient()
		took := afterFirstScript(c)
		w := newWorker(t, newGroup(t, b, c))
		ran := make(chan struct{}, 1)
		handle(t, w, "t", func(context.Context, *queue.Task) error { ran <- struct{}{}; return nil })
		start(t, w)
		receive(t, took) // the worker found nothing: it waits (30s at most)
		_, err := newGroup(t, b, b.Client).Enqueue(ctx, "default", "t", nil, queue.Delay(200*time.Millisecond))
		require.NoError(t, err)
		b.FastForward(250 * time.Millisecond)
		t.Logf("ran %v after it was due", within(t, ran, 5*time.Second, "the delayed task"))
	})
}

// Redis times a blocked command out at its next event loop tick, up to
// 1000/hz ms late (100 ms at the default hz 10): the worker ends its own
// wait when the task is due. Here the server never times the BLPOP out
// (NoTimeouts); the task still runs when due, not when the worker gives up
// on its wait (5 s after its timeout).
func TestWorker_delayedWhileIdle_serverTimeoutLate(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := b.NewClient()
		c.AddHook(redistest.NoTimeouts{})
		took := afterFirstScript(c)
		w := newWorker(t, newGroup(t, b, c))
		ran := make(chan struct{}, 1)
		handle(t, w, "t", func(context.Context, *queue.Task) error { ran <- struct{}{}; return nil })
		start(t, w)
		receive(t, took)
		_, err := newGroup(t, b, b.Client).Enqueue(ctx, "default", "t", nil, queue.Delay(200*time.Millisecond))
		require.NoError(t, err)
		b.FastForward(250 * time.Millisecond)
		t.Logf("ran %v after it was due", within(t, ran, 3*time.Second, "the delayed task"))
	})
}

// A retry scheduled by a worker that is busy (it took its next task in the
// same take) is promoted when due by an idle worker of the group, even one
// that serves other queues and waited since before the retry existed.
func TestWorker_retryWhileBusy(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := b.NewClient()
		took := afterFirstScript(c)
		idle := newWorker(t, newGroup(t, b, c), queue.Queues("other"))
		handle(t, idle, "t", func(context.Context, *queue.Task) error { return nil })
		start(t, idle)
		receive(t, took)

		g := newGroup(t, b, b.Client)
		busy := newWorker(t, g, queue.Concurrency(1), queue.Backoff(100*time.Millisecond, 100*time.Millisecond))
		running, release := make(chan struct{}, 1), make(chan struct{})
		var failed atomic.Bool
		handle(t, busy, "fail once", func(context.Context, *queue.Task) error {
			if failed.CompareAndSwap(false, true) {
				return errors.New("once")
			}
			return nil
		})
		handle(t, busy, "block", func(context.Context, *queue.Task) error {
			running <- struct{}{}
			<-release
			return nil
		})
		_, err := g.EnqueueBatch(ctx, []queue.Job{{Queue: "default", Name: "fail once"}, {Queue: "default", Name: "block"}})
		require.NoError(t, err)
		start(t, busy)
		receive(t, running) // the take that scheduled the retry took "block"
		b.FastForward(150 * time.Millisecond)
		require.Eventually(t, func() bool {
			s, err := g.Stats(ctx, "default")
			return err == nil && s.Delayed == 0 && s.Ready["default"] == 1
		}, 5*time.Second, time.Millisecond, "the retry was not promoted")
		close(release)
		waitSettled(t, b)
		assert.True(t, failed.Load())
	})
}

// A worker whose every slot is busy still promotes a delayed task when it
// is due, if it knows of it and no other worker does.
func TestWorker_promotesWhileFull(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		_, err := g.EnqueueBatch(ctx, []queue.Job{
			{Queue: "default", Name: "block"},
			{Queue: "default", Name: "t", Options: []queue.EnqueueOption{queue.Delay(200 * time.Millisecond)}},
		})
		require.NoError(t, err)
		w := newWorker(t, g, queue.Concurrency(1))
		running, release := make(chan struct{}, 1), make(chan struct{})
		handle(t, w, "block", func(context.Context, *queue.Task) error {
			running <- struct{}{}
			<-release
			return nil
		})
		handle(t, w, "t", func(context.Context, *queue.Task) error { return nil })
		start(t, w)
		receive(t, running)
		b.FastForward(250 * time.Millisecond)
		require.Eventually(t, func() bool {
			s, err := g.Stats(ctx, "default")
			return err == nil && s.Delayed == 0 && s.Ready["default"] == 1
		}, 5*time.Second, time.Millisecond, "the delayed task was not promoted")
		close(release)
		waitSettled(t, b)
	})
}

// The tasks of a crashed worker come back within about a lease after their
// lease expired, even if every other worker waited since before they were
// taken: an idle worker waits no longer than its lease.
func TestWorker_recoverWhileIdle(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := b.NewClient()
		took := afterFirstScript(c)
		w := newWorker(t, newGroup(t, b, c), queue.Lease(300*time.Millisecond))
		handle(t, w, "t", func(context.Context, *queue.Task) error { return nil })
		start(t, w)
		receive(t, took)

		// A worker of queue "crash", which the idle one does not serve,
		// takes a task and dies.
		g := newGroup(t, b, b.Client)
		_, err := g.Enqueue(ctx, "crash", "t", nil)
		require.NoError(t, err)
		tasks, err := g.TakeForTest(ctx, []string{"crash"}, 1, 100*time.Millisecond)
		require.NoError(t, err)
		require.Len(t, tasks, 1)
		b.FastForward(150 * time.Millisecond)
		require.Eventually(t, func() bool {
			s, err := g.Stats(ctx, "crash")
			return err == nil && s.InFlight == 0 && s.Ready["crash"] == 1
		}, 5*time.Second, time.Millisecond, "the expired lease was not recovered")
	})
}

// A worker that stops right after its wait took the wake token of a new
// task passes the token on: the other idle worker runs the task at once.
func TestWorker_stopPassesWakeOn(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var armed atomic.Bool // the first BLPOP that takes a token stops its worker
		ran := make(chan string, 2)
		stopped := make(chan string, 1)
		runs := map[string]*started{}
		var tooks []<-chan struct{}
		for _, name := range []string{"A", "B"} {
			c, _ := b.NewClient()
			tooks = append(tooks, afterFirstScript(c))
			w := newWorker(t, newGroup(t, b, c))
			handle(t, w, "t", func(context.Context, *queue.Task) error { ran <- name; return nil })
			rctx, cancel := context.WithCancel(context.Background())
			c.AddHook(hook{process: func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
				err := next(ctx, cmd)
				if cmd.Name() == "blpop" && err == nil && armed.CompareAndSwap(true, false) {
					cancel() // the worker stops before it takes
					stopped <- name
				}
				return err
			}})
			s := &started{cancel: cancel, done: make(chan error, 1)}
			go func() { s.done <- w.Run(rctx) }()
			t.Cleanup(func() { _ = s.stop(t) })
			runs[name] = s
		}
		for _, took := range tooks {
			receive(t, took) // both wait for work
		}
		armed.Store(true)
		_, err := newGroup(t, b, b.Client).Enqueue(ctx, "default", "t", nil)
		require.NoError(t, err)
		quitter := receive(t, stopped)
		require.NoError(t, runs[quitter].stop(t))
		var who string
		select {
		case who = <-ran:
		case <-time.After(5 * time.Second):
			t.Fatalf("worker %s stopped with the wake token: the task did not run within 5s", quitter)
		}
		assert.NotEqual(t, quitter, who, "run by the worker that stayed")
	})
}

// Run returns only once its blocked wait has ended, even if ending it
// takes more than one try: afterwards it takes no wake token meant for
// other workers.
func TestWorker_stopEndsWait(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := b.NewClient()
		took := afterFirstScript(c)
		var (
			blocked    atomic.Int64 // BLPOPs under way
			failedOnce atomic.Bool
		)
		c.AddHook(hook{
			process: func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
				if cmd.Name() != "blpop" {
					return next(ctx, cmd)
				}
				blocked.Add(1)
				defer blocked.Add(-1)
				return next(ctx, cmd)
			},
			pipeline: func(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error {
				// The first attempt to end the wait (a push to the
				// worker's wake list) is lost.
				for _, cmd := range cmds {
					if cmd.Name() == "rpush" && strings.Contains(cmd.Args()[1].(string), "}:wake:") &&
						failedOnce.CompareAndSwap(false, true) {
						return errors.New("test: connection lost")
					}
				}
				return next(ctx, cmds)
			},
		})
		w := newWorker(t, newGroup(t, b, c))
		handle(t, w, "t", func(context.Context, *queue.Task) error { return nil })
		run := start(t, w)
		receive(t, took)
		require.Eventually(t, func() bool { return blocked.Load() == 1 }, 5*time.Second, time.Millisecond)
		require.NoError(t, run.stop(t))
		assert.True(t, failedOnce.Load())
		assert.Zero(t, blocked.Load(), "a BLPOP outlived Run")

		_, err := newGroup(t, b, b.Client).Enqueue(ctx, "default", "t", nil)
		require.NoError(t, err)
		n, err := b.Client.LLen(ctx, key(b, "signal:default")).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "the wake token waits for a worker")
		assert.Empty(t, b.Keys(key(b, "wake:*")), "the stopped worker's wake list is gone")
	})
}
