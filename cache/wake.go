package cache

import (
	"context"
	"fmt"
	"time"

	"github.com/ria-go/ria/internal/wait"
)

// Waiting for a loader (or restorer) is two steps: a script registers the
// caller as a waiter of the lease it found (the lease names its holder's
// token), then a blocking BLMOVE wake wake RIGHT LEFT on that lease's own
// wake list, <wake prefix><token>: it takes the element pushed there and
// puts it back at once, so a single push wakes every waiter, in any
// process, and a waiter that comes late still finds it. Whoever ends the
// lease (its holder's store or release, a Set, a Delete) pushes to that
// list if a waiter registered, and gives it the lease as TTL. Since each
// lease has its own list, nothing that happens to a later lease (taking it
// used to empty a shared list) can hide that push from a waiter that
// registered on the lease but has not started its BLMOVE yet. (internal/wait's
// Pop is the BLPOP of a list of the caller's own; here the list is shared.)
// In one process, one caller per key blocks; the others wait for it in
// memory (Cache.shared, Counter.awaitRestore).

// blockFor is how long a waiter blocks when the lease has pttl ms left:
// until it ends, plus a little jitter so that the waiters freed by an
// expired lease do not all look in the same millisecond.
func blockFor(pttl int64, lease time.Duration) time.Duration {
	d := lease
	if pttl > 0 {
		d = time.Duration(pttl) * time.Millisecond
	}
	return min(d+wait.Spread(d), wait.MaxBlock)
}

// await waits up to d for an element of the wake list key and returns it
// (ok false when d passed). If ctx ends first it returns ctx.Err() at once;
// the BLMOVE runs in its own goroutine (go-redis does not interrupt a
// blocked read) and frees its connection when d ends, which is why d is
// cut to ctx's deadline.
func await(ctx context.Context, c Client, key string, d time.Duration) (string, bool, error) {
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)+time.Millisecond)
	}
	type rotated struct {
		val string
		ok  bool
	}
	move := func(ctx context.Context) (rotated, error) {
		val, ok, err := wait.BLMove(ctx, c, max(d, time.Millisecond), key, key, "RIGHT", "LEFT")
		if err != nil {
			err = fmt.Errorf("BLMOVE %s: %w", key, err)
		}
		return rotated{val, ok}, err
	}
	if ctx.Done() == nil { // a ctx that never ends: no goroutine needed
		r, err := move(ctx)
		return r.val, r.ok, err
	}
	r, err := wait.Detached(ctx, move)
	return r.val, r.ok, err
}
