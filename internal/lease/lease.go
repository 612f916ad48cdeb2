// Package lease is the in-process side of a lease kept in Redis with a TTL
// (a lock, a read/write lock hold, a semaphore permit): its conservative
// local expiry, its released and lost state, the keep-alive loop that
// renews it in the background, and the tail of a Do that runs a function
// while holding it.
package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Ops is what a Hold does in Redis and how its package names its errors.
type Ops struct {
	// Refresh renews the lease by its TTL, in one round trip, and records
	// the success on the Hold (Renewed or Extended). An error that wraps
	// NotHeld means the lease is gone.
	Refresh func(ctx context.Context) error
	// Release gives the lease back (and marks the Hold released). An error
	// that wraps NotHeld means it was gone already.
	Release func(ctx context.Context) error
	// NotHeld is the package's sentinel for a lease no longer held.
	NotHeld error
	// Lost returns the cause the contexts of KeepAlive get when the lease
	// is lost: last is the refresh's error; timedOut says that refreshes
	// failed until the expiry passed (else last wraps NotHeld).
	Lost func(last error, timedOut bool) error
}

// Hold is the in-process state of one lease. Its zero value holds nothing,
// with a zero TTL; Init sets the TTL. It is safe for concurrent use.
type Hold struct {
	mu       sync.Mutex
	ttl      time.Duration
	expiry   time.Time // local, conservative: sent-at of the last confirmed grant or refresh + ttl
	released bool
	lost     error // the cause KeepAlive's contexts got; nil while not known lost
	alive    *loop // the keep-alive loop, if one ever ran
}

// loop is one keep-alive loop and the contexts bound to it.
type loop struct {
	stop    chan struct{} // closed to stop the loop
	done    chan struct{} // closed when the loop has returned
	stopped bool
	cancels map[int]context.CancelCauseFunc // of the contexts handed out, by id
	next    int
}

// Init sets the TTL of a Hold not yet granted.
func (h *Hold) Init(ttl time.Duration) {
	h.mu.Lock()
	h.ttl = ttl
	h.mu.Unlock()
}

// TTL returns the lease's current TTL.
func (h *Hold) TTL() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ttl
}

// Expiry returns the local, conservative expiry of the lease.
func (h *Hold) Expiry() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.expiry
}

// Lost returns the cause KeepAlive gave when it found the lease lost, or
// nil.
func (h *Hold) Lost() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

// Renewed records a grant or refresh by the current TTL sent at sent: the
// server set its deadline after that. The expiry only moves later.
func (h *Hold) Renewed(sent time.Time) {
	h.mu.Lock()
	if e := sent.Add(h.ttl); e.After(h.expiry) {
		h.expiry = e
	}
	h.mu.Unlock()
}

// Extended records an extension to ttl sent at sent: ttl becomes the
// lease's TTL, and sent+ttl its expiry (earlier than before if ttl is
// shorter).
func (h *Hold) Extended(sent time.Time, ttl time.Duration) {
	h.mu.Lock()
	h.ttl, h.expiry = ttl, sent.Add(ttl)
	h.mu.Unlock()
}

// MarkReleased records that the lease was given back (or given up):
// KeepAlive then returns a context cancelled at once.
func (h *Hold) MarkReleased() {
	h.mu.Lock()
	h.released = true
	h.mu.Unlock()
}

// LoopDone returns a channel closed when the current keep-alive loop has
// returned (nil if none ever ran).
func (h *Hold) LoopDone() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.alive == nil {
		return nil
	}
	return h.alive.done
}

// KeepAlive refreshes the lease with ops.Refresh in the background, a
// third of its TTL after the start of its local expiry estimate (so every
// third of the TTL while refreshes succeed, and at once when the estimate
// has less than two thirds of the TTL left: a lease handed over late in a
// wait is dated from the waiter's last attempt), and returns a context
// derived from ctx that is cancelled as soon as the lease is lost, with
// cause ops.Lost(...): when a refresh finds it gone (its error wraps
// ops.NotHeld), or when its expiry passes without a successful refresh
// (refreshes kept failing, or the estimate had passed already when
// KeepAlive was called). A failed refresh is retried sooner, at a third of
// the time left before the expiry. Stop (and so a release) cancels the
// context with context.Canceled.
//
// The loop stops at Stop, when the lease is lost, or when every ctx bound
// to it has ended; a later KeepAlive binds to the running loop, or starts
// a new one if it stopped because its contexts ended. On a lease already
// released or lost, KeepAlive returns a context cancelled at once (with
// the loss's cause).
func (h *Hold) KeepAlive(ctx context.Context, ops Ops) context.Context {
	held, cancel := context.WithCancelCause(ctx)
	h.mu.Lock()
	var bound map[int]context.CancelCauseFunc // of a loop stopped here
	if h.lost == nil && !h.released && !time.Now().Before(h.expiry) {
		// The expiry passed with no refresh confirmed: lost (as Finish
		// would judge it), before anything runs under it.
		h.lost = ops.Lost(errExpired, true)
		if lp := h.alive; lp != nil && !lp.stopped {
			bound = lp.halt()
		}
	}
	switch {
	case h.lost != nil:
		cause := h.lost
		h.mu.Unlock()
		for _, c := range bound {
			c(cause)
		}
		cancel(cause)
		return held
	case h.released:
		h.mu.Unlock()
		cancel(nil)
		return held
	}
	lp := h.alive
	if lp == nil || lp.stopped {
		lp = &loop{stop: make(chan struct{}), done: make(chan struct{}), cancels: map[int]context.CancelCauseFunc{}}
		h.alive = lp
		go h.refreshLoop(lp, ops)
	}
	id := lp.next
	lp.next++
	lp.cancels[id] = cancel
	h.mu.Unlock()
	context.AfterFunc(held, func() { h.unbind(lp, id) })
	return held
}

// unbind drops the context id from lp once it ended, and stops the loop
// when no bound context is left.
func (h *Hold) unbind(lp *loop, id int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if lp.stopped {
		return
	}
	delete(lp.cancels, id)
	if len(lp.cancels) == 0 {
		lp.halt()
	}
}

// halt stops lp and returns the cancels of its contexts; the Hold's mu is
// held and lp not stopped yet.
func (lp *loop) halt() map[int]context.CancelCauseFunc {
	lp.stopped = true
	close(lp.stop)
	cancels := lp.cancels
	lp.cancels = nil
	return cancels
}

// errExpired is the last error ops.Lost gets when the expiry passed before
// a refresh was tried (KeepAlive called too late, or a timer that fired
// late).
var errExpired = errors.New("lease: the expiry estimate passed before a refresh")

// refreshLoop is the body of lp: a refresh a third of the TTL after the
// start of the expiry estimate (sooner while failing) until lp is stopped
// or the lease is lost.
func (h *Hold) refreshLoop(lp *loop, ops Ops) {
	defer close(lp.done)
	var last error // the last refresh's error, nil after a success
	for {
		h.mu.Lock()
		ttl, expiry := h.ttl, h.expiry
		h.mu.Unlock()
		left := time.Until(expiry)
		// The estimate started at expiry-ttl: refresh a third of the TTL
		// after that, which is at once for a lease handed over late in a
		// wait (dated from the waiter's last attempt, it may have much less
		// than the TTL left), so that the refresh comes well before the
		// expiry and a Do does not take its lease for lost.
		next := min(ttl/3, left-2*ttl/3)
		if last != nil { // retry sooner, while the expiry lasts
			next = min(ttl/3, left/3)
		}
		t := time.NewTimer(max(next, time.Millisecond))
		select {
		case <-lp.stop:
			t.Stop()
			return
		case <-t.C:
		}
		select {
		case <-lp.stop:
			return
		default:
		}
		expiry = h.Expiry()
		if !time.Now().Before(expiry) {
			// no refresh can be confirmed in time: lost (a refresh would
			// only fail its deadline)
			if last == nil {
				last = errExpired
			}
			h.lose(lp, ops.Lost(last, true))
			return
		}
		ctx, cancel := context.WithDeadline(context.Background(), expiry)
		err := ops.Refresh(ctx)
		cancel()
		last = err
		switch {
		case err == nil:
		case errors.Is(err, ops.NotHeld):
			h.lose(lp, ops.Lost(err, false))
			return
		case !time.Now().Before(expiry):
			h.lose(lp, ops.Lost(err, true))
			return
		}
	}
}

// lose marks the lease lost and cancels the contexts of lp with cause,
// unless lp was stopped meanwhile (a release or its contexts' end).
func (h *Hold) lose(lp *loop, cause error) {
	h.mu.Lock()
	if lp.stopped {
		h.mu.Unlock()
		return
	}
	h.lost = cause
	cancels := lp.halt()
	h.mu.Unlock()
	for _, c := range cancels {
		c(cause)
	}
}

// Stop stops the keep-alive loop, if any, cancels the contexts handed out
// with context.Canceled, and returns a channel closed when the loop has
// returned (nil if none ever ran). It does not wait.
func (h *Hold) Stop() <-chan struct{} {
	h.mu.Lock()
	lp := h.alive
	var cancels map[int]context.CancelCauseFunc
	if lp != nil && !lp.stopped {
		cancels = lp.halt()
	}
	h.mu.Unlock()
	for _, c := range cancels {
		c(nil)
	}
	if lp == nil {
		return nil
	}
	return lp.done
}

// Finish ends the hold of a Do: it stops the keep-alive loop and waits for
// a refresh in flight (which may still move the expiry, or find the lease
// gone), then releases the lease with ops.Release, bounded by the expiry
// and not cancelled with ctx, unless the lease is known lost: KeepAlive
// found it lost, or its expiry passed without a successful refresh. It
// reports whether the lease was lost (a release that found it gone too),
// and the release's other error.
func (h *Hold) Finish(ctx context.Context, ops Ops) (lost bool, err error) {
	if done := h.Stop(); done != nil {
		<-done
	}
	h.mu.Lock()
	lost = h.lost != nil || !time.Now().Before(h.expiry)
	expiry := h.expiry
	if lost {
		h.released = true
	}
	h.mu.Unlock()
	if lost {
		return true, nil
	}
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), expiry)
	err = ops.Release(rctx)
	cancel()
	if errors.Is(err, ops.NotHeld) {
		return true, nil
	}
	return false, err
}

// Run runs fn while the lease is kept alive with KeepAlive (fn's ctx is
// cancelled if it is lost) and always ends the hold with Finish after,
// even if fn panics (the panic goes on after). It returns fn's error,
// joined with the release's; when the lease was lost, the error wraps
// ops.NotHeld (once), with lostMsg ("pkg: op: lost while fn ran") in
// front.
func (h *Hold) Run(ctx context.Context, ops Ops, lostMsg string, fn func(ctx context.Context) error) (err error) {
	held := h.KeepAlive(ctx, ops)
	defer func() {
		lost, rerr := h.Finish(ctx, ops)
		if rerr != nil {
			err = errors.Join(err, rerr)
		}
		err = wrapLost(err, lost, ops.NotHeld, lostMsg)
	}()
	return fn(held)
}

// wrapLost returns err as the error of a Do whose lease was lost (if lost):
// wrapping notHeld once, with msg in front.
func wrapLost(err error, lost bool, notHeld error, msg string) error {
	switch {
	case !lost || errors.Is(err, notHeld):
		return err
	case err == nil:
		return fmt.Errorf("%s: %w", msg, notHeld)
	}
	return fmt.Errorf("%s (%w): %w", msg, notHeld, err)
}
