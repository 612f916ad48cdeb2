package semaphore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// lease returns the semaphore's timeout.
func (s *Semaphore) lease() time.Duration { return time.Duration(s.timeout) * time.Millisecond }

// setExpiry records that the permit's server deadline was set after sent.
func (p *Permit) setExpiry(sent time.Time) {
	p.mu.Lock()
	if e := sent.Add(p.s.lease()); e.After(p.expiry) {
		p.expiry = e
	}
	p.mu.Unlock()
}

// keepAlive is one refresh loop and the contexts bound to it.
type keepAlive struct {
	stop    chan struct{} // closed to stop the loop
	done    chan struct{} // closed when the loop has returned
	stopped bool
	cancels map[int]context.CancelCauseFunc // of the contexts handed out, by id
	next    int
}

// KeepAlive refreshes the permit in the background, with [Permit.Refresh]
// (one round trip each), every third of the semaphore's timeout, and
// returns a context derived from ctx that is cancelled as soon as the
// permit is lost, with a cause (context.Cause) that wraps [ErrNotHeld]:
// when a refresh finds the permit gone (it timed out, and another
// process's acquisition cleaned it up or took its place), or when
// refreshes keep failing (Redis unreachable, a key of the wrong type) until
// the permit's deadline has passed. A failed refresh is retried sooner, at
// a third of the time left before that deadline, which the Permit
// estimates conservatively from the send time of its last successful
// acquisition or refresh. [Permit.Release] cancels the context too, with
// context.Canceled. Hand the context to the work the permit guards.
//
// The refreshes stop at Release, when the permit is lost, or when ctx ends
// (the permit then lapses at its deadline unless refreshed otherwise).
// Calling KeepAlive again returns another context bound to the same loop,
// which then runs until every such ctx has ended (or the permit is released
// or lost); after the loop stopped because its contexts ended, KeepAlive
// starts a new one. On a permit already released or lost, KeepAlive
// returns a context cancelled at once.
func (p *Permit) KeepAlive(ctx context.Context) context.Context {
	held, cancel := context.WithCancelCause(ctx)
	p.mu.Lock()
	switch {
	case p.lost != nil:
		p.mu.Unlock()
		cancel(p.lost)
		return held
	case p.released:
		p.mu.Unlock()
		cancel(nil)
		return held
	}
	ka := p.alive
	if ka == nil || ka.stopped {
		ka = &keepAlive{stop: make(chan struct{}), done: make(chan struct{}), cancels: map[int]context.CancelCauseFunc{}}
		p.alive = ka
		go p.refreshLoop(ka)
	}
	id := ka.next
	ka.next++
	ka.cancels[id] = cancel
	p.mu.Unlock()
	context.AfterFunc(held, func() { p.unbind(ka, id) })
	return held
}

// unbind drops the context id from ka once it ended, and stops the loop
// when no bound context is left.
func (p *Permit) unbind(ka *keepAlive, id int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ka.stopped {
		return
	}
	delete(ka.cancels, id)
	if len(ka.cancels) == 0 {
		ka.stopped = true
		close(ka.stop)
	}
}

func (p *Permit) refreshLoop(ka *keepAlive) {
	defer close(ka.done)
	period := p.s.lease() / 3
	next := period
	for {
		t := time.NewTimer(max(next, time.Millisecond))
		select {
		case <-ka.stop:
			t.Stop()
			return
		case <-t.C:
		}
		p.mu.Lock()
		expiry := p.expiry
		p.mu.Unlock()
		ctx, cancel := context.WithDeadline(context.Background(), expiry)
		err := p.Refresh(ctx)
		cancel()
		switch {
		case err == nil:
			next = period
		case errors.Is(err, ErrNotHeld):
			p.lose(ka, fmt.Errorf("semaphore: keep-alive %q: permit lost, a refresh found it gone: %w", p.s.name, ErrNotHeld))
			return
		case !time.Now().Before(expiry):
			p.lose(ka, fmt.Errorf("semaphore: keep-alive %q: permit lost, refreshes failed until its timeout ran out (last: %v): %w",
				p.s.name, err, ErrNotHeld))
			return
		default: // retry sooner, while the deadline lasts
			next = min(period, time.Until(expiry)/3)
		}
	}
}

// lose marks the permit lost and cancels the contexts of ka with cause,
// unless ka was stopped meanwhile (a Release or its contexts' end).
func (p *Permit) lose(ka *keepAlive, cause error) {
	p.mu.Lock()
	if ka.stopped {
		p.mu.Unlock()
		return
	}
	p.lost = cause
	ka.stopped = true
	cancels := ka.cancels
	ka.cancels = nil
	p.mu.Unlock()
	close(ka.stop)
	for _, c := range cancels {
		c(cause)
	}
}

// stopKeepAlive stops the refresh loop, if any, cancels the contexts
// handed out with context.Canceled, and returns a channel closed when the
// loop has returned (nil if none ever ran).
func (p *Permit) stopKeepAlive() <-chan struct{} {
	p.mu.Lock()
	ka := p.alive
	if ka == nil {
		p.mu.Unlock()
		return nil
	}
	if ka.stopped {
		p.mu.Unlock()
		return ka.done
	}
	ka.stopped = true
	cancels := ka.cancels
	ka.cancels = nil
	p.mu.Unlock()
	close(ka.stop)
	for _, c := range cancels {
		c(nil)
	}
	return ka.done
}

// Do runs fn while holding a permit: it acquires one as [Semaphore.Acquire]
// does (opts as there), keeps it with [Permit.KeepAlive] (fn's ctx is
// cancelled, with a cause wrapping [ErrNotHeld], if the permit is lost) and
// always releases it after fn returns, even if fn panics (the panic goes on
// after the release).
//
// Do returns the acquisition's error (fn does not run), or fn's error.
// When the permit was lost before fn returned (a refresh found it gone, or
// refreshes failed until its deadline passed, say through a Redis outage),
// the error wraps ErrNotHeld too, and Do does not try to release a permit
// it knows lost. The release is bounded by the permit's deadline; if it
// fails, its error is joined to fn's (and the Semaphore gives the permit
// back in the background, see [Permit.Release]). A nil fn is an error.
//
// Round trips: the acquisition's (1 when a permit is free), 1 per refresh
// while fn runs (one every third of the timeout), and 1 for the release.
func (s *Semaphore) Do(ctx context.Context, fn func(ctx context.Context, p *Permit) error, opts ...AcquireOption) (err error) {
	if fn == nil {
		return fmt.Errorf("semaphore: do %q: nil fn", s.name)
	}
	p, err := s.Acquire(ctx, opts...)
	if err != nil {
		return err
	}
	held := p.KeepAlive(ctx)
	defer func() { err = p.finish(ctx, err) }()
	return fn(held, p)
}

// finish ends a Do whose fn returned err (or panicked): it releases p
// unless p is known lost, and returns fn's error with the release's.
func (p *Permit) finish(ctx context.Context, err error) error {
	if done := p.stopKeepAlive(); done != nil {
		<-done // a refresh in flight may still move the expiry, or find the permit gone
	}
	p.mu.Lock()
	lost, expiry := p.lost != nil, p.expiry
	p.mu.Unlock()
	// Lost: KeepAlive found it gone, or its last confirmed deadline passed
	// without a successful refresh.
	lost = lost || !time.Now().Before(expiry)
	if lost {
		p.mu.Lock()
		p.released = true
		p.mu.Unlock()
	} else {
		rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), expiry)
		rerr := p.Release(rctx)
		cancel()
		switch {
		case errors.Is(rerr, ErrNotHeld):
			lost = true
		case rerr != nil:
			err = errors.Join(err, rerr)
		}
	}
	if lost && !errors.Is(err, ErrNotHeld) {
		if err == nil {
			return fmt.Errorf("semaphore: do %q: permit lost while fn ran: %w", p.s.name, ErrNotHeld)
		}
		return fmt.Errorf("semaphore: do %q: permit lost while fn ran (%w): %w", p.s.name, ErrNotHeld, err)
	}
	return err
}
