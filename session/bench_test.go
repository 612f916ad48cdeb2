package session_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// The book's benchmark_update_token: the same token, user and item again
// and again (chapter 4 measures update_token against a pipelined version;
// the seed reports 1.8x for the pipeline on localhost, in Python).

func benchStore(b *testing.B) (*session.Store, *redistest.Backend) {
	b.Helper()
	be := redistest.New(b, redistest.Standalone)
	s, err := session.New(be.Client, "bench", session.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	// Cache the script, so that round trips are those of steady state.
	if err := s.UpdateToken(b.Context(), "token", "user", "item"); err != nil {
		b.Fatal(err)
	}
	return s, be
}

func report(b *testing.B, be *redistest.Backend, rt0 int64) {
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkUpdateToken is [session.Store.UpdateToken] with an item: one
// script, one round trip.
func BenchmarkUpdateToken(b *testing.B) {
	s, be := benchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		if err := s.UpdateToken(ctx, "token", "user", "item"); err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, rt0)
}

// bookKeys are the keys UpdateToken writes (see doc.go), for the book's
// versions below.
func bookKeys(be *redistest.Backend) (login, recent, viewed, views string) {
	k := func(part string) string { return be.Prefix + "{bench}:" + part }
	return k("login"), k("recent"), k("viewed:token"), k("views")
}

// BenchmarkUpdateToken_oneCommandAtATime is the book's update_token: five
// commands, one round trip each.
func BenchmarkUpdateToken_oneCommandAtATime(b *testing.B) {
	_, be := benchStore(b)
	login, recent, viewed, views := bookKeys(be)
	rdb := be.Client
	ctx := context.Background()
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		ts := float64(time.Now().UnixMicro())
		for _, err := range []error{
			rdb.HSet(ctx, login, "token", "user").Err(),
			rdb.ZAdd(ctx, recent, redis.Z{Member: "token", Score: ts}).Err(),
			rdb.ZAdd(ctx, viewed, redis.Z{Member: "item", Score: ts}).Err(),
			rdb.ZRemRangeByRank(ctx, viewed, 0, -session.ViewedLimit-1).Err(),
			rdb.ZIncrBy(ctx, views, -1, "item").Err(),
		} {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	report(b, be, rt0)
}

// BenchmarkUpdateToken_bookPipeline is the book's update_token_pipeline:
// the same five commands in one non-transactional pipeline (one round
// trip, but not atomic).
func BenchmarkUpdateToken_bookPipeline(b *testing.B) {
	_, be := benchStore(b)
	login, recent, viewed, views := bookKeys(be)
	rdb := be.Client
	ctx := context.Background()
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		ts := float64(time.Now().UnixMicro())
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, login, "token", "user")
			p.ZAdd(ctx, recent, redis.Z{Member: "token", Score: ts})
			p.ZAdd(ctx, viewed, redis.Z{Member: "item", Score: ts})
			p.ZRemRangeByRank(ctx, viewed, 0, -session.ViewedLimit-1)
			p.ZIncrBy(ctx, views, -1, "item")
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	report(b, be, rt0)
}

// BenchmarkUpdateToken_parallel is UpdateToken from 4×GOMAXPROCS
// goroutines, each with its own session.
func BenchmarkUpdateToken_parallel(b *testing.B) {
	s, be := benchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(4)
	rt0 := be.Count.RoundTrips()
	var id int64
	var mu = make(chan struct{}, 1)
	b.RunParallel(func(pb *testing.PB) {
		mu <- struct{}{}
		id++
		token := fmt.Sprint("token-", id)
		<-mu
		for pb.Next() {
			if err := s.UpdateToken(ctx, token, "user", "item"); err != nil {
				b.Error(err)
				return
			}
		}
	})
	report(b, be, rt0)
}
