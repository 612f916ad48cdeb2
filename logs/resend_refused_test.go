package logs_test

import (
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/logs"
)

// A batch whose script ran but whose reply was lost (connection cut), and
// whose go-redis re-sends were then refused by the server (LOADING, as a
// restarting server answers), may have been written: the error wraps
// ria.ErrOutcomeUnknown, and once the batch's re-send window has passed
// its records count as Unknown instead of being written again under a new
// reply record (the Handler used to take the last error of go-redis's
// retries for the batch's only attempt, and write it twice).
func TestHandler_resendRefused(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		if b.Kind == redistest.Cluster {
			// The cluster client re-routes a pipeline whose node fails
			// (MOVED leads it back over a connection of its own pipeline
			// pool): a re-send need not go through the refusing Dialer.
			// The classification is the same code on every client.
			t.Skip("a re-send cannot be made to dial on a Cluster")
		}
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.PoolSize, o.PipelinePoolSize = 1, 1 // a re-send must dial
			o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, time.Millisecond
		})
		l := newLogs(t, b, rdb)
		check := newLogs(t, b, b.Client)
		h, err := l.Handler("app", logs.WithInterval(time.Hour))
		require.NoError(t, err)
		slog.New(h).Warn("warm")
		require.NoError(t, h.Flush(ctx)) // caches the script, opens the connection
		var now atomic.Int64
		now.Store(time.Now().Unix())
		logs.SetHandlerClock(h, func() time.Time { return time.Unix(now.Load(), 0) })

		slog.New(h).Info("order placed")
		stopRefusing := f.RefuseDials(redistest.ErrLoading.Error())
		f.LoseReply(1, redistest.Scripts) // runs, reply lost, connection cut; re-sends refused
		err = h.Flush(ctx)
		f.Disarm()
		stopRefusing()
		require.Equal(t, int64(1), f.Lost(), "the fault happened")
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, "the batch ran, its reply was lost")
		rec, err := check.Recent(ctx, "app", logs.Info)
		require.NoError(t, err)
		require.Len(t, rec, 1, "the lost write ran once")

		now.Add(int64(5 * time.Minute / time.Second)) // past the batch's re-send window
		assert.ErrorIs(t, h.Flush(ctx), ria.ErrOutcomeUnknown, "given up")
		rec, err = check.Recent(ctx, "app", logs.Info)
		require.NoError(t, err)
		assert.Len(t, rec, 1, "one record logged, written once")
		s := h.Stats()
		assert.Equal(t, int64(1), s.Unknown, "%+v", s)
		assert.Equal(t, int64(1), s.Written, "the warm-up record: %+v", s)
	})
}

// A LogCommon whose script ran but whose reply was lost, and whose go-redis
// re-send was refused (LOADING, or BUSY, which go-redis does not re-send
// on but which can answer its re-send), wrote its entry: it reports an
// unknown outcome (rule 6: never a refusal for something it did), not the
// refusal of the re-send as if the call had never run.
func TestLogCommon_resendRefused(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		if b.Kind == redistest.Cluster {
			t.Skip("a re-send cannot be made to dial on a Cluster (as TestHandler_resendRefused)")
		}
		for _, refusal := range []error{redistest.ErrLoading, redistest.ErrBusy} {
			b.Flush()
			ctx := t.Context()
			rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
				o.PoolSize, o.MaxRetries = 1, 1 // a re-send must dial
				o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, time.Millisecond
			})
			l := newLogs(t, b, rdb)
			check := newLogs(t, b, b.Client)
			require.NoError(t, l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Warning, Message: "warm"}))

			stopRefusing := f.RefuseDials(refusal.Error())
			f.LoseReply(1, redistest.Scripts)
			err := l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Info, Message: "order placed"})
			f.Disarm()
			stopRefusing()
			require.Equal(t, int64(1), f.Lost(), "%v: the fault happened", refusal)
			rec, rerr := check.Recent(ctx, "app", logs.Info)
			require.NoError(t, rerr)
			require.Len(t, rec, 1, "%v: the lost write ran", refusal)
			assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, "%v: the write ran, its reply was lost: %v", refusal, err)
		}
	})
}
