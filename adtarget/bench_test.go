package adtarget_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

// BenchmarkTarget compares Target (one script) with the book's
// target_ads + record_targeting_result (a MULTI of the set operations,
// then SMEMBERS, HGET and a MULTI of the views: four round trips, more
// every 100th view) on the same 10,000 ads (1 to 3 of 50 locations, 5 to
// 10 of 500 words) on a real server, and with PING, the floor of any
// one-round-trip call. Run:
//
//	go test -run '^$' -bench Target -benchtime 2s ./adtarget/
func BenchmarkTarget(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := context.Background()
	const nAds, nLocs, nWords = 10000, 50, 500
	r := rand.New(rand.NewPCG(3, 4))
	x, err := adtarget.New(be.Client, "bench", adtarget.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	bk := be.Prefix + "{book}:"
	loc := func(i int) string { return "loc" + strconv.Itoa(i) }
	word := func(i int) string { return "word" + strconv.Itoa(i) }
	pipe := be.Client.Pipeline()
	for i := range nAds {
		ad := adtarget.Ad{ID: "ad" + strconv.Itoa(i), Bid: adtarget.CPC, Value: 0.01 + r.Float64()}
		for _, l := range r.Perm(nLocs)[:1+r.IntN(3)] {
			ad.Locations = append(ad.Locations, loc(l))
		}
		var ws []string
		for _, w := range r.Perm(nWords)[:5+r.IntN(6)] {
			ws = append(ws, word(w))
		}
		ad.Content = strings.Join(ws, " ")
		if _, err := x.Index(ctx, ad); err != nil {
			b.Fatal(err)
		}
		// The book's index_ad.
		for _, l := range ad.Locations {
			pipe.SAdd(ctx, bk+"idx:req:"+l, ad.ID)
		}
		for _, w := range ws {
			pipe.ZAdd(ctx, bk+"idx:"+w, redis.Z{Member: ad.ID})
			pipe.SAdd(ctx, bk+"terms:"+ad.ID, w)
		}
		pipe.HSet(ctx, bk+"type:", ad.ID, "cpc")
		pipe.ZAdd(ctx, bk+"idx:ad:value:", redis.Z{Member: ad.ID, Score: ad.Value})
		pipe.ZAdd(ctx, bk+"ad:base_value:", redis.Z{Member: ad.ID, Score: ad.Value})
		if pipe.Len() > 1000 {
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	type req struct {
		locs    []string
		content string
	}
	reqs := make([]req, 64)
	for i := range reqs {
		var ws []string
		for _, w := range r.Perm(nWords)[:10] {
			ws = append(ws, word(w))
		}
		reqs[i] = req{locs: []string{loc(r.IntN(nLocs))}, content: strings.Join(ws, " ")}
	}
	// Both methods pick the same ads.
	for i, q := range reqs[:16] {
		tg, _, err := x.Target(ctx, q.locs, q.content)
		if err != nil {
			b.Fatal(err)
		}
		ad, err := bookTarget(ctx, be.Client, bk, q.locs, q.content)
		if err != nil {
			b.Fatal(err)
		}
		if ad != tg.Ad {
			b.Fatalf("request %d: Target picked %s, the book %s", i, tg.Ad, ad)
		}
	}
	b.Run("Target", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			q := reqs[i%len(reqs)]
			if _, _, err := x.Target(ctx, q.locs, q.content); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("book", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			q := reqs[i%len(reqs)]
			if _, err := bookTarget(ctx, be.Client, bk, q.locs, q.content); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("PING", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := be.Client.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

var bookSeq int

// bookTarget is the book's target_ads (match_location, finish_scoring,
// INCR ads:served:, ZREVRANGE, one MULTI) and record_targeting_result
// (SMEMBERS terms, HGET type, a MULTI of the views); update_cpms every
// 100th view of an ad is left out, which only flatters the book.
func bookTarget(ctx context.Context, rdb redis.UniversalClient, bk string, locs []string, content string) (string, error) {
	bookSeq++
	tmp := func(s string) string { return bk + "idx:tmp" + strconv.Itoa(bookSeq) + s }
	words := search.Tokenize(content)
	var top *redis.StringSliceCmd
	var served *redis.IntCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		req := make([]string, len(locs))
		for i, l := range locs {
			req[i] = bk + "idx:req:" + l
		}
		matched, base := tmp("m"), tmp("b")
		p.SUnionStore(ctx, matched, req...)
		p.Expire(ctx, matched, 300e9)
		p.ZInterStore(ctx, base, &redis.ZStore{Keys: []string{matched, bk + "idx:ad:value:"}, Weights: []float64{0, 1}})
		p.Expire(ctx, base, 30e9)
		var bonus []string
		for i, w := range words {
			k := tmp("w" + strconv.Itoa(i))
			p.ZInterStore(ctx, k, &redis.ZStore{Keys: []string{matched, bk + "idx:" + w}, Weights: []float64{0, 1}})
			p.Expire(ctx, k, 30e9)
			bonus = append(bonus, k)
		}
		final := base
		if len(bonus) > 0 {
			mn, mx, f := tmp("min"), tmp("max"), tmp("f")
			p.ZUnionStore(ctx, mn, &redis.ZStore{Keys: bonus, Aggregate: "MIN"})
			p.Expire(ctx, mn, 30e9)
			p.ZUnionStore(ctx, mx, &redis.ZStore{Keys: bonus, Aggregate: "MAX"})
			p.Expire(ctx, mx, 30e9)
			p.ZUnionStore(ctx, f, &redis.ZStore{Keys: []string{base, mn, mx}, Weights: []float64{1, .5, .5}})
			p.Expire(ctx, f, 30e9)
			final = f
		}
		served = p.Incr(ctx, bk+"ads:served:")
		top = p.ZRevRange(ctx, final, 0, 0)
		return nil
	})
	if err != nil || len(top.Val()) == 0 {
		return "", err
	}
	ad, tid := top.Val()[0], served.Val()
	// record_targeting_result
	terms, err := rdb.SMembers(ctx, bk+"terms:"+ad).Result()
	if err != nil {
		return "", err
	}
	in := map[string]bool{}
	for _, t := range terms {
		in[t] = true
	}
	var matched []any
	for _, w := range words {
		if in[w] {
			matched = append(matched, w)
		}
	}
	typ, err := rdb.HGet(ctx, bk+"type:", ad).Result()
	if err != nil {
		return "", err
	}
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if len(matched) > 0 {
			mk := fmt.Sprintf("%sterms:matched:%d", bk, tid)
			p.SAdd(ctx, mk, matched...)
			p.Expire(ctx, mk, 900e9)
		}
		p.Incr(ctx, bk+"type:"+typ+":views:")
		for _, w := range matched {
			p.ZIncrBy(ctx, bk+"views:"+ad, 1, w.(string))
		}
		p.ZIncrBy(ctx, bk+"views:"+ad, 1, "")
		return nil
	})
	return ad, err
}
