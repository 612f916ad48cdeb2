package lock

import (
	"context"
	"time"
)

// NewLockForTest returns an unacquired Lock, for driving single attempts.
func (lk *Locker) NewLockForTest(name string, ttl time.Duration) *Lock { return lk.newLock(name, ttl) }

// AttemptForTest runs one plain acquire attempt; left > 0 queues the caller.
func (l *Lock) AttemptForTest(ctx context.Context, left time.Duration) (bool, error) {
	ok, _, err := l.attempts().Attempt(ctx, left)
	return ok, err
}

// SetHookForTest makes the Locker call fn at points of an Acquire:
// "attempt" (before an attempt is sent), "queued" (after a plain attempt
// found the lock taken and queued the caller), "leave" (before the
// waiter leaves the queue). Set it before any Acquire.
func (lk *Locker) SetHookForTest(fn func(event string)) { lk.hook = fn }

// SetSlackForTest sets how long a waiter's place outlives its wait.
func (lk *Locker) SetSlackForTest(d time.Duration) { lk.slack = d }

// SetHotForTest sets the contention hint of name: whether Acquire starts
// with a pipelined round.
func (lk *Locker) SetHotForTest(name string, hot bool) { lk.hint(name).Store(hot) }

// HotForTest reports the contention hint of name.
func (lk *Locker) HotForTest(name string) bool { return lk.hint(name).Load() }

// WaitGiveBacksForTest waits until the background give-backs have ended.
func (lk *Locker) WaitGiveBacksForTest() { lk.bg.Wait() }

// KeepAliveDoneForTest returns a channel closed when the current extension
// loop has returned (nil if none ever ran).
func (l *Lock) KeepAliveDoneForTest() <-chan struct{} { return l.lease.LoopDone() }

// AcquireForTest runs Acquire's wait for l, a Lock of NewLockForTest (whose
// token, and so whose keys, the test knows).
func (lk *Locker) AcquireForTest(ctx context.Context, l *Lock, opts ...AcquireOption) (*Lock, error) {
	var o acquireOptions
	for _, opt := range opts {
		opt(&o)
	}
	return lk.acquire(ctx, l, o)
}

// NewHoldForTest returns an unacquired hold of rw (write or read), for
// driving single attempts.
func (rw *RWLock) NewHoldForTest(ttl time.Duration, write bool) *RWHold {
	return rw.newHold(ttl, write)
}

// AttemptForTest runs one plain acquire attempt; left > 0 queues the caller.
func (h *RWHold) AttemptForTest(ctx context.Context, left time.Duration) (bool, error) {
	ok, _, err := h.attempts().Attempt(ctx, left)
	return ok, err
}

// WaitForTest runs RLock's or Lock's wait for h, a hold of NewHoldForTest.
func (rw *RWLock) WaitForTest(ctx context.Context, h *RWHold, opts ...AcquireOption) (*RWHold, error) {
	var o acquireOptions
	for _, opt := range opts {
		opt(&o)
	}
	return rw.wait(ctx, h, o)
}

// SetHotForTest sets the contention hint of rw.
func (rw *RWLock) SetHotForTest(hot bool) { rw.hot.Store(hot) }

// ExpiryForTest returns the lock's local expiry estimate.
func (l *Lock) ExpiryForTest() time.Time { return l.lease.Expiry() }

// ExpiryForTest returns the hold's local expiry estimate.
func (h *RWHold) ExpiryForTest() time.Time { return h.lease.Expiry() }
