package search_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

// model is the in-memory evaluation a differential test compares with.
type model struct {
	terms   map[string]map[string]bool // id -> terms
	updated map[string]float64
	title   map[string]string
	votes   map[string]float64
}

func (m *model) add(d search.Document) {
	m.terms[d.ID] = map[string]bool{}
	for _, t := range search.Tokenize(d.Text) {
		m.terms[d.ID][t] = true
	}
	m.updated[d.ID], _ = strconv.ParseFloat(d.Fields["updated"], 64)
	m.title[d.ID] = d.Fields["title"]
	if v, ok := d.Scores["votes"]; ok {
		m.votes[d.ID] = v
	}
}

func (m *model) remove(id string) {
	delete(m.terms, id)
	delete(m.updated, id)
	delete(m.title, id)
	delete(m.votes, id)
}

// search returns the ids matching q in the order of sort ("", "updated",
// "-updated", "title", "-title", "votes").
func (m *model) search(q *search.Query, sort string) []string {
	var out []string
	for id, ts := range m.terms {
		if q.Matches(func(t string) bool { return ts[t] }) {
			out = append(out, id)
		}
	}
	desc := strings.HasPrefix(sort, "-") || sort == "votes"
	slices.SortFunc(out, func(a, b string) int {
		c := 0
		switch strings.TrimPrefix(sort, "-") {
		case "updated":
			c = cmp.Compare(m.updated[a], m.updated[b])
		case "title":
			c = strings.Compare(m.title[a], m.title[b])
		case "votes":
			c = cmp.Compare(m.votes[a], m.votes[b])
		}
		if desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

func sortOpt(sort string) []search.SearchOption {
	switch strings.TrimPrefix(sort, "-") {
	case "updated", "title":
		return []search.SearchOption{search.ByField(strings.TrimPrefix(sort, "-"), strings.HasPrefix(sort, "-"))}
	case "votes":
		return []search.SearchOption{search.ByScores(map[string]float64{"votes": 1}, false)}
	}
	return nil
}

// TestSearch_differential compares random queries, sorts and pages with an
// in-memory evaluation, on an unsharded and a sharded index, before and
// after re-indexing and removing documents. Small sizes: miniredis sorts
// whole sets on every call, and the test runs on every backend.
func TestSearch_differential(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		rng := rand.New(rand.NewPCG(11, uint64(len(b.Kind))))
		vocab := make([]string, 40)
		for i := range vocab {
			vocab[i] = fmt.Sprintf("w%02d", i)
		}
		doc := func(id string) search.Document {
			n := 3 + rng.IntN(12)
			var words []string
			for range n {
				// Skewed: low words are frequent.
				words = append(words, vocab[min(rng.IntN(len(vocab)), rng.IntN(len(vocab)))])
			}
			return search.Document{ID: id, Text: strings.Join(words, " "),
				Fields: map[string]string{"updated": strconv.Itoa(rng.IntN(50)), "title": string(rune('a' + rng.IntN(5)))},
				Scores: map[string]float64{"votes": float64(rng.IntN(20))}}
		}
		m := &model{terms: map[string]map[string]bool{}, updated: map[string]float64{}, title: map[string]string{}, votes: map[string]float64{}}
		plain := newIndex(t, b)
		sharded, err := search.New(b.Client, "sharded", search.WithPrefix(b.Prefix), search.WithShards(3),
			search.WithFields(search.NumericField("updated"), search.TextField("title")), search.WithScores("update", "votes"))
		require.NoError(t, err)
		var docs []search.Document
		for i := range 300 {
			docs = append(docs, doc("doc"+strconv.Itoa(i)))
		}
		for _, d := range docs {
			m.add(d)
		}
		for _, x := range []*search.Index{plain, sharded} {
			_, _, err := x.Add(t.Context(), docs...)
			require.NoError(t, err)
		}
		query := func() string {
			var parts []string
			for range 1 + rng.IntN(2) {
				parts = append(parts, vocab[rng.IntN(12)])
				if rng.IntN(3) == 0 {
					parts = append(parts, "+"+vocab[rng.IntN(len(vocab))])
				}
			}
			if rng.IntN(2) == 0 {
				parts = append(parts, "-"+vocab[rng.IntN(len(vocab))])
			}
			return strings.Join(parts, " ")
		}
		check := func(rounds int) {
			for range rounds {
				qs := query()
				q, err := search.Parse(nil, qs)
				require.NoError(t, err, qs)
				sort := []string{"", "updated", "-updated", "title", "-title", "votes"}[rng.IntN(6)]
				want := m.search(q, sort)
				off, count := rng.IntN(5), 1+rng.IntN(7)
				for _, x := range []*search.Index{plain, sharded} {
					r, err := x.Search(t.Context(), qs, append(sortOpt(sort), search.Limit(off, count))...)
					require.NoError(t, err)
					assert.Equal(t, len(want), r.Total, "%s %q sort %q", x.Name(), qs, sort)
					assert.Equal(t, window(want, off, count), r.IDs, "%s %q sort %q first page", x.Name(), qs, sort)
					p, err := x.Page(t.Context(), r.ID, off+count, count)
					require.NoError(t, err)
					assert.Equal(t, window(want, off+count, count), p.IDs, "%s %q sort %q next page", x.Name(), qs, sort)
				}
			}
		}
		check(60)
		relevance := func() {
			for range 30 {
				qs := query()
				a, err := plain.Search(t.Context(), qs, search.ByRelevance(), search.Limit(0, 50))
				require.NoError(t, err)
				c, err := sharded.Search(t.Context(), qs, search.ByRelevance(), search.Limit(0, 50))
				require.NoError(t, err)
				q, _ := search.Parse(nil, qs)
				assert.Equal(t, len(m.search(q, "")), a.Total, "%q", qs)
				assert.Equal(t, a.Total, c.Total, "%q", qs)
				assert.Equal(t, a.IDs, c.IDs, "%q: sharded relevance order = unsharded", qs)
			}
		}
		relevance()
		// Re-index a third of the documents and remove a tenth.
		var again []search.Document
		var gone []string
		for i := range 300 {
			switch {
			case i%3 == 0:
				d := doc("doc" + strconv.Itoa(i))
				again = append(again, d)
				m.add(d)
			case i%10 == 1:
				gone = append(gone, "doc"+strconv.Itoa(i))
				m.remove("doc" + strconv.Itoa(i))
			}
		}
		for _, x := range []*search.Index{plain, sharded} {
			_, replaced, err := x.Add(t.Context(), again...)
			require.NoError(t, err)
			assert.Equal(t, len(again), replaced)
			n, err := x.Remove(t.Context(), gone...)
			require.NoError(t, err)
			assert.Equal(t, len(gone), n)
		}
		check(60)
		relevance()
	})
}

func window(s []string, off, count int) []string {
	if off >= len(s) {
		return nil
	}
	return s[off:min(off+count, len(s))]
}
