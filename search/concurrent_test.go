package search_test

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

// TestSearch_concurrent runs writers through three clients at once on an
// unsharded and a 3-shard index: each writer adds, re-indexes and removes
// documents of its own while the others do the same with theirs, so that
// every posting, the SET-to-bitmap changes (thresholds of 8 and 12
// documents), the sequence and the statistics are shared and raced. Each
// writer also searches and pages through whole results meanwhile: its own
// documents do not change during its search, so the result restricted to
// them must be exactly what its own model says (the others' may be any),
// the pages of a cached result must make one result (no ID twice, no more
// than the total; a page leaves out what was removed since the search). At the end, both indexes must answer as one
// model of every writer's final documents: totals, orders, BM25 scores
// (so the shared statistics are exact), every word's posting, and no
// posting left for a word no document has.
func TestSearch_concurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		writers, owned, rounds := 6, 30, 150
		if !b.Real() {
			writers, owned, rounds = 4, 20, 30
		}
		vocab := make([]string, 40)
		for i := range vocab {
			vocab[i] = []string{"w", "mot", "ñu", "x9"}[i%4] + strconv.Itoa(i)
		}
		clients := []redis.UniversalClient{b.Client}
		for range 2 {
			c, _ := b.NewClient()
			clients = append(clients, c)
		}
		open := func(c redis.UniversalClient) []*search.Index {
			var out []*search.Index
			for i, name := range []string{"plain", "sharded"} {
				x, err := search.New(c, name, search.WithPrefix(b.Prefix), search.WithShards(1+2*i),
					search.WithFields(search.NumericField("updated"), search.TextField("title")),
					search.WithScores("update", "votes"))
				require.NoError(t, err)
				search.SetBitmapMin(x, 12-4*i)
				out = append(out, x)
			}
			return out
		}

		models := make([]*model, writers)
		var wg sync.WaitGroup
		for w := range writers {
			m := newModel()
			models[w] = m
			idx := open(clients[w%len(clients)])
			rng := rand.New(rand.NewPCG(uint64(w), uint64(len(b.Kind))))
			prefix := "w" + strconv.Itoa(w) + "-"
			wg.Go(func() {
				doc := concurrentDoc(rng, vocab)
				own := func() string { return prefix + strconv.Itoa(rng.IntN(owned)) }
				for round := range rounds {
					switch op := rng.IntN(4); {
					case op < 2: // add or re-index a few documents on both indexes
						batch := map[string]search.Document{}
						for range 1 + rng.IntN(4) {
							id := own()
							batch[id] = doc(id)
						}
						docs := slices.Collect(maps.Values(batch))
						wantAdded := 0
						for _, d := range docs {
							if _, ok := m.tf[d.ID]; !ok {
								wantAdded++
							}
							m.add(d)
						}
						for _, x := range idx {
							added, replaced, err := x.Add(t.Context(), docs...)
							if !assert.NoError(t, err, "%s round %d add", x.Name(), round) ||
								!assert.Equal(t, []int{wantAdded, len(docs) - wantAdded}, []int{added, replaced}, "%s add", x.Name()) {
								return
							}
						}
					case op == 2: // remove a few, some that do not exist
						var gone []string
						for range 1 + rng.IntN(3) {
							if id := own(); !slices.Contains(gone, id) {
								gone = append(gone, id)
							}
						}
						want := 0
						for _, id := range gone {
							if _, ok := m.tf[id]; ok {
								want++
							}
							m.remove(id)
						}
						for _, x := range idx {
							n, err := x.Remove(t.Context(), gone...)
							if !assert.NoError(t, err, "%s remove", x.Name()) || !assert.Equal(t, want, n, "%s remove", x.Name()) {
								return
							}
						}
					default: // search while the others write, and page through the result
						qs := concurrentQuery(rng, vocab)
						q, err := search.Parse(nil, qs)
						if !assert.NoError(t, err, qs) {
							return
						}
						s := sorts[1+rng.IntN(len(sorts)-1)] // any but index order (numbers depend on the others)
						opts := s.opts
						if rng.IntN(4) == 0 {
							s, opts = sortSpec{name: "relevance"}, []search.SearchOption{search.ByRelevance()}
						}
						want := nonNil(m.search(q, s))
						for _, x := range idx {
							got := pageAll(t, x, qs, opts, false)
							if got == nil {
								return
							}
							mine := slices.DeleteFunc(slices.Clone(got), func(id string) bool { return !strings.HasPrefix(id, prefix) })
							if s.name == "relevance" { // the scores depend on every document: the set only
								slices.Sort(mine)
								want = nonNil(slices.Sorted(slices.Values(want)))
							}
							if !assert.Equal(t, want, mine, "%s %q sort %s: this writer's documents", x.Name(), qs, s.name) {
								return
							}
						}
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}

		// Every writer's final documents, as one model.
		all := newModel()
		for _, m := range models {
			all.merge(m)
		}
		idx := open(b.Client)
		for _, x := range idx {
			n, err := x.Count(t.Context())
			require.NoError(t, err)
			require.Equal(t, len(all.tf), n, "%s count", x.Name())
		}
		for _, w := range vocab {
			for _, x := range idx {
				r, err := x.Search(t.Context(), w, search.Limit(0, 1))
				require.NoError(t, err)
				require.Equal(t, len(all.postings[w]), r.Total, "%s posting %q", x.Name(), w)
				if len(all.postings[w]) == 0 {
					for i := range x.Shards() {
						assert.Zero(t, b.Client.Exists(t.Context(), x.Shard(i).TermKey(w)).Val(), "%s shard %d: a posting of %q is left", x.Name(), i, w)
					}
				}
			}
		}
		rng := rand.New(rand.NewPCG(99, 1))
		for range 60 {
			qs := concurrentQuery(rng, vocab)
			q, err := search.Parse(nil, qs)
			require.NoError(t, err)
			if rng.IntN(4) == 0 {
				relevance(t, all, q, qs, idx, rng)
				continue
			}
			s := sorts[rng.IntN(len(sorts))]
			want := nonNil(all.search(q, s))
			for _, x := range idx {
				got := pageAll(t, x, qs, s.opts, true)
				if s.name == "index" { // numbers were given in the writers' interleaving
					slices.Sort(got)
					want = nonNil(slices.Sorted(slices.Values(want)))
				}
				require.Equal(t, want, got, "%s %q sort %s", x.Name(), qs, s.name)
			}
		}
	})
}

// merge adds o's documents (ids disjoint from m's) to m, without numbers.
func (m *model) merge(o *model) {
	for id, tf := range o.tf {
		m.tf[id], m.length[id], m.scores[id] = tf, o.length[id], o.scores[id]
		if v, ok := o.updated[id]; ok {
			m.updated[id] = v
		}
		if v, ok := o.title[id]; ok {
			m.title[id] = v
		}
		for term := range tf {
			if m.postings[term] == nil {
				m.postings[term] = map[string]bool{}
			}
			m.postings[term][id] = true
		}
	}
}

// concurrentDoc returns a generator of random documents over vocab
// (skewed: the first words are frequent), with or without each field and
// score.
func concurrentDoc(rng *rand.Rand, vocab []string) func(id string) search.Document {
	return func(id string) search.Document {
		words := make([]string, 3+rng.IntN(10))
		for i := range words {
			u := rng.Float64()
			words[i] = vocab[int(u*u*float64(len(vocab)))]
		}
		d := search.Document{ID: id, Text: strings.Join(words, " "), Fields: map[string]string{}, Scores: map[string]float64{}}
		if rng.IntN(5) > 0 {
			d.Fields["updated"] = strconv.Itoa(rng.IntN(50))
		}
		if rng.IntN(5) > 0 {
			d.Fields["title"] = []string{"a", "B", "ba", "é", ""}[rng.IntN(5)]
		}
		if rng.IntN(3) > 0 {
			d.Scores["votes"] = float64(rng.IntN(20))
		}
		if rng.IntN(3) > 0 {
			d.Scores["update"] = float64(rng.IntN(20))
		}
		return d
	}
}

// concurrentQuery returns a random query over vocab: one or two groups,
// synonyms, exclusions.
func concurrentQuery(rng *rand.Rand, vocab []string) string {
	var parts []string
	for range 1 + rng.IntN(2) {
		parts = append(parts, vocab[rng.IntN(len(vocab)/2)])
		if rng.IntN(3) == 0 {
			parts = append(parts, "+"+vocab[rng.IntN(len(vocab))])
		}
	}
	if rng.IntN(2) == 0 {
		parts = append(parts, "-"+vocab[rng.IntN(len(vocab))])
	}
	return strings.Join(parts, " ")
}

// pageAll returns every ID of a search's result: its first page, then the
// rest by Page from the same cached result, checking that the pages make
// one result: no ID twice, and as many as the total, or (while others
// remove documents: exact false) at most as many, since a page leaves out
// a document removed after the search. nil on a failure.
func pageAll(t *testing.T, x *search.Index, qs string, opts []search.SearchOption, exact bool) []string {
	t.Helper()
	const size = 25
	r, err := x.Search(t.Context(), qs, append(slices.Clone(opts), search.Limit(0, size))...)
	if !assert.NoError(t, err, "%s %q", x.Name(), qs) {
		return nil
	}
	got := slices.Clone(r.IDs)
	for off := size; off < r.Total; off += size {
		p, err := x.Page(t.Context(), r.ID, off, size)
		if !assert.NoError(t, err, "%s %q page at %d", x.Name(), qs, off) ||
			!assert.Equal(t, []int{r.Total, off}, []int{p.Total, p.Offset}, "%s %q page total and offset", x.Name(), qs) {
			return nil
		}
		got = append(got, p.IDs...)
	}
	n := len(got)
	if !assert.Len(t, slices.Compact(slices.Sorted(slices.Values(got))), n, "%s %q: an ID twice", x.Name(), qs) {
		return nil
	}
	if exact && !assert.Len(t, got, r.Total, "%s %q", x.Name(), qs) || !assert.LessOrEqual(t, n, r.Total, "%s %q", x.Name(), qs) {
		return nil
	}
	return nonNil(got)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
