package search_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// corpus is a small set of documents with fields and scores.
var corpus = []search.Document{
	{ID: "d1", Text: "Redis in Action: search with sets", Fields: map[string]string{"updated": "30", "title": "Redis"},
		Scores: map[string]float64{"update": 30, "votes": 5}},
	{ID: "d2", Text: "Connecting to Redis and sorting results", Fields: map[string]string{"updated": "10", "title": "connect"},
		Scores: map[string]float64{"update": 10, "votes": 50}},
	{ID: "d3", Text: "A connection pool for a cluster", Fields: map[string]string{"updated": "20", "title": "Pool"},
		Scores: map[string]float64{"update": 20, "votes": 1}},
	{ID: "d4", Text: "Sets, sorted sets and search results in Redis cluster", Fields: map[string]string{"updated": "-5", "title": "ba"},
		Scores: map[string]float64{"update": 5}},
	{ID: "d5", Text: "Café naïve 2024 — Ünïcode search", Fields: map[string]string{"title": "b"}},
}

func newIndex(t *testing.T, b *redistest.Backend, opts ...search.Option) *search.Index {
	t.Helper()
	x, err := search.New(b.Client, "books", append([]search.Option{
		search.WithPrefix(b.Prefix),
		search.WithFields(search.NumericField("updated"), search.TextField("title")),
		search.WithScores("update", "votes"),
	}, opts...)...)
	require.NoError(t, err)
	return x
}

func load(t *testing.T, x *search.Index) {
	t.Helper()
	added, replaced, err := x.Add(t.Context(), corpus...)
	require.NoError(t, err)
	require.Equal(t, len(corpus), added)
	require.Zero(t, replaced)
}

func ids(t *testing.T, x *search.Index, q string, opts ...search.SearchOption) []string {
	t.Helper()
	r, err := x.Search(t.Context(), q, append([]search.SearchOption{search.Limit(0, 100)}, opts...)...)
	require.NoError(t, err, q)
	require.Equal(t, r.Total, len(r.IDs))
	return r.IDs
}

func TestSearch_queries(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, shards := range []int{1, 3} {
			x := newIndex(t, b, search.WithShards(shards))
			load(t, x)
			for q, want := range map[string][]string{
				"redis":                  {"d1", "d2", "d4"},
				"REDIS sets":             {"d1", "d4"},
				"redis -cluster":         {"d1", "d2"},
				"connecting +connection": {"d2", "d3"},
				"pool +search redis":     {"d1", "d4"},
				"cafe":                   nil,
				"café NAÏVE 2024":        {"d5"},
				"ünïcode":                {"d5"},
				"redis cluster -sorted":  nil,
				"the redis":              {"d1", "d2", "d4"}, // stop word dropped
				"nothing-here":           nil,
			} {
				assert.Equal(t, want, ids(t, x, q), "shards=%d %q", shards, q)
			}
			b.Flush()
		}
	})
}

func TestSearch_sort(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, shards := range []int{1, 4} {
			x := newIndex(t, b, search.WithShards(shards))
			load(t, x)
			q := "search +connecting +pool"
			assert.Equal(t, []string{"d1", "d2", "d3", "d4", "d5"}, ids(t, x, q))
			assert.Equal(t, []string{"d4", "d5", "d2", "d3", "d1"}, ids(t, x, q, search.ByField("updated", false)), "numeric asc; missing is 0")
			assert.Equal(t, []string{"d1", "d3", "d2", "d5", "d4"}, ids(t, x, q, search.ByField("updated", true)), "numeric desc")
			assert.Equal(t, []string{"d3", "d1", "d5", "d4", "d2"}, ids(t, x, q, search.ByField("title", false)), "text asc by bytes")
			assert.Equal(t, []string{"d2", "d4", "d5", "d1", "d3"}, ids(t, x, q, search.ByField("title", true)), "text desc")
			// The book's search_and_zsort: update time only, then votes only.
			assert.Equal(t, []string{"d1", "d3", "d2", "d4", "d5"}, ids(t, x, q, search.ByScores(map[string]float64{"update": 1, "votes": 0}, false)))
			assert.Equal(t, []string{"d2", "d1", "d3", "d4", "d5"}, ids(t, x, q, search.ByScores(map[string]float64{"update": 0, "votes": 1}, false)))
			assert.Equal(t, []string{"d5", "d4", "d3", "d1", "d2"}, ids(t, x, q, search.ByScores(map[string]float64{"update": 1, "votes": 1}, true)), "asc: 0, 5, 21, 35, 60")
			b.Flush()
		}
	})
}

func TestSearch_relevance(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, shards := range []int{1, 3} {
			x := newIndex(t, b, search.WithShards(shards))
			_, _, err := x.Add(t.Context(),
				search.Document{ID: "once", Text: "redis plus many other words about other things entirely"},
				search.Document{ID: "thrice", Text: "redis redis redis and words"},
				search.Document{ID: "rare", Text: "redis lua words"},
				search.Document{ID: "short", Text: "redis words"},
				search.Document{ID: "none", Text: "nothing here"})
			require.NoError(t, err)
			assert.Equal(t, []string{"thrice", "short", "rare", "once"}, ids(t, x, "redis", search.ByRelevance()),
				"more occurrences first, then shorter documents")
			assert.Equal(t, []string{"rare", "thrice", "short", "once"}, ids(t, x, "redis +lua", search.ByRelevance()),
				"the rare term weighs most")
			b.Flush()
		}
	})
}

func TestSearch_paging(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, shards := range []int{1, 3} {
			x := newIndex(t, b, search.WithShards(shards))
			var docs []search.Document
			for i := range 25 {
				docs = append(docs, search.Document{ID: "doc" + string(rune('a'+i)), Text: "common words here",
					Fields: map[string]string{"updated": strings.Repeat("1", i%7+1)}})
			}
			_, _, err := x.Add(t.Context(), docs...)
			require.NoError(t, err)
			all := ids(t, x, "common words", search.ByField("updated", true))
			require.Len(t, all, 25)
			r, err := x.Search(t.Context(), "common words", search.ByField("updated", true), search.Limit(0, 10))
			require.NoError(t, err)
			assert.Equal(t, 25, r.Total)
			assert.Equal(t, all[:10], r.IDs)
			// A later page reads the cache: a document added since is not in it.
			_, _, err = x.Add(t.Context(), search.Document{ID: "late", Text: "common words", Fields: map[string]string{"updated": "9999999"}})
			require.NoError(t, err)
			_, err = x.Refresh(t.Context(), r.ID) // loads the page script
			require.NoError(t, err)
			var rt int64
			rt, _ = b.Count.Delta(func() {
				p, err := x.Page(t.Context(), r.ID, 10, 10)
				require.NoError(t, err)
				assert.Equal(t, all[10:20], p.IDs)
				assert.Equal(t, 25, p.Total)
				assert.Equal(t, 10, p.Offset)
			})
			if b.Kind != redistest.Cluster {
				assert.Equal(t, int64(1), rt, "next page: one round trip")
			}
			p, err := x.Page(t.Context(), r.ID, 20, 10)
			require.NoError(t, err)
			assert.Equal(t, all[20:], p.IDs)
			p, err = x.Page(t.Context(), r.ID, 30, 10)
			require.NoError(t, err)
			assert.Empty(t, p.IDs)

			// TTL: refresh keeps it; without refresh it expires. The same
			// index opened with a 4 s TTL (real backends wait for real:
			// the margins stand a loaded machine; there, only the sharded
			// index, whose Refresh and Page span every shard, to keep the
			// test short).
			if b.Real() && shards == 1 {
				b.Flush()
				continue
			}
			y := newIndex(t, b, search.WithShards(shards), search.WithCacheTTL(4*time.Second))
			r, err = y.Search(t.Context(), "common words", search.Limit(0, 10))
			require.NoError(t, err)
			b.FastForward(2 * time.Second)
			total, err := y.Refresh(t.Context(), r.ID)
			require.NoError(t, err)
			assert.Equal(t, 26, total)
			b.FastForward(2 * time.Second)
			_, err = y.Page(t.Context(), r.ID, 0, 10)
			require.NoError(t, err, "refreshed 2 s ago, TTL 4 s")
			b.FastForward(4100 * time.Millisecond)
			_, err = y.Page(t.Context(), r.ID, 0, 10)
			assert.ErrorIs(t, err, search.ErrExpired)
			_, err = y.Refresh(t.Context(), r.ID)
			assert.ErrorIs(t, err, search.ErrExpired)
			b.Flush()
		}
	})
}

func TestIndex_reindexAndRemove(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, shards := range []int{1, 3} {
			x := newIndex(t, b, search.WithShards(shards))
			ctx := t.Context()
			empty := b.Snapshot()
			load(t, x)
			// Re-index d1 without "redis" and "sets": no posting keeps it.
			added, replaced, err := x.Add(ctx, search.Document{ID: "d1", Text: "search with lists", Fields: map[string]string{"updated": "1"}})
			require.NoError(t, err)
			assert.Equal(t, 0, added)
			assert.Equal(t, 1, replaced)
			assert.Equal(t, []string{"d2", "d4"}, ids(t, x, "redis"))
			assert.Equal(t, []string{"d1"}, ids(t, x, "lists"))
			assert.Equal(t, []string{"d1", "d4", "d5"}, ids(t, x, "search"))
			// Scores are kept, fields replaced (no title now: sorts as "").
			assert.Equal(t, []string{"d1", "d5", "d4"}, ids(t, x, "search", search.ByField("title", false)))
			assert.Equal(t, []string{"d1", "d4", "d5"}, ids(t, x, "search", search.ByScores(map[string]float64{"update": 1}, false)))

			n, err := x.Remove(ctx, "d1", "d1", "nope")
			require.NoError(t, err)
			assert.Equal(t, 1, n)
			assert.Equal(t, []string{"d4", "d5"}, ids(t, x, "search"))
			n, err = x.Remove(ctx, "d2", "d3", "d4", "d5")
			require.NoError(t, err)
			assert.Equal(t, 4, n)
			// Nothing left but the stats hashes (which keep the last
			// document number) and the cached results of the searches.
			left := map[string]string{}
			for k, v := range b.Snapshot() {
				if _, ok := empty[k]; !ok && !strings.Contains(k, ":r:") && !strings.Contains(k, ":once:") {
					left[k] = v
				}
			}
			for k, v := range left {
				assert.True(t, strings.HasSuffix(k, "}:n"), "left behind: %s = %s", k, v)
				assert.Contains(t, v, "docs:0")
				assert.Contains(t, v, "len:0")
			}
			_, err = x.Search(ctx, "redis")
			require.NoError(t, err)
			b.Flush()
		}
	})
}

func TestIndex_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		x := newIndex(t, b, search.WithLimits(search.Limits{MaxTextBytes: 100, MaxTerms: 6}))
		ctx := t.Context()
		load(t, x)
		before := b.Snapshot()
		for name, tc := range map[string]struct {
			docs []search.Document
			want error
		}{
			"empty ID":       {[]search.Document{{ID: ""}}, search.ErrInvalid},
			"bad UTF-8 ID":   {[]search.Document{{ID: "\xff"}}, search.ErrInvalid},
			"long ID":        {[]search.Document{{ID: strings.Repeat("x", search.MaxIDBytes+1)}}, search.ErrInvalid},
			"twice":          {[]search.Document{{ID: "a"}, {ID: "a"}}, search.ErrInvalid},
			"unknown field":  {[]search.Document{{ID: "a", Fields: map[string]string{"nope": "1"}}}, search.ErrUnknownField},
			"not a number":   {[]search.Document{{ID: "a", Fields: map[string]string{"updated": "x"}}}, search.ErrInvalid},
			"NaN":            {[]search.Document{{ID: "a", Fields: map[string]string{"updated": "NaN"}}}, search.ErrInvalid},
			"unknown score":  {[]search.Document{{ID: "a", Scores: map[string]float64{"nope": 1}}}, search.ErrUnknownField},
			"text too large": {[]search.Document{{ID: "a", Text: strings.Repeat("word ", 30)}}, search.ErrTooLarge},
			"too many terms": {[]search.Document{{ID: "a", Text: "one two three four five six seven"}}, search.ErrTooLarge},
			"good then bad":  {[]search.Document{{ID: "ok", Text: "fine"}, {ID: ""}}, search.ErrInvalid},
		} {
			_, _, err := x.Add(ctx, tc.docs...)
			assert.ErrorIs(t, err, tc.want, name)
		}
		_, err := x.Remove(ctx, "")
		assert.ErrorIs(t, err, search.ErrInvalid)
		for q, want := range map[string]error{
			"":           search.ErrEmptyQuery,
			"the of and": search.ErrEmptyQuery,
			"-redis":     search.ErrOnlyExclusions,
			"redis +":    search.ErrSyntax,
			"redis -":    search.ErrSyntax,
			"+-redis":    search.ErrSyntax,
			"a\xffb":     search.ErrSyntax,
		} {
			_, err := x.Search(ctx, q)
			assert.ErrorIs(t, err, want, "%q", q)
			var perr *search.ParseError
			assert.ErrorAs(t, err, &perr, "%q", q)
		}
		for _, o := range []search.SearchOption{search.ByField("nope", false), search.ByScores(map[string]float64{"nope": 1}, false)} {
			_, err := x.Search(ctx, "redis", o)
			assert.ErrorIs(t, err, search.ErrUnknownField)
		}
		for _, o := range []search.SearchOption{search.Limit(-1, 10), search.Limit(0, 0), search.Limit(0, search.MaxPageSize+1), search.ByScores(nil, false)} {
			_, err := x.Search(ctx, "redis", o)
			assert.ErrorIs(t, err, search.ErrInvalid)
		}
		for _, sid := range []string{"", "x", "id0.", "id0.{a}", "zz1.abc"} {
			_, err := x.Page(ctx, sid, 0, 10)
			assert.ErrorIs(t, err, search.ErrInvalid, "%q", sid)
		}
		assert.Equal(t, before, b.Snapshot(), "bad input wrote nothing")
	})
}

func TestNew_badInput(t *testing.T) {
	b := redistest.New(t, redistest.Mini)
	for name, opts := range map[string][]search.Option{
		"shards 0":     {search.WithShards(0)},
		"shards big":   {search.WithShards(search.MaxShards + 1)},
		"prefix brace": {search.WithPrefix("a{b")},
		"ttl":          {search.WithCacheTTL(0)},
		"limits":       {search.WithLimits(search.Limits{MaxTerms: -1})},
		"field dup":    {search.WithFields(search.NumericField("a"), search.TextField("a"))},
		"field kind":   {search.WithFields(search.Field{Name: "a"})},
		"field name":   {search.WithFields(search.NumericField("a b"))},
		"score dup":    {search.WithScores("a", "a")},
	} {
		_, err := search.New(b.Client, "idx", opts...)
		assert.Error(t, err, name)
		assert.True(t, errors.Is(err, search.ErrInvalid) || errors.Is(err, search.ErrUnknownField), "%s: %v", name, err)
	}
	for _, name := range []string{"", "a{b", "a}b", "a*"} {
		_, err := search.New(b.Client, name)
		assert.ErrorIs(t, err, search.ErrInvalid, "%q", name)
	}
	_ = slices.Contains[[]string]
	_ = context.Background
}
