package counters_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// runResult waits for a Run to return and returns its error.
func runResult(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return on a permanent error")
		return nil
	}
}

// Cleaner.Run does not retry for ever an error that retrying cannot mend
// (a key of the wrong type): it finishes the pass, cleaning every other
// counter, and returns the error, naming the key.
func TestCleaner_Run_permanentError(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ps := counters.WithPrecisions(counters.Precision{Step: time.Second, Samples: 2})
		c, clk := newCounters(t, b, b.Client, ps)
		for _, name := range []string{"bad", "good"} {
			require.NoError(t, c.Update(ctx, name, 1))
		}
		require.NoError(t, b.Client.Set(ctx, key(b, "bad", "samples"), "not a hash", 0).Err())
		clk.now = t0.Add(time.Minute) // everything out of the retention
		cl, err := c.Cleaner(counters.WithInterval(time.Millisecond), counters.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- cl.Run(ctx) }()
		err = runResult(t, done)
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.ErrorIs(t, err, ria.ErrWrongType)
		assert.Equal(t, key(b, "bad", "samples"), kerr.Key)
		assert.Equal(t, "counters samples", kerr.Role)
		names, err := c.Names(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"bad"}, names, "the good counter was cleaned and forgotten")
	})
}

// Batcher.Run returns a flush's error that retrying cannot mend; the
// increments of that counter are dropped and counted, the others written.
func TestBatcher_Run_permanentError(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		require.NoError(t, b.Client.Set(ctx, key(b, "bad", "known"), "not a hash", 0).Err())
		bt, err := c.Batcher(counters.WithInterval(time.Millisecond), counters.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		require.NoError(t, bt.Add("bad", 3))
		require.NoError(t, bt.Add("good", 4))
		done := make(chan error, 1)
		go func() { done <- bt.Run(ctx) }()
		err = runResult(t, done)
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.Equal(t, key(b, "bad", "known"), kerr.Key)
		assert.Equal(t, "counters known", kerr.Role)
		assert.Equal(t, counters.BatcherStats{Counted: 4, Dropped: 3}, bt.Stats())
		assert.Equal(t, int64(4), dayCount(t, c, "good"))
		require.NoError(t, bt.Close(ctx))
	})
}
