package queue_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// Task tells each state: ready, delayed, running (leased), dead, and not
// found once done; IDs that prefix one another and hold SCAN pattern
// characters are told apart.
func TestGroup_Task(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		_, err := g.Enqueue(ctx, "run", "t", "running", queue.ID("a"))
		require.NoError(t, err)
		ts, err := g.TakeForTest(ctx, []string{"run"}, 1, time.Hour)
		require.NoError(t, err)
		require.Len(t, ts, 1)
		_, err = g.Enqueue(ctx, "default", "t", "ready", queue.ID("a:1*"))
		require.NoError(t, err)
		_, err = g.Enqueue(ctx, "default", "later", map[string]int{"n": 1}, queue.ID("d"), queue.Delay(time.Hour), queue.MaxRetry(4))
		require.NoError(t, err)
		_, err = g.Enqueue(ctx, "doomed", "t", "x", queue.ID("x"))
		require.NoError(t, err)
		dt, _, err := g.TakeRuns(ctx, "w", []string{"doomed"}, 1, time.Hour, "tok")
		require.NoError(t, err)
		require.Len(t, dt, 1)
		require.NoError(t, g.SettleForTest(ctx, "w", nil, queue.Outcome{ID: "x", Token: "tok", Kind: 'd', Attempts: "1", Err: "boom"}))

		_, err = g.Task(ctx, "a") // the script's first call on the server loads it
		require.NoError(t, err)
		var info queue.TaskInfo
		rt, _ := b.Count.Delta(func() { info, err = g.Task(ctx, "a") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt)
		assert.Equal(t, queue.StateRunning, info.State)
		assert.Equal(t, "run", info.Queue)
		assert.False(t, info.At.IsZero(), "the lease deadline")

		info, err = g.Task(ctx, "a:1*")
		require.NoError(t, err)
		assert.Equal(t, queue.StateReady, info.State)
		assert.Equal(t, `"ready"`, string(info.Payload))
		assert.True(t, info.At.IsZero())

		info, err = g.Task(ctx, "d")
		require.NoError(t, err)
		assert.Equal(t, queue.TaskInfo{ID: "d", Queue: "default", Name: "later", Payload: []byte(`{"n":1}`), MaxRetry: 4,
			State: queue.StateDelayed, At: info.At}, info)
		assert.Greater(t, time.Until(info.At), 50*time.Minute)

		info, err = g.Task(ctx, "x")
		require.NoError(t, err)
		assert.Equal(t, queue.StateDead, info.State)
		assert.Equal(t, "boom", info.Error)
		assert.Equal(t, 1, info.Attempts)

		_, err = g.Task(ctx, "nope")
		assert.ErrorIs(t, err, queue.ErrNotFound)
		_, err = g.Task(ctx, "")
		assert.Error(t, err)

		b.CheckWrongTypes(t, func() {
			_, err := g.Enqueue(ctx, "default", "t", "ready", queue.ID("a"))
			require.NoError(t, err)
		}, func() error { _, err := g.Task(ctx, "a"); return err },
			redistest.KeyRole{Key: b.Prefix + "{" + g.Name() + "}:tasks", Type: "hash", Role: "queue tasks"},
			redistest.KeyRole{Key: b.Prefix + "{" + g.Name() + "}:delayed", Type: "zset", Role: "queue delayed set"},
			redistest.KeyRole{Key: b.Prefix + "{" + g.Name() + "}:inflight", Type: "zset", Role: "queue in-flight set"},
			redistest.KeyRole{Key: b.Prefix + "{" + g.Name() + "}:dead", Type: "zset", Role: "queue dead set"},
		)
	})
}

// A running task whose ID is not valid UTF-8 is found in the in-flight
// set: Task says running and Delete refuses it. Real servers only:
// miniredis turns SCAN patterns into Go regexps and panics on invalid
// UTF-8.
func TestGroup_Task_invalidUTF8(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		if !b.Real() {
			t.Skip("miniredis cannot match invalid UTF-8")
		}
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		_, err := g.Enqueue(ctx, "run", "t", "x", queue.ID("job\xff"))
		require.NoError(t, err)
		ts, err := g.TakeForTest(ctx, []string{"run"}, 1, time.Hour)
		require.NoError(t, err)
		require.Len(t, ts, 1)
		info, err := g.Task(ctx, "job\xff")
		require.NoError(t, err)
		assert.Equal(t, queue.StateRunning, info.State)
		assert.ErrorIs(t, g.Delete(ctx, "job\xff"), queue.ErrInFlight)
		info, err = g.Task(ctx, "job\xff")
		require.NoError(t, err, "Delete left the task alone")
		assert.Equal(t, queue.StateRunning, info.State)
	})
}
