package counters

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ria-go/ria/internal/script"
)

// Start starts timing a call in context name (the book's access_time, as
// a stop func): the returned stop records the time since Start, in
// seconds, with [Stats.Record]. Time is measured with the monotonic clock.
//
//	stop := st.Start("/cart")
//	serve(w, r)
//	if err := stop(ctx); err != nil { ... }
func (s *Stats) Start(name string) (stop func(ctx context.Context) error) {
	start := time.Now()
	return func(ctx context.Context) error {
		return s.Record(ctx, name, time.Since(start))
	}
}

// Time runs fn, records how long it took as [Stats.Start] does, and
// returns fn's error joined with the recording's. fn's time is recorded
// whether it fails or not.
func (s *Stats) Time(ctx context.Context, context string, fn func() error) error {
	if fn == nil {
		return invalid("stats time", "%s %q: nil function", s.typ, context)
	}
	start := time.Now()
	err := fn()
	return errors.Join(err, s.Record(ctx, context, time.Since(start)))
}

// Record adds a duration d, in seconds, to the statistics of context and
// ranks context by its hour's mean among the slowest kept
// ([WithSlowestKept]), in one round trip and one atomic step (the book
// takes two, and three commands more). Errors as [Stats.Update]; a
// negative d is an error wrapping [ErrInvalid].
func (s *Stats) Record(ctx context.Context, context string, d time.Duration) error {
	if d < 0 {
		return invalid("stats record", "%s %q: duration %v: must not be negative", s.typ, context, d)
	}
	_, err := s.update(ctx, context, d.Seconds(), "", true)
	return err
}

// Slow is a context ranked by [Stats.Slowest].
type Slow struct {
	Context string
	Mean    float64 // mean of the hour of its last recording, in the values' unit
}

// Slowest returns up to n of the slowest contexts recorded with
// [Stats.Record] (or Start or Time), slowest first, in one round trip. n
// must be at least 1.
func (s *Stats) Slowest(ctx context.Context, n int) ([]Slow, error) {
	if n < 1 {
		return nil, invalid("stats slowest", "%s: n %d: must be at least 1", s.typ, n)
	}
	key := s.c.slowestKey(s.typ)
	zs, err := s.c.rdb.ZRevRangeWithScores(ctx, key, 0, int64(n-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("counters: stats slowest %s: %w", s.typ, script.WrongType(ctx, s.c.rdb, err, key, "counters slowest", "zset"))
	}
	out := make([]Slow, len(zs))
	for i, z := range zs {
		m, _ := z.Member.(string)
		out[i] = Slow{Context: m, Mean: z.Score}
	}
	return out, nil
}
