package adtarget_test

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func newTargeter(t *testing.T, b *redistest.Backend, opts ...adtarget.Option) *adtarget.Targeter {
	t.Helper()
	x, err := adtarget.New(b.Client, "ads", append([]adtarget.Option{adtarget.WithPrefix(b.Prefix)}, opts...)...)
	require.NoError(t, err)
	return x
}

// content is the book's test content (test_index_and_target_ads).
const content = "this is some random content, look at how it is indexed."

func stats(t *testing.T, x *adtarget.Targeter, id string) adtarget.Stats {
	t.Helper()
	s, err := x.Stats(t.Context(), id)
	require.NoError(t, err)
	return s
}

// TestBook runs the book's test_index_and_target_ads with its numbers.
func TestBook(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		added, err := x.Index(ctx, adtarget.Ad{ID: "1", Locations: []string{"USA", "CA"}, Content: content, Bid: adtarget.CPC, Value: .25})
		require.NoError(t, err)
		assert.True(t, added)
		_, err = x.Index(ctx, adtarget.Ad{ID: "2", Locations: []string{"USA", "VA"}, Content: content + " wooooo", Bid: adtarget.CPC, Value: .125})
		require.NoError(t, err)

		var last adtarget.Targeting
		for i := range 100 {
			tg, ok, err := x.Target(ctx, []string{"USA"}, content)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, "1", tg.Ad, "targeting %d", i)
			require.Equal(t, int64(i+1), tg.ID)
			last = tg
		}
		tg, ok, err := x.Target(ctx, []string{"VA"}, "wooooo")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "2", tg.Ad)

		s1, s2 := stats(t, x, "1"), stats(t, x, "2")
		assert.Equal(t, [2]float64{0.25, 0.125}, [2]float64{s1.ECPM, s2.ECPM}, "eCPMs")
		assert.Equal(t, [2]float64{0.25, 0.125}, [2]float64{s1.Value, s2.Value}, "base values")
		assert.Equal(t, int64(100), s1.Views)
		assert.Equal(t, int64(1), s2.Views)

		require.NoError(t, x.Click(ctx, last.ID, last.Ad))
		s1, s2 = stats(t, x, "1"), stats(t, x, "2")
		assert.Equal(t, 2.5, s1.ECPM, "1000 × 0.25 × 1 click / 100 views")
		assert.Equal(t, 0.125, s2.ECPM, "ad 2 unchanged")
		assert.Equal(t, [2]float64{0.25, 0.125}, [2]float64{s1.Value, s2.Value}, "base values unchanged")
		assert.Equal(t, int64(1), s1.Clicks)

		_, ok, err = x.Target(ctx, []string{"Mars"}, content)
		require.NoError(t, err)
		assert.False(t, ok, "no ad targets Mars")
	})
}

// TestTarget_bonus checks finish_scoring's eCPM + min/2 + max/2 of the
// word bonuses, learned from the clicks of targetings that matched them.
func TestTarget_bonus(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		_, err := x.Index(ctx, adtarget.Ad{ID: "a", Locations: []string{"X"}, Content: "alpha beta", Bid: adtarget.CPC, Value: 1})
		require.NoError(t, err)
		_, err = x.Index(ctx, adtarget.Ad{ID: "b", Locations: []string{"X"}, Content: "gamma", Bid: adtarget.CPM, Value: 0.9})
		require.NoError(t, err)
		target := func(text string) adtarget.Targeting {
			t.Helper()
			tg, ok, err := x.Target(ctx, []string{"X"}, text)
			require.NoError(t, err)
			require.True(t, ok)
			return tg
		}
		t1 := target("alpha")
		assert.Equal(t, adtarget.Targeting{ID: 1, Ad: "a", ECPM: 1}, t1)
		assert.Equal(t, adtarget.Targeting{ID: 2, Ad: "a", ECPM: 1}, target("beta"))
		// One click after the alpha targeting: the ad's eCPM is 1000 × 1 ×
		// 1 / 2 views = 500; alpha's is 1000 × 1 × 1 / 1 = 1000, a bonus
		// of 500; beta has no click and keeps its bonus of 0.
		require.NoError(t, x.Click(ctx, t1.ID, "a"))
		assert.Equal(t, 500.0, stats(t, x, "a").ECPM)
		assert.Equal(t, 1000.0, target("alpha").ECPM, "500 + 500/2 + 500/2")
		assert.Equal(t, 500.0, target("beta").ECPM, "500 + 0")
		assert.Equal(t, 750.0, target("alpha beta").ECPM, "500 + 0/2 + 500/2")
		assert.Equal(t, 500.0, target("nothing").ECPM, "no word matched: no bonus")
		s := stats(t, x, "a")
		assert.Equal(t, adtarget.Stats{Bid: adtarget.CPC, Value: 1, ECPM: 500, Views: 6, Clicks: 1}, s)
		// The CPM ad is only picked where the CPC one is not.
		_, err = x.Index(ctx, adtarget.Ad{ID: "b", Locations: []string{"Y"}, Content: "gamma", Bid: adtarget.CPM, Value: 0.9})
		require.NoError(t, err)
		tg, ok, err := x.Target(ctx, []string{"Y"}, "gamma")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "b", tg.Ad)
		assert.Equal(t, 0.9, tg.ECPM)
	})
}

func TestClick_Action_bids(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		_, err := x.Index(ctx, adtarget.Ad{ID: "cpa", Locations: []string{"X"}, Content: "buy", Bid: adtarget.CPA, Value: 2})
		require.NoError(t, err)
		_, err = x.Index(ctx, adtarget.Ad{ID: "cpm", Locations: []string{"Y"}, Content: "look", Bid: adtarget.CPM, Value: 3})
		require.NoError(t, err)
		var ids []int64
		for range 4 {
			tg, _, err := x.Target(ctx, []string{"X"}, "buy now")
			require.NoError(t, err)
			ids = append(ids, tg.ID)
		}
		// A click on a CPA ad counts, but its eCPM learns from actions.
		require.NoError(t, x.Click(ctx, ids[0], "cpa"))
		s := stats(t, x, "cpa")
		assert.Equal(t, adtarget.Stats{Bid: adtarget.CPA, Value: 2, ECPM: 2, Views: 4, Clicks: 1}, s)
		require.NoError(t, x.Action(ctx, ids[0], "cpa"))
		s = stats(t, x, "cpa")
		assert.Equal(t, adtarget.Stats{Bid: adtarget.CPA, Value: 2, ECPM: 500, Views: 4, Clicks: 1, Actions: 1}, s, "1000 × 2 × 1 / 4")

		// A CPM ad's eCPM is its value, clicks or not.
		tg, _, err := x.Target(ctx, []string{"Y"}, "")
		require.NoError(t, err)
		require.NoError(t, x.Click(ctx, tg.ID, "cpm"))
		assert.Equal(t, adtarget.Stats{Bid: adtarget.CPM, Value: 3, ECPM: 3, Views: 1, Clicks: 1}, stats(t, x, "cpm"))

		before := dataSnapshot(b)
		assert.ErrorIs(t, x.Action(ctx, tg.ID, "cpm"), adtarget.ErrNotCPA)
		assert.ErrorIs(t, x.Click(ctx, tg.ID, "none"), adtarget.ErrUnknownAd)
		assert.ErrorIs(t, x.Action(ctx, tg.ID, "none"), adtarget.ErrUnknownAd)
		_, err = x.Stats(ctx, "none")
		assert.ErrorIs(t, err, adtarget.ErrUnknownAd)
		assert.Equal(t, before, dataSnapshot(b), "refused clicks change nothing")

		// A new CPA ad starts from the type's rate so far: 1 action per 4
		// views, 250 per thousand, times its value.
		_, err = x.Index(ctx, adtarget.Ad{ID: "cpa2", Locations: []string{"Z"}, Bid: adtarget.CPA, Value: 0.5})
		require.NoError(t, err)
		assert.Equal(t, 125.0, stats(t, x, "cpa2").ECPM)
	})
}

// dataSnapshot is the test's keys but the reply records of once-scripts.
func dataSnapshot(b *redistest.Backend) map[string]string {
	s := b.Snapshot()
	for k := range s {
		if strings.Contains(k, "}:once:") {
			delete(s, k)
		}
	}
	return s
}

func TestIndex_replace_and_Remove(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		_, err := x.Index(ctx, adtarget.Ad{ID: "a", Locations: []string{"X"}, Content: "alpha", Bid: adtarget.CPC, Value: 1})
		require.NoError(t, err)
		tg, _, err := x.Target(ctx, []string{"X"}, "alpha")
		require.NoError(t, err)
		require.NoError(t, x.Click(ctx, tg.ID, "a"))

		added, err := x.Index(ctx, adtarget.Ad{ID: "a", Locations: []string{"Y"}, Content: "beta", Bid: adtarget.CPM, Value: 2})
		require.NoError(t, err)
		assert.False(t, added)
		_, ok, err := x.Target(ctx, []string{"X"}, "alpha")
		require.NoError(t, err)
		assert.False(t, ok, "the ad left X")
		assert.Equal(t, adtarget.Stats{Bid: adtarget.CPM, Value: 2, ECPM: 2}, stats(t, x, "a"), "learning starts over")
		tg, ok, err = x.Target(ctx, []string{"Y"}, "beta")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "a", tg.Ad)

		removed, err := x.Remove(ctx, "a")
		require.NoError(t, err)
		assert.True(t, removed)
		removed, err = x.Remove(ctx, "a")
		require.NoError(t, err)
		assert.False(t, removed)
		_, ok, err = x.Target(ctx, []string{"Y"}, "beta")
		require.NoError(t, err)
		assert.False(t, ok)
		var left []string
		for k := range dataSnapshot(b) {
			left = append(left, strings.TrimPrefix(k, b.Prefix))
		}
		sort.Strings(left)
		// The type statistics and the targeting counter stay, with the
		// words the targetings matched (until their TTL).
		assert.Equal(t, []string{"{ads}:matched:1", "{ads}:matched:2", "{ads}:served", "{ads}:stats"}, left)
	})
}

func TestBadInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		_, err := x.Index(ctx, adtarget.Ad{ID: "a", Locations: []string{"X"}, Content: "alpha", Bid: adtarget.CPC, Value: 1})
		require.NoError(t, err)
		before := b.Snapshot()
		long := strings.Repeat("x", adtarget.MaxNameBytes+1)
		good := adtarget.Ad{ID: "b", Locations: []string{"X"}, Content: "beta", Bid: adtarget.CPC, Value: 1}
		with := func(f func(a *adtarget.Ad)) adtarget.Ad { a := good; f(&a); return a }
		many := make([]string, adtarget.MaxLocations+1)
		for i := range many {
			many[i] = fmt.Sprint("l", i)
		}
		var words strings.Builder
		for i := range adtarget.MaxWords + 1 {
			fmt.Fprintf(&words, "w%d ", i)
		}
		for name, ad := range map[string]adtarget.Ad{
			"empty id":        with(func(a *adtarget.Ad) { a.ID = "" }),
			"long id":         with(func(a *adtarget.Ad) { a.ID = long }),
			"unknown bid":     with(func(a *adtarget.Ad) { a.Bid = 7 }),
			"zero bid":        with(func(a *adtarget.Ad) { a.Bid = 0 }),
			"negative value":  with(func(a *adtarget.Ad) { a.Value = -0.25 }),
			"zero value":      with(func(a *adtarget.Ad) { a.Value = 0 }),
			"NaN value":       with(func(a *adtarget.Ad) { a.Value = math.NaN() }),
			"infinite value":  with(func(a *adtarget.Ad) { a.Value = math.Inf(1) }),
			"huge value":      with(func(a *adtarget.Ad) { a.Value = 2 * adtarget.MaxValue }),
			"no location":     with(func(a *adtarget.Ad) { a.Locations = nil }),
			"empty location":  with(func(a *adtarget.Ad) { a.Locations = []string{"X", ""} }),
			"long location":   with(func(a *adtarget.Ad) { a.Locations = []string{long} }),
			"many locations":  with(func(a *adtarget.Ad) { a.Locations = many }),
			"long content":    with(func(a *adtarget.Ad) { a.Content = strings.Repeat("a ", adtarget.MaxContentBytes) }),
			"too many words":  with(func(a *adtarget.Ad) { a.Content = words.String() }),
			"invalid utf8 id": with(func(a *adtarget.Ad) { a.ID = "\xff" }),
		} {
			_, err := x.Index(ctx, ad)
			assert.ErrorIs(t, err, adtarget.ErrInvalid, name)
		}
		for name, locs := range map[string][]string{"none": nil, "empty": {""}, "long": {long}, "many": many} {
			_, _, err := x.Target(ctx, locs, "alpha")
			assert.ErrorIs(t, err, adtarget.ErrInvalid, "target: %s location", name)
		}
		_, _, err = x.Target(ctx, []string{"X"}, words.String())
		assert.ErrorIs(t, err, adtarget.ErrInvalid, "target: too many words")
		assert.ErrorIs(t, x.Click(ctx, 0, "a"), adtarget.ErrInvalid, "targeting ID 0")
		assert.ErrorIs(t, x.Click(ctx, -5, "a"), adtarget.ErrInvalid, "negative targeting ID")
		assert.ErrorIs(t, x.Click(ctx, 1, ""), adtarget.ErrInvalid, "empty ad")
		assert.ErrorIs(t, x.Action(ctx, 1, long), adtarget.ErrInvalid, "long ad")
		_, err = x.Remove(ctx, "")
		assert.ErrorIs(t, err, adtarget.ErrInvalid)
		assert.Equal(t, before, b.Snapshot(), "bad input changes nothing")

		for _, opts := range [][]adtarget.Option{
			{adtarget.WithPrefix("a{")},
			{adtarget.WithAnalyzer(nil)},
			{adtarget.WithMatchTTL(time.Millisecond)},
		} {
			_, err := adtarget.New(b.Client, "ads", opts...)
			assert.Error(t, err)
		}
		_, err = adtarget.New(b.Client, "")
		assert.Error(t, err)
		_, err = adtarget.New(b.Client, "a}")
		assert.Error(t, err)
	})
}

func TestRoundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		// Load the scripts.
		_, err := x.Index(ctx, adtarget.Ad{ID: "a", Locations: []string{"X"}, Content: "alpha", Bid: adtarget.CPC, Value: 1})
		require.NoError(t, err)
		tg, _, err := x.Target(ctx, []string{"X"}, "alpha")
		require.NoError(t, err)
		require.NoError(t, x.Click(ctx, tg.ID, "a"))
		_, err = x.Remove(ctx, "none")
		require.NoError(t, err)
		_, err = x.Stats(ctx, "a")
		require.NoError(t, err)
		_, _, err = x.Ads(ctx, 0, 10)
		require.NoError(t, err)
		for _, op := range []struct {
			name string
			fn   func()
		}{
			{"index", func() {
				_, err := x.Index(ctx, adtarget.Ad{ID: "b", Locations: []string{"X", "Y"}, Content: "beta gamma", Bid: adtarget.CPA, Value: 5000})
				require.NoError(t, err)
			}},
			{"target", func() {
				tg, _, err = x.Target(ctx, []string{"X", "Y"}, "alpha beta gamma delta")
				require.NoError(t, err)
				require.Equal(t, "b", tg.Ad) // for the action
			}},
			{"click", func() { require.NoError(t, x.Click(ctx, tg.ID, tg.Ad)) }},
			{"action", func() { require.NoError(t, x.Action(ctx, tg.ID, tg.Ad)) }},
			{"stats", func() { _, err := x.Stats(ctx, "b"); require.NoError(t, err) }},
			{"remove", func() { _, err := x.Remove(ctx, "b"); require.NoError(t, err) }},
			{"ads", func() { _, _, err := x.Ads(ctx, 0, 10); require.NoError(t, err) }},
		} {
			rt, cmds := b.Count.Delta(op.fn)
			assert.Equal(t, int64(1), rt, "%s round trips", op.name)
			assert.Equal(t, int64(1), cmds, "%s: one script", op.name)
		}
	})
}
