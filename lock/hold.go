package lock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// hold is what a held lock keeps in process, exclusive ([Lock]) or
// read/write ([RWHold]): its fence, TTL, local expiry, state and
// extension loop.
type hold struct {
	mu       sync.Mutex
	fence    int64
	ttl      time.Duration
	expiry   time.Time // local, conservative: sent-at + ttl of the last success
	released bool
	lost     bool // KeepAlive found it lost
	alive    *keepAlive
}

func (h *hold) lease() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ttl
}

func (h *hold) expiryTime() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.expiry
}

func (h *hold) isLost() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

func (h *hold) markReleased() {
	h.mu.Lock()
	h.released = true
	h.mu.Unlock()
}

// setGrant records the fence of a grant handed over by a release; its TTL
// started after since, so since+ttl is a safe expiry estimate.
func (h *hold) setGrant(fence string, since time.Time) error {
	f, err := strconv.ParseInt(fence, 10, 64)
	if err != nil {
		return fmt.Errorf("malformed grant %q: %w", fence, err)
	}
	h.mu.Lock()
	h.fence, h.expiry = f, since.Add(h.ttl)
	h.mu.Unlock()
	return nil
}

// run runs fn while the hold is kept alive (its ctx is cancelled, with
// cause ErrNotHeld, if the hold is lost) and always releases it after, as
// [Locker.Do] documents; what names the call in errors.
func (h *hold) run(ctx context.Context, what string, extend func(context.Context, time.Duration) error, release func(context.Context) error, fn func(ctx context.Context) error) (err error) {
	held := h.keepAlive(ctx, extend)
	defer func() {
		h.stopKeepAlive(nil)
		// Lost: KeepAlive found the lock taken, or its last confirmed TTL
		// ran out without a successful extension.
		lost := h.isLost() || !time.Now().Before(h.expiryTime())
		if !lost {
			rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), h.expiryTime())
			rerr := release(rctx)
			cancel()
			switch {
			case errors.Is(rerr, ErrNotHeld):
				lost = true
			case rerr != nil:
				err = errors.Join(err, rerr)
			}
		} else {
			h.markReleased()
		}
		if lost && !errors.Is(err, ErrNotHeld) {
			if err == nil {
				err = fmt.Errorf("lock: %s: lost while fn ran: %w", what, ErrNotHeld)
			} else {
				err = fmt.Errorf("lock: %s: lost while fn ran (%w): %w", what, ErrNotHeld, err)
			}
		}
	}()
	return fn(held)
}

// keepAlive is one extension loop and the contexts bound to it.
type keepAlive struct {
	stop    chan struct{} // closed to stop the loop
	done    chan struct{} // closed when the loop has returned
	stopped bool
	cancels map[int]context.CancelCauseFunc // of the contexts handed out, by id
	next    int
}

// KeepAlive extends the lock by its TTL every TTL/3 in the background and
// returns a context derived from ctx that is cancelled as soon as the lock
// is lost, with [ErrNotHeld] as its cause (context.Cause): when an
// extension finds the lock no longer ours, or when extensions keep failing
// (Redis unreachable) until the last confirmed TTL has run out. Release
// cancels it too, with context.Canceled. Hand the context to the work the
// lock protects.
//
// The extensions stop at [Lock.Release], when the lock is lost, or when
// ctx ends (then the lock lapses at its TTL unless extended otherwise).
// Calling KeepAlive again returns another context bound to the same
// extension loop, which then runs until every such ctx has ended (or the
// lock is released or lost); after the loop stopped because its contexts
// ended, KeepAlive starts a new one.
func (l *Lock) KeepAlive(ctx context.Context) context.Context { return l.keepAlive(ctx, l.Extend) }

// KeepAlive extends the hold by its TTL every TTL/3 in the background and
// returns a context derived from ctx that is cancelled as soon as the hold
// is lost, with [ErrNotHeld] as its cause, as [Lock.KeepAlive] does for
// the exclusive lock (same rules: Release cancels it with
// context.Canceled; the extensions stop at Release, when the hold is lost,
// or when every ctx bound to the loop has ended).
func (h *RWHold) KeepAlive(ctx context.Context) context.Context { return h.keepAlive(ctx, h.Extend) }

// keepAlive is KeepAlive of a hold whose extension is extend.
func (h *hold) keepAlive(ctx context.Context, extend func(context.Context, time.Duration) error) context.Context {
	held, cancel := context.WithCancelCause(ctx)
	h.mu.Lock()
	switch {
	case h.lost:
		h.mu.Unlock()
		cancel(ErrNotHeld)
		return held
	case h.released:
		h.mu.Unlock()
		cancel(nil)
		return held
	}
	ka := h.alive
	if ka == nil || ka.stopped {
		ka = &keepAlive{stop: make(chan struct{}), done: make(chan struct{}), cancels: map[int]context.CancelCauseFunc{}}
		h.alive = ka
		go h.runKeepAlive(ka, extend)
	}
	id := ka.next
	ka.next++
	ka.cancels[id] = cancel
	h.mu.Unlock()
	context.AfterFunc(held, func() { h.unbind(ka, id) })
	return held
}

// unbind drops the context id from ka once it ended, and stops the loop
// when no bound context is left.
func (h *hold) unbind(ka *keepAlive, id int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ka.stopped {
		return
	}
	delete(ka.cancels, id)
	if len(ka.cancels) == 0 {
		ka.stopped = true
		close(ka.stop)
	}
}

func (h *hold) runKeepAlive(ka *keepAlive, extend func(context.Context, time.Duration) error) {
	defer close(ka.done)
	var failing bool
	for {
		h.mu.Lock()
		ttl, expiry := h.ttl, h.expiry
		h.mu.Unlock()
		next := ttl / 3
		if failing { // retry sooner, while the TTL lasts
			next = min(next, time.Until(expiry)/3)
		}
		t := time.NewTimer(max(next, time.Millisecond))
		select {
		case <-ka.stop:
			t.Stop()
			return
		case <-t.C:
		}
		select {
		case <-ka.stop:
			return
		default:
		}
		ctx, cancel := context.WithDeadline(context.Background(), expiry)
		err := extend(ctx, ttl)
		cancel()
		failing = err != nil
		if errors.Is(err, ErrNotHeld) || (err != nil && !time.Now().Before(expiry)) {
			h.stopKeepAlive(ErrNotHeld)
			return
		}
	}
}

// stopKeepAlive stops the extension loop, if any, and cancels the contexts
// handed out with cause (nil: context.Canceled). With cause ErrNotHeld it
// marks the lock lost.
func (h *hold) stopKeepAlive(cause error) {
	h.mu.Lock()
	if cause != nil {
		h.lost = true
	}
	ka := h.alive
	if ka == nil || ka.stopped {
		h.mu.Unlock()
		return
	}
	ka.stopped = true
	cancels := ka.cancels
	ka.cancels = nil
	h.mu.Unlock()
	close(ka.stop)
	for _, c := range cancels {
		c(cause)
	}
}
