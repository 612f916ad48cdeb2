package session

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cleaner keeps the number of sessions of an app at most a limit by
// deleting the oldest ones (the book's clean_full_sessions): each deleted
// session loses its login entry, its recent entry, its viewed items and its
// cart together. It is safe for concurrent use, and several Cleaners may
// run at once, in one process or many.
type Cleaner struct {
	s     *Store
	limit int64
	o     loopOptions
}

// Cleaner returns a [Cleaner] that keeps at most limit sessions (the book
// uses 10,000,000). It uses the [WithBatch], [WithInterval] and
// [WithLogger] options. A negative limit or a bad option is an error
// wrapping [ErrInvalid].
func (s *Store) Cleaner(limit int64, opts ...LoopOption) (*Cleaner, error) {
	o, err := loopOpts("cleaner", time.Second, opts)
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, invalid("cleaner", "limit %d: must not be negative", limit)
	}
	return &Cleaner{s: s, limit: limit, o: o}, nil
}

// Clean deletes the oldest sessions until at most the limit remain, and
// returns how many it deleted. Each batch ([WithBatch]: 100 sessions) takes
// two round trips: one reads the count and the oldest sessions, one script
// deletes them (login and recent entries, viewed items and cart) in one
// atomic step, skipping any that was seen again in between; when nothing
// is over the limit Clean takes one round trip. It stops early, without an
// error, if ctx ends between batches or every candidate of a batch was seen
// again.
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
// reporting whether more may be over it.
func (c *Cleaner) batch(ctx context.Context) (deleted int, more bool, err error) {
	k := c.s.keys
	var card *redis.IntCmd
	var oldest *redis.ZSliceCmd
	_, err = c.s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		card = p.ZCard(ctx, k.recentKey())
		oldest = p.ZRangeWithScores(ctx, k.recentKey(), 0, int64(c.o.batch-1))
		return nil
	})
	if err != nil {
		return deleted, true, fmt.Errorf("session: clean: %w", err)
	}
	excess := card.Val() - c.limit
	if excess <= 0 {
		return deleted, false, nil
	}
	cands := oldest.Val()
	if int64(len(cands)) > excess {
		cands = cands[:excess]
	}
	keys := make([]string, 0, 2+2*len(cands))
	args := make([]any, 0, 1+2*len(cands))
	keys = append(keys, k.recentKey(), k.loginKey())
	args = append(args, c.limit)
	for _, z := range cands {
		token, _ := z.Member.(string)
		keys = append(keys, k.viewedKey(token), k.cartKey(token))
		args = append(args, token, strconv.FormatFloat(z.Score, 'g', -1, 64))
	}
	n, err := cleanScript.Int64(ctx, c.s.rdb, keys, args...)
	if err != nil {
		return deleted, true, fmt.Errorf("session: clean: %w", err)
	}
	deleted += int(n)
	if excess <= n || n == 0 {
		// Down to the limit, or every candidate was seen again
		// meanwhile: the rest can wait for the next pass.
		return deleted, false, nil
	}
	return deleted, true, nil
}

// Run cleans until ctx ends (the book's clean_full_sessions loop): it
// calls [Cleaner.Clean], and pauses for the interval ([WithInterval]: 1 s)
// whenever no session is over the limit. A batch in flight when ctx ends
// is finished. Transient Redis errors are logged ([WithLogger]) and retried
// with backoff. Run returns nil when ctx ends, or the first error that
// retrying cannot mend (a key of the wrong type, for instance).
func (c *Cleaner) Run(ctx context.Context) error {
	return run(ctx, "cleaner", c.o.logger, func(unit unitFunc, stop context.Context) (time.Duration, error) {
		_, more, err := c.clean(unit, stop)
		if err != nil || more {
			return 0, err
		}
		return c.o.interval, nil
	})
}
