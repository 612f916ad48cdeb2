package lock

import (
	"context"
	"time"
)

// NewLockForTest returns an unacquired Lock, for driving single attempts.
func (lk *Locker) NewLockForTest(name string, ttl time.Duration) *Lock { return lk.newLock(name, ttl) }

// AttemptForTest runs one acquire attempt.
func (l *Lock) AttemptForTest(ctx context.Context, left time.Duration, queued bool) (bool, error) {
	ok, _, err := l.attempt(ctx, left, queued)
	return ok, err
}
