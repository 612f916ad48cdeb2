package adtarget_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"
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
	// The bonuses of a word: its posting in any location of the ad (the
	// same in each).
	lo, hi := map[string]float64{}, map[string]float64{}
	for _, w := range words {
		var zs []redis.Z
		for _, l := range locs {
			z, err := b.Client.ZRangeWithScores(ctx, k(fmt.Sprintf("word:%d:%s:%s", len(l), l, w)), 0, -1).Result()
			require.NoError(t, err)
			zs = append(zs, z...)
		}
		for _, z := range zs {
			id := z.Member.(string)
			if !matched[id] {
				t.Fatalf("ad %s in a posting of word %q of locations %v but not in their SETs", id, w, locs)
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
		checkPostings(t, b, nLocs, nWords)
		t.Logf("requests: %d walked the eCPMs, %d read the location whole, %d no ad", walks, reads, none)
		assert.Positive(t, walks)
		assert.Positive(t, reads)
	})
}

// checkPostings checks the word postings against the ads' own sets: the
// posting of (location, word) holds exactly the ads of the location that
// hold the word, and an ad's bonus for a word is the same in each of its
// locations.
func checkPostings(t *testing.T, b *redistest.Backend, nLocs, nWords int) {
	t.Helper()
	ctx := context.Background()
	k := func(s string) string { return b.Prefix + "{ads}:" + s }
	bonus := map[string]float64{} // ad + " " + word -> bonus
	for l := range nLocs {
		loc := fmt.Sprint("loc", l)
		ads, err := b.Client.SMembers(ctx, k("req:"+loc)).Result()
		require.NoError(t, err)
		terms := map[string]map[string]bool{}
		for _, ad := range ads {
			ws, err := b.Client.SMembers(ctx, k("terms:"+ad)).Result()
			require.NoError(t, err)
			terms[ad] = map[string]bool{}
			for _, w := range ws {
				terms[ad][w] = true
			}
		}
		for i := range nWords {
			w := fmt.Sprint("w", i)
			zs, err := b.Client.ZRangeWithScores(ctx, k(fmt.Sprintf("word:%d:%s:%s", len(loc), loc, w)), 0, -1).Result()
			require.NoError(t, err)
			got := map[string]bool{}
			for _, z := range zs {
				ad := z.Member.(string)
				got[ad] = true
				if prev, ok := bonus[ad+" "+w]; ok {
					require.Equal(t, prev, z.Score, "bonus of ad %s for %s differs between its locations", ad, w)
				}
				bonus[ad+" "+w] = z.Score
			}
			want := map[string]bool{}
			for _, ad := range ads {
				if terms[ad][w] {
					want[ad] = true
				}
			}
			require.Equal(t, want, got, "posting of %s in %s", w, loc)
		}
	}
}
