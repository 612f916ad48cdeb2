package voting_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/voting"
)

// benchSite returns a site on a real standalone server with one article,
// its scripts cached so that round trips are those of steady state.
func benchSite(b *testing.B) (*voting.Site, string, *redistest.Backend) {
	b.Helper()
	be := redistest.New(b, redistest.Standalone)
	s, err := voting.New(be.Client, "bench", voting.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	id, err := s.Post(b.Context(), "poster", "bench", "https://example.com")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Vote(b.Context(), id, "warm-up", voting.Up); err != nil {
		b.Fatal(err)
	}
	return s, id, be
}

// BenchmarkSite_Vote is one counted vote (a new user each time).
func BenchmarkSite_Vote(b *testing.B) {
	s, id, be := benchSite(b)
	ctx := context.Background()
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	n := 0
	for b.Loop() {
		n++
		if _, err := s.Vote(ctx, id, "u"+strconv.Itoa(n), voting.Up); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkSite_Vote_parallel is 4×GOMAXPROCS goroutines voting on one
// article, each vote by a new user.
func BenchmarkSite_Vote_parallel(b *testing.B) {
	s, id, be := benchSite(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(4)
	var n atomic.Int64
	rt0 := be.Count.RoundTrips()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Vote(ctx, id, "u"+strconv.FormatInt(n.Add(1), 10), voting.Up); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkSite_Page is one page of 25 articles by score.
func BenchmarkSite_Page(b *testing.B) {
	s, _, be := benchSite(b)
	ctx := context.Background()
	for i := range 30 {
		if _, err := s.Post(ctx, "poster", "a"+strconv.Itoa(i), "https://example.com"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	rt0 := be.Count.RoundTrips()
	for b.Loop() {
		page, err := s.Page(ctx, voting.ByScore, 1, 25)
		if err != nil || len(page) != 25 {
			b.Fatal(len(page), err)
		}
	}
	b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
