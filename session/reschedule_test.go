package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// A row unscheduled and scheduled again while a load that began before
// both is in flight: that load is not written back, and the row is loaded
// again at once (each schedule gives the row a due score of its own, from
// the server's clock in µs; with 0 for every schedule, the RowCacher took
// the row for unchanged, stored the stale load and moved the row a whole
// delay away).
func TestRowCacher_rescheduledWhileLoading(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		clock := newFakeClock()
		loads := 0
		rc, err := s.RowCacher(func(ctx context.Context, id string) (any, error) {
			loads++
			if loads == 1 { // meanwhile, elsewhere: the row changed in the database
				if err := s.ScheduleRowCache(ctx, id, -1); err != nil {
					return nil, err
				}
				if b.Mini != nil {
					// The harness stops miniredis's clock; a server's moves
					// on between two calls, as it does here.
					b.FastForward(time.Microsecond)
				}
				if err := s.ScheduleRowCache(ctx, id, time.Hour); err != nil {
					return nil, err
				}
				return "stale: loaded before the row was unscheduled", nil
			}
			return "fresh", nil
		}, session.WithClock(clock.Now))
		require.NoError(t, err)
		require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Hour))
		_, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		data, ok, err := s.Row(ctx, "r")
		require.NoError(t, err)
		assert.False(t, ok && string(data) == `"stale: loaded before the row was unscheduled"`,
			"a load that began before the unschedule was written back: %s", data)
		// Scheduled again "at once": due now, not in an hour.
		_, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, loads, "the rescheduled row is loaded at once")
	})
}
