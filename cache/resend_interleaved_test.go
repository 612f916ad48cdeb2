package cache_test

import (
	"testing"
	"time"

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
		rdb, _, f := b.FaultyClient()
		c := newCounter(t, rdb, b, nil)
		other := newCounter(t, b.Client, b, nil)
		require.NoError(t, c.Set(ctx, "k", 100)) // the script cached
		var (
			got    int64
			incErr error
			ran    bool
		)
		// No require in between: it runs on the proxy's goroutine.
		f.LoseReplyThen(redistest.Scripts, func() {
			ran = true
			got, incErr = other.Incr(ctx, "k", 5)
		})
		require.NoError(t, c.Set(ctx, "k", 0))
		require.True(t, ran, "the other client's Incr ran between the Set's run and its re-send")
		require.NoError(t, incErr)
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
		rdb, _, f := b.FaultyClient()
		top, err := cache.NewTop[string](rdb, "top", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		other, err := cache.NewTop[string](b.Client, "top", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, top.Add(ctx, "k", "m", 100)) // the script cached
		var (
			got    float64
			incErr error
			ran    bool
		)
		// No require in between: it runs on the proxy's goroutine.
		f.LoseReplyThen(redistest.Scripts, func() {
			ran = true
			got, incErr = other.Incr(ctx, "k", "m", 5)
		})
		require.NoError(t, top.Add(ctx, "k", "m", 0))
		require.True(t, ran, "the other client's Incr ran between the Add's run and its re-send")
		require.NoError(t, incErr)
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
		rdb, _, f := b.FaultyClient()
		g, err := cache.NewGuard(rdb, "reset", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		other, err := cache.NewGuard(b.Client, "reset", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, g.Reset(ctx, "u")) // the script cached
		ok, err := g.Allow(ctx, "u", time.Hour)
		require.NoError(t, err)
		require.True(t, ok)
		var (
			first    bool
			allowErr error
			ran      bool
		)
		// No require in between: it runs on the proxy's goroutine.
		f.LoseReplyThen(resetCommand, func() {
			ran = true
			first, allowErr = other.Allow(ctx, "u", time.Hour)
		})
		require.NoError(t, g.Reset(ctx, "u"))
		require.True(t, ran, "the other client's Allow ran between the Reset's run and its re-send")
		require.NoError(t, allowErr)
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
		rdb, _, f := b.FaultyClient()
		l, err := cache.NewLimiter(rdb, "api", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		other, err := cache.NewLimiter(b.Client, "api", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, l.Reset(ctx, "ip")) // the script cached
		lim := cache.Limit{Rate: 1, Period: time.Hour, Burst: 1}
		r, err := l.Allow(ctx, "ip", lim)
		require.NoError(t, err)
		require.Equal(t, 1, r.Allowed)
		var (
			first    cache.RateResult
			allowErr error
			ran      bool
		)
		// No require in between: it runs on the proxy's goroutine.
		f.LoseReplyThen(resetCommand, func() {
			ran = true
			first, allowErr = other.Allow(ctx, "ip", lim)
		})
		require.NoError(t, l.Reset(ctx, "ip"))
		require.True(t, ran, "the other client's request came between the Reset's run and its re-send")
		require.NoError(t, allowErr)
		require.Equal(t, 1, first.Allowed)
		require.Equal(t, 0, first.Remaining)
		second, err := other.Allow(ctx, "ip", lim)
		require.NoError(t, err)
		require.Equal(t, 0, second.Allowed, "burst 1 an hour, yet a second request went through after one Reset")
	})
}
