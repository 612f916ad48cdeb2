package semaphore

import (
	"context"
	"fmt"
	"time"

	"github.com/ria-go/ria/internal/lease"
)

// lease returns the semaphore's timeout.
func (s *Semaphore) lease() time.Duration { return time.Duration(s.timeout) * time.Millisecond }

// newPermit returns a permit of s, not yet held, with identifier id.
func (s *Semaphore) newPermit(id string) *Permit {
	p := &Permit{s: s, id: id}
	p.lease.Init(s.lease())
	return p
}

// setExpiry records that the permit's server deadline was set after sent.
func (p *Permit) setExpiry(sent time.Time) { p.lease.Renewed(sent) }

// ops is how the permit's lease is refreshed, released and lost.
func (p *Permit) ops() lease.Ops {
	name := p.s.name
	return lease.Ops{
		Refresh: p.Refresh,
		Release: p.Release,
		NotHeld: ErrNotHeld,
		Lost: func(last error, timedOut bool) error {
			if timedOut {
				return fmt.Errorf("semaphore: keep-alive %q: permit lost, refreshes failed until its timeout ran out (last: %v): %w",
					name, last, ErrNotHeld)
			}
			return fmt.Errorf("semaphore: keep-alive %q: permit lost, a refresh found it gone: %w", name, ErrNotHeld)
		},
	}
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
// acquisition or refresh (a permit handed over: of the waiter's last
// attempt). The first refresh comes a third of the timeout after the start
// of that estimate, so at once for a permit handed over late in a wait;
// on a permit whose estimate has passed already (lost, for all the Permit
// knows), the context is cancelled at once. [Permit.Release] cancels the
// context too, with context.Canceled. Hand the context to the work the
// permit guards.
//
// The refreshes stop at Release, when the permit is lost, or when ctx ends
// (the permit then lapses at its deadline unless refreshed otherwise).
// Calling KeepAlive again returns another context bound to the same loop,
// which then runs until every such ctx has ended (or the permit is released
// or lost); after the loop stopped because its contexts ended, KeepAlive
// starts a new one. On a permit already released or lost, KeepAlive
// returns a context cancelled at once.
func (p *Permit) KeepAlive(ctx context.Context) context.Context {
	return p.lease.KeepAlive(ctx, p.ops())
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
// while fn runs (one every third of the timeout, the first at once for a
// permit handed over late in a wait), and 1 for the release.
func (s *Semaphore) Do(ctx context.Context, fn func(ctx context.Context, p *Permit) error, opts ...AcquireOption) error {
	if fn == nil {
		return fmt.Errorf("semaphore: do %q: nil fn", s.name)
	}
	p, err := s.Acquire(ctx, opts...)
	if err != nil {
		return err
	}
	return p.lease.Run(ctx, p.ops(), fmt.Sprintf("semaphore: do %q: permit lost while fn ran", s.name),
		func(ctx context.Context) error { return fn(ctx, p) })
}
