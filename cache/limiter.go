package cache

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed rate.lua
	rateLua string
	// rateScript moves a TAT on; it runs in MULTI/EXEC (RunTx).
	rateScript = script.New("cache rate", rateLua)
)

// Limit is a rate limit: Rate requests per Period, and bursts of up to
// Burst requests at once (GCRA, as go-redis/redis_rate defines it). Rate
// and Burst go from 1 to [MaxRate], Period from 1µs to [MaxDuration], at
// most one request a microsecond (Period/Rate at least 1µs), and a full
// burst must refill within MaxDuration (Period/Rate×Burst at most
// MaxDuration: a key lives that long at most).
type Limit struct {
	Rate   int
	Burst  int
	Period time.Duration
}

// PerSecond is rate requests a second with a burst of rate.
func PerSecond(rate int) Limit { return Limit{Rate: rate, Burst: rate, Period: time.Second} }

// PerMinute is rate requests a minute with a burst of rate.
func PerMinute(rate int) Limit { return Limit{Rate: rate, Burst: rate, Period: time.Minute} }

// PerHour is rate requests an hour with a burst of rate.
func PerHour(rate int) Limit { return Limit{Rate: rate, Burst: rate, Period: time.Hour} }

// MaxRate bounds a Limit's Rate and Burst (and so a request's cost).
const MaxRate = 1 << 30

func (l Limit) check() error {
	if l.Rate < 1 || l.Rate > MaxRate || l.Burst < 1 || l.Burst > MaxRate || l.Period < time.Microsecond || l.Period > MaxDuration {
		return fmt.Errorf("limit %+v: want Rate and Burst 1 to %d and Period 1µs to %v", l, MaxRate, MaxDuration)
	}
	if l.Period/time.Duration(l.Rate) < time.Microsecond {
		return fmt.Errorf("limit %+v: more than one request a microsecond (Redis's clock ticks in microseconds)", l)
	}
	// The key lives until a full burst has refilled, at most Period/Rate ×
	// Burst: bounded, its PX (ms) is an integer Redis takes and its TAT
	// (µs) is exact in a double.
	if float64(l.Period)/float64(l.Rate)*float64(l.Burst) > float64(MaxDuration) {
		return fmt.Errorf("limit %+v: a full burst takes Period/Rate×Burst to refill, more than %v", l, MaxDuration)
	}
	return nil
}

// RateResult is the answer of [Limiter.Allow].
type RateResult struct {
	Limit Limit
	// Allowed is how many of the requests asked for were let through: all
	// of them or none.
	Allowed int
	// Remaining is how many more requests would be let through now.
	Remaining int
	// RetryAfter is when the requests refused would be let through; -1
	// when they were let through.
	RetryAfter time.Duration
	// ResetAfter is when the limit is back to a full burst.
	ResetAfter time.Duration
}

// Limiter is a GCRA rate limiter shared by every process (the contract of
// go-redis/redis_rate): each key has a theoretical arrival time that
// every request let through moves on by Period/Rate. It is safe for
// concurrent use.
type Limiter struct {
	rdb   Client
	name  string
	keys  keys.Space
	group *script.Group
}

// Calls of one Limiter made at the same time share round trips: at most
// limiterInflight MULTI/EXEC batches on their way, each of at most
// limiterBatch calls (see script.Group).
const (
	limiterInflight = 2
	limiterBatch    = 128
)

// NewLimiter returns the limiter name, backed by rdb. Option:
// [WithPrefix]. It returns an error for an invalid name or option; a nil
// rdb panics.
func NewLimiter(rdb Client, name string, opts ...Option) (*Limiter, error) {
	if rdb == nil {
		panic("cache: NewLimiter with nil client")
	}
	if err := checkName("limiter", name); err != nil {
		return nil, err
	}
	o, err := build("limiter "+name, []string{"WithPrefix"}, opts)
	if err != nil {
		return nil, err
	}
	return &Limiter{rdb: rdb, name: name, keys: keys.New(o.prefix), group: script.NewGroup(rdb, limiterInflight, limiterBatch)}, nil
}

// Name returns the limiter's name.
func (l *Limiter) Name() string { return l.name }

// Allow is AllowN(ctx, key, limit, 1).
func (l *Limiter) Allow(ctx context.Context, key string, limit Limit) (RateResult, error) {
	return l.AllowN(ctx, key, limit, 1)
}

// AllowN lets n requests on key through if limit allows them all now, and
// says how many more it would, or when to retry; n = 0 only reads. One
// round trip: a script on Redis's clock, in MULTI/EXEC, which go-redis
// never sends twice, so requests are never counted twice (redis_rate's
// script is re-sent after a lost reply, and counts the request again); a
// lost reply is an error wrapping [ria.ErrOutcomeUnknown] (the requests
// were counted once or not at all). It keeps no record. Calls made at the
// same time share transactions (see the package doc's Round trips). If
// ctx ends while the call waits for a transaction, nothing is counted and
// the error is ctx's; if it ends while the call is on its way in another
// goroutine's transaction, the outcome is unknown. A key holding another
// type gives a [*ria.KeyError]. A bad limit (see [Limit]) or n (below 0,
// or above limit.Burst: such a request could never go through) is an
// error, and nothing is counted.
func (l *Limiter) AllowN(ctx context.Context, key string, limit Limit, n int) (RateResult, error) {
	if err := checkKey("limiter allow", key); err != nil {
		return RateResult{}, err
	}
	if err := limit.check(); err != nil {
		return RateResult{}, fmt.Errorf("cache: limiter %s allow %q: %w", l.name, key, err)
	}
	if n < 0 || n > limit.Burst {
		return RateResult{}, fmt.Errorf("cache: limiter %s allow %q: n %d: want 0 to the burst, %d (more could never go through)", l.name, key, n, limit.Burst)
	}
	e := l.name + ":" + key
	v, err := l.group.Run(ctx, rateScript.Call([]string{l.keys.Key(e, "rate")},
		limit.Rate, limit.Period.Microseconds(), limit.Burst, n))
	if err != nil {
		return RateResult{}, fmt.Errorf("cache: limiter %s allow %q: %w", l.name, key, err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr) != 4 {
		return RateResult{}, fmt.Errorf("cache: limiter %s allow %q: %w: reply %v", l.name, key, ria.ErrCorrupt, v)
	}
	allowed, ok1 := arr[0].(int64)
	remaining, ok2 := arr[1].(int64)
	retry, err1 := usec(arr[2])
	reset, err2 := usec(arr[3])
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return RateResult{}, fmt.Errorf("cache: limiter %s allow %q: %w: reply %v", l.name, key, ria.ErrCorrupt, v)
	}
	return RateResult{Limit: limit, Allowed: int(allowed), Remaining: int(remaining), RetryAfter: retry, ResetAfter: reset}, nil
}

// Reset forgets key's history, whatever its key holds: its next requests
// see a full burst. One round trip (a script: DEL); resetting a key with
// no history is no error. A Reset that go-redis re-sends after a lost
// reply is answered from a record of its first run instead of deleting
// again, which would forget a request another client made between the two
// runs, and so let more than the limit through (see the package doc,
// "Lost replies"); if every attempt lost its reply, the error wraps
// [ria.ErrOutcomeUnknown].
func (l *Limiter) Reset(ctx context.Context, key string) error {
	if err := checkKey("limiter reset", key); err != nil {
		return err
	}
	e := l.name + ":" + key
	if _, err := resetScript.RunOnce(ctx, l.rdb, l.keys.Once(e), []string{l.keys.Key(e, "rate")}); err != nil {
		return fmt.Errorf("cache: limiter %s reset %q: %w", l.name, key, err)
	}
	return nil
}

// usec parses a duration in microseconds sent as a string ("-1": none).
func usec(v any) (time.Duration, error) {
	s, _ := v.(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("duration %v", v)
	}
	if f == -1 {
		return -1, nil
	}
	return time.Duration(f * float64(time.Microsecond)), nil
}
