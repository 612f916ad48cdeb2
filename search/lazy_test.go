package search_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

// lazyIndex returns an index of 30 documents d00..d29 all holding
// "common", with a numeric field and a score that tie often.
func lazyIndex(t *testing.T, b *redistest.Backend) *search.Index {
	t.Helper()
	return lazyIndexOf(t, b, 0)
}

// lazyIndexOf is lazyIndex with postings past bitmapMin documents turned
// into bitmaps (0: the production threshold).
func lazyIndexOf(t *testing.T, b *redistest.Backend, bitmapMin int) *search.Index {
	t.Helper()
	x, err := search.New(b.Client, "lazy", search.WithPrefix(b.Prefix),
		search.WithFields(search.NumericField("updated")), search.WithScores("votes"))
	require.NoError(t, err)
	if bitmapMin > 0 {
		search.SetBitmapMin(x, bitmapMin)
	}
	var docs []search.Document
	for i := range 30 {
		docs = append(docs, search.Document{
			ID:     fmt.Sprintf("d%02d", (i*11)%30), // numbers not in ID order
			Text:   "common word" + strconv.Itoa(i%4) + " extra" + strconv.Itoa(i%3),
			Fields: map[string]string{"updated": strconv.Itoa(i % 7)},
			Scores: map[string]float64{"votes": float64(i % 5)},
		})
	}
	_, _, err = x.Add(t.Context(), docs...)
	require.NoError(t, err)
	return x
}

// TestSearch_lazyPages: a search caches its own entries and the matching
// numbers; the first page past them orders the rest, in the order a
// search of the whole result gives, once; in index order, only as far as
// a page needs. With SET postings and with bitmaps.
func TestSearch_lazyPages(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, bitmapMin := range []int{0, 4} {
			lazyPages(t, b, bitmapMin)
			b.Flush()
		}
	})
}

func lazyPages(t *testing.T, b *redistest.Backend, bitmapMin int) {
	ctx := t.Context()
	x := lazyIndexOf(t, b, bitmapMin)
	cache := b.Prefix + "{lazy}:r:"
	rest := func(sid string) int64 {
		return b.Client.Exists(ctx, cache+sid+":s", cache+sid+":b").Val()
	}
	// llen: the entries the cache holds (after its total and sort spec).
	llen := func(sid string) int64 { return (b.Client.LLen(ctx, cache+sid+":c").Val() - 2) / 2 }
	{
		for name, opts := range map[string][]search.SearchOption{
			"index":     nil,
			"id":        {search.ByID()},
			"field":     {search.ByField("updated", true)},
			"scores":    {search.ByScores(map[string]float64{"votes": 2}, false)},
			"relevance": {search.ByRelevance()},
		} {
			for _, q := range []string{"common", "common -word1", "common extra2 +word3"} {
				all, err := x.Search(ctx, q, append(slices.Clone(opts), search.Limit(0, 100))...)
				require.NoError(t, err)
				full := all.IDs
				require.Len(t, full, all.Total)
				r, err := x.Search(ctx, q, append(slices.Clone(opts), search.Limit(2, 3))...)
				require.NoError(t, err)
				assert.Equal(t, full[2:5], r.IDs, "%s %q", name, q)
				if len(full) > 5 {
					assert.EqualValues(t, 1, rest(r.ID), "%s %q: the rest is kept unordered", name, q)
					assert.EqualValues(t, 5, llen(r.ID), "%s %q: only the search's entries are ordered", name, q)
				} else {
					assert.Zero(t, rest(r.ID), "%s %q: the whole result was ordered", name, q)
				}
				p, err := x.Page(ctx, r.ID, 1, 3) // within the search's entries
				require.NoError(t, err)
				assert.Equal(t, full[1:4], p.IDs, "%s %q", name, q)
				if name == "index" && len(full) > 8 {
					p, err = x.Page(ctx, r.ID, 6, 2)
					require.NoError(t, err)
					assert.Equal(t, full[6:8], p.IDs, "%s %q", name, q)
					assert.EqualValues(t, 8, llen(r.ID), "%s %q: index order goes only as far as the page", name, q)
				}
				p, err = x.Page(ctx, r.ID, 4, 100)
				require.NoError(t, err)
				assert.Equal(t, full[4:], p.IDs, "%s %q", name, q)
				assert.Equal(t, len(full), p.Total)
				if name == "index" && len(full) > 5 {
					assert.EqualValues(t, 1, rest(r.ID), "%s %q: the numbers stay for later pages", name, q)
				} else {
					assert.Zero(t, rest(r.ID), "%s %q: ordered once", name, q)
				}
				assert.EqualValues(t, len(full), llen(r.ID))
				p, err = x.Page(ctx, r.ID, 0, 100)
				require.NoError(t, err)
				assert.Equal(t, full, p.IDs, "%s %q", name, q)
			}
		}
	}
}

// TestSearch_lazyPagesAfterRemove: a document removed between a search
// and its first later page is left out of the rest; Total still counts it.
func TestSearch_lazyPagesAfterRemove(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := lazyIndex(t, b)
		all, err := x.Search(ctx, "common", search.Limit(0, 100))
		require.NoError(t, err)
		r, err := x.Search(ctx, "common", search.Limit(0, 5))
		require.NoError(t, err)
		gone := []string{all.IDs[2], all.IDs[10]} // one ordered by the search, one not
		n, err := x.Remove(ctx, gone...)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		p, err := x.Page(ctx, r.ID, 0, 100)
		require.NoError(t, err)
		want := slices.DeleteFunc(slices.Clone(all.IDs), func(id string) bool { return id == gone[1] })
		assert.Equal(t, want, p.IDs, "the search's own entries stay as they were")
		assert.Equal(t, 30, p.Total)
	})
}

// TestSearch_lazyWrongTypes: the keys of the unordered rest and the number
// -> ID hash of the wrong type are reported, changing nothing.
func TestSearch_lazyWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var x *search.Index
		di := b.Prefix + "{lazy}:di"
		role := redistest.KeyRole{Key: di, Type: "hash", Role: "search document numbers"}
		setup := func() { x = lazyIndex(t, b) }
		b.CheckWrongTypes(t, setup, func() error {
			_, _, err := x.Add(ctx, search.Document{ID: "new", Text: "common"})
			return err
		}, role)
		b.CheckWrongTypes(t, setup, func() error {
			_, err := x.Remove(ctx, "d01")
			return err
		}, role)
		b.CheckWrongTypes(t, setup, func() error {
			_, err := x.Search(ctx, "common")
			return err
		}, role)
		const sid = "id0.lazy"
		cache := b.Prefix + "{lazy}:r:"
		b.CheckWrongTypes(t, func() {
			setup()
			r, err := x.Search(ctx, "common", search.Limit(0, 2))
			require.NoError(t, err)
			for _, sfx := range []string{":c", ":s"} {
				require.NoError(t, b.Client.Rename(ctx, cache+r.ID+sfx, cache+sid+sfx).Err())
			}
		}, func() error {
			_, err := x.Page(ctx, sid, 5, 5)
			return err
		},
			redistest.KeyRole{Key: cache + sid + ":c", Type: "list", Role: "search cached result"},
			redistest.KeyRole{Key: cache + sid + ":s", Type: "string", Role: "search cached result"},
			redistest.KeyRole{Key: cache + sid + ":b", Type: "string", Role: "search cached result", Wrong: "hash"},
			role,
		)
	})
}

// TestSearch_lazyCorrupt: a cached result whose total or sort spec is not
// what the search wrote is reported by a Page, changing nothing.
func TestSearch_lazyCorrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cache := b.Prefix + "{lazy}:r:"
		for _, c := range []struct {
			what  string
			index int64
			value string
		}{
			{"total", 0, "many"},
			{"negative total", 0, "-1"},
			{"sort spec past its end", 1, "2:id0:1:01:05:0"},
			{"sort spec length", 1, "x:id"},
			{"short sort spec", 1, "2:id"},
			{"weight count not a number", 1, "2:id0:1:01:x"},
			{"missing weight", 1, "2:id0:1:01:11:v"},
			{"unknown mode", 1, "2:xx0:1:01:0"},
			{"relevance statistics cut short", 1, "3:rel0:1:01:01:11:t"},
		} {
			b.Flush()
			x := lazyIndex(t, b)
			r, err := x.Search(ctx, "common", search.ByID(), search.Limit(0, 2))
			require.NoError(t, err)
			key := cache + r.ID + ":c"
			require.NoError(t, b.Client.LSet(ctx, key, c.index, c.value).Err())
			before := b.Snapshot()
			_, err = x.Page(ctx, r.ID, 5, 5)
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, c.what) {
				assert.ErrorIs(t, err, ria.ErrCorrupt, c.what)
				assert.Equal(t, key, kerr.Key, c.what)
			}
			assert.Equal(t, before, b.Snapshot(), "%s: nothing changed", c.what)
		}
		b.Flush()
	})
}

// TestSearch_shardedPagesAfterReindex: documents re-indexed between a
// sharded search and its later pages with sort keys that now sort first.
// A shard orders the rest of its result by the keys of then, after the
// entries the search ordered: the pages must still make one result, each
// matching document on exactly one page (a sort of every shard's entries
// together moved such a document ahead on every later page, and another
// one back onto a page already read).
func TestSearch_shardedPagesAfterReindex(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b, search.WithShards(3))
		var docs []search.Document
		for i := range 30 {
			docs = append(docs, search.Document{ID: fmt.Sprintf("d%02d", i), Text: "common",
				Fields: map[string]string{"title": fmt.Sprintf("t%02d", i)}})
		}
		_, _, err := x.Add(ctx, docs...)
		require.NoError(t, err)
		r, err := x.Search(ctx, "common", search.ByField("title", false), search.Limit(0, 5))
		require.NoError(t, err)
		require.Equal(t, []string{"d00", "d01", "d02", "d03", "d04"}, r.IDs)
		for _, id := range []string{"d20", "d25", "d29"} { // not ordered by the search
			_, _, err := x.Add(ctx, search.Document{ID: id, Text: "common", Fields: map[string]string{"title": "a" + id}})
			require.NoError(t, err)
		}
		got := slices.Clone(r.IDs)
		for off := 5; off < r.Total; off += 5 {
			p, err := x.Page(ctx, r.ID, off, 5)
			require.NoError(t, err)
			got = append(got, p.IDs...)
		}
		var want []string
		for _, d := range docs {
			want = append(want, d.ID)
		}
		assert.ElementsMatch(t, want, got, "every document on one page")
	})
}
