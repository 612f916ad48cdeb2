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
