package queue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// A paused queue keeps taking enqueues and promotions, but no take hands
// its tasks out, and its wake token is dropped rather than passed on; the
// other queues of a take are served in priority order. The state is in
// Redis: Paused and Stats list it for every client.
func TestGroup_Pause(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		c, _ := b.NewClient()
		other := newGroup(t, b, c)
		require.NoError(t, g.Pause(ctx, "a"))
		require.NoError(t, g.Pause(ctx, "a"), "pausing a paused queue does nothing")
		require.NoError(t, g.Pause(ctx, "z"))
		paused, err := other.Paused(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"a", "z"}, paused)
		assert.Equal(t, []string{"a", "z"}, stats(t, other).Paused)

		a1, err := g.Enqueue(ctx, "a", "t", 1)
		require.NoError(t, err, "a paused queue accepts enqueues")
		a2, err := g.Enqueue(ctx, "a", "t", 2, queue.At(time.UnixMilli(1)))
		require.NoError(t, err)
		b1, err := g.Enqueue(ctx, "b", "t", 3)
		require.NoError(t, err)
		tasks, _, err := g.TakeRuns(ctx, "w", []string{"a", "b"}, 5, time.Minute, queue.Nonce())
		require.NoError(t, err)
		require.Len(t, tasks, 1, "only the unpaused queue is served")
		assert.Equal(t, b1, tasks[0].ID)
		assert.Equal(t, []string{a1, a2}, readyIDs(t, b, "a"), "promoted into the paused queue, not taken")
		n, err := b.Client.LLen(ctx, key(b, "signal:a")).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "the paused queue's wake token is dropped")

		require.NoError(t, g.Resume(ctx, "a"))
		n, err = b.Client.LLen(ctx, key(b, "signal:a")).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "Resume wakes the queue's idle workers")
		require.NoError(t, g.Resume(ctx, "a"), "resuming a queue that is not paused does nothing")
		tasks, _, err = g.TakeRuns(ctx, "w", []string{"a", "b"}, 5, time.Minute, queue.Nonce())
		require.NoError(t, err)
		require.Len(t, tasks, 2)
		assert.Equal(t, []string{a1, a2}, []string{tasks[0].ID, tasks[1].ID})
		paused, err = g.Paused(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"z"}, paused)

		rt, _ := b.Count.Delta(func() { require.NoError(t, g.Pause(ctx, "q")) })
		assert.Equal(t, int64(1), rt, "round trips of Pause")
		rt, _ = b.Count.Delta(func() { require.NoError(t, g.Resume(ctx, "q")) })
		assert.Equal(t, int64(1), rt, "round trips of Resume")
		rt, _ = b.Count.Delta(func() { _, err := g.Paused(ctx); require.NoError(t, err) })
		assert.Equal(t, int64(1), rt, "round trips of Paused")

		for _, call := range []func() error{
			func() error { return g.Pause(ctx, "") },
			func() error { return g.Resume(ctx, "") },
		} {
			assert.ErrorContains(t, call(), "empty name")
		}
	})
}

// A worker serving a paused queue and another one keeps running the other
// one's tasks, enqueued after the paused one's; Resume wakes it at once
// (it is idle, blocked for up to its 30 s wait) and the paused task runs.
func TestWorker_pauseResume(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		require.NoError(t, g.Pause(ctx, "high"))
		held, err := g.Enqueue(ctx, "high", "t", "held")
		require.NoError(t, err)
		ran := make(chan string, 10)
		w := newWorker(t, g, queue.Queues("high", "low"), queue.Lease(time.Minute), queue.Logger(discard))
		handle(t, w, "t", func(_ context.Context, task *queue.Task) error { ran <- task.ID; return nil })
		start(t, w)
		next := func() string {
			t.Helper()
			select {
			case id := <-ran:
				return id
			case <-time.After(20 * time.Second):
				t.Fatal("no task ran")
				return ""
			}
		}
		for i := range 3 {
			id, err := g.Enqueue(ctx, "low", "t", i)
			require.NoError(t, err)
			assert.Equal(t, id, next(), "the unpaused queue's task runs first")
		}
		assert.Equal(t, int64(1), stats(t, g, "high").Ready["high"], "the paused task waits")
		// Let the worker settle and wait (BLPOP) for work.
		waitFor(t, func() bool { s := stats(t, g); return s.InFlight == 0 })
		resumed := time.Now()
		require.NoError(t, g.Resume(ctx, "high"))
		assert.Equal(t, held, next())
		assert.Less(t, time.Since(resumed), 15*time.Second, "woken by Resume, not by the end of its 30 s wait")
	})
}

// Several workers on several clients serve a paused queue full of tasks
// and another one: they run the other queue's tasks, none of the paused
// one's, until Resume; then they run them all, once each.
func TestWorker_pauseConcurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		require.NoError(t, g.Pause(ctx, "p"))
		const paused, others = 30, 10
		var mu sync.Mutex
		runs := map[string]int{}
		done := make(chan struct{}, paused+others)
		for i := range 3 {
			c, _ := b.NewClient()
			w := newWorker(t, newGroup(t, b, c), queue.Queues("p", "o"), queue.Concurrency(4), queue.Prefetch(i*2), queue.Logger(discard))
			handle(t, w, "t", func(_ context.Context, task *queue.Task) error {
				mu.Lock()
				runs[task.Queue+":"+task.ID]++
				mu.Unlock()
				done <- struct{}{}
				return nil
			})
			start(t, w)
		}
		for i := range paused {
			_, err := g.Enqueue(ctx, "p", "t", i)
			require.NoError(t, err)
		}
		for i := range others {
			_, err := g.Enqueue(ctx, "o", "t", i)
			require.NoError(t, err)
		}
		wait := func(n int) {
			t.Helper()
			for range n {
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("tasks did not run")
				}
			}
		}
		wait(others)
		mu.Lock()
		for k := range runs {
			assert.Regexp(t, "^o:", k, "only the unpaused queue ran")
		}
		mu.Unlock()
		assert.Equal(t, int64(paused), stats(t, g, "p").Ready["p"])
		require.NoError(t, g.Resume(ctx, "p"))
		wait(paused)
		waitSettled(t, b)
		mu.Lock()
		defer mu.Unlock()
		assert.Len(t, runs, paused+others)
		for k, n := range runs {
			assert.Equal(t, 1, n, fmt.Sprintf("%s ran once", k))
		}
	})
}

// Pause and Resume whose reply is lost are re-sent by go-redis, and
// answer what they did: the queue is paused (resumed), with one wake token.
func TestGroup_Pause_lostReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient()
		g := newGroup(t, b, c)
		h := redistest.NewHarness(t, f, "queue Pause/Resume")
		_, err := g.Enqueue(ctx, "a", "t", 1)
		require.NoError(t, err)
		require.NoError(t, b.Client.Del(ctx, key(b, "signal:a")).Err()) // as a worker that took the token
		for range 3 {
			h.Call(1, redistest.Scripts, func() { err = g.Pause(ctx, "a") })
			paused, perr := g.Paused(ctx)
			h.Check(err == nil && perr == nil && len(paused) == 1 && paused[0] == "a", "pause: %v, paused %v", err, paused)
			h.Call(1, redistest.Scripts, func() { err = g.Resume(ctx, "a") })
			paused, perr = g.Paused(ctx)
			tokens, lerr := b.Client.LLen(ctx, key(b, "signal:a")).Result()
			h.Check(err == nil && perr == nil && lerr == nil && len(paused) == 0 && tokens == 1,
				"resume: %v, paused %v, %d wake tokens", err, paused, tokens)
			require.NoError(t, b.Client.Del(ctx, key(b, "signal:a")).Err())
		}
	})
}

// Pause's first run pauses the queue and loses its reply; before go-redis
// re-sends it, another client sees the queue paused and resumes it. The
// re-send must change nothing more (a re-run paused the queue again after
// the acknowledged Resume): the call succeeds and the queue stays resumed.
func TestGroup_Pause_resendAfterLaterResume(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient()
		g := newGroup(t, b, c)
		other := newGroup(t, b, b.Client)
		require.NoError(t, g.Resume(ctx, "a")) // the script cached
		var (
			sawPaused []string
			otherErr  error
		)
		// The first run pauses; its reply is lost. The re-send: first the
		// other client.
		f.LoseReplyThen(redistest.Scripts, func() {
			sawPaused, otherErr = other.Paused(ctx)
			if otherErr == nil {
				otherErr = other.Resume(ctx, "a")
			}
		})
		err := g.Pause(ctx, "a")
		f.Disarm()
		require.EqualValues(t, 1, f.Lost(), "the first run's reply was lost")
		require.NoError(t, otherErr)
		require.Equal(t, []string{"a"}, sawPaused, "the first run paused the queue")
		require.NoError(t, err)
		paused, err := other.Paused(ctx)
		require.NoError(t, err)
		assert.Empty(t, paused, "the re-send paused the queue again after the acknowledged Resume")
	})
}
