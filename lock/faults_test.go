package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/lock"
)

// restartable returns a Locker on a redis-server of the test's own.
func restartable(t *testing.T) (*redistest.Server, *redis.Client, *lock.Locker) {
	srv := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	return srv, c, must(lock.New(c))
}

func TestLock_redisRestart(t *testing.T) {
	srv, _, locker := restartable(t)
	ctx := t.Context()
	l, err := locker.TryAcquire(ctx, "job", time.Minute)
	require.NoError(t, err)

	srv.Kill()
	err = l.Release(ctx)
	assert.Error(t, err)
	assert.NotErrorIs(t, err, lock.ErrNotHeld, "an outage is not a lost lock")
	assert.Error(t, l.Extend(ctx, time.Minute))
	_, err = locker.TryAcquire(ctx, "job", time.Minute)
	assert.Error(t, err)
	assert.NotErrorIs(t, err, lock.ErrNotObtained)

	srv.Restart(t) // the dataset, fence counter included, is gone
	var l2 *lock.Lock
	require.Eventually(t, func() bool {
		l2, err = locker.TryAcquire(ctx, "job", time.Minute)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	assert.Greater(t, l2.Fence(), l.Fence(), "fences keep increasing across a restart that lost the counter")
	assert.NoError(t, l2.Release(ctx))
}

// A waiting Acquire rides through a restart: it retries transient errors
// with backoff and gets the lock once the server is back.
func TestLock_Acquire_throughRestart(t *testing.T) {
	srv, c, locker := restartable(t)
	ctx := t.Context()
	_, err := locker.TryAcquire(ctx, "job", time.Minute)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := locker.Acquire(ctx, "job", time.Minute, lock.WithWait(30*time.Second))
		done <- err
	}()
	require.Eventually(t, func() bool { return c.LLen(ctx, "lock:{job}:queue").Val() == 1 }, 5*time.Second, time.Millisecond)
	srv.Restart(t)
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("waiter did not get the lock after the restart")
	}
}

func TestLock_KeepAlive_redisDown(t *testing.T) {
	srv, _, locker := restartable(t)
	ctx := t.Context()
	const ttl = 300 * time.Millisecond
	l, err := locker.TryAcquire(ctx, "job", ttl)
	require.NoError(t, err)
	held := l.KeepAlive(ctx)
	killed := time.Now()
	srv.Kill()
	select {
	case <-held.Done():
		assert.ErrorIs(t, context.Cause(held), lock.ErrNotHeld)
		assert.Less(t, time.Since(killed), ttl+2*time.Second, "cancelled about when the last extension runs out")
	case <-time.After(10 * time.Second):
		t.Fatal("holder's context not cancelled while Redis was down")
	}
}

// A reply lost after the script ran, and not re-sent (the hook fails the
// call, as when every re-send failed): TryAcquire says the outcome is
// unknown and gives the lock back in the background; a waiting Acquire
// retries and keeps the one lock it took.
func TestLock_lostReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _ := b.NewClient() // our own client: we may add a hook
		h := &redistest.ReplyLoser{}
		rdb.AddHook(h)
		locker := must(lock.New(rdb, lock.WithPrefix(b.Prefix)))
		other := newLocker(b)

		h.Arm()
		_, err := locker.TryAcquire(ctx, "job", time.Minute)
		assert.ErrorIs(t, err, redistest.ErrReplyLost)
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		assert.NotErrorIs(t, err, lock.ErrNotObtained)
		locker.WaitGiveBacksForTest()
		l, err := other.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err, "the lock taken before the reply was lost was given back")
		require.NoError(t, l.Release(ctx))

		h.Arm()
		l, err = locker.Acquire(ctx, "job", time.Minute, lock.WithWait(5*time.Second))
		require.NoError(t, err)
		assert.Greater(t, l.Fence(), int64(0))
		owner, err := b.Client.Get(ctx, ownerKey(b, "job")).Result()
		require.NoError(t, err)
		assert.Equal(t, l.Token(), owner)
		require.NoError(t, l.Release(ctx))
		_, err = other.TryAcquire(ctx, "job", time.Minute)
		assert.NoError(t, err, "released")
	})
}

// A TryAcquire or a Release whose script ran, lost its reply, and whose
// re-sends were refused with LOADING (a restarting server) has an unknown
// outcome: TryAcquire says so and gives the lock back (it was answered as
// a plain refusal, and the lock it took stayed held for its whole TTL).
func TestLock_lostReplyThenLoading(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _ := b.NewClient()
		h := &redistest.ReplyLoser{Err: redistest.ErrLoading}
		rdb.AddHook(h)
		locker := must(lock.New(rdb, lock.WithPrefix(b.Prefix)))
		other := newLocker(b)

		h.Arm()
		_, err := locker.TryAcquire(ctx, "job", time.Minute)
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		assert.ErrorIs(t, err, redistest.ErrLoading)
		locker.WaitGiveBacksForTest()
		l, err := other.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err, "the lock taken before the reply was lost was given back")

		require.NoError(t, l.Release(ctx))
		mine, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		h.Arm()
		err = mine.Release(ctx)
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, "the release ran; its answer was lost")
		locker.WaitGiveBacksForTest()
		_, err = other.TryAcquire(ctx, "job", time.Minute)
		assert.NoError(t, err, "released")
	})
}
