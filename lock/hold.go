package lock

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ria-go/ria/internal/lease"
)

// hold is what a held lock keeps in process, exclusive ([Lock]) or
// read/write ([RWHold]): its fence, and its lease (TTL, local expiry,
// state and extension loop).
type hold struct {
	fence atomic.Int64
	lease lease.Hold
}

// setGrant records the fence of a grant handed over by a release; its TTL
// started after since (the send time of the caller's last attempt, which
// found the lock taken: a grant pushed before it would have been found by
// it), so since+ttl is a safe expiry estimate.
func (h *hold) setGrant(fence string, since time.Time) error {
	f, err := strconv.ParseInt(fence, 10, 64)
	if err != nil {
		return fmt.Errorf("malformed grant %q: %w", fence, err)
	}
	h.fence.Store(f)
	h.lease.Renewed(since)
	return nil
}

// acquired records an acquisition sent at sent that minted fence.
func (h *hold) acquired(fence int64, sent time.Time) {
	h.fence.Store(fence)
	h.lease.Renewed(sent)
}

// ops is how a hold whose extension is extend and whose release is release
// keeps its lease: a lost hold's cause is ErrNotHeld itself.
func (h *hold) ops(extend func(context.Context, time.Duration) error, release func(context.Context) error) lease.Ops {
	return lease.Ops{
		Refresh: func(ctx context.Context) error { return extend(ctx, h.lease.TTL()) },
		Release: release,
		NotHeld: ErrNotHeld,
		Lost:    func(error, bool) error { return ErrNotHeld },
	}
}

// run runs fn while the hold is kept alive (its ctx is cancelled, with
// cause ErrNotHeld, if the hold is lost) and always releases it after, as
// [Locker.Do] documents; what names the call in errors.
func (h *hold) run(ctx context.Context, what string, extend func(context.Context, time.Duration) error, release func(context.Context) error, fn func(ctx context.Context) error) error {
	return h.lease.Run(ctx, h.ops(extend, release), fmt.Sprintf("lock: %s: lost while fn ran", what), fn)
}

// KeepAlive extends the lock by its TTL every TTL/3 in the background and
// returns a context derived from ctx that is cancelled as soon as the lock
// is lost, with [ErrNotHeld] as its cause (context.Cause): when an
// extension finds the lock no longer ours, or when extensions keep failing
// (Redis unreachable) until the last confirmed TTL has run out. Release
// cancels it too, with context.Canceled. Hand the context to the work the
// lock protects.
//
// The TTL is judged from a local estimate (see the package doc), and the
// first extension comes TTL/3 after the start of that estimate: at once
// for a lock handed over late in a wait, whose estimate (dated from the
// waiter's last attempt) has less than 2/3 of the TTL left. If the
// estimate has passed already, the lock counts as lost and the context is
// cancelled at once.
//
// The extensions stop at [Lock.Release], when the lock is lost, or when
// ctx ends (then the lock lapses at its TTL unless extended otherwise).
// Calling KeepAlive again returns another context bound to the same
// extension loop, which then runs until every such ctx has ended (or the
// lock is released or lost); after the loop stopped because its contexts
// ended, KeepAlive starts a new one.
func (l *Lock) KeepAlive(ctx context.Context) context.Context {
	return l.lease.KeepAlive(ctx, l.ops(l.Extend, l.Release))
}

// KeepAlive extends the hold by its TTL every TTL/3 in the background and
// returns a context derived from ctx that is cancelled as soon as the hold
// is lost, with [ErrNotHeld] as its cause, as [Lock.KeepAlive] does for
// the exclusive lock (same rules: the first extension at once for a hold
// handed over late in a wait; Release cancels it with context.Canceled;
// the extensions stop at Release, when the hold is lost, or when every ctx
// bound to the loop has ended).
func (h *RWHold) KeepAlive(ctx context.Context) context.Context {
	return h.lease.KeepAlive(ctx, h.ops(h.Extend, h.Release))
}
