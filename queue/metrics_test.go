package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

var expvarSeq atomic.Int64

// Every run is reported once with its result: 5 tasks acknowledged, one
// retried once then acknowledged, one dead after its retry; the expvar map
// holds the counts and the group's gauges.
func TestWorker_metrics(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		m, err := queue.NewExpvarMetrics(fmt.Sprint("ria_queue_test_", expvarSeq.Add(1)))
		require.NoError(t, err)
		m.Stats(g, 5*time.Second, "default")
		w := newWorker(t, g, queue.WithMetrics(m), queue.Backoff(time.Millisecond, time.Millisecond), queue.Logger(discard))
		var flaky atomic.Int32
		handle(t, w, "ok", func(context.Context, *queue.Task) error { return nil })
		handle(t, w, "flaky", func(context.Context, *queue.Task) error {
			if flaky.Add(1) == 1 {
				return errors.New("first try fails")
			}
			return nil
		})
		handle(t, w, "bad", func(context.Context, *queue.Task) error { return errors.New("always") })
		for range 5 {
			_, err := g.Enqueue(ctx, "default", "ok", nil)
			require.NoError(t, err)
		}
		_, err = g.Enqueue(ctx, "default", "flaky", nil)
		require.NoError(t, err)
		_, err = g.Enqueue(ctx, "default", "bad", nil, queue.MaxRetry(1))
		require.NoError(t, err)

		run := start(t, w)
		require.Eventually(t, func() bool {
			if b.Mini != nil {
				b.FastForward(5 * time.Millisecond) // miniredis's clock: retries fall due
			}
			s, err := g.Stats(ctx, "default")
			return err == nil && s.Dead == 1 && s.Ready["default"] == 0 && s.Delayed == 0 && s.InFlight == 0
		}, time.Minute, 5*time.Millisecond)
		require.NoError(t, run.stop(t))

		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(m.String()), &got))
		assert.EqualValues(t, 5, got["default.ok.ok"])
		assert.EqualValues(t, 1, got["default.flaky.retry"])
		assert.EqualValues(t, 1, got["default.flaky.ok"])
		assert.EqualValues(t, 1, got["default.bad.retry"])
		assert.EqualValues(t, 1, got["default.bad.dead"])
		stats, ok := got["stats"].(map[string]any)
		require.True(t, ok, "stats: %v", got["stats"])
		assert.EqualValues(t, 1, stats["Dead"])

		_, err = queue.NewExpvarMetrics("")
		assert.Error(t, err)
		expvar.NewInt(fmt.Sprint("ria_queue_taken_", expvarSeq.Add(1)))
		_, err = queue.NewExpvarMetrics(fmt.Sprint("ria_queue_taken_", expvarSeq.Load()))
		assert.Error(t, err, "a published name")
	})
}

// Calls of NewExpvarMetrics with one name at once: one publishes the map,
// the others get an error (expvar.Publish panicked for the loser of the
// race between its check and the publishing).
func TestNewExpvarMetrics_concurrent(t *testing.T) {
	for range 500 {
		name := fmt.Sprint("ria_queue_race_", expvarSeq.Add(1))
		start := make(chan struct{})
		errs := make(chan error, 4)
		for range cap(errs) {
			go func() {
				<-start
				_, err := queue.NewExpvarMetrics(name)
				errs <- err
			}()
		}
		close(start)
		ok := 0
		for range cap(errs) {
			if err := <-errs; err == nil {
				ok++
			} else {
				assert.ErrorContains(t, err, "published already")
			}
		}
		assert.Equal(t, 1, ok, name)
	}
}
