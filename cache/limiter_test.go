package cache_test

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

func newLimiter(t *testing.T, b *redistest.Backend, rdb cache.Client) *cache.Limiter {
	t.Helper()
	l, err := cache.NewLimiter(rdb, "api", cache.WithPrefix(b.Prefix))
	require.NoError(t, err)
	return l
}

// A burst of 10 an hour: ten requests through with the remaining count
// going down, the eleventh refused with the GCRA's retry time, AllowN of
// more than the rest refused whole, Reset gives the burst back.
func TestLimiter_Allow(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLimiter(t, b, b.Client)
		limit := cache.PerHour(10)
		_, err := l.AllowN(ctx, "warm", limit, 0)
		require.NoError(t, err)
		require.NoError(t, l.Reset(ctx, "u1")) // the script cached on u1's node
		for i := range 10 {
			var r cache.RateResult
			rt, _ := b.Count.Delta(func() { r, err = l.Allow(ctx, "u1", limit) })
			require.NoError(t, err)
			assert.Equal(t, int64(1), rt, "one round trip")
			assert.Equal(t, 1, r.Allowed, "request %d", i)
			assert.Equal(t, 9-i, r.Remaining, "request %d", i)
			assert.Equal(t, time.Duration(-1), r.RetryAfter)
			assert.InDelta(t, float64(time.Duration(i+1)*6*time.Minute), float64(r.ResetAfter), float64(time.Second))
		}
		r, err := l.Allow(ctx, "u1", limit)
		require.NoError(t, err)
		assert.Equal(t, 0, r.Allowed)
		assert.Equal(t, 0, r.Remaining)
		assert.InDelta(t, float64(6*time.Minute), float64(r.RetryAfter), float64(time.Second), "one emission interval")
		assert.InDelta(t, float64(time.Hour), float64(r.ResetAfter), float64(time.Second))

		r, err = l.AllowN(ctx, "u2", limit, 7)
		require.NoError(t, err)
		assert.Equal(t, 7, r.Allowed)
		assert.Equal(t, 3, r.Remaining)
		r, err = l.AllowN(ctx, "u2", limit, 4)
		require.NoError(t, err)
		assert.Equal(t, 0, r.Allowed, "all or none")
		assert.InDelta(t, float64(6*time.Minute), float64(r.RetryAfter), float64(time.Second))
		r, err = l.AllowN(ctx, "u2", limit, 0)
		require.NoError(t, err)
		assert.Equal(t, 3, r.Remaining, "n = 0 reads")

		rt, _ := b.Count.Delta(func() { err = l.Reset(ctx, "u1") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "reset: one round trip")
		r, err = l.Allow(ctx, "u1", limit)
		require.NoError(t, err)
		assert.Equal(t, 1, r.Allowed)
		assert.Equal(t, 9, r.Remaining)

		if b.Mini != nil { // time passes: one request per interval comes back
			b.FastForward(6*time.Minute + time.Second)
			r, err = l.AllowN(ctx, "u2", limit, 4)
			require.NoError(t, err)
			assert.Equal(t, 4, r.Allowed)
		}
	})
}

// 16 goroutines on two clients ask 20 times each for a limit with a burst
// of 100 an hour: exactly 100 get through.
func TestLimiter_concurrent(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		other, _ := b.NewClient()
		ls := []*cache.Limiter{newLimiter(t, b, b.Client), newLimiter(t, b, other)}
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				for range 20 {
					r, err := ls[g%2].Allow(ctx, "k", cache.PerHour(100))
					if !assert.NoError(t, err) {
						return
					}
					allowed.Add(int64(r.Allowed))
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int64(100), allowed.Load())
	})
}

// Lost replies: the script runs in MULTI/EXEC, which go-redis never sends
// twice. A call whose EXEC ran but whose reply was lost (the proxy loses
// the reply the server sends after the transaction ran) counted its
// request once and says the outcome is unknown: never twice.
func TestFaults_LimiterAllow(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		l := newLimiter(t, b, rdb)
		reader := newLimiter(t, b, b.Client)
		_, err := l.AllowN(ctx, "warm", cache.PerHour(1), 0) // the script cached, the connections made
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "cache Limiter.Allow")
		limit := cache.PerHour(20)
		remaining := func() int {
			st, err := reader.AllowN(ctx, "k", limit, 0)
			require.NoError(t, err)
			return st.Remaining
		}
		for i := range 25 {
			before := remaining()
			h.Call(1, redistest.Commands("exec"), func() { _, err = l.Allow(ctx, "k", limit) })
			h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "request %d: %v, want an unknown outcome", i, err)
			counted := before - remaining()
			if before > 0 {
				h.Check(counted == 1, "request %d: counted %d, want once", i, counted)
			} else {
				h.Check(counted == 0, "request %d: counted %d with no room left", i, counted)
			}
			var r cache.RateResult
			r, err = l.AllowN(ctx, "k", limit, 0) // the client works on after a cut
			require.NoError(t, err)
			h.Check(r.Remaining == remaining(), "request %d: remaining %d, the server says %d", i, r.Remaining, remaining())
		}
	})
}

func TestLimiter_wrongTypeAndBadInput(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLimiter(t, b, b.Client)
		b.CheckWrongTypes(t, func() {
			_, err := l.Allow(ctx, "k", cache.PerHour(5))
			require.NoError(t, err)
		}, func() error { _, err := l.Allow(ctx, "k", cache.PerHour(5)); return err },
			redistest.KeyRole{Key: b.Prefix + "{api:k}:rate", Type: "string", Role: "cache rate limit"})

		require.NoError(t, b.Client.Set(ctx, b.Prefix+"{api:c}:rate", "x", 0).Err())
		_, err := l.Allow(ctx, "c", cache.PerHour(5))
		assert.ErrorIs(t, err, ria.ErrCorrupt)

		before := b.Snapshot()
		for _, c := range []struct {
			limit cache.Limit
			n     int
		}{
			{cache.Limit{Rate: 0, Burst: 1, Period: time.Second}, 1},
			{cache.Limit{Rate: 1, Burst: 0, Period: time.Second}, 1},
			{cache.Limit{Rate: 1, Burst: 1, Period: 0}, 1},
			{cache.Limit{Rate: 1 << 31, Burst: 1, Period: time.Second}, 1},
			{cache.Limit{Rate: 1000, Burst: 1, Period: time.Microsecond}, 1},
			{cache.PerSecond(1), -1},
			{cache.PerSecond(1), cache.MaxRate + 1},
		} {
			_, err := l.AllowN(ctx, "k", c.limit, c.n)
			assert.Error(t, err, "%+v n=%d", c.limit, c.n)
		}
		_, err = l.Allow(ctx, "", cache.PerSecond(1))
		assert.Error(t, err)
		assert.Error(t, l.Reset(ctx, ""))
		_, err = cache.NewLimiter(b.Client, "a:b")
		assert.Error(t, err)
		assert.Equal(t, before, b.Snapshot(), "bad input wrote something")
		assert.False(t, errors.Is(err, ria.ErrOutcomeUnknown))
	})
}

// A request for more than the burst could never go through: it is an
// error, and nothing is counted. A request for the whole burst goes
// through.
func TestLimiter_AllowN_moreThanBurst(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLimiter(t, b, b.Client)
		limit := cache.Limit{Rate: 1, Burst: 3, Period: time.Hour}
		before := b.Snapshot()
		_, err := l.AllowN(ctx, "k", limit, 4)
		assert.ErrorContains(t, err, "burst")
		assert.Equal(t, before, b.Snapshot(), "a refused n wrote something")
		r, err := l.AllowN(ctx, "k", limit, 3)
		require.NoError(t, err)
		assert.Equal(t, 3, r.Allowed)
		assert.Equal(t, 0, r.Remaining)
	})
}

// The key of a limit lives until a full burst has refilled: a limit whose
// refill takes longer than MaxDuration is refused with an error that says
// so (its PX did not fit in an integer: Redis answered "not an integer");
// one at the bound works, its key living that long.
func TestLimiter_extremeLimits(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLimiter(t, b, b.Client)
		before := b.Snapshot()
		for _, limit := range []cache.Limit{
			{Rate: 1, Burst: cache.MaxRate, Period: cache.MaxDuration - time.Millisecond},
			{Rate: 1, Burst: 2, Period: cache.MaxDuration},
			{Rate: 2, Burst: 5, Period: cache.MaxDuration},
		} {
			_, err := l.AllowN(ctx, "k", limit, limit.Burst) // the whole burst: its TAT as far as it goes
			assert.ErrorContains(t, err, "refill", "%+v", limit)
		}
		assert.Equal(t, before, b.Snapshot(), "a refused limit wrote something")
		for i, limit := range []cache.Limit{
			{Rate: 1, Burst: 1, Period: cache.MaxDuration},
			{Rate: cache.MaxRate, Burst: cache.MaxRate, Period: cache.MaxDuration},
			{Rate: 2, Burst: 4, Period: cache.MaxDuration / 2},
		} {
			k := strconv.Itoa(i)
			r, err := l.AllowN(ctx, k, limit, limit.Burst)
			require.NoError(t, err, "%+v", limit)
			assert.Equal(t, limit.Burst, r.Allowed)
			refill := time.Duration(float64(limit.Period) / float64(limit.Rate) * float64(limit.Burst))
			ttl, err := b.Client.PTTL(ctx, key(b, "api", k, "rate")).Result()
			require.NoError(t, err)
			assert.InDelta(t, float64(refill), float64(ttl), float64(time.Minute), "%+v: the key lives until the burst refilled", limit)
			r, err = l.AllowN(ctx, k, limit, 1)
			require.NoError(t, err)
			assert.Equal(t, 0, r.Allowed)
			assert.InDelta(t, float64(limit.Period/time.Duration(limit.Rate)), float64(r.RetryAfter), float64(time.Minute), "%+v", limit)
		}
	})
}

// Reset's lost reply is re-sent and answered from its record; when every
// attempt lost its reply, the outcome is unknown.
func TestFaults_Limiter_Reset(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) { o.MaxRetries = 1 })
		l := newLimiter(t, b, rdb)
		require.NoError(t, l.Reset(ctx, "k")) // the script cached on the server
		_, err := l.Allow(ctx, "k", cache.PerHour(1))
		require.NoError(t, err)
		f.LoseReply(1, redistest.Scripts)
		require.NoError(t, l.Reset(ctx, "k"), "one lost reply: re-sent")
		assert.Equal(t, int64(1), f.Lost())
		assert.Empty(t, b.Keys(key(b, "api", "k", "rate")))
		f.LoseReply(100, redistest.Scripts) // more than the attempts (a Cluster makes more)
		err = l.Reset(ctx, "k")
		f.Disarm()
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, "every attempt lost its reply")
		assert.GreaterOrEqual(t, f.Lost(), int64(3))
		assert.Empty(t, b.Keys(key(b, "api", "k", "rate")))
	})
}
