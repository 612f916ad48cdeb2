package lock_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/lock"
)

// Liveness under slow clients (issue 7): the interleavings that could leave
// the lock with nobody who will use or release it, driven step by step
// through the Locker's test hook instead of sleeps.

// A release hands the lock to a waiter that is just giving up (its ctx
// ended), and the waiter's Leave cannot reach Redis (its client keeps
// failing, as under load or a network fault): the lock must not stay with
// the gone waiter until its TTL. The give-back retried in the background
// hands it to the next waiter once Redis is reachable again.
func TestLock_liveness_handOverToLeavingWaiter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const ttl = time.Minute // what the next waiter would wait without the give-back
		holderLk := newLocker(b)
		holder, err := holderLk.TryAcquire(ctx, "job", ttl)
		require.NoError(t, err)
		var down atomic.Bool // the quitter's client cannot connect
		quitter, f := faultyLocker(t, b, func(o *redis.UniversalOptions) {
			dial := o.Dialer
			o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				if down.Load() {
					return nil, errors.New("test: network down")
				}
				return dial(ctx, network, addr)
			}
		})
		var leaves atomic.Int64
		quitter.SetHookForTest(func(e string) {
			if e != "leave" || leaves.Add(1) != 1 {
				return
			}
			// The waiter is giving up: the holder's release hands it the
			// lock now, and its client loses the network.
			if err := holder.Release(context.Background()); err != nil {
				t.Errorf("release: %v", err)
			}
			down.Store(true)
			f.Cut()
		})
		qctx, cancel := context.WithCancel(ctx)
		gaveUp := make(chan error, 1)
		go func() {
			_, err := quitter.Acquire(qctx, "job", ttl)
			gaveUp <- err
		}()
		waitForWaiters(t, b, "job", 1)
		next := make(chan acquired, 1)
		go func() {
			l, err := holderLk.Acquire(ctx, "job", ttl, lock.WithWait(30*time.Second))
			next <- acquired{1, l, err}
		}()
		waitForWaiters(t, b, "job", 2)
		cancel()

		err = <-gaveUp
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, "it could not confirm leaving")
		assert.NotErrorIs(t, err, lock.ErrNotObtained)
		assert.Equal(t, 1, strings.Count(err.Error(), context.Canceled.Error()), "said once: %v", err)
		assert.Equal(t, quitterToken(t, b), owner(t, b, "job"), "the lock is with the waiter that gave up")
		down.Store(false) // the network is back: the give-back goes through
		start := time.Now()
		select {
		case r := <-next:
			require.NoError(t, r.err)
			assert.Less(t, time.Since(start), 10*time.Second, "handed on by the give-back, not by the TTL")
			assert.Equal(t, r.l.Token(), owner(t, b, "job"))
			require.NoError(t, r.l.Release(ctx))
		case <-time.After(20 * time.Second):
			t.Fatal("the next waiter did not get the lock: it stayed with the waiter that gave up")
		}
		quitter.WaitGiveBacksForTest()
	})
}

// quitterToken returns the token of the lock's owner that is not a waiter
// in the queue (the waiter that gave up, whose place a release consumed).
func quitterToken(t *testing.T, b *redistest.Backend) string {
	t.Helper()
	o := owner(t, b, "job")
	for _, w := range b.Client.LRange(context.Background(), keyOf(b, "job", "queue"), 0, -1).Val() {
		if w == o {
			return ""
		}
	}
	return o
}

// A waiter is late: its place expired between its attempt and its blocking
// wait (a client stalled longer than the place's slack, which the test
// plays by expiring the place on the server), and the holder releases just
// then. The release skips the expired place, frees the lock, and wakes the
// late waiter, which takes it at once instead of blocking until the
// holder's TTL would have ended.
func TestLock_liveness_lateWaiter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const ttl = time.Minute
		holderLk := newLocker(b)
		holder, err := holderLk.TryAcquire(ctx, "job", ttl)
		require.NoError(t, err)
		late := newLocker(b) // a new Locker: a plain attempt, then a plain wait
		w := late.NewLockForTest("job", ttl)
		var once atomic.Bool
		late.SetHookForTest(func(e string) {
			if e != "queued" || !once.CompareAndSwap(false, true) {
				return
			}
			// Between the attempt and the wait: the place expires, the
			// holder releases.
			require.NoError(t, b.Client.HSet(context.Background(), keyOf(b, "job", "waiters"), w.Token(), "1 60000").Err())
			if err := holder.Release(context.Background()); err != nil {
				t.Errorf("release: %v", err)
			}
		})
		start := time.Now()
		l, err := late.AcquireForTest(ctx, w, lock.WithWait(30*time.Second))
		require.NoError(t, err)
		assert.Less(t, time.Since(start), 10*time.Second, "woken by the release, not at the holder's TTL")
		assert.Equal(t, w.Token(), owner(t, b, "job"))
		require.NoError(t, l.Release(ctx))
	})
}

// KeepAlive stops extending when the ctx passed to it ends: the lock then
// lapses at its TTL.
func TestLock_KeepAlive_ctx(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		locker := newLocker(b)
		const ttl = 300 * time.Millisecond
		l, err := locker.TryAcquire(t.Context(), "job", ttl)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		held := l.KeepAlive(ctx)
		done := l.KeepAliveDoneForTest()
		require.NotNil(t, done)
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the extension loop still runs after its ctx ended")
		}
		assert.ErrorIs(t, held.Err(), context.Canceled)
		assert.NotErrorIs(t, context.Cause(held), lock.ErrNotHeld)
		b.FastForward(ttl + 100*time.Millisecond)
		_, err = locker.TryAcquire(t.Context(), "job", time.Minute)
		assert.NoError(t, err, "not extended after ctx ended: the lock lapsed")
		assert.ErrorIs(t, l.Release(t.Context()), lock.ErrNotHeld)

		// Two contexts on one loop: it runs until both have ended.
		l, err = locker.TryAcquire(t.Context(), "two", ttl)
		require.NoError(t, err)
		ctx1, cancel1 := context.WithCancel(t.Context())
		ctx2, cancel2 := context.WithCancel(t.Context())
		defer cancel2()
		l.KeepAlive(ctx1)
		l.KeepAlive(ctx2)
		done = l.KeepAliveDoneForTest()
		cancel1()
		for range 3 { // it keeps extending for ctx2
			b.FastForward(ttl / 2)
			require.Eventually(t, func() bool {
				return b.Client.PTTL(t.Context(), keyOf(b, "two", "owner")).Val() > ttl*3/4
			}, 5*time.Second, time.Millisecond)
		}
		select {
		case <-done:
			t.Fatal("the loop stopped while a context was alive")
		default:
		}
		cancel2()
		<-done
		require.NoError(t, l.Release(t.Context()))
	})
}

// Do returns ErrNotHeld when the lock is lost through a Redis outage longer
// than its TTL (the issue: server down 6s, TTL 3s; here scaled down), and
// does not go on retrying the release of a lock it knows lost.
func TestLocker_Do_outage(t *testing.T) {
	srv, _, locker := restartable(t)
	ctx := t.Context()
	const ttl = 300 * time.Millisecond
	var returned time.Time
	start := time.Now()
	err := locker.Do(ctx, "job", ttl, func(held context.Context, _ *lock.Lock) error {
		srv.Kill()
		<-held.Done()
		assert.ErrorIs(t, context.Cause(held), lock.ErrNotHeld, "fn's ctx says why")
		returned = time.Now()
		return held.Err()
	})
	doneAt := time.Now()
	t.Cleanup(func() { srv.Restart(t) })
	assert.ErrorIs(t, err, lock.ErrNotHeld)
	assert.ErrorIs(t, err, context.Canceled, "fn's error is kept")
	assert.Equal(t, 1, strings.Count(err.Error(), "context canceled"), "said once: %v", err)
	assert.Less(t, returned.Sub(start), ttl+3*time.Second, "fn's ctx cancelled about when the TTL ran out")
	assert.Less(t, doneAt.Sub(returned), 500*time.Millisecond, "no release retried for a lock known lost")
	t.Logf("Do: fn's ctx cancelled after %v, Do returned %v later: %v",
		returned.Sub(start).Round(time.Millisecond), doneAt.Sub(returned).Round(time.Millisecond), err)
	assert.False(t, errors.Is(err, lock.ErrNotObtained))
}

// A waiter takes the lock when the holder's TTL ends (it finds it free):
// it must leave the queue then. A place left there would let a later
// release, after the new holder's own TTL ran out and someone else took
// and released the lock, hand the lock back to it: a holder whose lock
// expired would find it held again (Extend succeeding), or a crashed one
// would strand the lock for its TTL.
func TestLock_liveness_takenFreeLeavesQueue(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		_, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		w := queueWaiter(t, locker, "job", 20*time.Second)
		require.True(t, b.Client.HExists(ctx, keyOf(b, "job", "waiters"), w.Token()).Val(), "queued")

		expireNow(t, b, ownerKey(b, "job")) // the holder's TTL ends
		ok, err := w.AttemptForTest(ctx, 20*time.Second)
		require.NoError(t, err)
		require.True(t, ok, "free: taken")
		assert.False(t, b.Client.HExists(ctx, keyOf(b, "job", "waiters"), w.Token()).Val(), "its place is gone")
		assert.NotContains(t, b.Client.LRange(ctx, keyOf(b, "job", "queue"), 0, -1).Val(), w.Token())

		expireNow(t, b, ownerKey(b, "job")) // its own TTL ends in turn
		other, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		require.NoError(t, other.Release(ctx))
		assert.Empty(t, owner(t, b, "job"), "released to nobody")
		assert.ErrorIs(t, w.Extend(ctx, time.Minute), lock.ErrNotHeld, "its hold ended with its TTL")

		// Through Acquire: a waiter blocked behind a holder that crashed.
		_, err = locker.TryAcquire(ctx, "job", 300*time.Millisecond)
		require.NoError(t, err)
		done := make(chan acquired, 1)
		go func() {
			l, err := locker.Acquire(ctx, "job", time.Minute, lock.WithWait(20*time.Second))
			done <- acquired{0, l, err}
		}()
		waitForWaiters(t, b, "job", 1)
		b.FastForward(400 * time.Millisecond)
		r := <-done
		require.NoError(t, r.err)
		assert.Zero(t, b.Client.HLen(ctx, keyOf(b, "job", "waiters")).Val(), "no place left")
		require.NoError(t, r.l.Release(ctx))
	})
}

// A waiter whose client leaves no room for pipelined rounds (a read
// timeout under 260 ms) waits by plain BLMOVEs, which leave what they pop
// on the grant list. A release that finds its place expired wakes it with
// an empty value: the waiter must take the wake off the list, or every
// later plain wait finds it at once and the waiter spins (thousands of
// attempts a second) until the list expires.
func TestLock_liveness_plainWake(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const ttl = time.Minute
		holderLk := newLocker(b)
		holder, err := holderLk.TryAcquire(ctx, "job", ttl)
		require.NoError(t, err)
		rdb, _ := b.NewClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 200 * time.Millisecond })
		late := must(lock.New(rdb, lock.WithPrefix(b.Prefix)))
		w := late.NewLockForTest("job", ttl)
		grant := keyOf(b, "job", "grant:"+w.Token())
		var attempts, queued atomic.Int64
		var next *lock.Lock
		late.SetHookForTest(func(e string) {
			switch e {
			case "attempt":
				attempts.Add(1)
			case "queued":
				switch queued.Add(1) {
				case 1:
					// Its place expires; another waiter queues behind it;
					// the holder releases: the lock goes to the other
					// waiter, and the late one is woken.
					require.NoError(t, b.Client.HSet(context.Background(), keyOf(b, "job", "waiters"), w.Token(), "1 60000").Err())
					next = queueWaiter(t, holderLk, "job", 30*time.Second)
					if err := holder.Release(context.Background()); err != nil {
						t.Errorf("release: %v", err)
					}
				case 2:
					// Woken, it attempted again and queued again: the wake
					// is off its grant list. Then the new holder releases
					// and hands the lock to it.
					assert.Zero(t, b.Client.LLen(context.Background(), grant).Val(), "the wake was taken off the grant list")
					if err := next.Release(context.Background()); err != nil {
						t.Errorf("release: %v", err)
					}
				}
			}
		})
		l, err := late.AcquireForTest(ctx, w, lock.WithWait(30*time.Second))
		require.NoError(t, err)
		assert.Equal(t, w.Token(), owner(t, b, "job"))
		assert.Equal(t, int64(2), attempts.Load(), "one attempt before the wake, one after: no spin")
		require.NoError(t, l.Release(ctx))
	})
}
