// Command adtarget runs the book's ad targeting (Redis in Action 7.3:
// index_ad, target_ads, record_click, update_cpms) on a ria targeter: ads
// in two cities, requests for pages, clicks, and the eCPMs learning from
// them; every step is one atomic script.
//
//	go run ./examples/adtarget                       # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/adtarget
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/examples/demo"
)

const prefix = "example:adtarget:"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "adtarget example:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	ctx := context.Background()
	if err := demo.Clean(ctx, rdb, prefix); err != nil {
		return err
	}

	x, err := adtarget.New(rdb, "ads", adtarget.WithPrefix(prefix))
	if err != nil {
		return err
	}
	ads := []adtarget.Ad{
		{ID: "bikes", Locations: []string{"paris"}, Content: "city bikes for rent, electric bikes", Bid: adtarget.CPC, Value: 0.50},
		{ID: "museum", Locations: []string{"paris"}, Content: "museum tickets, art and history", Bid: adtarget.CPM, Value: 0.40},
		{ID: "ramen", Locations: []string{"tokyo"}, Content: "ramen and street food tours", Bid: adtarget.CPC, Value: 0.30},
		{ID: "rail-pass", Locations: []string{"paris", "tokyo"}, Content: "rail pass: trains, bikes, city travel", Bid: adtarget.CPA, Value: 0.35},
	}
	for _, ad := range ads {
		if _, err := x.Index(ctx, ad); err != nil {
			return err
		}
	}
	show := func(title string) error {
		fmt.Println(title)
		for _, ad := range ads {
			s, err := x.Stats(ctx, ad.ID)
			if err != nil {
				return err
			}
			fmt.Printf("  %-9s %v %.2f  eCPM %7.3f  views %3d  clicks %2d  actions %d\n",
				ad.ID, s.Bid, s.Value, s.ECPM, s.Views, s.Clicks, s.Actions)
		}
		return nil
	}
	if err := show("indexed (the first eCPM of a CPC or CPA ad is its value):"); err != nil {
		return err
	}

	// Requests: pages in both cities. Users click bikes often, the rail
	// pass now and then (and sometimes buy one), ramen rarely.
	r := rand.New(rand.NewPCG(1, 2))
	pages := []struct{ city, text string }{
		{"paris", "renting bikes in the city"},
		{"paris", "what to see: art, museum, history"},
		{"tokyo", "best street food and ramen"},
		{"tokyo", "travel by train with a rail pass"},
	}
	picked := map[string]int{}
	for i := range 400 {
		p := pages[i%len(pages)]
		tg, ok, err := x.Target(ctx, []string{p.city}, p.text)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		picked[tg.Ad]++
		click := map[string]float64{"bikes": 0.05, "rail-pass": 0.10, "ramen": 0.01, "museum": 0.02}[tg.Ad]
		if r.Float64() < click {
			if err := x.Click(ctx, tg.ID, tg.Ad); err != nil {
				return err
			}
			if tg.Ad == "rail-pass" && r.IntN(2) == 0 {
				if err := x.Action(ctx, tg.ID, tg.Ad); err != nil {
					return err
				}
			}
		}
	}
	ids := make([]string, 0, len(picked))
	for id := range picked {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fmt.Print("400 requests picked:")
	for _, id := range ids {
		fmt.Printf(" %s %d", id, picked[id])
	}
	fmt.Println()
	if err := show("after the requests, clicks and actions (eCPM = 1000 x value x clicks / views):"); err != nil {
		return err
	}
	for _, p := range pages[:2] {
		tg, _, err := x.Target(ctx, []string{p.city}, p.text)
		if err != nil {
			return err
		}
		fmt.Printf("now %q in %s shows %s (eCPM with bonus %.3f)\n", p.text, p.city, tg.Ad, tg.ECPM)
	}

	// Bad input is refused and changes nothing.
	_, err = x.Index(ctx, adtarget.Ad{ID: "bad", Locations: []string{"paris"}, Bid: adtarget.CPC, Value: -1})
	fmt.Println("bad input:", err)
	return demo.Clean(ctx, rdb, prefix)
}
