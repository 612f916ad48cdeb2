package semaphore_test

import (
	"context"
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
