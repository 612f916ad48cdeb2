package semaphore

import (
	"context"
	"time"
)

// NewPermitForTest returns a permit of s that is not held, for driving
// single attempts and waits with an ID the test knows.
func (s *Semaphore) NewPermitForTest(id string) *Permit { return s.newPermit(id) }

// AttemptForTest runs one plain acquire attempt; left > 0 queues the caller.
func (p *Permit) AttemptForTest(ctx context.Context, left time.Duration) (bool, error) {
	ok, _, err := p.attempts().Attempt(ctx, left)
	return ok, err
}

// AcquireForTest runs Acquire's wait for p, a permit of NewPermitForTest.
func (s *Semaphore) AcquireForTest(ctx context.Context, p *Permit, opts ...AcquireOption) (*Permit, error) {
	var o acquireOptions
	for _, opt := range opts {
		opt(&o)
	}
	return s.acquire(ctx, p, o)
}

// SetHookForTest makes the Semaphore call fn at points of an Acquire:
// "attempt" (before an attempt is sent), "queued" (after a plain attempt
// found the semaphore full and queued the caller), "leave" (before the
// waiter leaves the queue). Set it before any Acquire.
func (s *Semaphore) SetHookForTest(fn func(event string)) { s.hook = fn }

// SetHotForTest sets the contention hint: whether Acquire starts with a
// pipelined round.
func (s *Semaphore) SetHotForTest(hot bool) { s.hot.Store(hot) }

// HotForTest reports the contention hint.
func (s *Semaphore) HotForTest() bool { return s.hot.Load() }

// WaitGiveBacksForTest waits until the background give-backs have ended.
func (s *Semaphore) WaitGiveBacksForTest() { s.bg.Wait() }

// KeepAliveDoneForTest returns a channel closed when the current refresh
// loop has returned (nil if none ever ran).
func (p *Permit) KeepAliveDoneForTest() <-chan struct{} { return p.lease.LoopDone() }

// ExpiryForTest returns the permit's local expiry estimate.
func (p *Permit) ExpiryForTest() time.Time { return p.lease.Expiry() }
