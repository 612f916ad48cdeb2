package adtarget_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/internal/redistest"
)

func TestWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		setup := func() {
			_, err := x.Index(ctx, adtarget.Ad{ID: "1", Locations: []string{"USA", "CA"}, Content: "alpha beta", Bid: adtarget.CPC, Value: 1})
			require.NoError(t, err)
			_, err = x.Index(ctx, adtarget.Ad{ID: "2", Locations: []string{"USA"}, Content: "gamma", Bid: adtarget.CPC, Value: 0.5})
			require.NoError(t, err)
			tg, _, err := x.Target(ctx, []string{"USA"}, "alpha")
			require.NoError(t, err)
			require.Equal(t, adtarget.Targeting{ID: 1, Ad: "1", ECPM: 1}, tg)
			require.NoError(t, x.Click(ctx, tg.ID, tg.Ad))
		}
		kr := func(part, typ, role string) redistest.KeyRole {
			return redistest.KeyRole{Key: b.Prefix + "{ads}:" + part, Type: typ, Role: role}
		}
		common := []redistest.KeyRole{
			kr("types", "hash", "adtarget types"), kr("value", "zset", "adtarget ecpm"),
			kr("base", "zset", "adtarget base value"), kr("stats", "hash", "adtarget stats"),
			kr("served", "string", "adtarget served"),
		}
		ad1 := []redistest.KeyRole{
			kr("terms:1", "set", "adtarget ad words"), kr("loc:1", "set", "adtarget ad locations"),
			kr("views:1", "zset", "adtarget views"), kr("clicks:1", "zset", "adtarget clicks"),
			kr("actions:1", "zset", "adtarget actions"),
			kr("word:3:USA:alpha", "zset", "adtarget word"), kr("word:3:USA:beta", "zset", "adtarget word"),
			kr("word:2:CA:alpha", "zset", "adtarget word"), kr("word:2:CA:beta", "zset", "adtarget word"),
			kr("req:USA", "set", "adtarget location"), kr("req:CA", "set", "adtarget location"),
		}
		since := kr("since", "hash", "adtarget since")
		with := func(extra ...redistest.KeyRole) []redistest.KeyRole {
			return append(append(append([]redistest.KeyRole{}, common...), ad1...), extra...)
		}
		b.CheckWrongTypes(t, setup, func() error {
			_, err := x.Index(ctx, adtarget.Ad{ID: "1", Locations: []string{"USA", "NY"}, Content: "alpha delta", Bid: adtarget.CPA, Value: 2})
			return err
		}, with(kr("req:NY", "set", "adtarget location"), kr("word:3:USA:delta", "zset", "adtarget word"),
			kr("word:2:NY:alpha", "zset", "adtarget word"), kr("word:2:NY:delta", "zset", "adtarget word"), since)...)
		b.CheckWrongTypes(t, setup, func() error { _, err := x.Remove(ctx, "1"); return err }, with(since)...)
		// Target: the request's locations and words, the chosen ad's own
		// keys (the postings of its other words and its other locations
		// only on a relearning view, below).
		b.CheckWrongTypes(t, setup, func() error {
			_, _, err := x.Target(ctx, []string{"USA"}, "alpha zeta")
			return err
		}, append(append([]redistest.KeyRole{since}, common...), ad1[:5]...,
		)...)
		b.CheckWrongTypes(t, setup, func() error {
			_, _, err := x.Target(ctx, []string{"USA"}, "alpha zeta")
			return err
		}, kr("req:USA", "set", "adtarget location"), kr("word:3:USA:alpha", "zset", "adtarget word"),
			kr("word:3:USA:zeta", "zset", "adtarget word"), kr("matched:2", "hash", "adtarget targeting"))
		b.CheckWrongTypes(t, func() {
			setup()
			for range 98 { // the next view of ad 1 is its 100th
				_, _, err := x.Target(ctx, []string{"CA"}, "")
				require.NoError(t, err)
			}
		}, func() error {
			_, _, err := x.Target(ctx, []string{"CA"}, "")
			return err
		}, ad1[5:9]...)
		b.CheckWrongTypes(t, setup, func() error { return x.Click(ctx, 1, "1") },
			with(kr("matched:1", "hash", "adtarget targeting"), since)...)
		b.CheckWrongTypes(t, setup, func() error { return x.Action(ctx, 1, "1") },
			with(kr("matched:1", "hash", "adtarget targeting"), since)...)
		b.CheckWrongTypes(t, setup, func() error { _, err := x.Stats(ctx, "1"); return err }, with()...)
		b.CheckWrongTypes(t, setup, func() error { _, _, err := x.Ads(ctx, 0, 10); return err }, kr("types", "hash", "adtarget types"))

		// Corrupt values: an unknown type, a counter that is not a number.
		for _, c := range []struct{ key, field, value string }{
			{"types", "1", "cpx"}, {"stats", "cpc:views", "many"}, {"since", "1", "-1"}, {"since", "1", "+1"},
		} {
			b.Flush()
			setup()
			require.NoError(t, b.Client.HSet(ctx, b.Prefix+"{ads}:"+c.key, c.field, c.value).Err())
			before := b.Snapshot()
			_, _, err := x.Target(ctx, []string{"USA"}, "alpha")
			assert.ErrorIs(t, err, ria.ErrCorrupt, "%s %s", c.key, c.field)
			assert.ErrorIs(t, x.Click(ctx, 1, "1"), ria.ErrCorrupt, "%s %s", c.key, c.field)
			assert.Equal(t, before, b.Snapshot())
		}
	})
}

func TestFaults(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		x, err := adtarget.New(rdb, "ads", adtarget.WithPrefix(b.Prefix))
		require.NoError(t, err)

		hi := redistest.NewHarness(t, f, "adtarget Index")
		for _, id := range []string{"a", "b"} {
			var added bool
			hi.Call(1, redistest.Scripts, func() {
				added, err = x.Index(ctx, adtarget.Ad{ID: id, Locations: []string{"X"}, Content: "alpha " + id, Bid: adtarget.CPC, Value: 1})
			})
			require.NoError(t, err)
			hi.Check(added, "index %s: added=%v", id, added)
			hi.Call(1, redistest.Scripts, func() {
				added, err = x.Index(ctx, adtarget.Ad{ID: id, Locations: []string{"X"}, Content: "alpha " + id, Bid: adtarget.CPC, Value: 2})
			})
			require.NoError(t, err)
			hi.Check(!added, "re-index %s: added=%v", id, added)
		}

		ht := redistest.NewHarness(t, f, "adtarget Target")
		const n = 6
		var tgs []adtarget.Targeting
		for i := range n {
			var tg adtarget.Targeting
			var ok bool
			ht.Call(1, redistest.Scripts, func() { tg, ok, err = x.Target(ctx, []string{"X"}, "alpha b") })
			require.NoError(t, err)
			ht.Check(ok && tg.ID == int64(i+1) && tg.Ad == "b", "targeting %d: %+v", i, tg)
			tgs = append(tgs, tg)
		}
		s, err := x.Stats(ctx, "b")
		require.NoError(t, err)
		ht.Check(s.Views == n, "views %d after %d targetings", s.Views, n)

		hc := redistest.NewHarness(t, f, "adtarget Click")
		for _, tg := range tgs[:3] {
			hc.Call(1, redistest.Scripts, func() { err = x.Click(ctx, tg.ID, tg.Ad) })
			require.NoError(t, err)
		}
		s, err = x.Stats(ctx, "b")
		require.NoError(t, err)
		hc.Check(s.Clicks == 3, "clicks %d after 3", s.Clicks)
		hc.Check(s.ECPM == 1000*2*3/float64(n), "eCPM %v", s.ECPM)

		ha := redistest.NewHarness(t, f, "adtarget Action")
		_, err = x.Index(ctx, adtarget.Ad{ID: "c", Locations: []string{"Z"}, Bid: adtarget.CPA, Value: 3})
		require.NoError(t, err)
		tc, _, err := x.Target(ctx, []string{"Z"}, "")
		require.NoError(t, err)
		for range 2 {
			ha.Call(1, redistest.Scripts, func() { err = x.Action(ctx, tc.ID, "c") })
			require.NoError(t, err)
		}
		s, err = x.Stats(ctx, "c")
		require.NoError(t, err)
		ha.Check(s.Actions == 2 && s.ECPM == 1000*3*2/1, "actions %d eCPM %v", s.Actions, s.ECPM)

		hr := redistest.NewHarness(t, f, "adtarget Remove")
		var removed bool
		hr.Call(1, redistest.Scripts, func() { removed, err = x.Remove(ctx, "b") })
		require.NoError(t, err)
		hr.Check(removed, "remove b: %v", removed)
		_, err = x.Stats(ctx, "b")
		hr.Check(errors.Is(err, adtarget.ErrUnknownAd), "b is gone: %v", err)
	})
}

func TestFaults_delay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		_, err := x.Index(ctx, adtarget.Ad{ID: "a", Locations: []string{"X"}, Content: "alpha", Bid: adtarget.CPC, Value: 1})
		require.NoError(t, err)
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.ReadTimeout = 50 * time.Millisecond
			o.MaxRetries = -1
		})
		slow, err := adtarget.New(rdb, "ads", adtarget.WithPrefix(b.Prefix))
		require.NoError(t, err)
		f.Delay(200 * time.Millisecond)
		_, _, err = slow.Target(ctx, []string{"X"}, "alpha")
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, "the reply timed out: the outcome is unknown")
		assert.ErrorIs(t, slow.Click(ctx, 1, "a"), ria.ErrOutcomeUnknown)
		f.Delay(0)
		// Whatever happened, the numbers agree: a view for each targeting
		// served, a click only if the click ran.
		s, err := x.Stats(ctx, "a")
		require.NoError(t, err)
		served, err := b.Client.Get(ctx, b.Prefix+"{ads}:served").Int64()
		if err == redis.Nil {
			served, err = 0, nil
		}
		require.NoError(t, err)
		assert.Equal(t, served, s.Views)
		assert.LessOrEqual(t, s.Clicks, int64(1))
	})
}

// TestConcurrent has 8 goroutines target and click 10,000 times in all
// (2,000 on miniredis) on ads in three locations: the views and clicks
// recorded equal the calls made, per ad and per type.
func TestConcurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newTargeter(t, b)
		locs := []string{"US", "FR", "JP"}
		words := []string{"redis", "cache", "queue", "search", "lock", "stream"}
		for i := range 12 {
			_, err := x.Index(ctx, adtarget.Ad{ID: fmt.Sprint("ad", i), Locations: []string{locs[i%3], locs[(i+1)%3]},
				Content: words[i%6] + " " + words[(i+2)%6], Bid: adtarget.CPC, Value: 0.1 + float64(i)/100})
			require.NoError(t, err)
		}
		total := 10000
		if !b.Real() {
			total = 2000
		}
		const workers = 8
		type tally struct{ views, clicks map[string]int64 }
		res := make([]tally, workers)
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 7))
				tl := tally{views: map[string]int64{}, clicks: map[string]int64{}}
				defer func() { res[w] = tl }()
				for calls := 0; calls < total/workers; {
					tg, ok, err := x.Target(ctx, []string{locs[r.IntN(3)]}, words[r.IntN(6)]+" "+words[r.IntN(6)])
					if err != nil || !ok {
						errs <- fmt.Errorf("target: ok=%v err=%v", ok, err)
						return
					}
					tl.views[tg.Ad]++
					calls++
					if calls%3 == 1 && calls < total/workers { // a click after a third of the targetings
						if err := x.Click(ctx, tg.ID, tg.Ad); err != nil {
							errs <- err
							return
						}
						tl.clicks[tg.Ad]++
						calls++
					}
				}
				errs <- nil
			}()
		}
		wg.Wait()
		for range workers {
			require.NoError(t, <-errs)
		}
		views, clicks := map[string]int64{}, map[string]int64{}
		var calls, allViews, allClicks int64
		for _, tl := range res {
			for ad, n := range tl.views {
				views[ad] += n
				calls += n
				allViews += n
			}
			for ad, n := range tl.clicks {
				clicks[ad] += n
				calls += n
				allClicks += n
			}
		}
		assert.Equal(t, int64(total), calls, "calls made")
		var gotViews, gotClicks int64
		for i := range 12 {
			ad := fmt.Sprint("ad", i)
			s, err := x.Stats(ctx, ad)
			require.NoError(t, err)
			assert.Equal(t, views[ad], s.Views, "%s views", ad)
			assert.Equal(t, clicks[ad], s.Clicks, "%s clicks", ad)
			gotViews += s.Views
			gotClicks += s.Clicks
		}
		st, err := b.Client.HGetAll(ctx, b.Prefix+"{ads}:stats").Result()
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(allViews), st["cpc:views"])
		assert.Equal(t, fmt.Sprint(allClicks), st["cpc:clicks"])
		t.Logf("%d calls: %d views, %d clicks recorded", calls, gotViews, gotClicks)
	})
}
