package adtarget_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/internal/redistest"
)

// TestClick_targetingOfEarlierIndexing: a targeting served before an ad
// was re-indexed (or removed and indexed again) takes no click for it.
// The new indexing has no view yet; such a click used to count, and
// relearned an eCPM of 1000 x value from 1 click over no view, which won
// every later targeting.
func TestClick_targetingOfEarlierIndexing(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, again := range []string{"reindex", "remove and index"} {
			b.Flush()
			ctx := t.Context()
			x := newTargeter(t, b)
			a := adtarget.Ad{ID: "A", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPC, Value: 1}
			_, err := x.Index(ctx, a)
			require.NoError(t, err)
			old, ok, err := x.Target(ctx, []string{"US"}, "redis")
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, "A", old.Ad)

			if again == "remove and index" {
				removed, err := x.Remove(ctx, "A")
				require.NoError(t, err)
				require.True(t, removed)
			}
			a.Value = 2
			_, err = x.Index(ctx, a)
			require.NoError(t, err)
			_, err = x.Index(ctx, adtarget.Ad{ID: "B", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPM, Value: 5})
			require.NoError(t, err)

			before := dataSnapshot(b)
			assert.ErrorIs(t, x.Click(ctx, old.ID, "A"), adtarget.ErrNoTargeting, again)
			assert.Equal(t, before, dataSnapshot(b), "%s: a refused click writes nothing", again)
			assert.Equal(t, adtarget.Stats{Bid: adtarget.CPC, Value: 2, ECPM: 2}, stats(t, x, "A"), again)
			tg, _, err := x.Target(ctx, []string{"US"}, "redis")
			require.NoError(t, err)
			assert.Equal(t, "B", tg.Ad, "%s: B outranks A, never shown since", again)

			// A targeting of the new indexing takes its click.
			removed, err := x.Remove(ctx, "B")
			require.NoError(t, err)
			require.True(t, removed)
			tg, _, err = x.Target(ctx, []string{"US"}, "redis")
			require.NoError(t, err)
			require.Equal(t, "A", tg.Ad)
			require.NoError(t, x.Click(ctx, tg.ID, "A"), again)
			assert.Equal(t, adtarget.Stats{Bid: adtarget.CPC, Value: 2, ECPM: 2000, Views: 1, Clicks: 1}, stats(t, x, "A"), again)
		}
	})
}

// TestClick_counterSetBack: when the targeting counter is deleted (by
// someone else), new targetings of an ad indexed after earlier ones still
// take their clicks: Target brings the ad's mark below its new ID.
func TestClick_counterSetBack(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		for range 3 {
			_, _, err := x.Target(ctx, []string{"US"}, "redis") // no ad yet: IDs are not taken
			require.NoError(t, err)
		}
		_, err := x.Index(ctx, adtarget.Ad{ID: "Z", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPC, Value: 1})
		require.NoError(t, err)
		for range 3 {
			_, _, err := x.Target(ctx, []string{"US"}, "redis")
			require.NoError(t, err)
		}
		_, err = x.Index(ctx, adtarget.Ad{ID: "A", Locations: []string{"EU"}, Content: "redis", Bid: adtarget.CPC, Value: 1})
		require.NoError(t, err)
		require.NoError(t, b.Client.Del(ctx, b.Prefix+"{ads}:served").Err())
		tg, ok, err := x.Target(ctx, []string{"EU"}, "redis")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, adtarget.Targeting{ID: 1, Ad: "A", ECPM: 1}, tg)
		require.NoError(t, x.Click(ctx, tg.ID, "A"))
		assert.Equal(t, int64(1), stats(t, x, "A").Clicks)
	})
}
