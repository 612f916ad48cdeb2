package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/wait"
)

// LoopOption configures one of the background loops: [Cleaner],
// [RowCacher] or [Rescaler]. A loop ignores the options that do not
// concern it (each option says which loops use it).
type LoopOption func(*loopOptions)

type loopOptions struct {
	interval    time.Duration
	intervalSet bool
	batch       int
	now         func() time.Time
	logger      *slog.Logger
	keepCarts   bool
}

// WithInterval sets how long a loop's Run pauses when it has nothing to do.
// Defaults: 1 s for a [Cleaner] (the book's sleep when there is nothing to
// clean), 50 ms for a [RowCacher] (it also wakes when the next row is due,
// if that is sooner), 5 min for a [Rescaler] (its period). It must be
// positive.
func WithInterval(d time.Duration) LoopOption {
	return func(o *loopOptions) { o.interval, o.intervalSet = d, true }
}

// WithBatch sets how many sessions a [Cleaner] deletes per atomic step.
// Default: 100, as the book. It must be between 1 and [MaxBatch].
func WithBatch(n int) LoopOption { return func(o *loopOptions) { o.batch = n } }

// WithKeepCarts makes a [Cleaner] keep the carts of the sessions it
// deletes (the book's clean_sessions, beside clean_full_sessions): a
// returning visitor who presents the old token finds its cart
// ([Store.Cart]) though it must log in again. Nothing then deletes those
// carts: give them your own expiry policy (for example a TTL set where
// you read them back).
func WithKeepCarts() LoopOption { return func(o *loopOptions) { o.keepCarts = true } }

// MaxBatch is the largest batch [WithBatch] accepts.
const MaxBatch = 10000

// WithClock sets the clock a [RowCacher] schedules rows by. Default:
// time.Now. Tests use it to move time without sleeping.
func WithClock(now func() time.Time) LoopOption { return func(o *loopOptions) { o.now = now } }

// WithLogger sets where a loop's Run reports the errors it rides out
// (Redis unreachable, a row that failed to load, a loader that panicked).
// Default: slog.Default().
func WithLogger(l *slog.Logger) LoopOption { return func(o *loopOptions) { o.logger = l } }

// loopOpts applies opts over the defaults and checks them.
func loopOpts(op string, interval time.Duration, opts []LoopOption) (loopOptions, error) {
	o := loopOptions{interval: interval, batch: 100, now: time.Now}
	if err := option.Apply(&o, opts); err != nil {
		return o, invalid(op, "%v", err)
	}
	switch {
	case o.intervalSet && o.interval <= 0:
		return o, invalid(op, "interval %v: must be positive", o.interval)
	case o.batch < 1 || o.batch > MaxBatch:
		return o, invalid(op, "batch %d: must be between 1 and %d", o.batch, MaxBatch)
	case o.now == nil:
		return o, invalid(op, "nil clock")
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	return o, nil
}

const (
	// inFlight bounds one unit of a loop's work (a batch, a row, a
	// rescale), which runs to its end even when Run's ctx ends meanwhile.
	inFlight = 30 * time.Second
	// maxBackoff caps the pause after a transient error.
	maxBackoff = 5 * time.Second
)

// unitFunc returns the context for one unit of a loop's work (a batch, a
// row, a rescale) and its cancel function.
type unitFunc func() (context.Context, context.CancelFunc)

// same is the unitFunc of a single pass called directly: every unit runs on
// ctx.
func same(ctx context.Context) unitFunc {
	return func() (context.Context, context.CancelFunc) { return ctx, func() {} }
}

// run is the body of every Run: it calls pass until ctx ends, pausing for
// what pass returns. pass gets a unitFunc that gives each unit of work a
// context that ctx's end does not cancel (so that a unit in flight
// finishes), bounded by inFlight, and ctx itself, to check between units.
// Transient errors are logged and retried with backoff; run returns nil
// when ctx ends, or the first error that retrying cannot mend.
func run(ctx context.Context, name string, log *slog.Logger, pass func(unit unitFunc, stop context.Context) (time.Duration, error)) error {
	unit := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), inFlight)
	}
	var backoff time.Duration
	for ctx.Err() == nil {
		pause, err := pass(unit, ctx)
		switch {
		case err == nil:
			backoff = 0
		case ctx.Err() != nil:
			return nil
		case !transient(err):
			return fmt.Errorf("session: %s: %w", name, err)
		default:
			backoff = min(max(2*backoff, 100*time.Millisecond), maxBackoff)
			pause = wait.Jitter(backoff)
			log.LogAttrs(ctx, slog.LevelWarn, "session: "+name+": will retry",
				slog.Any("error", err), slog.Duration("pause", pause))
		}
		if pause > 0 && wait.Sleep(ctx, pause) != nil {
			return nil
		}
	}
	return nil
}

// transient reports whether a loop should retry after err: Redis or the
// network said "not now", or the work context's own deadline passed.
func transient(err error) bool {
	return wait.Transient(err) || errors.Is(err, context.DeadlineExceeded)
}
