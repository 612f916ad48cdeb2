package semaphore_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/semaphore"
)

// Every script refuses a key of another type than its own with a
// *ria.KeyError naming the key and its role, having changed nothing.
func TestSemaphore_wrongTypes(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		role := func(part, typ, r string) redistest.KeyRole {
			return redistest.KeyRole{Key: key(b, "sem", part), Type: typ, Role: "semaphore " + r}
		}
		holders := role("holders", "zset", "holders")
		seq := role("seq", "string", "seq")
		queue := role("queue", "list", "queue")
		waiters := role("waiters", "hash", "waiters")
		// a fixed holder and waiter, so that their keys are known in advance
		holder := s.NewPermitForTest("holder")
		w := s.NewPermitForTest("waiter")
		grant := role("grant:"+w.ID(), "list", "grant")
		record := role("released:"+holder.ID(), "string", "release record")
		seeded := func() { require.NoError(t, b.Client.Set(ctx, seq.Key, "7", 0).Err()) }
		full := func() {
			seeded()
			ok, err := holder.AttemptForTest(ctx, 0)
			require.NoError(t, err)
			require.True(t, ok)
		}
		withWaiter := func() {
			full()
			ok, err := w.AttemptForTest(ctx, 10*time.Second)
			require.NoError(t, err)
			require.False(t, ok)
		}

		t.Run("TryAcquire", func(t *testing.T) {
			b.CheckWrongTypes(t, seeded, func() error {
				_, err := s.TryAcquire(ctx)
				return err
			}, holders, seq, queue)
		})
		t.Run("Acquire", func(t *testing.T) {
			b.CheckWrongTypes(t, seeded, func() error {
				s.SetHotForTest(false)
				_, err := s.Acquire(ctx, semaphore.WithWait(time.Second))
				return err
			}, holders, seq, queue, waiters)
		})
		for _, hot := range []bool{true, false} {
			t.Run("Acquire contended/hot="+strconv.FormatBool(hot), func(t *testing.T) {
				b.CheckWrongTypes(t, full, func() error {
					s.SetHotForTest(hot)
					_, err := s.AcquireForTest(ctx, w, semaphore.WithWait(5*time.Second))
					return err
				}, holders, queue, waiters, grant)
			})
		}
		t.Run("Release", func(t *testing.T) {
			b.CheckWrongTypes(t, full, func() error { return holder.Release(ctx) }, holders, record)
		})
		t.Run("Release hand-over", func(t *testing.T) {
			b.CheckWrongTypes(t, withWaiter, func() error { return holder.Release(ctx) },
				holders, seq, queue, waiters, grant, record)
		})
		t.Run("Refresh", func(t *testing.T) {
			b.CheckWrongTypes(t, full, func() error { return holder.Refresh(ctx) }, holders)
		})
		t.Run("Holders", func(t *testing.T) {
			b.CheckWrongTypes(t, full, func() error {
				_, err := s.Holders(ctx)
				return err
			}, holders)
		})
	})
}

// A holders key of another type gives a *ria.KeyError at once, also to an
// Acquire without WithWait, instead of the raw script error.
func TestSemaphore_holdersWrongType(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		require.NoError(t, b.Client.Set(ctx, key(b, "sem", "holders"), "x", 0).Err())
		for _, hot := range []bool{false, true} {
			s.SetHotForTest(hot)
			start := time.Now()
			_, err := s.Acquire(ctx)
			var kerr *ria.KeyError
			require.ErrorAs(t, err, &kerr)
			assert.ErrorIs(t, err, ria.ErrWrongType)
			assert.NotErrorIs(t, err, semaphore.ErrNoPermit)
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.EqualError(t, err, `semaphore: acquire "sem": ria: semaphore holders "`+key(b, "sem", "holders")+`" holds a string, want a zset`)
		}
	})
}

// A corrupted seq counter is reported as such (ria.ErrCorrupt), and
// nothing changes.
func TestSemaphore_corruptSeq(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		seq := key(b, "sem", "seq")
		for _, v := range []string{"abc", "1.5", strconv.FormatInt(math.MaxInt64, 10)} {
			require.NoError(t, b.Client.Set(ctx, seq, v, 0).Err())
			before := b.Snapshot()
			_, err := s.TryAcquire(ctx)
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, v) {
				assert.ErrorIs(t, err, ria.ErrCorrupt)
				assert.Equal(t, "semaphore seq", kerr.Role)
				assert.Equal(t, seq, kerr.Key)
			}
			assert.Equal(t, before, b.Snapshot(), "nothing changed (%s)", v)

			// A release that would hand the permit over mints too.
			require.NoError(t, b.Client.Set(ctx, seq, "1", 0).Err())
			holder, err := s.TryAcquire(ctx)
			require.NoError(t, err)
			w := s.NewPermitForTest("waiter")
			ok, err := w.AttemptForTest(ctx, 10*time.Second)
			require.NoError(t, err)
			require.False(t, ok)
			require.NoError(t, b.Client.Set(ctx, seq, v, 0).Err())
			before = b.Snapshot()
			err = holder.Release(ctx)
			assert.True(t, errors.Is(err, ria.ErrCorrupt), "%v", err)
			assert.Equal(t, before, b.Snapshot(), "nothing changed (%s)", v)
			b.Flush()

			// A re-run of an attempt that took a permit (its reply lost,
			// no hand-over on its grant list) mints again.
			p := s.NewPermitForTest("again")
			ok, err = p.AttemptForTest(ctx, 0)
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, b.Client.Set(ctx, seq, v, 0).Err())
			require.NoError(t, b.Client.RPush(ctx, key(b, "sem", "grant:again"), "").Err())
			before = b.Snapshot()
			_, err = p.AttemptForTest(ctx, 0)
			assert.True(t, errors.Is(err, ria.ErrCorrupt), "%v", err)
			assert.Equal(t, before, b.Snapshot(), "nothing changed (%s)", v)
			b.Flush()
		}
	})
}
