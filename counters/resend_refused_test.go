package counters_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
)

// A flush whose script ran but whose reply was lost (connection cut), and
// whose go-redis re-sends then failed otherwise (refused with LOADING, as
// a restarting server answers, or BUSY, as one running a long script does,
// or unable to connect while it is down),
// may have run: the error wraps ria.ErrOutcomeUnknown, and the update is
// sent again only with its own reply record, never merged with later
// increments under a new one (the Batcher used to take the last error of
// go-redis's retries for the call's only attempt, and count the first
// increment twice).
func TestBatcher_resendRefused(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		if b.Kind == redistest.Cluster {
			// The cluster client re-routes a pipeline whose node fails
			// (MOVED leads it back over a connection of its own pipeline
			// pool): a re-send need not go through the refusing Dialer.
			// The classification is the same code on every client.
			t.Skip("a re-send cannot be made to dial on a Cluster")
		}
		for _, mode := range []string{"LOADING", "BUSY", "dial"} {
			b.Flush()
			ctx := t.Context()
			rdb, cnt, f := b.FaultyClient(func(o *redis.UniversalOptions) {
				// One connection (a re-send must dial), one re-send, no backoff:
				// each refused dial costs go-redis's own dial retries.
				o.PoolSize, o.MaxRetries, o.MaxRedirects = 1, 1, 1
				o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, time.Millisecond
			})
			reply := map[string]string{ // what re-sends get
				"LOADING": redistest.ErrLoading.Error(),
				"BUSY":    redistest.ErrBusy.Error(),
				"dial":    "", // they cannot connect
			}[mode]
			c, _ := newCounters(t, b, rdb)
			check, _ := newCounters(t, b, b.Client)
			bt, err := c.Batcher()
			require.NoError(t, err)

			require.NoError(t, bt.Add("hits", 1))
			require.NoError(t, bt.Flush(ctx)) // caches the script, opens the connection
			require.Equal(t, int64(1), dayCount(t, check, "hits"))

			require.NoError(t, bt.Add("hits", 1))
			stopRefusing := f.RefuseDials(reply)
			f.LoseReply(1, redistest.Scripts) // runs, reply lost, connection cut; re-sends refused
			err = bt.Flush(ctx)
			f.Disarm()
			require.Equal(t, int64(1), f.Lost(), "%s: the fault happened", mode)
			assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, "%s: the update ran, its reply was lost", mode)
			require.Equal(t, int64(2), dayCount(t, check, "hits"), "%s: the lost flush ran once", mode)

			// Still refused: later increments wait beside the update that
			// may have run; each flush sends that one alone.
			var sent []int64 // commands per flush (per attempt on a Cluster's nodes)
			for range 2 {
				require.NoError(t, bt.Add("hits", 1))
				_, cmds := cnt.Delta(func() { assert.Error(t, bt.Flush(ctx)) })
				sent = append(sent, cmds)
			}
			assert.Equal(t, sent[0], sent[1], "%s: one update per counter in flight, not one more per flush", mode)
			stopRefusing()

			require.NoError(t, bt.Flush(ctx), mode)
			assert.Equal(t, int64(4), dayCount(t, check, "hits"), "%s: 4 increments added, each counted once", mode)
			s := bt.Stats()
			assert.Equal(t, int64(4), s.Counted, mode)
			assert.Zero(t, s.Pending+s.Unknown+s.Dropped, "%s: %+v", mode, s)
		}
	})
}
