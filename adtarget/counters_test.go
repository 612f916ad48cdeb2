package adtarget_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/internal/redistest"
)

// A counter the scripts increment or compute with that is not a canonical
// integer within ±2^53 (the type statistics, the targeting counter) is
// refused before any write: Target, Click and Index change nothing. A
// targeting counter past 1e14 is written back as an integer.
func TestCounters_outOfRange(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		k := func(part string) string { return b.Prefix + "{ads}:" + part }
		setup := func() {
			b.Flush()
			_, err := x.Index(ctx, adtarget.Ad{ID: "a", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPC, Value: 1})
			require.NoError(t, err)
		}
		for _, v := range []string{"99999999999999999999", "9007199254740993", "-9007199254740993", "+5", "007", "-0", "1" + strings.Repeat("0", 400)} {
			for _, f := range []string{"cpc:views", "cpc:clicks", "cpm:actions"} {
				setup()
				require.NoError(t, b.Client.HSet(ctx, k("stats"), f, v).Err())
				before := dataSnapshot(b)
				_, _, err := x.Target(ctx, []string{"US"}, "redis")
				assert.ErrorIs(t, err, ria.ErrCorrupt, "target, %s %s", f, v)
				assert.ErrorIs(t, x.Click(ctx, 1, "a"), ria.ErrCorrupt, "click, %s %s", f, v)
				_, err = x.Index(ctx, adtarget.Ad{ID: "a", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPC, Value: 2})
				assert.ErrorIs(t, err, ria.ErrCorrupt, "index, %s %s", f, v)
				assert.Equal(t, before, dataSnapshot(b), "nothing written, %s %s", f, v)
			}
			setup()
			require.NoError(t, b.Client.Set(ctx, k("served"), v, 0).Err())
			before := dataSnapshot(b)
			_, _, err := x.Target(ctx, []string{"US"}, "redis")
			assert.ErrorIs(t, err, ria.ErrCorrupt, "target, served %s", v)
			assert.Equal(t, before, dataSnapshot(b), "nothing written, served %s", v)
		}

		// Large counters that fit: integers in, integers out.
		for _, c := range []struct {
			served string
			next   int64
		}{{"100000000000000", 100000000000001}, {"9007199254740991", 9007199254740992}} {
			setup()
			require.NoError(t, b.Client.Set(ctx, k("served"), c.served, 0).Err())
			tg, ok, err := x.Target(ctx, []string{"US"}, "redis")
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, c.next, tg.ID)
			got, err := b.Client.Get(ctx, k("served")).Result()
			require.NoError(t, err)
			assert.Equal(t, c.served[:len(c.served)-1]+string(c.served[len(c.served)-1]+1), got, "written back as an integer")
			require.NoError(t, x.Click(ctx, tg.ID, tg.Ad))
		}
		setup()
		require.NoError(t, b.Client.Set(ctx, k("served"), "100000000000000", 0).Err())
		for i := range 3 {
			tg, _, err := x.Target(ctx, []string{"US"}, "redis")
			require.NoError(t, err, "targeting %d after 1e14", i)
			assert.Equal(t, int64(100000000000001+i), tg.ID)
		}
	})
}

// A click or an action needs a live targeting of its ad: an ID never
// served, a targeting of another ad or one past the match TTL is refused
// with ErrNoTargeting, and nothing is counted; the ad that was not shown
// learns no eCPM from it.
func TestClick_needsTargetingOfTheAd(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b, adtarget.WithMatchTTL(time.Minute))
		_, err := x.Index(ctx, adtarget.Ad{ID: "A", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPC, Value: 1})
		require.NoError(t, err)
		_, err = x.Index(ctx, adtarget.Ad{ID: "B", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPC, Value: 0.5})
		require.NoError(t, err)
		_, err = x.Index(ctx, adtarget.Ad{ID: "C", Locations: []string{"FR"}, Content: "redis", Bid: adtarget.CPA, Value: 1})
		require.NoError(t, err)
		tg, ok, err := x.Target(ctx, []string{"US"}, "redis")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, adtarget.Targeting{ID: 1, Ad: "A", ECPM: 1}, tg)
		tc, _, err := x.Target(ctx, []string{"FR"}, "redis")
		require.NoError(t, err)
		require.Equal(t, "C", tc.Ad)

		before := dataSnapshot(b)
		assert.ErrorIs(t, x.Click(ctx, 999, "B"), adtarget.ErrNoTargeting, "never served")
		assert.ErrorIs(t, x.Click(ctx, tg.ID, "B"), adtarget.ErrNoTargeting, "a targeting of A")
		assert.ErrorIs(t, x.Action(ctx, tg.ID, "C"), adtarget.ErrNoTargeting, "an action on C after a targeting of A")
		assert.ErrorIs(t, x.Click(ctx, tc.ID, "A"), adtarget.ErrNoTargeting, "a targeting of C")
		assert.Equal(t, before, dataSnapshot(b), "refused clicks change nothing")
		assert.Equal(t, adtarget.Stats{Bid: adtarget.CPC, Value: 0.5, ECPM: 0.5}, stats(t, x, "B"))

		require.NoError(t, x.Click(ctx, tg.ID, "A"))
		require.NoError(t, x.Click(ctx, tc.ID, "C"))
		require.NoError(t, x.Action(ctx, tc.ID, "C"))
		assert.Equal(t, adtarget.Stats{Bid: adtarget.CPC, Value: 1, ECPM: 1000, Views: 1, Clicks: 1}, stats(t, x, "A"))
		for range 5 {
			tg2, _, err := x.Target(ctx, []string{"US"}, "redis")
			require.NoError(t, err)
			assert.Equal(t, "A", tg2.Ad, "B has learned nothing")
		}

		if b.Mini == nil {
			return // waiting out the TTL is miniredis's clock only
		}
		b.FastForward(time.Minute + time.Second)
		before = dataSnapshot(b)
		assert.ErrorIs(t, x.Click(ctx, tg.ID, "A"), adtarget.ErrNoTargeting, "past the match TTL")
		assert.ErrorIs(t, x.Action(ctx, tc.ID, "C"), adtarget.ErrNoTargeting, "past the match TTL")
		assert.Equal(t, before, dataSnapshot(b))
	})
}

// Type statistics that overflow a double (an eCPM of NaN) make a re-index
// fail before it removes the old ad: the ad stays indexed as it was.
func TestIndex_reindexOverflowingStats(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		_, err := x.Index(ctx, adtarget.Ad{ID: "A", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPC, Value: 1})
		require.NoError(t, err)
		huge := "1" + strings.Repeat("0", 400)
		require.NoError(t, b.Client.HSet(ctx, b.Prefix+"{ads}:stats", "cpc:views", huge, "cpc:clicks", huge).Err())
		before := dataSnapshot(b)
		_, err = x.Index(ctx, adtarget.Ad{ID: "A", Locations: []string{"FR"}, Content: "cache", Bid: adtarget.CPC, Value: 2})
		require.ErrorIs(t, err, ria.ErrCorrupt)
		assert.Equal(t, before, dataSnapshot(b), "A is left as it was")
		_, err = x.Index(ctx, adtarget.Ad{ID: "B", Locations: []string{"FR"}, Content: "cache", Bid: adtarget.CPC, Value: 2})
		require.ErrorIs(t, err, ria.ErrCorrupt)
		assert.Equal(t, before, dataSnapshot(b))
	})
}
