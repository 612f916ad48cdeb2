package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ria-go/ria/internal/option"
)

// MaxMulti is the most names [Locker.AcquireAll] takes at once.
const MaxMulti = 64

// Multi is several locks held together ([Locker.AcquireAll]).
type Multi struct {
	locks []*Lock
}

// Locks returns the locks, in the order of their names.
func (m *Multi) Locks() []*Lock { return slices.Clone(m.locks) }

// AcquireAll takes every lock of names for ttl, all or none (a multi-lock):
// it acquires them one by one in the order of their names, as
// [Locker.Acquire] does (each waits in its own FIFO queue), so two callers
// wanting overlapping sets never deadlock, and gives back those it took if
// one cannot be had. [WithWait] bounds the whole acquisition; WithWait(0)
// tries each once. The locks live in several Cluster slots (one per name),
// so taking them is not one atomic step: another caller may hold some of
// them for a moment while it fails to get the rest. Once all are held,
// if taking them lasted more than a tenth of ttl (a wait), the earlier
// ones are extended to a full ttl again (one round trip each): every lock
// of the set has about 0.9 ttl or more left when AcquireAll returns.
//
// Round trips: one acquisition per name (1 each when free), plus one
// extension per earlier name when taking them lasted more than ttl/10. It
// returns [ErrNotObtained] (joined as Acquire's) naming the lock it could
// not get, and having given back the others: also when a lock it took
// earlier was lost while it waited for a later one (its TTL ran out; the
// error then wraps [ErrNotHeld] too). Duplicate names count once; no name,
// more than [MaxMulti], or a bad name or ttl is an error.
func (lk *Locker) AcquireAll(ctx context.Context, names []string, ttl time.Duration, opts ...AcquireOption) (*Multi, error) {
	sorted := slices.Compact(slices.Sorted(slices.Values(names)))
	if len(sorted) == 0 || len(sorted) > MaxMulti {
		return nil, fmt.Errorf("lock: acquire all: %d names: want 1 to %d", len(sorted), MaxMulti)
	}
	for _, n := range sorted {
		if err := check(n, ttl); err != nil {
			return nil, err
		}
	}
	var o acquireOptions
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("lock: acquire all: %w", err)
	}
	if o.waitSet && o.wait < 0 {
		return nil, fmt.Errorf("lock: acquire all: wait %v: must not be negative", o.wait)
	}
	start := time.Now()
	m := &Multi{}
	for _, name := range sorted {
		var l *Lock
		var err error
		switch {
		case !o.waitSet:
			l, err = lk.Acquire(ctx, name, ttl)
		case o.wait == 0:
			l, err = lk.TryAcquire(ctx, name, ttl)
		default:
			left := o.wait - time.Since(start)
			if left <= 0 {
				err = fmt.Errorf("lock: acquire %q: %w", name, ErrNotObtained)
				break
			}
			l, err = lk.Acquire(ctx, name, ttl, WithWait(left))
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("lock: acquire all: %w", err), m.giveUp(ctx))
		}
		m.locks = append(m.locks, l)
	}
	// The locks taken first have been running down their TTL while the
	// later ones were awaited: renew them when that took a noticeable part
	// of it.
	if time.Since(start) > ttl/10 {
		for _, l := range m.locks[:len(m.locks)-1] {
			err := l.Extend(ctx, ttl)
			if errors.Is(err, ErrNotHeld) {
				// its TTL ran out while a later lock was awaited (and
				// another caller may hold it now): the set was not obtained
				err = fmt.Errorf("lock: acquire %q: lost while the others were awaited (%w): %w", l.name, ErrNotObtained, err)
			}
			if err != nil {
				return nil, errors.Join(fmt.Errorf("lock: acquire all: %w", err), m.giveUp(ctx))
			}
		}
	}
	return m, nil
}

// giveUp releases the locks taken so far, last first.
func (m *Multi) giveUp(ctx context.Context) error {
	var errs []error
	for i := len(m.locks) - 1; i >= 0; i-- {
		if err := m.locks[i].Release(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, ErrNotHeld) {
			errs = append(errs, err)
		}
	}
	m.locks = nil
	return errors.Join(errs...)
}

// Release releases every lock of the set, one round trip each; the error
// joins those of the locks that failed ([ErrNotHeld] for a lock that
// expired).
func (m *Multi) Release(ctx context.Context) error {
	var errs []error
	for i := len(m.locks) - 1; i >= 0; i-- {
		errs = append(errs, m.locks[i].Release(ctx))
	}
	return errors.Join(errs...)
}

// Extend resets every lock's TTL to ttl, one round trip each; the error
// joins those of the locks that failed ([ErrNotHeld] for a lock lost).
func (m *Multi) Extend(ctx context.Context, ttl time.Duration) error {
	var errs []error
	for _, l := range m.locks {
		errs = append(errs, l.Extend(ctx, ttl))
	}
	return errors.Join(errs...)
}

// DoAll runs fn while holding every lock of names, as [Locker.Do] does for
// one: it acquires them with [Locker.AcquireAll], keeps each alive (fn's
// ctx is cancelled, with cause [ErrNotHeld], when any is lost) and always
// releases them. It returns the acquisition's error, or fn's, joined with
// [ErrNotHeld] when a lock was lost while fn ran and with the release's
// errors. A nil fn is an error.
func (lk *Locker) DoAll(ctx context.Context, names []string, ttl time.Duration, fn func(ctx context.Context, m *Multi) error, opts ...AcquireOption) (err error) {
	if fn == nil {
		return errors.New("lock: do all: nil fn")
	}
	m, err := lk.AcquireAll(ctx, names, ttl, opts...)
	if err != nil {
		return err
	}
	held := ctx
	for _, l := range m.locks {
		held = l.KeepAlive(held)
	}
	defer func() {
		var errs []error
		lost := false
		for _, l := range m.locks {
			gone, rerr := l.lease.Finish(ctx, l.ops(l.Extend, l.Release))
			lost = lost || gone
			if rerr != nil {
				errs = append(errs, rerr)
			}
		}
		if lost && !errors.Is(err, ErrNotHeld) {
			errs = append(errs, fmt.Errorf("lock: do all: a lock was lost while fn ran: %w", ErrNotHeld))
		}
		err = errors.Join(append([]error{err}, errs...)...)
	}()
	return fn(held, m)
}
