package counters_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// A flush that could not connect keeps its update, which takes the next
// increments of its counter only while the sum is a valid update; an
// update refused by the server is dropped and counted, and the others of
// the flush are written.
func TestBatcher_Flush_dialErrorKeepsUpdatesApart(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var down atomic.Bool
		rdb, _ := b.NewClient(func(o *redis.UniversalOptions) {
			o.MaxRetries = -1
			o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				if down.Load() {
					return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("refused by the test")}
				}
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			}
		})
		c, _ := newCounters(t, b, rdb)
		bt, err := c.Batcher()
		require.NoError(t, err)
		require.NoError(t, bt.Add("big", counters.MaxDelta))
		down.Store(true) // the client has no connection yet: the flush cannot reach Redis
		err = bt.Flush(ctx)
		require.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		assert.Equal(t, counters.BatcherStats{Pending: counters.MaxDelta}, bt.Stats())

		down.Store(false)
		require.NoError(t, bt.Add("big", 1)) // MaxDelta+1 would not be a valid update
		require.NoError(t, bt.Add("other", 5))
		err = bt.Flush(ctx)
		assert.ErrorIs(t, err, counters.ErrOverflow, "the second update of big")
		assert.NotErrorIs(t, err, counters.ErrInvalid)
		assert.Equal(t, counters.BatcherStats{Counted: counters.MaxDelta + 5, Dropped: 1}, bt.Stats())
		assert.Equal(t, int64(counters.MaxDelta), dayCount(t, c, "big"))
		assert.Equal(t, int64(5), dayCount(t, c, "other"))
	})
}

// Stats does not wait for a flush on its way, and counts what it carries
// as pending, once.
func TestBatcher_Stats_duringFlush(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _ := b.NewClient()
		gate := redistest.NewGate(func(cmds []redis.Cmder) bool {
			return len(cmds) > 0 && (cmds[0].Name() == "evalsha" || cmds[0].Name() == "eval")
		})
		rdb.AddHook(gate)
		c, _ := newCounters(t, b, rdb)
		bt, err := c.Batcher()
		require.NoError(t, err)
		require.NoError(t, bt.Add("a", 3))
		require.NoError(t, bt.Add("b", 4))
		h := gate.Arm()
		done := make(chan error, 1)
		go func() { done <- bt.Flush(ctx) }()
		h.Entered() // the flush has taken the increments and is on its way

		got := make(chan counters.BatcherStats, 1)
		go func() { got <- bt.Stats() }()
		select {
		case st := <-got:
			assert.Equal(t, counters.BatcherStats{Pending: 7}, st)
		case <-time.After(30 * time.Second): // a bound on failure, not a synchronisation
			t.Error("Stats waited for the flush")
			h.Release()
			<-got
		}
		require.NoError(t, bt.Add("a", 1))
		assert.Equal(t, counters.BatcherStats{Pending: 8}, bt.Stats())
		h.Release()
		require.NoError(t, <-done)
		assert.Equal(t, counters.BatcherStats{Counted: 7, Pending: 1}, bt.Stats())
	})
}

// Stats polled while flushes run: every snapshot accounts for every
// increment exactly once.
func TestBatcher_Stats_exactWhileFlushing(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		bt, err := c.Batcher()
		require.NoError(t, err)
		var total, polls int64
		bad, worst := 0, int64(0)
		rounds := 200
		if b.Kind == redistest.Cluster {
			rounds = 100
		}
		for range rounds {
			for i := range 200 {
				require.NoError(t, bt.Add(fmt.Sprintf("c%d", i%20), 1))
			}
			total += 200
			done := make(chan error, 1)
			go func() { done <- bt.Flush(ctx) }()
			for flushing := true; flushing; {
				select {
				case err := <-done:
					require.NoError(t, err)
					flushing = false
				default:
				}
				st := bt.Stats()
				polls++
				if off := st.Counted + st.Dropped + st.Unknown + st.Pending - total; off != 0 {
					bad++
					if abs64(off) > abs64(worst) {
						worst = off
					}
				}
			}
		}
		assert.Zero(t, bad, "snapshots off (worst by %d) out of %d", worst, polls)
		assert.Equal(t, counters.BatcherStats{Counted: total}, bt.Stats())
	})
}

func abs64(n int64) int64 { return max(n, -n) }
