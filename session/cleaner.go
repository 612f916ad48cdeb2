package session

import (
	"context"
	"fmt"
	"time"
)

// Cleaner keeps the number of sessions of an app at most a limit by
// deleting the oldest ones (the book's clean_full_sessions): each deleted
// session loses its login entry, its recent entry, its viewed items and its
// cart together ([WithKeepCarts]: all but its cart, the book's
// clean_sessions). It is safe for concurrent use, and several Cleaners may
// run at once, in one process or many: none deletes a session that would
// bring the app below its limit.
type Cleaner struct {
	s     *Store
	limit int64
	o     loopOptions
}

// Cleaner returns a [Cleaner] that keeps at most limit sessions (the book
// uses 10,000,000). It uses the [WithBatch], [WithInterval], [WithLogger]
// and [WithKeepCarts] options. A limit below 1 is an error wrapping [ErrInvalid]:
// a Cleaner never deletes every session (to log everyone out, delete the
// app's keys instead); so is a bad option.
func (s *Store) Cleaner(limit int64, opts ...LoopOption) (*Cleaner, error) {
	o, err := loopOpts("cleaner", time.Second, opts)
	if err != nil {
		return nil, err
	}
	if limit < 1 {
		return nil, invalid("cleaner", "limit %d: must be at least 1", limit)
	}
	return &Cleaner{s: s, limit: limit, o: o}, nil
}

// Clean deletes the oldest sessions until at most the limit remain, and
// returns how many it deleted. Each batch ([WithBatch]: 100 sessions) is
// one round trip: one script finds the oldest sessions over the limit and
// deletes them (login and recent entries, viewed items and cart) in one
// atomic step; when nothing is over the limit Clean takes one round trip.
// It stops early, without an error, if ctx ends between batches.
//
// A batch re-sent by go-redis after a lost reply is answered from a record
// of its first run, so the count is exact; a batch run again later deletes
// only sessions still over the limit, never more. When a batch got no reply
// at all, Clean returns the sessions deleted before it and an error
// wrapping [ria.ErrOutcomeUnknown]. A key holding something this package
// did not write there (a session's viewed items or cart included) is a
// [*ria.KeyError], and that batch deletes nothing.
func (c *Cleaner) Clean(ctx context.Context) (int, error) {
	n, _, err := c.clean(same(ctx), ctx)
	return n, err
}

// clean runs batches, each on a context from unit, until done, stopping
// early when stop ends.
// more reports whether to clean again at once (an error, or stop ended
// with sessions over the limit).
func (c *Cleaner) clean(unit unitFunc, stop context.Context) (deleted int, more bool, err error) {
	for stop.Err() == nil {
		ctx, cancel := unit()
		n, more, err := c.batch(ctx)
		cancel()
		deleted += n
		if err != nil || !more {
			return deleted, more, err
		}
	}
	return deleted, true, nil
}

// batch deletes at most one batch of the oldest sessions over the limit,
// reporting whether more are over it.
func (c *Cleaner) batch(ctx context.Context) (deleted int, more bool, err error) {
	k := c.s.keys
	v, err := cleanScript.RunOnce(ctx, c.s.rdb, k.onceKey(),
		[]string{k.recentKey(), k.loginKey(), k.viewed, k.cart}, c.limit, c.o.batch, c.o.keepCarts)
	if err != nil {
		return 0, true, fmt.Errorf("session: clean: %w", err)
	}
	r, err := cleanScript.AsInt64s(v)
	if err == nil && (len(r) != 2 || r[0] < 0 || r[0] > int64(c.o.batch)) {
		err = fmt.Errorf("script %s: malformed reply %v", cleanScript.Name(), r)
	}
	if err != nil {
		return 0, true, fmt.Errorf("session: clean: %w", err)
	}
	return int(r[0]), r[1] == 1, nil
}

// Run cleans until ctx ends (the book's clean_full_sessions loop): it
// calls [Cleaner.Clean], and pauses for the interval ([WithInterval]: 1 s)
// whenever no session is over the limit. A batch in flight when ctx ends
// is finished. Transient Redis errors (and batches whose outcome is
// unknown: running one again is safe) are logged ([WithLogger]) and
// retried with backoff. Run returns nil when ctx ends, or the first error
// that retrying cannot mend, such as a *ria.KeyError (a key of the wrong
// type).
func (c *Cleaner) Run(ctx context.Context) error {
	return run(ctx, "cleaner", c.o.logger, func(unit unitFunc, stop context.Context) (time.Duration, error) {
		_, more, err := c.clean(unit, stop)
		if err != nil || more {
			return 0, err
		}
		return c.o.interval, nil
	})
}
