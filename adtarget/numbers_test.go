package adtarget_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/internal/redistest"
)

// A targeting counter that no Target writes, within ±2^53 but with no next
// ID a click can name, is refused before any write: a negative one served
// targeting -4 (Click refuses IDs below 1), 2^53 served the targeting ID
// 2^53 again and again (2^53+1 is no double), overwriting the previous
// targeting.
func TestTarget_servedOutOfRange(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		for _, v := range []string{"-5", "-1", "-9007199254740992", "9007199254740992"} {
			b.Flush()
			_, err := x.Index(ctx, adtarget.Ad{ID: "a", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPC, Value: 1})
			require.NoError(t, err)
			require.NoError(t, b.Client.Set(ctx, b.Prefix+"{ads}:served", v, 0).Err())
			before := dataSnapshot(b)
			tg, _, err := x.Target(ctx, []string{"US"}, "redis")
			assert.ErrorIs(t, err, ria.ErrCorrupt, "served %s: %+v", v, tg)
			assert.Equal(t, before, dataSnapshot(b), "nothing written, served %s", v)
		}
	})
}

// TestIndex_valueExponent: a bid value Go writes with an exponent and no
// fraction (strconv.FormatFloat 'g': 1e6 is "1e+06", 0.00005 "5e-05"), and
// the eCPM scores miniredis replies that way ("1e+6"), are read as the
// same numbers on every backend: miniredis's Lua tonumber reads neither,
// and the valid ad was refused with a Lua error.
func TestIndex_valueExponent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		for _, ad := range []adtarget.Ad{
			{ID: "big", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPM, Value: adtarget.MaxValue},
			{ID: "tiny", Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPC, Value: 0.00005},
			{ID: "small", Locations: []string{"US"}, Content: "cluster", Bid: adtarget.CPM, Value: 3e-8},
			{ID: "smaller", Locations: []string{"US"}, Content: "cluster", Bid: adtarget.CPM, Value: 2e-8},
		} {
			added, err := x.Index(ctx, ad)
			if assert.NoError(t, err, "index %s", ad.ID) {
				assert.True(t, added)
				s, err := x.Stats(ctx, ad.ID)
				require.NoError(t, err)
				assert.Equal(t, ad.Value, s.Value, "%s value", ad.ID)
				assert.Equal(t, ad.Value, s.ECPM, "%s eCPM", ad.ID)
			}
		}
		tg, ok, err := x.Target(ctx, []string{"US"}, "redis")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "big", tg.Ad)
		assert.Equal(t, float64(adtarget.MaxValue), tg.ECPM)
		// eCPMs miniredis replies as "3e-8": by ZMSCORE (ads holding a
		// page word), then by the walk of the eCPM ZSET (no page word).
		for _, id := range []string{"big", "tiny"} {
			removed, err := x.Remove(ctx, id)
			require.NoError(t, err)
			require.True(t, removed)
		}
		for _, content := range []string{"cluster", "nothing"} {
			tg, ok, err = x.Target(ctx, []string{"US"}, content)
			require.NoError(t, err, content)
			require.True(t, ok, content)
			assert.Equal(t, "small", tg.Ad, content)
			assert.Equal(t, 3e-8, tg.ECPM, content)
		}
	})
}
