package search_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

// benchDocs returns n generated documents of about 50 words over a
// 500-word skewed vocabulary.
func benchDocs(n int) []search.Document {
	rng := rand.New(rand.NewPCG(1, 2))
	docs := make([]search.Document, n)
	for i := range docs {
		var b strings.Builder
		for range 50 {
			fmt.Fprintf(&b, "w%d ", min(rng.IntN(500), rng.IntN(500)))
		}
		docs[i] = search.Document{ID: "d" + strconv.Itoa(i), Text: b.String()}
	}
	return docs
}

// BenchmarkIndex compares Index.Add (batches of 100, one script) with the
// book's index_document (SADD per term, one pipeline per document), on a
// real server.
func BenchmarkIndex(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	docs := benchDocs(2000)
	b.Run("search.Add/batch100", func(b *testing.B) {
		b.ReportAllocs()
		x, err := search.New(be.Client, "bench"+strconv.Itoa(b.N), search.WithPrefix(be.Prefix))
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i += 100 {
			batch := make([]search.Document, 0, 100)
			for j := i; j < i+100 && j < b.N; j++ {
				d := docs[j%len(docs)]
				d.ID = "d" + strconv.Itoa(j)
				batch = append(batch, d)
			}
			if _, _, err := x.Add(b.Context(), batch...); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	})
	b.Run("book/index_document", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			d := docs[i%len(docs)]
			_, err := be.Client.Pipelined(b.Context(), func(p redis.Pipeliner) error {
				for _, t := range search.Tokenize(d.Text) {
					p.SAdd(b.Context(), be.Prefix+"book:idx:"+t, i)
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	})
}

// BenchmarkSearch runs 2-word AND queries and queries with an exclusion
// over 2,000 indexed documents on a real server.
func BenchmarkSearch(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	x, err := search.New(be.Client, "bench", search.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	docs := benchDocs(2000)
	for i := 0; i < len(docs); i += 500 {
		if _, _, err := x.Add(b.Context(), docs[i:i+500]...); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []string{"w1 w2", "w1 w2 w3", "w1 w2 -w3"} {
		b.Run(q, func(b *testing.B) {
			b.ReportAllocs()
			total := 0
			for b.Loop() {
				r, err := x.Search(b.Context(), q)
				if err != nil {
					b.Fatal(err)
				}
				total = r.Total
			}
			b.ReportMetric(float64(total), "results")
		})
	}
	// A search and its second page: the page orders the rest of the
	// result (the search orders only its own page).
	b.Run("w1 w2 + Page(10,10)", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r, err := x.Search(b.Context(), "w1 w2")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := x.Page(b.Context(), r.ID, 10, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
}
