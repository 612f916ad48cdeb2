package counters

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

var (
	// ErrInvalid is wrapped by every error about a bad argument: an empty or
	// malformed name, an unknown precision, a value out of range, a NaN
	// (nothing reached Redis), or a time more than [MaxAhead] after the
	// clock (refused by the script, before any write: nothing changed).
	ErrInvalid = errors.New("counters: invalid argument")
	// ErrOverflow is returned when an update would take a count out of
	// ±[MaxDelta] or a statistic to ±Inf. Nothing was written.
	ErrOverflow = errors.New("counters: overflow")
)

var (
	//go:embed update.lua
	updateLua    string
	updateScript = script.NewOnce("counters update", updateLua)
	updateTx     = script.New("counters update", updateLua)

	//go:embed delete.lua
	deleteLua    string
	deleteScript = script.NewOnce("counters delete", deleteLua)
)

// MaxDelta bounds the n of one update and every count, in absolute value
// (2^53-1: the integers Lua's numbers hold exactly).
const MaxDelta = 1<<53 - 1

// Client is the subset of go-redis this package uses.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd

	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	// TxPipelined runs Update and Stats.Update in MULTI/EXEC, which go-redis
	// never re-sends.
	TxPipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	HGetAll(ctx context.Context, key string) *redis.MapStringStringCmd
	ZRevRangeWithScores(ctx context.Context, key string, start, stop int64) *redis.ZSliceCmd
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
	Do(ctx context.Context, args ...any) *redis.Cmd // TYPE, to name a key of another type
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// MaxAhead is how far after the clock (the Redis server's TIME, or the
// [WithClock] clock) the time of [Counters.UpdateAt] and [Stats.UpdateAt]
// may be: a later time is refused with an error wrapping [ErrInvalid], as
// its sample would outlive the retention, or its hour would make the
// current hour's updates fail. It leaves room for clients whose clocks run
// a little ahead of the server's.
const MaxAhead = time.Minute

// Precision is one time resolution of a counter: its samples count what
// happened in slices of Step, and a cleaner keeps the last Samples of them.
type Precision struct {
	Step    time.Duration // whole seconds, at least 1 s
	Samples int           // 1 to MaxSamples
}

// MaxSamples bounds [Precision.Samples].
const MaxSamples = 1_000_000

// maxPrecisions bounds how many precisions a counter has.
const maxPrecisions = 32

// DefaultPrecisions returns the book's precisions: 1 s, 5 s, 1 min, 5 min,
// 1 h, 5 h and 1 day, keeping 120 samples each.
func DefaultPrecisions() []Precision {
	steps := []time.Duration{time.Second, 5 * time.Second, time.Minute, 5 * time.Minute,
		time.Hour, 5 * time.Hour, 24 * time.Hour}
	out := make([]Precision, len(steps))
	for i, s := range steps {
		out[i] = Precision{Step: s, Samples: 120}
	}
	return out
}

// Option configures [New].
type Option func(*options)

type options struct {
	prefix     string
	precisions []Precision
	now        func() time.Time
	nowSet     bool
}

// WithPrefix sets the key prefix. Default: "counters:". It must not contain
// '{' or '}'.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithPrecisions sets the precisions every update counts at. Default:
// [DefaultPrecisions]. Steps must be distinct whole seconds.
func WithPrecisions(ps ...Precision) Option {
	return func(o *options) { o.precisions = slices.Clone(ps) }
}

// WithClock makes the counters read the time from now instead of the Redis
// server's TIME: [Counters.Update] counts at now(), and the retention that
// [Counters.UpdateAt] enforces ends at now(). Cleaners made by
// [Counters.Cleaner] inherit it. For tests and simulations; in production
// keep the server's clock, which every process shares.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now, o.nowSet = now, true }
}

// Counters counts events at several precisions (Redis in Action 5.2.1).
// It is safe for concurrent use.
type Counters struct {
	rdb        Client
	keys       keys.Space
	stats      keys.Space
	precisions []Precision // by increasing step
	now        func() time.Time

	// The update script's arguments that never change, after n and the
	// times: the precisions as one string, then the steps and the samples.
	precArgs []any

	// Updates and stats updates made at the same time share MULTI/EXEC
	// round trips (script.Group).
	group *script.Group
}

// At most groupInflight transactions of updates on their way (per slot on
// a Cluster), each of at most groupBatch updates.
const (
	groupInflight = 2
	groupBatch    = 128
)

// New returns Counters backed by rdb. It returns an error wrapping
// [ErrInvalid] for a bad option (a prefix with '{' or '}', a precision
// that is not a whole number of seconds, duplicate steps, samples out of
// range). A nil rdb panics. Nothing reaches Redis.
func New(rdb Client, opts ...Option) (*Counters, error) {
	if rdb == nil {
		panic("counters: New with nil client")
	}
	o := options{prefix: "counters:", precisions: DefaultPrecisions()}
	if err := option.Apply(&o, opts); err != nil {
		return nil, invalid("new", "%v", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("counters: new: %w: %w", err, ErrInvalid)
	}
	if o.nowSet && o.now == nil {
		return nil, invalid("new", "nil clock")
	}
	ps, err := checkPrecisions(o.precisions)
	if err != nil {
		return nil, err
	}
	c := &Counters{rdb: rdb, keys: keys.New(o.prefix), stats: keys.New(o.prefix + "stats:"), precisions: ps, now: o.now,
		group: script.NewGroup(rdb, groupInflight, groupBatch)}
	var cfg []string
	for _, p := range ps {
		cfg = append(cfg, fmt.Sprintf("%d:%d", p.Step/time.Second, p.Samples))
	}
	c.precArgs = append(c.precArgs, strings.Join(cfg, ","))
	for _, p := range ps {
		c.precArgs = append(c.precArgs, int64(p.Step/time.Second))
	}
	for _, p := range ps {
		c.precArgs = append(c.precArgs, p.Samples)
	}
	return c, nil
}

func checkPrecisions(in []Precision) ([]Precision, error) {
	if len(in) == 0 || len(in) > maxPrecisions {
		return nil, invalid("new", "%d precisions: want 1 to %d", len(in), maxPrecisions)
	}
	ps := slices.Clone(in)
	slices.SortFunc(ps, func(a, b Precision) int { return int(min(max(a.Step-b.Step, -1), 1)) })
	for i, p := range ps {
		switch {
		case p.Step < time.Second || p.Step%time.Second != 0:
			return nil, invalid("new", "precision %v: must be a whole number of seconds, at least 1s", p.Step)
		case p.Step > 366*24*time.Hour:
			return nil, invalid("new", "precision %v: must be at most 366 days", p.Step)
		case p.Samples < 1 || p.Samples > MaxSamples:
			return nil, invalid("new", "precision %v: samples %d: must be between 1 and %d", p.Step, p.Samples, MaxSamples)
		case i > 0 && ps[i-1].Step == p.Step:
			return nil, invalid("new", "precision %v given twice", p.Step)
		}
	}
	return ps, nil
}

// Precisions returns the precisions of c, by increasing step.
func (c *Counters) Precisions() []Precision { return slices.Clone(c.precisions) }

// Update adds n to counter name at every precision, at the current time
// (the Redis server's, or the [WithClock] clock's), in one round trip and
// one atomic step. n may be negative; |n| is at most [MaxDelta]. It
// returns an error wrapping [ErrInvalid] for a bad name or n,
// [ErrOverflow] if a count would leave the range of a Redis integer, a
// *ria.KeyError if a key of the counter holds something else, and an
// error wrapping ria.ErrOutcomeUnknown if no reply came back (the update
// may or may not have counted). A re-send by go-redis after a lost reply
// counts once.
func (c *Counters) Update(ctx context.Context, name string, n int64) error {
	_, err := c.update(ctx, "update", name, n, "")
	return err
}

// UpdateAt adds n to counter name at every precision at time at, for
// back-filling and tests, in one round trip and one atomic step. A
// precision whose slice of at is older than its retention (its last
// Samples slices up to now, by the server's clock or [WithClock]) or was
// already cleaned is left alone: UpdateAt returns those precisions as
// skipped, and counts at the others (when every precision is skipped it
// writes nothing). A time more than [MaxAhead] after the clock is an error
// wrapping [ErrInvalid], and nothing changes. Other errors as
// [Counters.Update].
func (c *Counters) UpdateAt(ctx context.Context, name string, n int64, at time.Time) (skipped []time.Duration, err error) {
	mask, err := c.update(ctx, "update", name, n, strconv.FormatInt(at.Unix(), 10))
	if redisCode(err) == "AHEAD" {
		return nil, invalid("update", "counter %q: time %s: more than %v after the clock", name, at.UTC().Format(time.RFC3339), MaxAhead)
	}
	if err != nil {
		return nil, err
	}
	for i, p := range c.precisions {
		if mask&(1<<i) != 0 {
			skipped = append(skipped, p.Step)
		}
	}
	return skipped, nil
}

func (c *Counters) update(ctx context.Context, op, name string, n int64, at string) (int64, error) {
	keys, args, err := c.updateCall(op, name, n, at)
	if err != nil {
		return 0, err
	}
	v, err := c.group.Run(ctx, updateTx.Call(keys, args...))
	if err != nil {
		return 0, c.updateErr(op, name, err)
	}
	mask, err := updateScript.AsInt64(v)
	if err != nil {
		return 0, fmt.Errorf("counters: %s %q: %w", op, name, err)
	}
	return mask, nil
}

// updateCall checks an update's arguments and returns the update script's
// keys and arguments (without the record).
func (c *Counters) updateCall(op, name string, n int64, at string) ([]string, []any, error) {
	if err := keys.CheckEntity("counter name", name); err != nil {
		return nil, nil, fmt.Errorf("counters: %s: %w: %w", op, err, ErrInvalid)
	}
	if n > MaxDelta || n < -MaxDelta {
		return nil, nil, invalid(op, "counter %q: n %d: must be within ±%d", name, n, int64(MaxDelta))
	}
	now := "" // with at "" too, the script counts at now and reads no watermark
	if c.now != nil {
		now = strconv.FormatInt(c.now().Unix(), 10)
	}
	keys := []string{c.knownKey(name), c.samplesKey(name)}
	args := make([]any, 0, 3+len(c.precArgs))
	args = append(append(args, n, at, now), c.precArgs...)
	return keys, args, nil
}

func (c *Counters) updateErr(op, name string, err error) error {
	if redisCode(err) == "OVERFLOW" {
		return fmt.Errorf("counters: %s %q: %w: %w", op, name, ErrOverflow, err)
	}
	return fmt.Errorf("counters: %s %q: %w", op, name, err)
}

// Sample is the count of one time slice.
type Sample struct {
	Start time.Time // the slice's start
	Count int64
}

// Get returns the samples of counter name at the precision of step, oldest
// first, in one round trip (HGETALL of the counter's samples, every
// precision's). A counter never updated has none. It
// returns an error wrapping [ErrInvalid] for a bad name or a step that is
// not one of c's precisions, and a *ria.KeyError (ria.ErrCorrupt) if the
// samples hold something that is not a count.
func (c *Counters) Get(ctx context.Context, name string, step time.Duration) ([]Sample, error) {
	if err := keys.CheckEntity("counter name", name); err != nil {
		return nil, fmt.Errorf("counters: get: %w: %w", err, ErrInvalid)
	}
	if !slices.ContainsFunc(c.precisions, func(p Precision) bool { return p.Step == step }) {
		return nil, invalid("get", "counter %q: unknown precision %v", name, step)
	}
	key := c.samplesKey(name)
	m, err := c.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, fmt.Errorf("counters: get %q: %w", name, script.WrongType(ctx, c.rdb, err, key, "counters samples", "hash"))
	}
	head := strconv.FormatInt(int64(step/time.Second), 10) + ":"
	var out []Sample
	for f, v := range m {
		slice, ok := strings.CutPrefix(f, head)
		if !ok {
			continue
		}
		start, ok1 := script.ParseCount(slice)
		n, ok2 := script.ParseCount(v)
		if !ok1 || !ok2 {
			return nil, corrupt("counters samples", key, f+"="+v, "<step>:<slice>=<count>")
		}
		out = append(out, Sample{Start: time.Unix(start, 0), Count: n})
	}
	slices.SortFunc(out, func(a, b Sample) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// Delete deletes counter name: its samples at every precision and its
// entry among the known counters ([Counters.Names], the cleaners), at once
// (one script, one round trip). Deleting a counter that does not exist is
// not an error. A re-send after a lost reply is answered from a record of
// the first run and deletes nothing more: not the samples of an update
// another client made meanwhile. An update after it
// (a [Batcher]'s pending increments included) starts the counter again.
// A key of the counter holding another type is a *ria.KeyError, and
// nothing is deleted.
func (c *Counters) Delete(ctx context.Context, name string) error {
	if err := keys.CheckEntity("counter name", name); err != nil {
		return fmt.Errorf("counters: delete: %w: %w", err, ErrInvalid)
	}
	if _, err := deleteScript.RunOnce(ctx, c.rdb, c.keys.Once(name), []string{c.knownKey(name), c.samplesKey(name)}); err != nil {
		return fmt.Errorf("counters: delete %q: %w", name, err)
	}
	return nil
}

func invalid(op, format string, args ...any) error {
	return fmt.Errorf("counters: %s: %s: %w", op, fmt.Sprintf(format, args...), ErrInvalid)
}
