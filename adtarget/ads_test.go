package adtarget_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/internal/redistest"
)

// allAds pages through the indexed ads n at a time, one round trip a page,
// and returns how often each ID was listed.
func allAds(t *testing.T, b *redistest.Backend, x *adtarget.Targeter, n int, between func()) map[string]int {
	t.Helper()
	seen := map[string]int{}
	var cursor uint64
	for {
		var ids []string
		var err error
		rt, _ := b.Count.Delta(func() { ids, cursor, err = x.Ads(t.Context(), cursor, n) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "a page: one round trip")
		for _, id := range ids {
			seen[id]++
		}
		if cursor == 0 {
			return seen
		}
		if between != nil {
			between()
		}
	}
}

func index(t *testing.T, x *adtarget.Targeter, ids ...string) {
	t.Helper()
	for _, id := range ids {
		_, err := x.Index(t.Context(), adtarget.Ad{ID: id, Locations: []string{"X"}, Content: "alpha", Bid: adtarget.CPM, Value: 1})
		require.NoError(t, err)
	}
}

func adIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(prefix, i)
	}
	return ids
}

// overCompact returns a number of ads the types HASH does not keep in the
// compact encoding on a real server (hash-max-listpack-entries + 50), so
// that it is read in several pages; 300 on miniredis, whose HSCAN ignores
// COUNT and returns a whole HASH in one page.
func overCompact(t *testing.T, b *redistest.Backend) int {
	t.Helper()
	if !b.Real() {
		return 300
	}
	v, err := b.Client.ConfigGet(t.Context(), "hash-max-listpack-entries").Result()
	require.NoError(t, err)
	limit, err := strconv.Atoi(v["hash-max-listpack-entries"])
	require.NoError(t, err)
	return limit + 50
}

// Ads lists the indexed ads, small (one page) and large (a HASH over the
// compact encoding on a real server, read in pages of about n); a removed
// ad is not listed.
func TestAds(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		ids, next, err := x.Ads(ctx, 0, 10)
		require.NoError(t, err)
		assert.Empty(t, ids, "no ad indexed")
		assert.Zero(t, next)

		index(t, x, "a", "b", "c")
		ids, next, err = x.Ads(ctx, 0, 1)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"a", "b", "c"}, ids, "a compact HASH comes whole")
		assert.Zero(t, next)

		all := adIDs("ad", overCompact(t, b))
		index(t, x, all...)
		_, err = x.Remove(ctx, "b")
		require.NoError(t, err)
		want := map[string]bool{"a": true, "c": true}
		for _, id := range all {
			want[id] = true
		}
		if b.Real() {
			assert.Equal(t, "hashtable", b.Client.ObjectEncoding(ctx, b.Prefix+"{ads}:types").Val())
		}
		for _, n := range []int{1, 50, adtarget.MaxAdsPage} {
			seen := allAds(t, b, x, n, nil)
			got := map[string]bool{}
			for id := range seen {
				got[id] = true
			}
			assert.Equal(t, want, got, "pages of %d", n)
		}
	})
}

// Paging under Index and Remove between pages: an ad indexed throughout is
// listed; a removed or new one may or may not be; nothing else is.
func TestAds_concurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		kept, gone, added := adIDs("k", overCompact(t, b)), adIDs("g", 50), adIDs("n", 50)
		index(t, x, kept...)
		index(t, x, gone...)
		maybe := map[string]bool{}
		for _, id := range append(append(append([]string{}, kept...), gone...), added...) {
			maybe[id] = true
		}
		_, _, err := x.Ads(ctx, 0, 1) // loads the script
		require.NoError(t, err)
		done := false
		seen := allAds(t, b, x, 20, func() {
			if done {
				return
			}
			done = true
			for _, id := range gone {
				_, err := x.Remove(ctx, id)
				require.NoError(t, err)
			}
			index(t, x, added...)
		})
		if b.Real() {
			require.True(t, done, "more than one page")
		}
		for _, id := range kept {
			assert.Positive(t, seen[id], "ad %s, indexed throughout, not listed", id)
		}
		for id := range seen {
			assert.True(t, maybe[id], "ad %s was never indexed", id)
		}
	})
}

func TestAds_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		x := newTargeter(t, b)
		for _, n := range []int{0, -1, adtarget.MaxAdsPage + 1} {
			var err error
			rt, _ := b.Count.Delta(func() { _, _, err = x.Ads(t.Context(), 0, n) })
			assert.ErrorIs(t, err, adtarget.ErrInvalid, "n %d", n)
			assert.Zero(t, rt, "n %d reached Redis", n)
		}
	})
}
