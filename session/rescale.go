package session

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
)

// Rescaler keeps the app's view ranking recent and bounded (the book's
// rescale_viewed): it drops all but the most viewed items and halves every
// view count, so that old views weigh less than new ones. It is safe for
// concurrent use; two Rescalers running at once halve twice as often.
type Rescaler struct {
	s    *Store
	keep int64
	o    loopOptions
}

// Rescaler returns a [Rescaler] that keeps the 2×[WithCacheTop] most viewed
// items: the book's 20,000 for its 10,000 cacheable pages, so that items
// below the cacheable top can still climb into it. It uses the
// [WithInterval] (default 5 min, as the book) and [WithLogger] options. A
// bad option is an error wrapping [ErrInvalid].
func (s *Store) Rescaler(opts ...LoopOption) (*Rescaler, error) {
	o, err := loopOpts("rescaler", 5*time.Minute, opts)
	if err != nil {
		return nil, err
	}
	keep := int64(math.MaxInt64) // twice the cacheable top, saturated
	if s.cacheTop <= math.MaxInt64/2 {
		keep = 2 * s.cacheTop
	}
	return &Rescaler{s: s, keep: keep, o: o}, nil
}

// Rescale trims the view ranking to the most viewed items and halves every
// count (ZREMRANGEBYRANK, then ZINTERSTORE with weight 0.5), in one round
// trip and one atomic step (MULTI/EXEC): no view counted meanwhile is
// lost or halved twice.
func (r *Rescaler) Rescale(ctx context.Context) error {
	views := r.s.keys.viewsKey()
	_, err := r.s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByRank(ctx, views, r.keep, -1)
		p.ZInterStore(ctx, views, &redis.ZStore{Keys: []string{views}, Weights: []float64{0.5}})
		return nil
	})
	if err != nil {
		return fmt.Errorf("session: rescale: %w", err)
	}
	return nil
}

// Run rescales every interval ([WithInterval]: 5 min) until ctx ends,
// starting with a first rescale at once. A rescale in flight when ctx ends
// is finished. Transient Redis errors are logged ([WithLogger]) and
// retried with backoff. Run returns nil when ctx ends, or the first error
// that retrying cannot mend.
func (r *Rescaler) Run(ctx context.Context) error {
	return run(ctx, "rescaler", r.o.logger, func(unit unitFunc, _ context.Context) (time.Duration, error) {
		work, cancel := unit()
		defer cancel()
		return r.o.interval, r.Rescale(work)
	})
}
