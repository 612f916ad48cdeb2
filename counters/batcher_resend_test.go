package counters_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// A flush whose every reply was lost is sent again, with its reply record,
// only while a re-send and go-redis's retries of it all reach the server
// before the record expires: for 1 min (the record's lifetime minus the
// client's retry window) after it was prepared; after that its increments
// are given up as Unknown.
func TestBatcher_Flush_resendWindow(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		c, _ := newCounters(t, b, rdb)
		check, _ := newCounters(t, b, b.Client)
		var now atomic.Int64
		now.Store(t0.Unix())
		for _, tc := range []struct {
			name  string
			after time.Duration
			want  counters.BatcherStats
		}{
			{"early", time.Minute - 2*time.Second, counters.BatcherStats{Counted: 1}},
			{"late", time.Minute, counters.BatcherStats{Unknown: 1}},
		} {
			bt, err := c.Batcher()
			require.NoError(t, err)
			counters.SetBatcherClock(bt, func() time.Time { return time.Unix(now.Load(), 0) })
			require.NoError(t, bt.Add(tc.name, 1))
			require.NoError(t, bt.Flush(ctx)) // caches the script on the counter's node
			start := time.Unix(now.Load(), 0)
			require.NoError(t, bt.Add(tc.name, 1))
			f.LoseReply(1000, redistest.Scripts) // every attempt runs, its reply is lost
			err = bt.Flush(ctx)
			f.Disarm()
			require.ErrorIs(t, err, ria.ErrOutcomeUnknown, tc.name)
			require.Equal(t, int64(2), dayCount(t, check, tc.name), "%s: ran once", tc.name)

			now.Store(start.Add(tc.after).Unix())
			err = bt.Flush(ctx)
			if tc.want.Unknown > 0 {
				assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, tc.name)
			} else {
				assert.NoError(t, err, tc.name)
			}
			tc.want.Counted++ // the first flush
			assert.Equal(t, tc.want, bt.Stats(), tc.name)
			assert.Equal(t, int64(2), dayCount(t, check, tc.name), "%s: counted once", tc.name)
		}
	})
}
