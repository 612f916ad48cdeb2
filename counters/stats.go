package counters

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

// ErrTooOld is returned by [Stats.UpdateAt] for a time before the previous
// hour of the statistics: only the current and the previous hour are kept.
var ErrTooOld = errors.New("counters: time before the previous hour")

var (
	//go:embed stats.lua
	statsLua    string
	statsScript = script.New("counters stats", statsLua)
)

// AccessTime is the book's statistics type for the time a page takes.
const AccessTime = "AccessTime"

// DefaultSlowestKept is how many contexts [Stats.Time] keeps in the
// ranking of the slowest (the book's 100).
const DefaultSlowestKept = 100

// StatsOption configures [Counters.Stats].
type StatsOption func(*Stats)

// WithSlowestKept sets how many of the slowest contexts [Stats.Time]
// keeps ranked. Default: [DefaultSlowestKept]. It must be at least 1.
func WithSlowestKept(n int) StatsOption { return func(s *Stats) { s.keep = n } }

// Stats keeps the statistics of one type of value (the book's
// update_stats), per context: count, sum, minimum, maximum and sum of
// squares of the values of the current hour, and of the hour before. All
// the contexts of a type, and its ranking of the slowest, live in one
// Cluster slot (hash tag {type}), so that recording a time and ranking it
// are one atomic step; use several types to spread load over a Cluster.
// It is safe for concurrent use.
type Stats struct {
	c    *Counters
	typ  string
	keep int
}

// Stats returns the statistics of type typ (for instance [AccessTime]).
// typ must be a valid name without ':'; a bad typ or option is an error
// wrapping [ErrInvalid]. Nothing reaches Redis.
func (c *Counters) Stats(typ string, opts ...StatsOption) (*Stats, error) {
	if err := keys.CheckEntity("stats type", typ); err != nil {
		return nil, fmt.Errorf("counters: stats: %w: %w", err, ErrInvalid)
	}
	if strings.Contains(typ, ":") {
		return nil, invalid("stats", "type %q: must not contain ':'", typ)
	}
	s := &Stats{c: c, typ: typ, keep: DefaultSlowestKept}
	if err := option.Apply(s, opts); err != nil {
		return nil, invalid("stats", "%v", err)
	}
	if s.keep < 1 {
		return nil, invalid("stats", "slowest kept %d: must be at least 1", s.keep)
	}
	return s, nil
}

// Summary is the statistics of one context for one hour.
type Summary struct {
	Hour     time.Time // the hour's start; zero when nothing was recorded
	Count    int64
	Sum      float64
	Min, Max float64
	SumSq    float64 // sum of the squares of the values
}

// Mean returns Sum/Count, or 0 when Count is 0.
func (s Summary) Mean() float64 {
	if s.Count == 0 {
		return 0
	}
	return s.Sum / float64(s.Count)
}

// StdDev returns the sample standard deviation, computed as the book
// does from the count, the sum and the sum of squares:
// sqrt((SumSq - Sum²/Count) / (Count-1)), with Count-1 taken as 1 for a
// single value and a negative rounding error taken as 0.
func (s Summary) StdDev() float64 {
	if s.Count == 0 {
		return 0
	}
	n := float64(s.Count)
	num := s.SumSq - s.Sum*s.Sum/n
	return math.Sqrt(max(num, 0) / max(n-1, 1))
}

// Update adds value to the statistics of context for the current hour of
// the Redis server's clock (or the [WithClock] clock of the Counters), in
// one round trip and one atomic step, and returns that hour's summary. The
// first value of a new hour moves the hour before it to the previous hour
// and drops anything older, inside the same step, so writers at a boundary
// neither lose nor double a value. It returns an error wrapping
// [ErrInvalid] for an empty context or a NaN or infinite value,
// [ErrOverflow] when the sums would become infinite, a *ria.KeyError if a
// key holds something else, and an error wrapping ria.ErrOutcomeUnknown if
// no reply came back (a re-send by go-redis adds the value once).
func (s *Stats) Update(ctx context.Context, context string, value float64) (Summary, error) {
	return s.update(ctx, context, value, "", false)
}

// UpdateAt adds value to the statistics of context for the hour of at,
// for back-filling and tests: the current hour, a newer one (which
// rotates as in [Stats.Update]) or the previous one. Before that it
// returns [ErrTooOld], and for a time more than [MaxAhead] after the clock
// or more than 2^52 s (about 143 million years) from the Unix epoch an
// error wrapping [ErrInvalid]; either way nothing changes. Other errors as
// [Stats.Update].
func (s *Stats) UpdateAt(ctx context.Context, context string, value float64, at time.Time) (Summary, error) {
	if u := at.Unix(); u < -1<<52 || u > 1<<52 {
		// Its hour would be beyond what Lua's numbers hold exactly: stored,
		// it would make the context's statistics unreadable.
		return Summary{}, invalid("stats update", "%s %q: time %d s from the epoch: beyond ±2^52 s", s.typ, context, u)
	}
	sum, err := s.update(ctx, context, value, strconv.FormatInt(at.Unix(), 10), false)
	if redisCode(err) == "AHEAD" {
		return Summary{}, invalid("stats update", "%s %q: time %s: more than %v after the clock",
			s.typ, context, at.UTC().Format(time.RFC3339), MaxAhead)
	}
	return sum, err
}

func (s *Stats) update(ctx context.Context, context string, value float64, at string, rank bool) (Summary, error) {
	if err := s.checkContext("update", context); err != nil {
		return Summary{}, err
	}
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return Summary{}, invalid("stats update", "%s %q: value %v: must be a finite number", s.typ, context, value)
	}
	k := []string{s.c.statsKey(s.typ, context, "cur"), s.c.statsKey(s.typ, context, "last"), s.c.slowestKey(s.typ)}
	keep := ""
	if rank {
		keep = strconv.Itoa(s.keep)
	}
	now := ""
	if s.c.now != nil {
		now = strconv.FormatInt(s.c.now().Unix(), 10)
	}
	v, err := s.c.group.Run(ctx, statsScript.Call(k, luaFloat(value), at, keep, context, now))
	if err != nil {
		switch redisCode(err) {
		case "TOOOLD":
			err = fmt.Errorf("%w: %w", ErrTooOld, err)
		case "OVERFLOW":
			err = fmt.Errorf("%w: %w", ErrOverflow, err)
		}
		return Summary{}, fmt.Errorf("counters: stats update %s %q: %w", s.typ, context, err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr) != 6 {
		return Summary{}, fmt.Errorf("counters: stats update %s %q: want 6 values, got %v", s.typ, context, v)
	}
	flat := []string{"hour", "", "count", "", "sum", "", "min", "", "max", "", "sumsq", ""}
	for i, x := range arr {
		flat[2*i+1], _ = x.(string)
	}
	m := map[string]string{}
	for i := 0; i < len(flat); i += 2 {
		m[flat[i]] = flat[i+1]
	}
	return parseSummary(k[0], m)
}

// Get returns the statistics of context for the newest hour recorded and
// for the hour before it, in one round trip (two HGETALLs in a pipeline to
// the type's slot). cur.Hour is the newest hour that received a value, which is
// older than the clock's hour if none came since; prev is zero when the
// hour before it received none.
func (s *Stats) Get(ctx context.Context, context string) (cur, prev Summary, err error) {
	if err := s.checkContext("get", context); err != nil {
		return Summary{}, Summary{}, err
	}
	k := []string{s.c.statsKey(s.typ, context, "cur"), s.c.statsKey(s.typ, context, "last")}
	var cmds [2]*redis.MapStringStringCmd
	_, err = s.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmds[0] = p.HGetAll(ctx, k[0])
		cmds[1] = p.HGetAll(ctx, k[1])
		return nil
	})
	if err != nil {
		err = script.PipeWrongType(ctx, s.c.rdb, err,
			script.Read{Cmd: cmds[0], Key: k[0], Role: "counters stats", Want: "hash"},
			script.Read{Cmd: cmds[1], Key: k[1], Role: "counters stats previous hour", Want: "hash"})
		return Summary{}, Summary{}, fmt.Errorf("counters: stats get %s %q: %w", s.typ, context, err)
	}
	if cur, err = parseSummary(k[0], cmds[0].Val()); err != nil {
		return Summary{}, Summary{}, err
	}
	if prev, err = parseSummary(k[1], cmds[1].Val()); err != nil {
		return Summary{}, Summary{}, err
	}
	if prev.Hour.Unix() != cur.Hour.Unix()-3600 {
		prev = Summary{}
	}
	return cur, prev, nil
}

// luaFloat formats v so that every Lua's tonumber reads it back exactly
// (some want a point before an exponent).
func luaFloat(v float64) string {
	f := strconv.FormatFloat(v, 'g', -1, 64)
	if strings.Contains(f, "e") && !strings.Contains(f, ".") {
		f = strings.Replace(f, "e", ".0e", 1)
	}
	return f
}

func (s *Stats) checkContext(op, context string) error {
	if err := keys.CheckEntity("stats context", context); err != nil {
		return fmt.Errorf("counters: stats %s %s: %w: %w", op, s.typ, err, ErrInvalid)
	}
	return nil
}

// parseSummary reads the HASH m of key.
func parseSummary(key string, m map[string]string) (Summary, error) {
	if len(m) == 0 {
		return Summary{}, nil
	}
	var s Summary
	num := func(f string) float64 {
		v, err := strconv.ParseFloat(m[f], 64)
		if err != nil && s.Count >= 0 {
			s.Count = -1
		}
		return v
	}
	hour, err1 := strconv.ParseInt(m["hour"], 10, 64)
	count, err2 := strconv.ParseInt(m["count"], 10, 64)
	s.Sum, s.Min, s.Max, s.SumSq = num("sum"), num("min"), num("max"), num("sumsq")
	if err1 != nil || err2 != nil || s.Count < 0 {
		return Summary{}, corrupt("counters stats", key, fmt.Sprint(m), "hour, count, sum, min, max, sumsq")
	}
	s.Hour, s.Count = time.Unix(hour, 0), count
	return s, nil
}
