package search_test

import (
	"cmp"
	"math"
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

// model is the in-memory evaluation a differential test compares with:
// its own postings, its own query evaluation and its own sorts.
type model struct {
	tf       map[string]map[string]int // id -> term -> count
	length   map[string]int            // id -> analyzed terms, repeats included
	postings map[string]map[string]bool
	updated  map[string]float64
	title    map[string]string
	scores   map[string]map[string]float64 // id -> score name -> value
	seq      map[string]int                // id -> document number: index order
	last     int
}

func newModel() *model {
	return &model{tf: map[string]map[string]int{}, length: map[string]int{}, postings: map[string]map[string]bool{},
		updated: map[string]float64{}, title: map[string]string{}, scores: map[string]map[string]float64{},
		seq: map[string]int{}}
}

// add indexes d, or re-indexes it: terms and fields replaced, the scores
// it is given set and the others kept (as Index.Add documents).
// A new document takes the next number; a re-indexed one keeps its own.
func (m *model) add(d search.Document) {
	old := m.scores[d.ID]
	num, ok := m.seq[d.ID]
	if !ok {
		m.last++
		num = m.last
	}
	m.remove(d.ID)
	m.seq[d.ID] = num
	tf := map[string]int{}
	terms := search.NewStandard().Terms(d.Text)
	for _, t := range terms {
		tf[t]++
		if m.postings[t] == nil {
			m.postings[t] = map[string]bool{}
		}
		m.postings[t][d.ID] = true
	}
	m.tf[d.ID], m.length[d.ID] = tf, len(terms)
	if v, ok := d.Fields["updated"]; ok {
		m.updated[d.ID], _ = strconv.ParseFloat(v, 64)
	}
	if v, ok := d.Fields["title"]; ok {
		m.title[d.ID] = v
	}
	sc := map[string]float64{}
	for k, v := range old {
		sc[k] = v
	}
	for k, v := range d.Scores {
		sc[k] = v
	}
	m.scores[d.ID] = sc
}

func (m *model) remove(id string) {
	for t := range m.tf[id] {
		delete(m.postings[t], id)
		if len(m.postings[t]) == 0 {
			delete(m.postings, t)
		}
	}
	delete(m.tf, id)
	delete(m.length, id)
	delete(m.updated, id)
	delete(m.title, id)
	delete(m.scores, id)
	delete(m.seq, id)
}

// match returns the ids matching q: every group has a term of the
// document, no exclusion has.
func (m *model) match(q *search.Query) []string {
	// Candidates: the documents of the first group's postings.
	cand := map[string]bool{}
	for _, t := range q.Groups[0] {
		for id := range m.postings[t] {
			cand[id] = true
		}
	}
	var out []string
	for id := range cand {
		ok := true
		for _, g := range q.Groups {
			if !slices.ContainsFunc(g, func(t string) bool { return m.tf[id][t] > 0 }) {
				ok = false
				break
			}
		}
		if ok && !slices.ContainsFunc(q.Exclude, func(t string) bool { return m.tf[id][t] > 0 }) {
			out = append(out, id)
		}
	}
	return out
}

// weighted is the weighted sum of id's scores, summed in the order of the
// score names (as search.lua does).
func (m *model) weighted(id string, w map[string]float64) float64 {
	s := 0.0
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range w {
			if !yield(k) {
				return
			}
		}
	}) {
		s += m.scores[id][name] * w[name]
	}
	return s
}

// bm25 returns the BM25 scores (k1 1.2, b 0.75) of ids for q's wanted
// terms.
func (m *model) bm25(q *search.Query, ids []string) map[string]float64 {
	var wanted []string
	for _, g := range q.Groups {
		wanted = append(wanted, g...)
	}
	wanted = slices.Compact(slices.Sorted(slices.Values(wanted)))
	total := 0
	for _, n := range m.length {
		total += n
	}
	n := float64(len(m.length))
	avg := float64(total) / n
	out := make(map[string]float64, len(ids))
	for _, id := range ids {
		out[id] = m.bm25Doc(wanted, id, n, avg)
	}
	return out
}

func (m *model) bm25Doc(wanted []string, id string, n, avg float64) float64 {
	s := 0.0
	for _, t := range wanted {
		tf := float64(m.tf[id][t])
		if tf == 0 {
			continue
		}
		df := float64(len(m.postings[t]))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		norm := 1.2 * (0.25 + 0.75*float64(m.length[id])/avg)
		s += idf * tf * 2.2 / (tf + norm)
	}
	return s
}

// sortSpec is one of the sorts the differential test draws.
type sortSpec struct {
	name string
	opts []search.SearchOption
	// key returns a document's sort key: a float64 or a string.
	numeric bool
	desc    bool
	num     func(m *model, id string) float64
	str     func(m *model, id string) string
}

var weights = map[string]float64{"update": 0.5, "votes": 2}

var sorts = []sortSpec{
	{name: "index", numeric: true, num: func(m *model, id string) float64 { return float64(m.seq[id]) }},
	{name: "id", opts: []search.SearchOption{search.ByID()}},
	{name: "updated", numeric: true, opts: []search.SearchOption{search.ByField("updated", false)},
		num: func(m *model, id string) float64 { return m.updated[id] }},
	{name: "-updated", numeric: true, desc: true, opts: []search.SearchOption{search.ByField("updated", true)},
		num: func(m *model, id string) float64 { return m.updated[id] }},
	{name: "title", opts: []search.SearchOption{search.ByField("title", false)},
		str: func(m *model, id string) string { return m.title[id] }},
	{name: "-title", desc: true, opts: []search.SearchOption{search.ByField("title", true)},
		str: func(m *model, id string) string { return m.title[id] }},
	{name: "votes", numeric: true, desc: true, opts: []search.SearchOption{search.ByScores(map[string]float64{"votes": 1}, false)},
		num: func(m *model, id string) float64 { return m.scores[id]["votes"] }},
	{name: "votes asc", numeric: true, opts: []search.SearchOption{search.ByScores(map[string]float64{"votes": 1}, true)},
		num: func(m *model, id string) float64 { return m.scores[id]["votes"] }},
	{name: "update/2+votes*2", numeric: true, desc: true, opts: []search.SearchOption{search.ByScores(weights, false)},
		num: func(m *model, id string) float64 { return m.weighted(id, weights) }},
}

// search returns the ids matching q in the order of s, ties by ID.
func (m *model) search(q *search.Query, s sortSpec) []string {
	out := m.match(q)
	slices.SortFunc(out, func(a, b string) int {
		c := 0
		switch {
		case s.num != nil:
			c = cmp.Compare(s.num(m, a), s.num(m, b))
		case s.str != nil:
			c = strings.Compare(s.str(m, a), s.str(m, b))
		}
		if s.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

// diffSize is the size of a differential run: documents, random queries
// (half before, half after re-indexing and removing), vocabulary.
type diffSize struct{ docs, queries, vocab int }

// TestSearch_differential compares random queries (AND, synonyms,
// exclusions), every sort and pages (first page by Search, another by
// Page) with an in-memory evaluation, on an unsharded and a 3-shard
// index, before and after re-indexing a third of the documents, removing
// a tenth and adding new ones: the 10,000 documents and 1,000
// queries on real redis and the cluster; 1,000 documents and 200 queries
// on miniredis (slow on big sets). Relevance (BM25) is compared too:
// same totals, the scores of the model at each rank, sharded == unsharded.
func TestSearch_differential(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		size := diffSize{docs: 10000, queries: 1000, vocab: 2000}
		if !b.Real() {
			size = diffSize{docs: 1000, queries: 150, vocab: 300}
		}
		differential(t, b, size)
	})
}

func differential(t *testing.T, b *redistest.Backend, size diffSize) {
	rng := rand.New(rand.NewPCG(11, uint64(len(b.Kind))))
	vocab := make([]string, size.vocab)
	for i := range vocab {
		// Letters, digits, Unicode; the analyzer keeps them as they are.
		vocab[i] = []string{"w", "mot", "ñu", "x9"}[i%4] + strconv.Itoa(i)
	}
	word := func() string { // skewed: low words are frequent
		u := rng.Float64()
		return vocab[int(u*u*float64(len(vocab)))]
	}
	titles := []string{"a", "B", "ba", "é", "Z", "", "abc", "b"}
	doc := func(id string) search.Document {
		n := 5 + rng.IntN(25)
		words := make([]string, n)
		for i := range words {
			words[i] = word()
		}
		d := search.Document{ID: id, Text: strings.Join(words, " "), Fields: map[string]string{}, Scores: map[string]float64{}}
		if rng.IntN(10) > 0 { // some documents have no field: it sorts as 0 / ""
			d.Fields["updated"] = strconv.FormatFloat(float64(rng.IntN(400)-100)/4, 'g', -1, 64)
		}
		if rng.IntN(10) > 0 {
			d.Fields["title"] = titles[rng.IntN(len(titles))]
		}
		if rng.IntN(5) > 0 {
			d.Scores["votes"] = float64(rng.IntN(40))
		}
		if rng.IntN(5) > 0 {
			d.Scores["update"] = float64(rng.IntN(100))
		}
		return d
	}
	m := newModel()
	plain := newIndex(t, b)
	sharded, err := search.New(b.Client, "sharded", search.WithPrefix(b.Prefix), search.WithShards(3),
		search.WithFields(search.NumericField("updated"), search.TextField("title")), search.WithScores("update", "votes"))
	require.NoError(t, err)
	// The unsharded index keeps the production threshold (a few frequent
	// terms become bitmaps); the sharded one turns terms of more than 16
	// documents into bitmaps: every query mixes SETs and bitmaps.
	search.SetBitmapMin(sharded, 16)
	both := []*search.Index{plain, sharded}
	add := func(docs []search.Document, wantAdded, wantReplaced int) {
		for _, d := range docs {
			m.add(d)
		}
		for _, x := range both {
			var added, replaced int
			for c := range slices.Chunk(docs, 500) {
				a, r, err := x.Add(t.Context(), c...)
				require.NoError(t, err)
				added, replaced = added+a, replaced+r
			}
			assert.Equal(t, wantAdded, added, x.Name())
			assert.Equal(t, wantReplaced, replaced, x.Name())
		}
	}
	var docs []search.Document
	for i := range size.docs {
		docs = append(docs, doc("doc"+strconv.Itoa(i)))
	}
	add(docs, len(docs), 0)

	query := func() string {
		var parts []string
		for g := range 1 + rng.IntN(3) {
			w := vocab[rng.IntN(len(vocab)/(5+5*g))] // the first words frequent, the next rarer
			if rng.IntN(40) == 0 {
				w = "absent"
			}
			parts = append(parts, w)
			for rng.IntN(3) == 0 {
				parts = append(parts, "+"+word())
			}
		}
		for rng.IntN(2) == 0 {
			parts = append(parts, "-"+word())
		}
		return strings.Join(parts, " ")
	}
	nonEmpty, deep, totals := 0, 0, 0
	check := func(rounds int) {
		for range rounds {
			qs := query()
			q, err := search.Parse(nil, qs)
			require.NoError(t, err, qs)
			if rng.IntN(8) == 0 {
				relevance(t, m, q, qs, both, rng)
				continue
			}
			s := sorts[rng.IntN(len(sorts))]
			want := m.search(q, s)
			if len(want) > 0 {
				nonEmpty++
			}
			totals += len(want)
			off, count := rng.IntN(5), 1+rng.IntN(20)
			if rng.IntN(4) == 0 && len(want) > 0 { // a deep first page
				off = rng.IntN(len(want))
				deep++
			}
			next := rng.IntN(len(want) + 3)
			for _, x := range both {
				r, err := x.Search(t.Context(), qs, append(slices.Clone(s.opts), search.Limit(off, count))...)
				require.NoError(t, err)
				if !assert.Equal(t, len(want), r.Total, "%s %q sort %s", x.Name(), qs, s.name) ||
					!assert.Equal(t, window(want, off, count), r.IDs, "%s %q sort %s page %d+%d", x.Name(), qs, s.name, off, count) {
					return
				}
				p, err := x.Page(t.Context(), r.ID, next, count)
				require.NoError(t, err)
				assert.Equal(t, len(want), p.Total)
				if !assert.Equal(t, window(want, next, count), p.IDs, "%s %q sort %s page %d+%d", x.Name(), qs, s.name, next, count) {
					return
				}
			}
		}
	}
	// Both representations are in play: count the bitmaps among the
	// frequent terms' postings.
	for _, x := range both {
		bitmaps := 0
		for _, w := range vocab[:20] {
			for i := range x.Shards() {
				if b.Client.Type(t.Context(), x.Shard(i).TermKey(w)).Val() == "string" {
					bitmaps++
				}
			}
		}
		assert.Positive(t, bitmaps, "%s: bitmap postings", x.Name())
		t.Logf("%s: %d bitmap postings among the 20 most frequent terms' (%d shards)", x.Name(), bitmaps, x.Shards())
	}
	check(size.queries / 2)

	// Re-index a third of the documents, remove a tenth, add new ones and
	// bring back some removed ones.
	var again, fresh []search.Document
	var gone []string
	for i := range size.docs {
		switch id := "doc" + strconv.Itoa(i); {
		case i%3 == 0:
			again = append(again, doc(id))
		case i%10 == 1:
			gone = append(gone, id)
		}
	}
	add(again, 0, len(again))
	for _, id := range gone {
		m.remove(id)
	}
	for _, x := range both {
		n, err := x.Remove(t.Context(), gone...)
		require.NoError(t, err)
		assert.Equal(t, len(gone), n)
	}
	for i := range size.docs / 20 {
		fresh = append(fresh, doc("new"+strconv.Itoa(i)))
	}
	for _, id := range gone[:len(gone)/2] {
		fresh = append(fresh, doc(id))
	}
	add(fresh, len(fresh), 0)
	// Every term's posting is exact: a single-word search counts it.
	for i, w := range vocab {
		if i >= 100 && i%10 != 0 { // the frequent words and a sample of the others
			continue
		}
		for _, x := range both {
			r, err := x.Search(t.Context(), w, search.Limit(0, 1))
			require.NoError(t, err)
			require.Equal(t, len(m.postings[w]), r.Total, "%s posting %q", x.Name(), w)
		}
	}
	check(size.queries - size.queries/2)
	t.Logf("differential: %d documents, %d queries (%d with results, mean total %d, %d deep first pages)",
		size.docs, size.queries, nonEmpty, totals/max(1, nonEmpty), deep)
	assert.Greater(t, nonEmpty, size.queries/2, "most queries find something")
}

// relevance checks a ByRelevance search of every index against the
// model's BM25 scores: the same total, at each rank of the page the
// model's score of that rank (ties, and scores equal to rounding, may
// come in any order of their IDs), and sharded == unsharded.
func relevance(t *testing.T, m *model, q *search.Query, qs string, idx []*search.Index, rng *rand.Rand) {
	t.Helper()
	ids := m.match(q)
	score := m.bm25(q, ids)
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	off, count := rng.IntN(3), 1+rng.IntN(30)
	var first []string
	for i, x := range idx {
		r, err := x.Search(t.Context(), qs, search.ByRelevance(), search.Limit(off, count))
		require.NoError(t, err)
		require.Equal(t, len(ids), r.Total, "%s %q relevance", x.Name(), qs)
		want := window(ids, off, count)
		require.Len(t, r.IDs, len(want), "%s %q relevance", x.Name(), qs)
		for j, id := range r.IDs {
			got, ok := score[id]
			require.True(t, ok, "%s %q relevance: %q does not match", x.Name(), qs, id)
			w := score[want[j]]
			require.InDelta(t, w, got, 1e-9*math.Max(1, math.Abs(w)), "%s %q relevance rank %d: %q", x.Name(), qs, off+j, id)
		}
		if i == 0 {
			first = r.IDs
		} else {
			assert.Equal(t, first, r.IDs, "%q: sharded relevance order = unsharded", qs)
		}
	}
}

func window(s []string, off, count int) []string {
	if off >= len(s) {
		return nil
	}
	return s[off:min(off+count, len(s))]
}
