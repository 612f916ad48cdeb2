package lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/lease"
)

var errNotHeld = errors.New("test: not held")

// fake is a lease kept by fake funcs: refresh and release answer with the
// funcs the test sets (nil: success), and count their calls.
type fake struct {
	h        lease.Hold
	refresh  func(ctx context.Context) error
	release  func(ctx context.Context) error
	nRefresh atomic.Int64
	nRelease atomic.Int64
	timedOut atomic.Bool // the last Lost call's timedOut
}

// newFake returns a fake lease granted now for ttl.
// loopTTL is the lease of the tests whose KeepAlive loop must run before
// the lease expires: its first refresh comes a third of it in, and a loop
// started late on a loaded machine (it was 3 ms and 30 ms) found the lease
// expired without a refresh.
const loopTTL = 1500 * time.Millisecond

func newFake(ttl time.Duration) *fake {
	f := &fake{}
	f.h.Init(ttl)
	f.h.Renewed(time.Now())
	return f
}

func (f *fake) ops() lease.Ops {
	return lease.Ops{
		Refresh: func(ctx context.Context) error {
			f.nRefresh.Add(1)
			sent := time.Now()
			if f.refresh != nil {
				if err := f.refresh(ctx); err != nil {
					return err
				}
			}
			f.h.Renewed(sent)
			return nil
		},
		Release: func(ctx context.Context) error {
			f.nRelease.Add(1)
			f.h.Stop()
			f.h.MarkReleased()
			if f.release != nil {
				return f.release(ctx)
			}
			return nil
		},
		NotHeld: errNotHeld,
		Lost: func(last error, timedOut bool) error {
			f.timedOut.Store(timedOut)
			return fmt.Errorf("test: lost (last: %v): %w", last, errNotHeld)
		},
	}
}

// wait waits for ch, failing the test after a generous bound.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestKeepAlive_refreshes(t *testing.T) {
	f := newFake(loopTTL)
	refreshed := make(chan struct{})
	var once sync.Once
	f.refresh = func(context.Context) error {
		if f.nRefresh.Load() >= 3 {
			once.Do(func() { close(refreshed) })
		}
		return nil
	}
	before := f.h.Expiry()
	held := f.h.KeepAlive(context.Background(), f.ops())
	wait(t, refreshed, "three refreshes")
	assert.NoError(t, held.Err(), "kept while refreshes succeed")
	assert.True(t, f.h.Expiry().After(before), "refreshes move the expiry")

	done := f.h.Stop()
	require.NotNil(t, done)
	wait(t, done, "the loop to return")
	assert.ErrorIs(t, context.Cause(held), context.Canceled)
	assert.NoError(t, f.h.Lost())
}

func TestKeepAlive_sharedLoop(t *testing.T) {
	f := newFake(time.Hour) // no refresh during the test
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	held1 := f.h.KeepAlive(ctx1, f.ops())
	done := f.h.LoopDone()
	held2 := f.h.KeepAlive(ctx2, f.ops())
	assert.Equal(t, done, f.h.LoopDone(), "the second KeepAlive binds to the running loop")

	cancel1()
	<-held1.Done()
	select {
	case <-done:
		t.Fatal("the loop stopped while a bound ctx lives")
	default:
	}
	assert.NoError(t, held2.Err())
	cancel2()
	wait(t, done, "the loop to stop when its contexts ended")
	assert.NoError(t, f.h.Lost(), "ending the contexts loses nothing")

	// A new KeepAlive starts a new loop.
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	held3 := f.h.KeepAlive(ctx3, f.ops())
	assert.NoError(t, held3.Err())
	assert.NotEqual(t, done, f.h.LoopDone())
	wait(t, f.h.Stop(), "the new loop to stop")
	assert.ErrorIs(t, context.Cause(held3), context.Canceled)
	assert.Zero(t, f.nRefresh.Load())
}

func TestKeepAlive_lost(t *testing.T) {
	f := newFake(loopTTL)
	f.refresh = func(context.Context) error { return fmt.Errorf("refresh: %w", errNotHeld) }
	held1 := f.h.KeepAlive(context.Background(), f.ops())
	held2 := f.h.KeepAlive(context.Background(), f.ops())
	wait(t, held1.Done(), "the loss")
	<-held2.Done()
	for _, held := range []context.Context{held1, held2} {
		assert.ErrorIs(t, context.Cause(held), errNotHeld)
		assert.ErrorContains(t, context.Cause(held), "test: lost (last: refresh: test: not held)")
	}
	assert.False(t, f.timedOut.Load(), "found gone, not timed out")
	assert.ErrorIs(t, f.h.Lost(), errNotHeld)
	assert.Equal(t, int64(1), f.nRefresh.Load(), "no refresh after the loss")

	again := f.h.KeepAlive(context.Background(), f.ops())
	assert.Equal(t, f.h.Lost(), context.Cause(again), "KeepAlive after the loss: cancelled at once with its cause")
}

// Refreshes that keep failing are retried sooner (a third of the time left)
// until the expiry passes; then the lease is lost.
func TestKeepAlive_failingUntilExpiry(t *testing.T) {
	const ttl = 600 * time.Millisecond
	f := newFake(ttl)
	down := errors.New("test: down")
	f.refresh = func(context.Context) error { return down }
	start := time.Now()
	expiry := f.h.Expiry()
	held := f.h.KeepAlive(context.Background(), f.ops())
	wait(t, held.Done(), "the loss")
	assert.False(t, time.Now().Before(expiry), "not lost before the expiry")
	assert.True(t, f.timedOut.Load())
	cause := context.Cause(held)
	assert.ErrorIs(t, cause, errNotHeld)
	assert.ErrorContains(t, cause, "last: test: down")
	// At ttl/3 only there would be 3 tries (ttl/3, 2ttl/3, ttl); retrying at
	// a third of the time left makes more before the expiry.
	assert.GreaterOrEqual(t, f.nRefresh.Load(), int64(5), "tries in %v", time.Since(start))
}

// The first refresh comes a third of the TTL after the estimate started:
// at once for an estimate with less than two thirds of the TTL left (a
// lease handed over late in a wait), then every third of the TTL again.
func TestKeepAlive_lateEstimate_refreshesAtOnce(t *testing.T) {
	const ttl = time.Hour
	for _, left := range []time.Duration{ttl / 2, ttl / 10, time.Second} {
		f := newFake(ttl)
		f.h.Extended(time.Now().Add(left-ttl), ttl)
		expiry := f.h.Expiry()
		refreshed := make(chan time.Time, 1)
		f.refresh = func(context.Context) error {
			select {
			case refreshed <- time.Now():
			default:
			}
			return nil
		}
		held := f.h.KeepAlive(context.Background(), f.ops())
		select {
		case at := <-refreshed:
			assert.True(t, at.Before(expiry), "left %v: refreshed before the estimate", left)
		case <-time.After(10 * time.Second):
			t.Fatalf("left %v: no refresh (the first came TTL/3 after KeepAlive)", left)
		}
		wait(t, f.h.Stop(), "the loop to return")
		assert.Equal(t, int64(1), f.nRefresh.Load(), "left %v: one refresh, the next TTL/3 later", left)
		assert.ErrorIs(t, context.Cause(held), context.Canceled)
		assert.True(t, f.h.Expiry().After(expiry), "left %v: the refresh moved the estimate", left)
	}
}

// KeepAlive on a lease whose estimate has passed (no refresh confirmed in
// time) cancels at once, as lost (the lease may be gone: a Do would not
// release it), and also the contexts of a loop still running.
func TestKeepAlive_expiryPassed_lostAtOnce(t *testing.T) {
	f := newFake(time.Hour)
	running := f.h.KeepAlive(context.Background(), f.ops())
	f.h.Extended(time.Now().Add(-2*time.Hour), time.Hour)
	held := f.h.KeepAlive(context.Background(), f.ops())
	for _, ctx := range []context.Context{held, running} {
		require.Error(t, ctx.Err())
		assert.ErrorIs(t, context.Cause(ctx), errNotHeld)
		assert.ErrorContains(t, context.Cause(ctx), "expiry estimate passed")
	}
	assert.True(t, f.timedOut.Load())
	assert.ErrorIs(t, f.h.Lost(), errNotHeld)
	wait(t, f.h.LoopDone(), "the running loop to stop")
	assert.Zero(t, f.nRefresh.Load())
}

// A refresh in flight when the loop is stopped (a release) and that then
// finds the lease gone does not mark it lost.
func TestKeepAlive_lossAfterStopIgnored(t *testing.T) {
	f := newFake(loopTTL)
	started := make(chan struct{})
	heldCh := make(chan context.Context, 1)
	f.refresh = func(context.Context) error {
		close(started)
		<-(<-heldCh).Done() // until Stop cancelled the contexts
		return errNotHeld
	}
	held := f.h.KeepAlive(context.Background(), f.ops())
	heldCh <- held
	wait(t, started, "a refresh")
	f.h.MarkReleased()
	wait(t, f.h.Stop(), "the loop to return")
	assert.NoError(t, f.h.Lost())
	assert.ErrorIs(t, context.Cause(held), context.Canceled)
	assert.ErrorIs(t, context.Cause(f.h.KeepAlive(context.Background(), f.ops())), context.Canceled,
		"KeepAlive after the release")
}

func TestRun(t *testing.T) {
	const msg = "test: do: lost while fn ran"
	boom := errors.New("boom")

	t.Run("ok", func(t *testing.T) {
		f := newFake(time.Hour)
		err := f.h.Run(context.Background(), f.ops(), msg, func(ctx context.Context) error {
			assert.NoError(t, ctx.Err())
			return nil
		})
		assert.NoError(t, err)
		assert.Equal(t, int64(1), f.nRelease.Load())
		assert.NoError(t, f.h.Lost())
	})
	t.Run("fn error joined with release error", func(t *testing.T) {
		f := newFake(time.Hour)
		rerr := errors.New("release failed")
		f.release = func(context.Context) error { return rerr }
		err := f.h.Run(context.Background(), f.ops(), msg, func(context.Context) error { return boom })
		assert.ErrorIs(t, err, boom)
		assert.ErrorIs(t, err, rerr)
		assert.NotErrorIs(t, err, errNotHeld)
	})
	t.Run("release bounded by the expiry, not cancelled with ctx", func(t *testing.T) {
		f := newFake(time.Hour)
		expiry := f.h.Expiry()
		f.release = func(ctx context.Context) error {
			dl, ok := ctx.Deadline()
			assert.True(t, ok)
			assert.Equal(t, expiry, dl)
			return ctx.Err()
		}
		ctx, cancel := context.WithCancel(context.Background())
		err := f.h.Run(ctx, f.ops(), msg, func(context.Context) error { cancel(); return nil })
		assert.NoError(t, err)
	})
	t.Run("release finds it gone", func(t *testing.T) {
		f := newFake(time.Hour)
		f.release = func(context.Context) error { return fmt.Errorf("release: %w", errNotHeld) }
		err := f.h.Run(context.Background(), f.ops(), msg, func(context.Context) error { return boom })
		assert.ErrorIs(t, err, boom)
		assert.ErrorIs(t, err, errNotHeld)
		assert.EqualError(t, err, msg+" (test: not held): boom")
	})
	t.Run("lost while fn ran: no release", func(t *testing.T) {
		f := newFake(loopTTL)
		f.refresh = func(context.Context) error { return errNotHeld }
		err := f.h.Run(context.Background(), f.ops(), msg, func(ctx context.Context) error {
			<-ctx.Done()
			assert.ErrorIs(t, context.Cause(ctx), errNotHeld)
			return nil
		})
		assert.EqualError(t, err, msg+": test: not held")
		assert.Zero(t, f.nRelease.Load())
	})
	t.Run("fn's error wraps not-held: wrapped once", func(t *testing.T) {
		f := newFake(loopTTL)
		f.refresh = func(context.Context) error { return errNotHeld }
		err := f.h.Run(context.Background(), f.ops(), msg, func(ctx context.Context) error {
			<-ctx.Done()
			return context.Cause(ctx)
		})
		assert.ErrorIs(t, err, errNotHeld)
		assert.NotContains(t, err.Error(), msg)
		assert.Zero(t, f.nRelease.Load())
	})
	t.Run("expiry passed without a refresh: lost at once, no release", func(t *testing.T) {
		f := newFake(time.Hour)
		f.h.Extended(time.Now().Add(-2*time.Hour), time.Hour) // confirmed long ago
		err := f.h.Run(context.Background(), f.ops(), msg, func(ctx context.Context) error {
			assert.ErrorIs(t, context.Cause(ctx), errNotHeld, "fn's ctx cancelled before fn ran")
			return nil
		})
		assert.ErrorIs(t, err, errNotHeld)
		assert.Zero(t, f.nRelease.Load())
		assert.Zero(t, f.nRefresh.Load(), "no refresh sent past the expiry")
		assert.True(t, f.timedOut.Load())
		assert.ErrorIs(t, context.Cause(f.h.KeepAlive(context.Background(), f.ops())), errNotHeld,
			"given up: KeepAlive cancelled at once, with the loss's cause")
	})
	// A lease handed over late in a wait: its estimate, dated from the
	// waiter's last attempt, has much less than the TTL left. fn outlives
	// that estimate: the refresh sent at once keeps the lease, and Run
	// releases it (it used to refresh a full TTL/3 later, after the
	// estimate, and report a lease the server held as lost).
	t.Run("estimate close at hand: refreshed in time, released", func(t *testing.T) {
		const left = time.Second // real time, generous for a refresh sent at once
		f := newFake(time.Hour)
		f.h.Extended(time.Now().Add(-time.Hour+left), time.Hour)
		first := f.h.Expiry()
		refreshed := make(chan struct{})
		var once sync.Once
		f.refresh = func(context.Context) error {
			once.Do(func() { close(refreshed) })
			return nil
		}
		err := f.h.Run(context.Background(), f.ops(), msg, func(ctx context.Context) error {
			select {
			case <-refreshed:
			case <-time.After(10 * time.Second):
				return errors.New("no refresh")
			}
			<-time.After(time.Until(first) + 10*time.Millisecond) // the first estimate passes
			return ctx.Err()
		})
		assert.NoError(t, err)
		assert.Equal(t, int64(1), f.nRelease.Load(), "released")
		assert.Equal(t, int64(1), f.nRefresh.Load(), "then every TTL/3")
	})
	t.Run("panic: released, panic goes on", func(t *testing.T) {
		f := newFake(time.Hour)
		assert.PanicsWithValue(t, "fn", func() {
			_ = f.h.Run(context.Background(), f.ops(), msg, func(context.Context) error { panic("fn") })
		})
		assert.Equal(t, int64(1), f.nRelease.Load())
	})
	// Run waits for a refresh in flight before it decides: here the expiry
	// has passed when fn returns, but the refresh then in flight succeeds,
	// so the lease is still held and is released.
	t.Run("waits for the refresh in flight", func(t *testing.T) {
		f := newFake(loopTTL)
		started := make(chan struct{})
		heldCh := make(chan context.Context, 1)
		var once sync.Once
		refreshed := atomic.Bool{}
		f.refresh = func(context.Context) error {
			once.Do(func() {
				close(started)
				<-(<-heldCh).Done() // until Run stopped the loop
				f.h.Extended(time.Now(), time.Hour)
				refreshed.Store(true)
			})
			return nil
		}
		f.release = func(context.Context) error {
			assert.True(t, refreshed.Load(), "released after the refresh returned")
			return nil
		}
		err := f.h.Run(context.Background(), f.ops(), msg, func(ctx context.Context) error {
			<-started
			for d := time.Until(f.h.Expiry()); d >= 0; d = time.Until(f.h.Expiry()) {
				time.Sleep(d + time.Millisecond) // until the expiry has passed: the case under test
			}
			heldCh <- ctx
			return nil
		})
		assert.NoError(t, err)
		assert.Equal(t, int64(1), f.nRelease.Load())
	})
}

func TestExtendedAndRenewed(t *testing.T) {
	var h lease.Hold
	h.Init(time.Second)
	now := time.Now()
	h.Renewed(now)
	assert.Equal(t, now.Add(time.Second), h.Expiry())
	h.Renewed(now.Add(-time.Millisecond))
	assert.Equal(t, now.Add(time.Second), h.Expiry(), "Renewed only moves the expiry later")
	h.Extended(now, 10*time.Millisecond)
	assert.Equal(t, 10*time.Millisecond, h.TTL())
	assert.Equal(t, now.Add(10*time.Millisecond), h.Expiry(), "Extended to a shorter TTL moves it earlier")
	assert.Nil(t, h.LoopDone())
	assert.Nil(t, h.Stop())
}
