package market_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/txn"
	"github.com/ria-go/ria/market"
)

// The purchase variants side by side on a real redis-server. In the
// contended benchmarks every parallel goroutine (GOMAXPROCS x 4) is a buyer
// in one market and buys a listing of its own each time (no two goroutines
// want the same item): Buy never conflicts, BuyWatch's WATCH on the listings
// fails whenever another purchase lands in between, BuyLocked queues for the
// market lock. ops/s counts purchases.

func BenchmarkBuy_Lua_contended(b *testing.B)    { benchBuy(b, (*market.Market).Buy, true) }
func BenchmarkBuy_Watch_contended(b *testing.B)  { benchBuy(b, (*market.Market).BuyWatch, true) }
func BenchmarkBuy_Locked_contended(b *testing.B) { benchBuy(b, (*market.Market).BuyLocked, true) }

func BenchmarkBuy_Lua_uncontended(b *testing.B)    { benchBuy(b, (*market.Market).Buy, false) }
func BenchmarkBuy_Watch_uncontended(b *testing.B)  { benchBuy(b, (*market.Market).BuyWatch, false) }
func BenchmarkBuy_Locked_uncontended(b *testing.B) { benchBuy(b, (*market.Market).BuyLocked, false) }

const benchParallelism = 4

func benchBuy(b *testing.B, buy buyFunc, parallel bool) {
	be := redistest.New(b, redistest.Standalone)
	ctx := b.Context()
	m := newMarket(b, be, be.Client, "bench")
	buyers := 1
	if parallel {
		buyers = runtime.GOMAXPROCS(0) * benchParallelism
	}
	if err := m.AddUser(ctx, "seller", "Seller", 0); err != nil {
		b.Fatal(err)
	}
	for i := range buyers {
		if err := m.AddUser(ctx, fmt.Sprint("b", i), "Buyer", 1<<40); err != nil {
			b.Fatal(err)
		}
	}
	listItems(b, be, b.N)
	// Warm up the scripts of the variant (and the lock's).
	if _, err := buy(m, ctx, "b0", "seller", "nothing", 1); err == nil {
		b.Fatal("bought an unlisted item")
	}

	var next, buyer atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	start := be.Count.RoundTrips()
	if !parallel {
		for i := range b.N {
			if _, err := buy(m, ctx, "b0", "seller", strconv.Itoa(i), 1); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.SetParallelism(benchParallelism)
		b.RunParallel(func(pb *testing.PB) {
			me := fmt.Sprint("b", buyer.Add(1)-1)
			for pb.Next() {
				item := strconv.FormatInt(next.Add(1)-1, 10)
				if _, err := buy(m, ctx, me, "seller", item, 1); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.StopTimer()
	b.ReportMetric(float64(be.Count.RoundTrips()-start)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// listItems puts items "0".."n-1" on the bench market, listed by "seller"
// at price 1, writing the keys doc.go describes in pipelines of 1000.
func listItems(b *testing.B, be *redistest.Backend, n int) {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	err := txn.Chunked(context.Background(), be.Client, ids, 1000, func(p redis.Pipeliner, i int) {
		id := strconv.Itoa(i)
		p.SAdd(context.Background(), key(be, "bench", "items"), id)
		p.ZAdd(context.Background(), key(be, "bench", "listings"), redis.Z{Score: 1, Member: id + ".seller"})
	})
	if err != nil {
		b.Fatal(err)
	}
}
