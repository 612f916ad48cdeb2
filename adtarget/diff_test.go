package adtarget_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/internal/redistest"
)

// bookPick is the book's target_ads over the state read from Redis: the
// ads of the locations ranked by eCPM + min/2 + max/2 of the bonuses of
// the page's words they hold, ties to the greatest ID.
func bookPick(t *testing.T, b *redistest.Backend, locs, words []string) (string, float64) {
	t.Helper()
	ctx := context.Background()
	k := func(s string) string { return b.Prefix + "{ads}:" + s }
	matched := map[string]bool{}
	for _, l := range locs {
		ids, err := b.Client.SMembers(ctx, k("req:"+l)).Result()
		require.NoError(t, err)
		for _, id := range ids {
			matched[id] = true
		}
	}
	lo, hi := map[string]float64{}, map[string]float64{}
	for _, w := range words {
		zs, err := b.Client.ZRangeWithScores(ctx, k("word:"+w), 0, -1).Result()
		require.NoError(t, err)
		for _, z := range zs {
			id := z.Member.(string)
			if !matched[id] {
				continue
			}
			if _, ok := lo[id]; !ok {
				lo[id], hi[id] = z.Score, z.Score
			}
			lo[id], hi[id] = min(lo[id], z.Score), max(hi[id], z.Score)
		}
	}
	best, bestScore := "", 0.0
	for id := range matched {
		v, err := b.Client.ZScore(ctx, k("value"), id).Result()
		require.NoError(t, err)
		sc := v
		if _, ok := lo[id]; ok {
			sc = v + lo[id]*0.5 + hi[id]*0.5
		}
		if best == "" || sc > bestScore || (sc == bestScore && id > best) {
			best, bestScore = id, sc
		}
	}
	return best, bestScore
}

// TestTarget_differential checks Target's picks and scores against the
// book's ranking computed in Go from the same state, on locations holding
// many ads (the eCPM walk) and few (read whole), with bonuses learned
// from random clicks.
func TestTarget_differential(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		r := rand.New(rand.NewPCG(5, 6))
		const nAds, nLocs, nWords = 300, 20, 30
		word := func() string { return fmt.Sprint("w", r.IntN(nWords)) }
		// Location i holds an ad with probability 1/(i+1): loc0 all of
		// them, loc19 a handful.
		for i := range nAds {
			ad := adtarget.Ad{ID: fmt.Sprint("ad", i), Bid: adtarget.Bid(1 + r.IntN(3)), Value: float64(1+r.IntN(20)) / 8}
			for l := range nLocs {
				if r.IntN(l+1) == 0 {
					ad.Locations = append(ad.Locations, fmt.Sprint("loc", l))
				}
			}
			for range 1 + r.IntN(4) {
				ad.Content += word() + " "
			}
			_, err := x.Index(ctx, ad)
			require.NoError(t, err)
		}
		walks, reads, none := 0, 0, 0
		for i := range 300 {
			locs := []string{fmt.Sprint("loc", r.IntN(nLocs))}
			if r.IntN(4) == 0 {
				locs = append(locs, fmt.Sprint("loc", r.IntN(nLocs)))
			}
			var words []string
			content := ""
			seen := map[string]bool{}
			for range r.IntN(5) {
				w := word()
				content += w + " "
				if !seen[w] {
					seen[w] = true
					words = append(words, w)
				}
			}
			wantAd, wantScore := bookPick(t, b, locs, words)
			tg, ok, err := x.Target(ctx, locs, content)
			require.NoError(t, err)
			if wantAd == "" {
				assert.False(t, ok, "request %d", i)
				none++
				continue
			}
			n, err := b.Client.SCard(ctx, b.Prefix+"{ads}:req:"+locs[0]).Result()
			require.NoError(t, err)
			if n*n <= nAds && len(locs) == 1 {
				reads++
			} else {
				walks++
			}
			if !assert.Equal(t, wantAd, tg.Ad, "request %d %v %q", i, locs, content) {
				return
			}
			assert.Equal(t, wantScore, tg.ECPM, "request %d", i)
			if r.IntN(3) == 0 { // learn: bonuses and eCPMs move
				if err := x.Click(ctx, tg.ID, tg.Ad); err != nil {
					require.NoError(t, err)
				}
				if s, err := x.Stats(ctx, tg.Ad); err == nil && s.Bid == adtarget.CPA {
					require.NoError(t, x.Action(ctx, tg.ID, tg.Ad))
				}
			}
		}
		t.Logf("requests: %d walked the eCPMs, %d read the location whole, %d no ad", walks, reads, none)
		assert.Positive(t, walks)
		assert.Positive(t, reads)
	})
}
