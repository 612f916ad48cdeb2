package lock_test

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
	"github.com/ria-go/ria/lock"
)

// keyOf returns the key of part of lock name.
func keyOf(b *redistest.Backend, name, part string) string {
	return b.Prefix + "{" + name + "}:" + part
}

// Every script refuses a key of another type than its own with a
// *ria.KeyError naming the key and its role, having changed nothing.
func TestLock_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		owner := redistest.KeyRole{Key: keyOf(b, "job", "owner"), Type: "string", Role: "lock owner"}
		fence := redistest.KeyRole{Key: keyOf(b, "job", "fence"), Type: "string", Role: "lock fence"}
		queue := redistest.KeyRole{Key: keyOf(b, "job", "queue"), Type: "list", Role: "lock queue"}
		waiters := redistest.KeyRole{Key: keyOf(b, "job", "waiters"), Type: "hash", Role: "lock waiters"}
		// a fixed holder and waiter, so that their keys are known in advance
		holder := locker.NewLockForTest("job", time.Minute)
		w := locker.NewLockForTest("job", time.Minute)
		grant := func(l *lock.Lock) redistest.KeyRole {
			return redistest.KeyRole{Key: keyOf(b, "job", "grant:"+l.Token()), Type: "list", Role: "lock grant"}
		}
		record := redistest.KeyRole{Key: keyOf(b, "job", "released:"+holder.Token()), Type: "string", Role: "lock release record"}
		fenced := func() { require.NoError(t, b.Client.Set(ctx, fence.Key, "7", 0).Err()) }
		held := func() {
			fenced()
			require.NoError(t, b.Client.Set(ctx, owner.Key, holder.Token(), time.Minute).Err())
		}
		withWaiter := func() {
			held()
			ok, err := w.AttemptForTest(ctx, 10*time.Second)
			require.NoError(t, err)
			require.False(t, ok)
		}

		t.Run("TryAcquire", func(t *testing.T) {
			b.CheckWrongTypes(t, fenced, func() error {
				_, err := locker.TryAcquire(ctx, "job", time.Minute)
				return err
			}, owner, fence)
		})
		t.Run("Acquire", func(t *testing.T) {
			b.CheckWrongTypes(t, fenced, func() error {
				_, err := locker.Acquire(ctx, "job", time.Minute, lock.WithWait(time.Second))
				return err
			}, owner, fence)
		})
		for _, hot := range []bool{true, false} {
			t.Run("Acquire contended/hot="+strconv.FormatBool(hot), func(t *testing.T) {
				b.CheckWrongTypes(t, held, func() error {
					locker.SetHotForTest("job", hot)
					// the fixed waiter w, whose grant key is known
					_, err := locker.AcquireForTest(ctx, w, lock.WithWait(5*time.Second))
					return err
				}, owner, queue, waiters, grant(w))
			})
		}
		t.Run("Release", func(t *testing.T) {
			b.CheckWrongTypes(t, held, func() error { return holder.Release(ctx) }, owner, record)
		})
		t.Run("Release hand-over", func(t *testing.T) {
			b.CheckWrongTypes(t, withWaiter, func() error { return holder.Release(ctx) },
				owner, fence, queue, waiters, grant(w), record)
		})
		t.Run("Extend", func(t *testing.T) {
			b.CheckWrongTypes(t, held, func() error { return holder.Extend(ctx, time.Minute) }, owner)
		})
	})
}

// A lock whose owner key is a HASH gives a *ria.KeyError at once, also to
// an Acquire without WithWait (which used to wait for ever).
func TestLock_ownerHash(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		locker := newLocker(b)
		require.NoError(t, b.Client.HSet(ctx, keyOf(b, "job", "owner"), "f", "v").Err())
		for _, hot := range []bool{false, true} {
			locker.SetHotForTest("job", hot)
			start := time.Now()
			_, err := locker.Acquire(ctx, "job", time.Minute)
			var kerr *ria.KeyError
			require.ErrorAs(t, err, &kerr)
			assert.ErrorIs(t, err, ria.ErrWrongType)
			assert.NotErrorIs(t, err, lock.ErrNotObtained)
			assert.Equal(t, "lock owner", kerr.Role)
			assert.Equal(t, keyOf(b, "job", "owner"), kerr.Key)
			assert.Equal(t, "a hash", kerr.Got)
			assert.Less(t, time.Since(start), 5*time.Second, "at once, not at ctx's end")
			assert.EqualError(t, err, `lock: acquire "job": ria: lock owner "`+keyOf(b, "job", "owner")+`" holds a hash, want a string`)
		}
	})
}

// A corrupted fence counter is reported as such (ria.ErrCorrupt), and
// nothing changes.
func TestLock_corruptFence(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		fence := keyOf(b, "job", "fence")
		for _, v := range []string{"abc", "1.5", strconv.FormatInt(math.MaxInt64, 10)} {
			require.NoError(t, b.Client.Set(ctx, fence, v, 0).Err())
			before := b.Snapshot()
			_, err := locker.TryAcquire(ctx, "job", time.Minute)
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, v) {
				assert.ErrorIs(t, err, ria.ErrCorrupt)
				assert.Equal(t, "lock fence", kerr.Role)
				assert.Equal(t, fence, kerr.Key)
			}
			assert.Equal(t, before, b.Snapshot(), "nothing changed (%s)", v)

			// A release that would hand the lock over mints too.
			require.NoError(t, b.Client.Set(ctx, fence, "1", 0).Err())
			holder, err := locker.TryAcquire(ctx, "job", time.Minute)
			require.NoError(t, err)
			w := locker.NewLockForTest("job", time.Minute)
			ok, err := w.AttemptForTest(ctx, 10*time.Second)
			require.NoError(t, err)
			require.False(t, ok)
			require.NoError(t, b.Client.Set(ctx, fence, v, 0).Err())
			before = b.Snapshot()
			err = holder.Release(ctx)
			assert.True(t, errors.Is(err, ria.ErrCorrupt), "%v", err)
			assert.Equal(t, before, b.Snapshot(), "nothing changed (%s)", v)
			b.Flush()
		}
	})
}
