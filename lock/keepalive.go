package lock

import (
	"context"
	"errors"
	"time"
)

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
func (l *Lock) KeepAlive(ctx context.Context) context.Context {
	held, cancel := context.WithCancelCause(ctx)
	l.mu.Lock()
	switch {
	case l.lost:
		l.mu.Unlock()
		cancel(ErrNotHeld)
		return held
	case l.released:
		l.mu.Unlock()
		cancel(nil)
		return held
	}
	ka := l.alive
	if ka == nil || ka.stopped {
		ka = &keepAlive{stop: make(chan struct{}), done: make(chan struct{}), cancels: map[int]context.CancelCauseFunc{}}
		l.alive = ka
		go l.runKeepAlive(ka)
	}
	id := ka.next
	ka.next++
	ka.cancels[id] = cancel
	l.mu.Unlock()
	context.AfterFunc(held, func() { l.unbind(ka, id) })
	return held
}

// unbind drops the context id from ka once it ended, and stops the loop
// when no bound context is left.
func (l *Lock) unbind(ka *keepAlive, id int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ka.stopped {
		return
	}
	delete(ka.cancels, id)
	if len(ka.cancels) == 0 {
		ka.stopped = true
		close(ka.stop)
	}
}

func (l *Lock) runKeepAlive(ka *keepAlive) {
	defer close(ka.done)
	var failing bool
	for {
		l.mu.Lock()
		ttl, expiry := l.ttl, l.expiry
		l.mu.Unlock()
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
		err := l.Extend(ctx, ttl)
		cancel()
		failing = err != nil
		if errors.Is(err, ErrNotHeld) || (err != nil && !time.Now().Before(expiry)) {
			l.stopKeepAlive(ErrNotHeld)
			return
		}
	}
}

// stopKeepAlive stops the extension loop, if any, and cancels the contexts
// handed out with cause (nil: context.Canceled). With cause ErrNotHeld it
// marks the lock lost.
func (l *Lock) stopKeepAlive(cause error) {
	l.mu.Lock()
	if cause != nil {
		l.lost = true
	}
	ka := l.alive
	if ka == nil || ka.stopped {
		l.mu.Unlock()
		return
	}
	ka.stopped = true
	cancels := ka.cancels
	ka.cancels = nil
	l.mu.Unlock()
	close(ka.stop)
	for _, c := range cancels {
		c(cause)
	}
}
