package adtarget_test

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/internal/redistest"
)

// On a server under a language locale, where Lua's string < ignores case
// first ("a" < "B"), ties still go to the greatest ID by bytes, as the
// book's ZREVRANGE orders them: "a" (0x61) over "B" (0x42), on both paths
// of Target (the request's words, and the walk of the eCPM ZSET).
func TestTarget_tiesByBytesUnderLocale(t *testing.T) {
	srv := redistest.StartCollatingServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	x, err := adtarget.New(rdb, "ads")
	require.NoError(t, err)
	for _, id := range []string{"B", "a", "Z", "_"} {
		_, err := x.Index(ctx, adtarget.Ad{ID: id, Locations: []string{"US"}, Content: "redis", Bid: adtarget.CPM, Value: 1})
		require.NoError(t, err)
	}
	for _, content := range []string{"redis", "nothing matches"} {
		tg, ok, err := x.Target(ctx, []string{"US"}, content)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "a", tg.Ad, "content %q", content)
	}
}
