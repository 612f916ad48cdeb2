package logs_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/logs"
)

// Handler.Run does not retry for ever a write that retrying cannot mend
// (a key of the wrong type): the batch's records are dropped and counted,
// and Run returns the error, naming the key.
func TestHandler_Run_permanentError(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		require.NoError(t, b.Client.Set(ctx, key(b, "app", "recent:info"), "not a list", 0).Err())
		h, err := l.Handler("app", logs.WithInterval(time.Millisecond), logs.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		log := slog.New(h)
		log.Info("one")
		log.Info("two")
		done := make(chan error, 1)
		go func() { done <- h.Run(ctx) }()
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return on a permanent error")
		}
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.ErrorIs(t, err, ria.ErrWrongType)
		assert.Equal(t, key(b, "app", "recent:info"), kerr.Key)
		assert.Equal(t, "logs recent", kerr.Role)
		assert.Equal(t, logs.HandlerStats{Dropped: 2}, h.Stats())
		require.NoError(t, h.Close(ctx))
	})
}
