package cache_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// A write that sets or deletes a key (Counter.Set, Top.Add, Guard.Reset,
// Limiter.Reset) is not naturally idempotent once another client writes
// the same key between its run and go-redis's re-send of it: run again,
// the re-send would undo that write. These tests put the other client's
// write in exactly that place, and check that the re-send is answered from
// the first run's record instead.

// resendClient returns a client through a fault proxy, with a pool of one
// connection per node, and an arm function: once armed, the next command
// matching match reaches the server, its reply is lost and its connection
// cut, and before go-redis dials again to re-send it, between (another
// client's calls) runs. So between runs after the call's first run and
// before its re-send, deterministically (no sleep). ran reports whether
// between ran.
func resendClient(t *testing.T, b *redistest.Backend) (rdb redis.UniversalClient, arm func(match func([]string) bool, between func()), ran func() bool) {
	var (
		f       *redistest.Faults
		pending atomic.Pointer[func()]
		did     atomic.Bool
	)
	rdb, _, f = b.FaultyClient(func(o *redis.UniversalOptions) {
		o.PoolSize = 1
		o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if fn := pending.Swap(nil); fn != nil {
				(*fn)()
				did.Store(true)
			}
			return f.Dialer(ctx, network, addr)
		}
	})
	arm = func(match func([]string) bool, between func()) {
		f.LoseReply(1, match)
		pending.Store(&between)
	}
	return rdb, arm, did.Load
}

// resetCommand matches the command of a Reset: its script (or a DEL, so
// that the tests check the behaviour whatever sends it).
func resetCommand(cmd []string) bool {
	return redistest.Scripts(cmd) || redistest.Commands("del")(cmd)
}

// A Counter.Set re-sent after another client's Incr is answered from its
// record: the Incr, which answered 5 (it counted on top of the Set's 0),
// keeps its count.
func TestCounter_Set_resendAfterIncr(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, arm, ran := resendClient(t, b)
		c := newCounter(t, rdb, b, nil)
		other := newCounter(t, b.Client, b, nil)
		require.NoError(t, c.Set(ctx, "k", 100)) // the script cached, the connection made
		var got int64
		arm(redistest.Scripts, func() {
			var err error
			got, err = other.Incr(ctx, "k", 5)
			require.NoError(t, err)
		})
		require.NoError(t, c.Set(ctx, "k", 0))
		require.True(t, ran(), "the other client's Incr ran between the Set's run and its re-send")
		require.Equal(t, int64(5), got, "the Incr counted after the Set")
		require.Equal(t, int64(5), counterValue(t, b, "views", "k"),
			"the Set's re-send undid the Incr that answered 5")
	})
}

// A Top.Add re-sent after another client's Top.Incr of the same member is
// answered from its record: the Incr's score stays.
func TestTop_Add_resendAfterIncr(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, arm, ran := resendClient(t, b)
		top, err := cache.NewTop[string](rdb, "top", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		other, err := cache.NewTop[string](b.Client, "top", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, top.Add(ctx, "k", "m", 100)) // the script cached, the connection made
		var got float64
		arm(redistest.Scripts, func() {
			got, err = other.Incr(ctx, "k", "m", 5)
			require.NoError(t, err)
		})
		require.NoError(t, top.Add(ctx, "k", "m", 0))
		require.True(t, ran(), "the other client's Incr ran between the Add's run and its re-send")
		require.Equal(t, float64(5), got, "the Incr counted after the Add")
		s, ok, err := top.Score(ctx, "k", "m")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, float64(5), s, "the Add's re-send undid the Incr that answered 5")
	})
}

// A Guard.Reset re-sent after another call was let through is answered
// from its record and leaves that call's key alone: one Reset lets one
// call through per window, not two (two password-reset emails).
func TestGuard_Reset_resendAfterAllow(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, arm, ran := resendClient(t, b)
		g, err := cache.NewGuard(rdb, "reset", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		other, err := cache.NewGuard(b.Client, "reset", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, g.Reset(ctx, "u")) // the script cached, the connection made
		ok, err := g.Allow(ctx, "u", time.Hour)
		require.NoError(t, err)
		require.True(t, ok)
		var first bool
		arm(resetCommand, func() {
			first, err = other.Allow(ctx, "u", time.Hour)
			require.NoError(t, err)
		})
		require.NoError(t, g.Reset(ctx, "u"))
		require.True(t, ran(), "the other client's Allow ran between the Reset's run and its re-send")
		require.True(t, first, "the call after the Reset's run is let through")
		second, err := other.Allow(ctx, "u", time.Hour)
		require.NoError(t, err)
		require.False(t, second, "one Reset let a second call through in the hour window")
	})
}

// A Limiter.Reset re-sent after another client's request was counted is
// answered from its record and keeps that request: burst 1 an hour lets
// one request through after the Reset, not two.
func TestLimiter_Reset_resendAfterRequest(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, arm, ran := resendClient(t, b)
		l, err := cache.NewLimiter(rdb, "api", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		other, err := cache.NewLimiter(b.Client, "api", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, l.Reset(ctx, "ip")) // the script cached, the connection made
		lim := cache.Limit{Rate: 1, Period: time.Hour, Burst: 1}
		r, err := l.Allow(ctx, "ip", lim)
		require.NoError(t, err)
		require.Equal(t, 1, r.Allowed)
		var first cache.RateResult
		arm(resetCommand, func() {
			first, err = other.Allow(ctx, "ip", lim)
			require.NoError(t, err)
		})
		require.NoError(t, l.Reset(ctx, "ip"))
		require.True(t, ran(), "the other client's request came between the Reset's run and its re-send")
		require.Equal(t, 1, first.Allowed)
		require.Equal(t, 0, first.Remaining)
		second, err := other.Allow(ctx, "ip", lim)
		require.NoError(t, err)
		require.Equal(t, 0, second.Allowed, "burst 1 an hour, yet a second request went through after one Reset")
	})
}
