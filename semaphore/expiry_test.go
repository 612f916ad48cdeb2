package semaphore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/semaphore"
)

// A permit's local expiry estimate (what KeepAlive trusts when Redis
// cannot be reached) never passes the deadline the server keeps, when the
// lease started at a hand-over before the holder read it. On a real
// server (miniredis's clock is stopped by the harness), 300 ms after the
// hand-over: the error an estimate dated from the read would make.
func TestAcquire_expiryOfHandOver(t *testing.T) {
	const (
		timeout = 10 * time.Second
		gap     = 300 * time.Millisecond // lease run down before the holder reads its grant
		slop    = 100 * time.Millisecond // below gap: reply latencies on a busy machine
	)
	b := redistest.New(t, redistest.Standalone)
	ctx := t.Context()
	// deadline is the permit's deadline on the server (the test machine's
	// clock, which the local server shares).
	deadline := func(p *semaphore.Permit) time.Time {
		score, err := b.Client.ZScore(ctx, key(b, "s", "holders"), p.ID()).Result()
		require.NoError(t, err)
		return time.UnixMilli(int64(score))
	}
	// waitGap returns once gap has passed on the server's clock since the
	// hand-over (the lease running out: polled).
	waitGap := func(id string) {
		score, err := b.Client.ZScore(ctx, key(b, "s", "holders"), id).Result()
		require.NoError(t, err)
		for {
			tm, err := b.Client.Time(ctx).Result()
			require.NoError(t, err)
			if time.UnixMilli(int64(score)).Sub(tm) <= timeout-gap {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	t.Run("read late", func(t *testing.T) {
		// A waiter paused between the attempt that queued it and its
		// blocking wait: dated from that attempt, not from the wait.
		b.Flush()
		other := newSem(t, b, b.Client, "s", 1, timeout)
		sw := newSem(t, b, b.Client, "s", 1, timeout)
		queued, resume := make(chan struct{}), make(chan struct{})
		first := true
		sw.SetHookForTest(func(e string) {
			if e == "queued" && first {
				first = false
				close(queued)
				<-resume
			}
		})
		h, err := other.TryAcquire(ctx)
		require.NoError(t, err)
		got := make(chan *semaphore.Permit, 1)
		go func() {
			p, err := sw.Acquire(ctx, semaphore.WithWait(time.Minute))
			assert.NoError(t, err)
			got <- p
		}()
		<-queued
		ids, err := b.Client.LRange(ctx, key(b, "s", "queue"), 0, -1).Result()
		require.NoError(t, err)
		require.Len(t, ids, 1)
		require.NoError(t, h.Release(ctx)) // hands the permit over: its lease starts
		waitGap(ids[0])
		close(resume)
		p := <-got
		require.NotNil(t, p)
		defer func() { _ = p.Release(context.WithoutCancel(ctx)) }()
		srv := deadline(p)
		assert.False(t, p.ExpiryForTest().After(srv.Add(slop)), "local expiry %v after the server's", p.ExpiryForTest().Sub(srv))
	})
	t.Run("found by attempt", func(t *testing.T) {
		// A waiter whose next attempt finds the permit handed to it
		// already: the attempt restarts the lease, the estimate's start.
		b.Flush()
		s := newSem(t, b, b.Client, "s", 1, timeout)
		h, err := s.TryAcquire(ctx)
		require.NoError(t, err)
		w := s.NewPermitForTest("w")
		ok, err := w.AttemptForTest(ctx, time.Minute) // queued
		require.NoError(t, err)
		require.False(t, ok)
		require.NoError(t, h.Release(ctx)) // hands the permit to w
		waitGap("w")
		ok, err = w.AttemptForTest(ctx, time.Minute) // finds it its own
		require.NoError(t, err)
		require.True(t, ok)
		defer func() { _ = w.Release(context.WithoutCancel(ctx)) }()
		srv := deadline(w)
		assert.False(t, w.ExpiryForTest().After(srv.Add(slop)), "local expiry %v after the server's", w.ExpiryForTest().Sub(srv))
	})
}

// A permit handed over late in a wait: its estimate is dated from the
// waiter's last attempt (as it must be), so at the hand-over it has much
// less than the timeout left. KeepAlive refreshes it at once (it used to
// wait a full timeout/3, past the estimate), so a Do whose fn outlives the
// first estimate keeps the permit, returns no error and releases it (it
// used to report the permit lost and leave it counted for a timeout).
// Real time on a real server: the defect is about the clock. The
// hand-over comes 4/5 of the timeout after the attempt: 900 ms for the
// refresh to come back, and fn returns 550 ms before the old code's first
// refresh.
func TestSemaphore_Do_handOverLateInWait_keptAndReleased(t *testing.T) {
	const timeout = 4500 * time.Millisecond
	b := redistest.New(t, redistest.Standalone)
	ctx := t.Context()
	holderSem := newSem(t, b, b.Client, "s", 1, timeout)
	waiterSem := newSem(t, b, b.Client, "s", 1, timeout)
	// The hook runs in the goroutine of the Do, which then runs fn: at
	// needs no lock.
	var at time.Time // after the waiter's last attempt (the estimate's start is before)
	queued := make(chan time.Time, 1)
	waiterSem.SetHookForTest(func(e string) {
		if e == "queued" && at.IsZero() {
			at = time.Now()
			queued <- at
		}
	})
	p, err := holderSem.TryAcquire(ctx)
	require.NoError(t, err)
	kctx, stop := context.WithCancel(ctx)
	defer stop()
	_ = p.KeepAlive(kctx) // the holder stays alive until it releases
	done := make(chan error, 1)
	go func() {
		done <- waiterSem.Do(ctx, func(ctx context.Context, q *semaphore.Permit) error {
			// fn outlives the first estimate (not the server's deadline,
			// set at the hand-over)
			<-time.After(time.Until(at.Add(timeout + 50*time.Millisecond)))
			dl, err := b.Client.ZScore(context.Background(), key(b, "s", "holders"), q.ID()).Result()
			if err != nil || !time.UnixMilli(int64(dl)).After(time.Now()) {
				return fmt.Errorf("not held on the server when fn returned (%v)", err)
			}
			return nil
		}, semaphore.WithWait(time.Minute))
	}()
	start := <-queued // the waiter now blocks until the hand-over
	<-time.After(time.Until(start.Add(timeout * 4 / 5)))
	require.NoError(t, p.Release(ctx)) // hands the permit over: its lease starts now
	require.NoError(t, <-done, "held on the server all along")
	n, err := waiterSem.Holders(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "the Do released the permit")
}
