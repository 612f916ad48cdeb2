package counters

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed clean.lua
	cleanLua    string
	cleanScript = script.NewOnce("counters clean", cleanLua)
)

// maxDeletes bounds the samples one clean script deletes per precision of
// one counter; a counter with more to delete is cleaned again in the same
// pass.
const maxDeletes = 1000

// Cleaner enforces the retention of every known counter (the book's
// clean_counters): it deletes the samples older than each precision's last
// Samples slices, and forgets the counters left with none. It is safe for
// concurrent use, and several Cleaners may run at once, in one process or
// many: each counter is cleaned by one atomic script that only ever
// deletes what is out of the retention.
type Cleaner struct {
	c   *Counters
	o   loopOptions
	now func() time.Time
}

// Cleaner returns a [Cleaner] of c's counters. Options: [WithInterval]
// (default 1 min), [WithCleanerClock], [WithLogger]. A bad option is an
// error wrapping [ErrInvalid].
func (c *Counters) Cleaner(opts ...LoopOption) (*Cleaner, error) {
	o, err := loopOpts("cleaner", time.Minute, []string{"WithInterval", "WithCleanerClock", "WithLogger"}, opts)
	if err != nil {
		return nil, err
	}
	now := o.now
	if now == nil {
		now = c.now
	}
	return &Cleaner{c: c, o: o, now: now}, nil
}

// CleanStats is what one pass of a [Cleaner] did.
type CleanStats struct {
	Counters  int   // counters looked at
	Deleted   int64 // samples deleted
	Forgotten int   // counters forgotten: nothing was left of them
}

// Clean runs one pass over every known counter. Counters are found by
// scanning each node ([Counters.Names]); each page of up to 1000 keys
// scanned costs one more round trip per node, a pipeline of one clean
// script per counter found. A counter with more than 1000 samples to
// delete at one precision (a cleaner that was stopped for long) is cleaned
// by as many scripts as it takes, 1000 per precision each. Clean returns
// the errors of the counters it could not clean (a *ria.KeyError for a key
// of the wrong type), joined, after cleaning the others; it stops early,
// without an error, if ctx ends.
func (cl *Cleaner) Clean(ctx context.Context) (CleanStats, error) {
	return cl.pass(ctx, false)
}

// pass cleans every counter and stops between pages when stop ends. When
// detached, the page in flight when stop ends is finished (bounded by
// inFlight).
func (cl *Cleaner) pass(stop context.Context, detached bool) (CleanStats, error) {
	var (
		mu   sync.Mutex // the nodes of a Cluster are scanned concurrently
		st   CleanStats
		errs []error
	)
	ctx := stop
	if detached {
		ctx = context.WithoutCancel(stop)
	}
	err := cl.c.scan(ctx, func(ctx context.Context, names []string) error {
		if stop.Err() != nil {
			return stop.Err()
		}
		if detached {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, inFlight)
			defer cancel()
		}
		s, err := cl.page(ctx, names)
		mu.Lock()
		defer mu.Unlock()
		st.Counters += s.Counters
		st.Deleted += s.Deleted
		st.Forgotten += s.Forgotten
		if err != nil {
			if transient(err) {
				return err
			}
			errs = append(errs, err)
		}
		return nil
	})
	if stop.Err() != nil && (err == nil || errors.Is(err, stop.Err())) {
		return st, nil
	}
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return st, fmt.Errorf("counters: clean: %w", errors.Join(errs...))
	}
	return st, nil
}

// page cleans the counters names: one pipeline, then one more for those
// with more left to delete, and so on.
func (cl *Cleaner) page(ctx context.Context, names []string) (CleanStats, error) {
	st := CleanStats{Counters: len(names)}
	now := ""
	if cl.now != nil {
		now = strconv.FormatInt(cl.now().Unix(), 10)
	}
	ttl := script.ReplayWindow(cl.c.rdb)
	var errs []error
	for len(names) > 0 {
		calls := make([]*script.Call, 0, len(names))
		for _, name := range names {
			k := []string{cl.c.knownKey(name), cl.c.samplesKey(name)}
			calls = append(calls, cleanScript.Prepare(cl.c.keys.Once(name), ttl, k, now, maxDeletes))
		}
		script.Send(ctx, cl.c.rdb, calls)
		var more []string
		for i, ca := range calls {
			if ca.Err != nil {
				errs = append(errs, fmt.Errorf("counter %q: %w", names[i], ca.Err))
				continue
			}
			r, err := cleanScript.AsInt64s(ca.Val)
			if err != nil || len(r) != 3 {
				errs = append(errs, fmt.Errorf("counter %q: %w", names[i], errors.Join(err, errors.New("want 3 integers"))))
				continue
			}
			st.Deleted += r[0]
			if r[1] == 1 {
				more = append(more, names[i])
			}
			st.Forgotten += int(r[2])
		}
		names = more
	}
	return st, errors.Join(errs...)
}

// Run cleans until ctx ends: a pass ([Cleaner.Clean]) every interval
// ([WithInterval]: 1 min). The page of counters in flight when ctx ends is
// finished. Transient errors (Redis unreachable, a reply lost) are logged
// ([WithLogger]) and retried with backoff. Run returns nil when ctx ends,
// or the error of a pass that retrying cannot mend (a key of the wrong
// type), after that pass has cleaned every other counter.
func (cl *Cleaner) Run(ctx context.Context) error {
	return run(ctx, "cleaner", cl.o, nil, func(stop context.Context) error {
		_, err := cl.pass(stop, true)
		return err
	})
}
