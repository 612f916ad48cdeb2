package lock

import (
	"context"
	"errors"
	"time"
)

type keepAlive struct {
	stop    chan struct{}
	stopped bool
	cause   error // why it stopped: nil released, ErrNotHeld lost
	cancels []context.CancelCauseFunc
}

// KeepAlive extends the lock by its TTL every TTL/3 in the background until
// [Lock.Release], and returns a context derived from ctx that is cancelled
// as soon as the lock is lost, with [ErrNotHeld] as its cause
// (context.Cause): when an extension finds the lock no longer ours, or when
// extensions keep failing (Redis unreachable) until the last confirmed TTL
// has run out. Release cancels it too, with context.Canceled. Hand the
// context to the work the lock protects. Calling KeepAlive again returns
// another context bound to the same extension loop.
func (l *Lock) KeepAlive(ctx context.Context) context.Context {
	held, cancel := context.WithCancelCause(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.alive != nil && l.alive.stopped:
		cancel(l.alive.cause)
	case l.released:
		cancel(nil)
	default:
		if l.alive == nil {
			l.alive = &keepAlive{stop: make(chan struct{})}
			go l.runKeepAlive(l.alive)
		}
		l.alive.cancels = append(l.alive.cancels, cancel)
	}
	return held
}

func (l *Lock) runKeepAlive(ka *keepAlive) {
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
// handed out with cause (nil: context.Canceled).
func (l *Lock) stopKeepAlive(cause error) {
	l.mu.Lock()
	ka := l.alive
	if ka == nil || ka.stopped {
		l.mu.Unlock()
		return
	}
	ka.stopped, ka.cause = true, cause
	cancels := ka.cancels
	ka.cancels = nil
	l.mu.Unlock()
	close(ka.stop)
	for _, c := range cancels {
		c(cause)
	}
}
