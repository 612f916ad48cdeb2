package search_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

// TestPostings_bitmaps: a term past the threshold turns into a bitmap,
// and every query shape over bitmaps and SETs answers as the documents
// say: AND, synonyms mixing a bitmap and a SET, exclusions by a bitmap
// shorter and longer than the result and by a SET, index order, pages
// past the search's own entries (read from the cached bitmap), and
// removal leaving no posting behind.
func TestPostings_bitmaps(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, shards := range []int{1, 3} {
			ctx := t.Context()
			x := newIndex(t, b, search.WithShards(shards))
			search.SetBitmapMin(x, 4)
			// doc i (1..40): "common" always; "early" for i <= 20, "late"
			// for i > 20; "odd" for odd i; "rare" for i in {3, 25, 38}.
			has := func(i int, w string) bool {
				switch w {
				case "common":
					return true
				case "early":
					return i <= 20
				case "late":
					return i > 20
				case "odd":
					return i%2 == 1
				case "rare":
					return i == 3 || i == 25 || i == 38
				}
				return false
			}
			var docs []search.Document
			for i := 1; i <= 40; i++ {
				var text []string
				for _, w := range []string{"common", "early", "late", "odd", "rare"} {
					if has(i, w) {
						text = append(text, w)
					}
				}
				docs = append(docs, search.Document{ID: "d" + strconv.Itoa(i), Text: strings.Join(text, " ")})
			}
			for c := range slices.Chunk(docs, 7) { // several batches: SETs turn into bitmaps on the way
				_, _, err := x.Add(ctx, c...)
				require.NoError(t, err)
			}
			bitmaps := 0
			for _, term := range []string{"common", "early", "late", "odd"} {
				for i := range shards {
					if b.Client.Type(ctx, x.Shard(i).TermKey(term)).Val() == "string" {
						bitmaps++
					}
				}
			}
			assert.Equal(t, 4*shards, bitmaps, "shards=%d: every frequent term's posting is a bitmap", shards)
			rare := x.Shard(x.ShardOf("d3")).TermKey("rare")
			assert.Equal(t, "set", b.Client.Type(ctx, rare).Val(), "a rare term stays a SET")

			// want: the documents (1..40, index order) matching every group
			// (a group: any of its words) and none of excl.
			want := func(groups [][]string, excl ...string) []string {
				var out []string
				for i := 1; i <= 40; i++ {
					ok := !slices.ContainsFunc(excl, func(w string) bool { return has(i, w) })
					for _, g := range groups {
						ok = ok && slices.ContainsFunc(g, func(w string) bool { return has(i, w) })
					}
					if ok {
						out = append(out, "d"+strconv.Itoa(i))
					}
				}
				return out
			}
			for _, c := range []struct {
				q      string
				groups [][]string
				excl   []string
			}{
				{"common", [][]string{{"common"}}, nil},
				{"odd late", [][]string{{"odd"}, {"late"}}, nil},
				{"common -early", [][]string{{"common"}}, []string{"early"}}, // excluded bitmap shorter than the result
				{"early -late", [][]string{{"early"}}, []string{"late"}},     // longer
				{"common -rare", [][]string{{"common"}}, []string{"rare"}},   // a SET excluded from bitmaps
				{"early +rare odd", [][]string{{"early", "rare"}, {"odd"}}, nil},
				{"rare odd", [][]string{{"rare"}, {"odd"}}, nil},     // SET candidates, bitmap filter
				{"rare -odd", [][]string{{"rare"}}, []string{"odd"}}, // bitmap exclusion of SET candidates
				{"rare +late common -early", [][]string{{"rare", "late"}, {"common"}}, []string{"early"}},
				{"common -common", [][]string{{"common"}}, []string{"common"}},
				{"absent +rare", [][]string{{"absent", "rare"}}, nil},
			} {
				w := want(c.groups, c.excl...)
				assert.Equal(t, w, ids(t, x, c.q), "shards=%d %q", shards, c.q)
				// First page of 3, then a page past it from the cache.
				r, err := x.Search(ctx, c.q, search.Limit(0, 3))
				require.NoError(t, err)
				assert.Equal(t, len(w), r.Total, "shards=%d %q", shards, c.q)
				assert.Equal(t, window(w, 0, 3), r.IDs, "shards=%d %q", shards, c.q)
				p, err := x.Page(ctx, r.ID, 5, 10)
				require.NoError(t, err)
				assert.Equal(t, window(w, 5, 10), p.IDs, "shards=%d %q page 5+10", shards, c.q)
				// By ID, the whole result is read from the bitmaps.
				byID := slices.Clone(w)
				slices.Sort(byID)
				assert.Equal(t, byID, ids(t, x, c.q, search.ByID()), "shards=%d %q by ID", shards, c.q)
			}

			// Index order: a re-indexed document keeps its place, a removed
			// and added again one goes last.
			_, _, err := x.Add(ctx, search.Document{ID: "d1", Text: "common early odd"})
			require.NoError(t, err)
			_, err = x.Remove(ctx, "d2")
			require.NoError(t, err)
			_, _, err = x.Add(ctx, search.Document{ID: "d2", Text: "common early"})
			require.NoError(t, err)
			got := ids(t, x, "early")
			require.Len(t, got, 20)
			assert.Equal(t, []string{"d1", "d3", "d4"}, got[:3], "shards=%d", shards)
			assert.Equal(t, "d2", got[19], "shards=%d", shards)

			// Removing every document leaves no posting: emptied bitmaps go.
			var all []string
			for i := 1; i <= 40; i++ {
				all = append(all, "d"+strconv.Itoa(i))
			}
			n, err := x.Remove(ctx, all...)
			require.NoError(t, err)
			assert.Equal(t, 40, n)
			for i := range shards {
				assert.Empty(t, b.Keys(x.Shard(i).TermKey("*")), "shards=%d: no posting left", shards)
			}
			b.Flush()
		}
	})
}

// TestAdd_laggingCounter: a sharded index whose number counter (gseq)
// lags its shards' numbers (lost, or an index numbered per shard) still
// gives every document of a shard its own number, never one used before.
func TestAdd_laggingCounter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b, search.WithShards(2))
		var docs []search.Document
		for i := range 12 {
			docs = append(docs, search.Document{ID: "x" + strconv.Itoa(i), Text: "alpha"})
		}
		_, _, err := x.Add(ctx, docs[:6]...)
		require.NoError(t, err)
		_, err = x.Remove(ctx, "x0", "x1") // their numbers must not come back
		require.NoError(t, err)
		stats := strings.TrimSuffix(x.Shard(0).IDsKey(), "ids") + "n"
		require.NoError(t, b.Client.HDel(ctx, stats, "gseq").Err())
		added, _, err := x.Add(ctx, docs[6:]...)
		require.NoError(t, err)
		assert.Equal(t, 6, added)
		for i := range 2 {
			seen := map[string]bool{}
			for id, n := range b.Client.HGetAll(ctx, x.Shard(i).IDsKey()).Val() {
				assert.False(t, seen[n], "shard %d: %s shares number %s", i, id, n)
				seen[n] = true
				num, err := strconv.Atoi(n)
				require.NoError(t, err)
				assert.Greater(t, num, 2, "shard %d: %s took the number of x0 or x1 (1, 2), removed", i, id)
			}
		}
		r, err := x.Search(ctx, "alpha", search.Limit(0, 100))
		require.NoError(t, err)
		assert.Equal(t, 10, r.Total)
		assert.ElementsMatch(t, []string{"x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11"}, r.IDs)
	})
}

// TestAdd_corruptCounter: a number counter that is not an integer is a
// *ria.KeyError (ria.ErrCorrupt), and nothing is written.
func TestAdd_corruptCounter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b, search.WithShards(2))
		stats := strings.TrimSuffix(x.Shard(0).IDsKey(), "ids") + "n"
		require.NoError(t, b.Client.HSet(ctx, stats, "gseq", "x").Err())
		before := b.Snapshot()
		_, _, err := x.Add(ctx, search.Document{ID: "a", Text: "alpha"})
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.ErrorIs(t, err, ria.ErrCorrupt)
		assert.Equal(t, stats, kerr.Key)
		assert.Equal(t, before, b.Snapshot())
	})
}

// TestPostings_threshold: with the production threshold a posting stays a
// SET up to 256 documents and becomes a bitmap past them.
func TestPostings_threshold(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b)
		var docs []search.Document
		for i := 1; i <= 257; i++ {
			text := "common"
			if i <= 256 {
				text += " half"
			}
			docs = append(docs, search.Document{ID: "d" + strconv.Itoa(i), Text: text})
		}
		for c := range slices.Chunk(docs, 100) {
			_, _, err := x.Add(ctx, c...)
			require.NoError(t, err)
		}
		s := x.Shard(0)
		assert.Equal(t, "string", b.Client.Type(ctx, s.TermKey("common")).Val(), "257 documents: a bitmap")
		assert.Equal(t, "set", b.Client.Type(ctx, s.TermKey("half")).Val(), "256 documents: a SET")
		r, err := x.Search(ctx, "common half")
		require.NoError(t, err)
		assert.Equal(t, 256, r.Total)
		assert.Equal(t, []string{"d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10"}, r.IDs)
		b.Flush()
	})
}

// TestPostings_corrupt: a SET posting holding something else than
// document numbers fails every query shape that reads it with ErrCorrupt
// naming it, its temporary keys deleted and nothing written.
func TestPostings_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b)
		search.SetBitmapMin(x, 4)
		var docs []search.Document
		for i := 1; i <= 20; i++ {
			text := "common"
			if i%2 == 1 {
				text += " odd"
			}
			if i == 3 || i == 12 {
				text += " rare"
			}
			if i == 5 {
				text += " solo"
			}
			docs = append(docs, search.Document{ID: "d" + strconv.Itoa(i), Text: text})
		}
		_, _, err := x.Add(ctx, docs...)
		require.NoError(t, err)
		s := x.Shard(0)
		require.Equal(t, "string", b.Client.Type(ctx, s.TermKey("common")).Val())
		require.Equal(t, "set", b.Client.Type(ctx, s.TermKey("rare")).Val())
		require.NoError(t, b.Client.SAdd(ctx, s.TermKey("rare"), "zz").Err())
		for _, q := range []string{"rare", "rare common", "rare -odd", "common -rare", "common +rare", "common +rare -solo", "odd common +rare -rare"} {
			before := b.Snapshot()
			_, err := x.Search(ctx, q)
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, q) {
				assert.ErrorIs(t, err, ria.ErrCorrupt, q)
				assert.Equal(t, s.TermKey("rare"), kerr.Key, q)
			}
			assert.Equal(t, before, b.Snapshot(), "%s: nothing changed", q)
		}
		b.Flush()
	})
}
