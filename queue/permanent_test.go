package queue_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// records is a slog.Handler that keeps every record.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, r)
	h.mu.Unlock()
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

// has reports whether a record at level with a message starting with
// prefix was logged.
func (h *records) has(level slog.Level, prefix string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if r.Level == level && strings.HasPrefix(r.Message, prefix) {
			return true
		}
	}
	return false
}

// runErr waits for Run to return and returns its error.
func runErr(t *testing.T, s *started) error {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return on a permanent error")
		return nil
	}
}

// A worker that meets an error retrying cannot heal (a key of the wrong
// type, a corrupt value) does not retry for ever: Run shuts down, logs it
// and returns it, whether the take, the heartbeat or the settle met it.
func TestWorker_permanentErrors(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		t.Run("take", func(t *testing.T) {
			g := newGroupNamed(t, b, b.Client, "take")
			require.NoError(t, b.Client.Set(ctx, keyIn(b, "take", "inflight"), "not a zset", 0).Err())
			logs := &records{}
			w := newWorker(t, g, queue.Logger(slog.New(logs)))
			handle(t, w, "t", func(context.Context, *queue.Task) error { return nil })
			err := runErr(t, start(t, w))
			var kerr *ria.KeyError
			require.ErrorAs(t, err, &kerr)
			assert.ErrorIs(t, err, ria.ErrWrongType)
			assert.Equal(t, "queue in-flight set", kerr.Role)
			assert.Equal(t, keyIn(b, "take", "inflight"), kerr.Key)
			assert.True(t, logs.has(slog.LevelError, "queue: worker stopping"), "logged")
		})
		t.Run("heartbeat", func(t *testing.T) {
			g := newGroupNamed(t, b, b.Client, "heartbeat")
			w := newWorker(t, g, queue.Concurrency(1), queue.Lease(300*time.Millisecond), queue.Grace(0), queue.Logger(discard))
			running := make(chan struct{}, 1)
			handle(t, w, "t", func(ctx context.Context, _ *queue.Task) error {
				running <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			})
			_, err := g.Enqueue(ctx, "default", "t", nil)
			require.NoError(t, err)
			s := start(t, w)
			receive(t, running)
			// Every slot is busy: only the heartbeat reaches Redis now.
			inflight := keyIn(b, "heartbeat", "inflight")
			require.NoError(t, b.Client.Del(ctx, inflight).Err())
			require.NoError(t, b.Client.HSet(ctx, inflight, "not", "a zset").Err())
			err = runErr(t, s)
			var kerr *ria.KeyError
			require.ErrorAs(t, err, &kerr)
			assert.Equal(t, "queue in-flight set", kerr.Role)
			assert.Contains(t, err.Error(), "heartbeat")
		})
		t.Run("settle", func(t *testing.T) {
			g := newGroupNamed(t, b, b.Client, "settle")
			c, _ := b.NewClient()
			waiting := blpops(c)
			w := newWorker(t, newGroupNamed(t, b, c, "settle"), queue.Concurrency(2), queue.Logger(discard))
			running, release := make(chan struct{}, 1), make(chan struct{})
			handle(t, w, "t", func(context.Context, *queue.Task) error {
				running <- struct{}{}
				<-release
				return nil
			})
			_, err := g.Enqueue(ctx, "default", "t", nil)
			require.NoError(t, err)
			s := start(t, w)
			receive(t, running)
			waitFor(t, func() bool { return waiting.Load() == 1 }) // the ack goes in a settle call
			require.NoError(t, b.Client.Set(ctx, keyIn(b, "settle", "tasks"), "not a hash", 0).Err())
			close(release)
			err = runErr(t, s)
			var kerr *ria.KeyError
			require.ErrorAs(t, err, &kerr)
			assert.Equal(t, "queue tasks", kerr.Role)
		})
	})
}

// A worker whose take meets a delayed task, or an expired lease, whose
// fields do not parse carries on: the take sends the task to the dead
// letters (it stopped every worker of the group).
func TestWorker_corruptDelayedOrExpired(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), "p", "5:default").Err())
		zadd(t, b, "delayed", 1, "p")
		put(t, b, "x", "default", 5)
		require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), "x:a", "many").Err())
		zadd(t, b, "inflight", 1, "x:tok")
		w := newWorker(t, g, queue.Concurrency(1), queue.Logger(discard))
		ran := make(chan string, 2)
		handle(t, w, "t", func(_ context.Context, task *queue.Task) error { ran <- task.ID; return nil })
		s := start(t, w)
		good, err := g.Enqueue(ctx, "default", "t", nil)
		require.NoError(t, err)
		assert.Equal(t, good, receive(t, ran))
		waitFor(t, func() bool { return stats(t, g).Dead == 2 })
		require.NoError(t, s.stop(t))
		select {
		case id := <-ran:
			t.Errorf("task %s ran", id)
		default:
		}
	})
}

// A task whose packed fields someone else overwrote cannot run: the
// worker sends it to the dead letters unrun, says why, and carries on.
func TestWorker_corruptTask(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), "bad", "5:default").Err())
		require.NoError(t, b.Client.RPush(ctx, key(b, "ready:default"), "bad").Err())
		good, err := g.Enqueue(ctx, "default", "t", nil)
		require.NoError(t, err)
		logs := &records{}
		w := newWorker(t, g, queue.Concurrency(1), queue.Logger(slog.New(logs)))
		ran := make(chan string, 2)
		handle(t, w, "t", func(_ context.Context, task *queue.Task) error { ran <- task.ID; return nil })
		s := start(t, w)
		assert.Equal(t, good, receive(t, ran))
		waitFor(t, func() bool { return stats(t, g).Dead == 1 })
		require.NoError(t, s.stop(t))
		dead, err := g.Dead(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, dead, 1)
		assert.Equal(t, "bad", dead[0].ID)
		assert.Contains(t, dead[0].Error, `queue: corrupt task "bad"`)
		assert.Equal(t, "5:default", b.Client.HGet(ctx, key(b, "tasks"), "bad").Val(), "kept as it was, for a look")
		assert.True(t, logs.has(slog.LevelError, "queue: task fields do not parse"))
		select {
		case id := <-ran:
			t.Errorf("task %s ran", id)
		default:
		}
	})
}

// Without a Logger option, a worker logs to slog.Default (as Go libraries
// do), so that failures and outages show somewhere.
func TestWorker_defaultLogger(t *testing.T) {
	logs := &records{}
	old := slog.Default()
	slog.SetDefault(slog.New(logs))
	defer slog.SetDefault(old)
	b := redistest.New(t, redistest.Mini)
	g := newGroup(t, b, b.Client)
	w := newWorker(t, g, queue.Concurrency(1))
	failed := make(chan struct{})
	handle(t, w, "t", func(context.Context, *queue.Task) error {
		defer close(failed)
		return errors.New("boom")
	})
	_, err := g.Enqueue(t.Context(), "default", "t", nil, queue.MaxRetry(0))
	require.NoError(t, err)
	s := start(t, w)
	receive(t, failed)
	require.NoError(t, s.stop(t))
	assert.True(t, logs.has(slog.LevelWarn, "queue: task failed"))
}
