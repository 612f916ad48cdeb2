package adtarget_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/adtarget"
)

// Example runs the book's test_index_and_target_ads.
func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	x, err := adtarget.New(rdb, "ads")
	if err != nil {
		panic(err)
	}
	const content = "this is some random content, look at how it is indexed."
	_, _ = x.Index(ctx, adtarget.Ad{ID: "1", Locations: []string{"USA", "CA"}, Content: content, Bid: adtarget.CPC, Value: .25})
	_, _ = x.Index(ctx, adtarget.Ad{ID: "2", Locations: []string{"USA", "VA"}, Content: content + " wooooo", Bid: adtarget.CPC, Value: .125})

	var last adtarget.Targeting
	for range 100 {
		last, _, _ = x.Target(ctx, []string{"USA"}, content)
	}
	fmt.Println("USA:", last.Ad, "targeting", last.ID)
	tg, _, _ := x.Target(ctx, []string{"VA"}, "wooooo")
	fmt.Println("VA:", tg.Ad)

	if err := x.Click(ctx, last.ID, last.Ad); err != nil {
		panic(err)
	}
	for _, id := range []string{"1", "2"} {
		s, _ := x.Stats(ctx, id)
		fmt.Printf("ad %s: %v %.3f, eCPM %.3f, %d views, %d clicks\n", id, s.Bid, s.Value, s.ECPM, s.Views, s.Clicks)
	}
	// Output:
	// USA: 1 targeting 100
	// VA: 2
	// ad 1: cpc 0.250, eCPM 2.500, 100 views, 1 clicks
	// ad 2: cpc 0.125, eCPM 0.125, 1 views, 0 clicks
}

// Listing the indexed ads a page at a time: cursor 0 first, then each
// next, until next is 0.
func ExampleTargeter_Ads() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	x, _ := adtarget.New(rdb, "ads")
	for _, id := range []string{"3", "1", "2"} {
		_, _ = x.Index(ctx, adtarget.Ad{ID: id, Locations: []string{"USA"}, Content: "redis", Bid: adtarget.CPM, Value: 1})
	}
	_, _ = x.Remove(ctx, "2")
	var all []string
	var cursor uint64
	for {
		ids, next, err := x.Ads(ctx, cursor, 100)
		if err != nil {
			fmt.Println(err)
			return
		}
		all = append(all, ids...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	slices.Sort(all) // pages come in no particular order
	fmt.Println(all)
	// Output:
	// [1 3]
}
