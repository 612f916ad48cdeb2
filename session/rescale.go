package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
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
// trip and one atomic step (a script): no view counted meanwhile is lost or
// halved twice.
//
// A re-send by go-redis after a lost reply is answered from a record of
// the first run, so the ranking is halved once. When no reply came at all,
// the error wraps [ria.ErrOutcomeUnknown]: the ranking may or may not have
// been halved, and calling Rescale again may halve it twice ([Rescaler.Run]
// avoids that). A view ranking of the wrong type is a [*ria.KeyError], and
// nothing is written.
func (r *Rescaler) Rescale(ctx context.Context) error {
	return r.rescale(ctx, r.s.keys.onceKey())
}

// rescale runs the rescale script with the reply record key record.
func (r *Rescaler) rescale(ctx context.Context, record string) error {
	if _, err := rescaleScript.RunOnce(ctx, r.s.rdb, record, []string{r.s.keys.viewsKey()}, r.keep); err != nil {
		return fmt.Errorf("session: rescale: %w", err)
	}
	return nil
}

// Run rescales every interval ([WithInterval]: 5 min) until ctx ends,
// starting with a first rescale at once. A rescale in flight when ctx ends
// is finished. Transient Redis errors are logged ([WithLogger]) and
// retried with backoff. A rescale whose outcome is unknown (no reply) is
// retried with the record of its first attempt, so that it halves once:
// if it ran, the retry is answered from the record. Each retry, go-redis's
// re-sends of it included, ends (its context's deadline) before that
// record may have expired (it lives the client's retry window, see the
// package doc, 31 s at most here); after that, Run does not try
// that rescale again and waits for the next one: the ranking goes one
// interval without halving rather than risk halving twice; it logs a
// warning. Run returns nil when ctx ends, or the first error that retrying
// cannot mend, such as a *ria.KeyError (a view ranking of the wrong type).
func (r *Rescaler) Run(ctx context.Context) error {
	var (
		record   string    // the pending rescale's record, "" when none
		lastSafe time.Time // when retrying with record may stop being safe
	)
	return run(ctx, "rescaler", r.o.logger, func(unit unitFunc, _ context.Context) (time.Duration, error) {
		work, cancel := unit()
		defer cancel()
		if record != "" {
			if !time.Now().Before(lastSafe) {
				r.o.logger.LogAttrs(ctx, slog.LevelWarn,
					"session: rescaler: the last rescale's outcome is unknown and its record may have expired: not repeated",
					slog.String("record", record))
				record = ""
				return r.o.interval, nil
			}
			// A retry ends by lastSafe, go-redis's re-sends of it
			// included: none of them may reach Redis once the record
			// may be gone (it would run the rescale again). Its own
			// retry window runs past lastSafe.
			var cancelRetry context.CancelFunc
			work, cancelRetry = context.WithDeadline(work, lastSafe)
			defer cancelRetry()
		} else {
			record = r.s.keys.onceKey()
			// The record lives at least this long after the first
			// attempt reached the server (see script.RunOnce), less a
			// margin for the clocks.
			window := script.ReplayWindow(r.s.rdb)
			if dl, ok := work.Deadline(); ok {
				window = min(window, time.Until(dl)+time.Second)
			}
			lastSafe = time.Now().Add(window - time.Second)
		}
		err := r.rescale(work, record)
		if err == nil || !errors.Is(err, ria.ErrOutcomeUnknown) {
			record = "" // done, or refused: the next rescale is a new one
		}
		return r.o.interval, err
	})
}
