package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/lock"
)

// A hold's local expiry estimate (what KeepAlive and Do trust when Redis
// cannot be reached) never passes the expiry the server keeps, when the
// TTL started at a hand-over before the holder read it. These run on a
// real server, whose TTLs run down in real time (miniredis's clock is
// stopped by the harness), and wait for 300 ms of the TTL to pass after
// the hand-over: the error an estimate dated from the read would make.

const (
	expiryTTL  = 10 * time.Second
	expiryGap  = 300 * time.Millisecond // TTL run down before the holder reads its grant
	expirySlop = 100 * time.Millisecond // below expiryGap: reply latencies on a busy machine
)

// serverExpiry is when key expires on the server (PEXPIRETIME), in the
// test machine's clock, which the local server shares.
func serverExpiry(t *testing.T, b *redistest.Backend, key string) time.Time {
	t.Helper()
	ms, err := b.Client.Do(t.Context(), "pexpiretime", key).Int64()
	require.NoError(t, err)
	require.Positive(t, ms, "%s has a TTL", key)
	return time.UnixMilli(ms)
}

// waitTTLDown returns once key's TTL on the server has run down by d from
// ttl (a real TTL running out: polled).
func waitTTLDown(t *testing.T, b *redistest.Backend, key string, ttl, d time.Duration) {
	t.Helper()
	for {
		pttl, err := b.Client.PTTL(t.Context(), key).Result()
		require.NoError(t, err)
		if pttl <= ttl-d {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A waiter paused between the attempt that queued it and its blocking
// wait (a GC pause, a slow scheduler) when the lock is handed to it: the
// estimate is dated from that attempt (it used to be dated from the wait,
// 300 ms after the TTL started here).
func TestAcquire_expiryOfHandOverReadLate(t *testing.T) {
	b := redistest.New(t, redistest.Standalone)
	ctx := t.Context()
	other := must(lock.New(b.Client, lock.WithPrefix(b.Prefix)))
	lw := must(lock.New(b.Client, lock.WithPrefix(b.Prefix)))
	queued, resume := make(chan struct{}), make(chan struct{})
	first := true
	lw.SetHookForTest(func(e string) {
		if e == "queued" && first {
			first = false
			close(queued)
			<-resume // between the attempt and the wait
		}
	})
	h, err := other.TryAcquire(ctx, "x", time.Minute)
	require.NoError(t, err)
	got := make(chan *lock.Lock, 1)
	go func() {
		l, err := lw.Acquire(ctx, "x", expiryTTL, lock.WithWait(time.Minute))
		assert.NoError(t, err)
		got <- l
	}()
	<-queued
	require.NoError(t, h.Release(ctx)) // hands the lock over: its TTL starts
	waitTTLDown(t, b, ownerKey(b, "x"), expiryTTL, expiryGap)
	close(resume)
	l := <-got
	require.NotNil(t, l)
	defer func() { _ = l.Release(context.WithoutCancel(ctx)) }()
	srv := serverExpiry(t, b, ownerKey(b, "x"))
	assert.False(t, l.ExpiryForTest().After(srv.Add(expirySlop)),
		"local expiry %v after the server's %v", l.ExpiryForTest().Sub(srv), srv)
}

// A waiter whose next attempt finds the lock handed to it already (handed
// over between its rounds): the attempt restarts the TTL, from which the
// estimate is dated (it used to date a TTL started 300 ms earlier).
func TestAcquire_expiryOfHandOverFoundByAttempt(t *testing.T) {
	b := redistest.New(t, redistest.Standalone)
	ctx := t.Context()
	lk := must(lock.New(b.Client, lock.WithPrefix(b.Prefix)))
	h, err := lk.TryAcquire(ctx, "x", time.Minute)
	require.NoError(t, err)
	w := lk.NewLockForTest("x", expiryTTL)
	ok, err := w.AttemptForTest(ctx, time.Minute) // queued
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, h.Release(ctx)) // hands the lock to w
	waitTTLDown(t, b, ownerKey(b, "x"), expiryTTL, expiryGap)
	ok, err = w.AttemptForTest(ctx, time.Minute) // finds it its own
	require.NoError(t, err)
	require.True(t, ok)
	defer func() { _ = w.Release(context.WithoutCancel(ctx)) }()
	srv := serverExpiry(t, b, ownerKey(b, "x"))
	assert.False(t, w.ExpiryForTest().After(srv.Add(expirySlop)),
		"local expiry %v after the server's", w.ExpiryForTest().Sub(srv))

	// The same for the read/write lock, in both modes.
	for _, write := range []bool{true, false} {
		rw := lk.RW("y")
		blocker, err := rw.Lock(ctx, time.Minute) // a writer holds it
		require.NoError(t, err)
		wh := rw.NewHoldForTest(expiryTTL, write)
		ok, err := wh.AttemptForTest(ctx, time.Minute)
		require.NoError(t, err)
		require.False(t, ok)
		require.NoError(t, blocker.Release(ctx)) // hands it to wh
		key := rwKey(b, "y", "writer")
		if !write {
			key = rwKey(b, "y", "readers")
		}
		waitTTLDown(t, b, key, expiryTTL, expiryGap)
		ok, err = wh.AttemptForTest(ctx, time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		srv := serverExpiry(t, b, key)
		if !write {
			score, err := b.Client.ZScore(ctx, key, wh.Token()).Result()
			require.NoError(t, err)
			srv = time.UnixMilli(int64(score))
		}
		assert.False(t, wh.ExpiryForTest().After(srv.Add(expirySlop)),
			"write %v: local expiry %v after the server's", write, wh.ExpiryForTest().Sub(srv))
		require.NoError(t, wh.Release(ctx))
	}
}
