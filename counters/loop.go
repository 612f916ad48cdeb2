package counters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/wait"
)

// LoopOption configures a [Cleaner] or a [Batcher]; each option says which
// it applies to, and giving one to the other is an error.
type LoopOption func(*loopOptions)

type loopOptions struct {
	interval time.Duration
	now      func() time.Time
	logger   *slog.Logger
	given    map[string]bool
}

// WithInterval sets the pause between two passes of [Cleaner.Run] (default
// 1 min, as the book) or between two flushes of [Batcher.Run] (default
// 1 s). It must be at least 1 ms.
func WithInterval(d time.Duration) LoopOption {
	return func(o *loopOptions) { o.interval = d; o.given["WithInterval"] = true }
}

// WithCleanerClock sets the clock a [Cleaner] measures the retention by.
// Default: the [WithClock] clock of the Counters if it has one, else the
// Redis server's TIME (read inside each clean script). Cleaner only.
func WithCleanerClock(now func() time.Time) LoopOption {
	return func(o *loopOptions) { o.now = now; o.given["WithCleanerClock"] = true }
}

// WithLogger sets where Run reports the errors it rides out. Default:
// slog.Default(). Cleaner and Batcher.
func WithLogger(l *slog.Logger) LoopOption {
	return func(o *loopOptions) { o.logger = l; o.given["WithLogger"] = true }
}

func loopOpts(op string, interval time.Duration, allowed []string, opts []LoopOption) (loopOptions, error) {
	o := loopOptions{interval: interval, given: map[string]bool{}}
	if err := option.Apply(&o, opts); err != nil {
		return o, invalid(op, "%v", err)
	}
	for name := range o.given {
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			return o, invalid(op, "option %s does not apply", name)
		}
	}
	switch {
	case o.interval < time.Millisecond:
		return o, invalid(op, "interval %v: must be at least 1ms", o.interval)
	case o.given["WithCleanerClock"] && o.now == nil:
		return o, invalid(op, "nil clock")
	case o.given["WithLogger"] && o.logger == nil:
		return o, invalid(op, "nil logger")
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	return o, nil
}

// inFlight bounds one unit of a loop's work (a clean of a page of
// counters, a flush), which runs to its end even when Run's ctx ends.
const inFlight = 30 * time.Second

// run is the body of every Run: it calls pass until ctx ends, pausing for
// interval between passes. pass gets a context that ctx's end does not
// cancel (bounded by inFlight) and ctx itself, to stop between units.
// Transient errors are logged and retried with backoff; run returns nil
// when ctx ends, or the first error that retrying cannot mend.
func run(ctx context.Context, name string, o loopOptions, wake <-chan struct{}, pass func(stop context.Context) error) error {
	var backoff time.Duration
	for ctx.Err() == nil {
		err := pass(ctx)
		pause := o.interval
		switch {
		case err == nil:
			backoff = 0
		case ctx.Err() != nil:
			return nil
		case !transient(err):
			return fmt.Errorf("counters: %s: %w", name, err)
		default:
			backoff = min(max(2*backoff, 100*time.Millisecond), 5*time.Second, o.interval)
			pause = wait.Jitter(backoff)
			o.logger.LogAttrs(ctx, slog.LevelWarn, "counters: "+name+": will retry",
				slog.Any("error", err), slog.Duration("pause", pause))
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-wake:
			t.Stop()
			return nil
		case <-t.C:
		}
	}
	return nil
}

// transient reports whether a loop should retry after err.
func transient(err error) bool {
	return wait.Transient(err) || errors.Is(err, ria.ErrOutcomeUnknown) || errors.Is(err, context.DeadlineExceeded)
}
