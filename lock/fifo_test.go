package lock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/lock"
)

type acquired struct {
	who int
	l   *lock.Lock
	err error
}

// Waiters get the lock in the order they started waiting, each handed over
// by the previous holder's release.
func TestLock_Acquire_fifo(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		holder, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)

		const n = 4
		got := make(chan acquired, n)
		for i := range n {
			go func() {
				l, err := locker.Acquire(ctx, "job", time.Minute, lock.WithWait(20*time.Second))
				got <- acquired{i, l, err}
			}()
			waitForWaiters(t, b, "job", int64(i+1)) // queue them in order
		}
		require.NoError(t, holder.Release(ctx))
		last := holder.Fence()
		for want := range n {
			r := <-got
			require.NoError(t, r.err)
			assert.Equal(t, want, r.who, "served in arrival order")
			assert.Greater(t, r.l.Fence(), last)
			last = r.l.Fence()
			select {
			case early := <-got:
				t.Fatalf("waiter %d got the lock while %d held it", early.who, r.who)
			default:
			}
			require.NoError(t, r.l.Release(ctx))
		}
		assertClean(t, b, "job")
	})
}

// A newcomer's TryAcquire cannot cut in while the lock is handed from one
// waiter to the next.
func TestLock_TryAcquire_cannotCutIn(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		holder, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		got := make(chan acquired, 1)
		go func() {
			l, err := locker.Acquire(ctx, "job", time.Minute, lock.WithWait(20*time.Second))
			got <- acquired{0, l, err}
		}()
		waitForWaiters(t, b, "job", 1)
		require.NoError(t, holder.Release(ctx))
		_, err = locker.TryAcquire(ctx, "job", time.Minute)
		assert.ErrorIs(t, err, lock.ErrNotObtained, "handed over, not freed")
		r := <-got
		require.NoError(t, r.err)
	})
}

// A waiter that gives up leaves the queue, so the next release goes to the
// waiter behind it without delay.
func TestLock_Acquire_leaveQueue(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		holder, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)

		quitter, cancel := context.WithCancel(ctx)
		gaveUp := make(chan error, 1)
		go func() {
			_, err := locker.Acquire(quitter, "job", time.Minute)
			gaveUp <- err
		}()
		waitForWaiters(t, b, "job", 1)
		got := make(chan acquired, 1)
		go func() {
			l, err := locker.Acquire(ctx, "job", time.Minute, lock.WithWait(20*time.Second))
			got <- acquired{1, l, err}
		}()
		waitForWaiters(t, b, "job", 2)
		cancel()
		assert.ErrorIs(t, <-gaveUp, context.Canceled)
		waitForWaiters(t, b, "job", 1)

		start := time.Now()
		require.NoError(t, holder.Release(ctx))
		r := <-got
		require.NoError(t, r.err)
		assert.Less(t, time.Since(start), 5*time.Second)
	})
}

// A release skips the places of waiters that died (their place expired) and
// frees the lock when no live waiter is left.
func TestLock_Release_skipsDeadWaiters(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		holder, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		dead := locker.NewLockForTest("job", time.Minute)
		ok, err := dead.AttemptForTest(ctx, 100*time.Millisecond) // queues, then "dies"
		require.NoError(t, err)
		require.False(t, ok)
		waitForWaiters(t, b, "job", 1)
		b.FastForward(3 * time.Second) // its place (wait + 2 s slack) expires

		require.NoError(t, holder.Release(ctx))
		l, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err, "the lock was freed, not handed to the dead waiter")
		require.NoError(t, l.Release(ctx))
	})
}

// A release that hands the lock to a waiter between two of its blocking
// waits is picked up by the waiter's next attempt.
func TestLock_Acquire_grantedBetweenWaits(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		holder, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		w := locker.NewLockForTest("job", time.Minute)
		ok, err := w.AttemptForTest(ctx, 10*time.Second)
		require.NoError(t, err)
		require.False(t, ok)

		require.NoError(t, holder.Release(ctx)) // hands over to w, which is not blocked
		ok, err = w.AttemptForTest(ctx, 10*time.Second)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Greater(t, w.Fence(), holder.Fence())
		assert.Empty(t, b.Keys(b.Prefix+"{job}:grant:*"), "grant consumed")
		require.NoError(t, w.Release(ctx))
	})
}

// assertClean checks that nothing of lock name is left but its fence
// counter and release records, which expire after the client's retry
// window.
func assertClean(t *testing.T, b *redistest.Backend, name string) {
	t.Helper()
	for _, k := range b.Keys("") {
		if k == b.Prefix+"{"+name+"}:fence" {
			continue
		}
		if assert.True(t, strings.HasPrefix(k, b.Prefix+"{"+name+"}:released:"), "left behind: %s", k) {
			ttl, err := b.Client.PTTL(context.Background(), k).Result()
			require.NoError(t, err)
			assert.Greater(t, ttl, time.Duration(0), "a release record expires")
			assert.LessOrEqual(t, ttl, script.ReplayWindow(b.Client), "a release record lives for the retry window")
		}
	}
}
