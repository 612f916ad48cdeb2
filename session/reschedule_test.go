package session_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// A row unscheduled and scheduled again while a load that began before
// both is in flight: that load is not written back, and the row is loaded
// again at once (each schedule gives the row a new generation; when a due
// score of 0 for every schedule was all a store compared, the RowCacher
// took the row for unchanged, stored the stale load and moved the row a
// whole delay away).
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

// A row scheduled again ("reload it now: the database changed") while a
// RowCacher B loads it must not get B's stale load written back (doc.go:
// "a load in flight cannot write it back; nor can it when the row is
// scheduled again meanwhile"). Here a second pass A, still running with the
// clock it read at its start, caches the rescheduled row and moves it to
// ceil(A's now + delay): exactly the due score B picked. B's store then
// finds "its" score again (ABA): when stores compared due scores, it wrote
// the stale row and scheduled it a whole delay away. Stores compare the
// row's generation now, which A's store replaced. Two RowCachers on one
// clock (hosts whose clocks agree, as doc.go asks); the events are ordered
// by channels.
func TestRowCacher_rescheduledWhileLoading_dueScoreReused(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		clock := newFakeClock()

		var db atomic.Value // the database row
		db.Store("v1")
		aInZ, resumeA := make(chan struct{}), make(chan struct{})
		bInR, resumeB := make(chan struct{}), make(chan struct{})
		var aZ, bR atomic.Int32

		rcA, err := s.RowCacher(func(ctx context.Context, id string) (any, error) {
			if id == "z" && aZ.Add(1) == 1 {
				close(aInZ)
				<-resumeA
			}
			return db.Load(), nil
		}, session.WithClock(clock.Now))
		require.NoError(t, err)
		rcB, err := s.RowCacher(func(ctx context.Context, id string) (any, error) {
			v := db.Load() // read before the change
			if id == "r" && bR.Add(1) == 1 {
				close(bInR)
				<-resumeB
			}
			return v, nil
		}, session.WithClock(clock.Now))
		require.NoError(t, err)

		require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Second))
		if b.Mini != nil {
			b.FastForward(time.Microsecond) // the harness freezes miniredis's TIME
		}
		require.NoError(t, s.ScheduleRowCache(ctx, "z", time.Second))

		// Pass A at clock C: stores r (due C+1s), then blocks loading z.
		doneA := make(chan error, 1)
		go func() { _, err := rcA.CacheDue(ctx); doneA <- err }()
		<-aInZ
		clock.Add(time.Second)
		// Pass B at C+1s: caches z, then picks r (due C+1s) and reads the
		// database: v1. It blocks before storing.
		doneB := make(chan error, 1)
		go func() { _, err := rcB.CacheDue(ctx); doneB <- err }()
		<-bInR
		// The database changes, and the app asks for the row at once.
		db.Store("v2")
		if b.Mini != nil {
			b.FastForward(time.Microsecond)
		}
		require.NoError(t, s.ScheduleRowCache(ctx, "r", time.Second))
		// Pass A goes on (its now is still C): it picks r, loads v2 and
		// stores it, due at C+1s again.
		close(resumeA)
		require.NoError(t, <-doneA)
		data, ok, err := s.Row(ctx, "r")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, `"v2"`, string(data), "pass A cached the fresh row")
		// B's load, which began before the row was scheduled again,
		// completes.
		close(resumeB)
		require.NoError(t, <-doneB)

		data, ok, err = s.Row(ctx, "r")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, `"v2"`, string(data),
			"a load that began before the row was scheduled again was written back over the fresh row")
	})
}
