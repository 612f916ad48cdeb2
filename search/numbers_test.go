package search_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

// assertCorrupt checks that err is a *ria.KeyError matching ria.ErrCorrupt
// naming key, and that the state is still before.
func assertCorrupt(t *testing.T, b *redistest.Backend, what, key string, before map[string]string, err error) {
	t.Helper()
	var kerr *ria.KeyError
	if assert.ErrorAs(t, err, &kerr, what) {
		assert.ErrorIs(t, err, ria.ErrCorrupt, what)
		assert.Equal(t, key, kerr.Key, what)
	}
	assert.Equal(t, before, b.Snapshot(), "%s: nothing changed", what)
}

// TestAdd_corruptPostingMember: a SET posting that an Add turns into a
// bitmap holding a member that is not a document number (one that Lua's
// tonumber reads, or not; one SETBIT refuses, or not) fails the Add with
// ErrCorrupt naming the posting, before anything is written: no phantom
// document's bit, no posting deleted and half rebuilt.
func TestAdd_corruptPostingMember(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		bads := []string{"abc", "-5", "1e3", " 7", "0x10", "01", "7.0", "nan"}
		if b.Real() {
			bads = append(bads, "4294967296") // miniredis would grow a 512 MB string
		}
		for _, bad := range bads {
			b.Flush()
			x := newIndex(t, b)
			search.SetBitmapMin(x, 4)
			_, _, err := x.Add(ctx, search.Document{ID: "d1", Text: "common"}, search.Document{ID: "d2", Text: "common"},
				search.Document{ID: "d3", Text: "common"})
			require.NoError(t, err)
			post := x.Shard(0).TermKey("common")
			require.NoError(t, b.Client.SAdd(ctx, post, bad).Err())
			require.Equal(t, "set", b.Client.Type(ctx, post).Val())
			before := b.Snapshot()
			// 4 + 2 documents > 4: the posting becomes a bitmap.
			_, _, err = x.Add(ctx, search.Document{ID: "d4", Text: "common"}, search.Document{ID: "d5", Text: "common"})
			assertCorrupt(t, b, fmt.Sprintf("member %q", bad), post, before, err)
		}
		b.Flush()
	})
}

// TestDocLength_corrupt: a document length ('#n') that is digits but no
// count Lua holds exactly fails Add (re-index), Remove and Get with
// ErrCorrupt naming the document, and nothing is written (the stats'
// HINCRBY len came after the other writes, or took a rounded value).
func TestDocLength_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b)
		s := x.Shard(0)
		for _, bad := range []string{"99999999999999999999", "9007199254740993", "100000000000000000000000000000"} {
			for name, call := range map[string]func() error{
				"add": func() error {
					_, _, err := x.Add(ctx, search.Document{ID: "d1", Text: "brand new text"}, search.Document{ID: "d9", Text: "new"})
					return err
				},
				"remove": func() error { _, err := x.Remove(ctx, "d2", "d1"); return err },
				"get":    func() error { _, err := x.Get(ctx, "d1"); return err },
			} {
				b.Flush()
				load(t, x)
				require.NoError(t, b.Client.HSet(ctx, s.DocKey(1), "#n", bad).Err())
				before := b.Snapshot()
				assertCorrupt(t, b, name+" "+bad, s.DocKey(1), before, call())
			}
		}
		b.Flush()
	})
}

// TestDocNumber_corrupt: a document number in the IDs hash that is
// digits but not one SETBIT takes (leading zero, 2^32 and past), its
// document hash moved along, fails Add, Remove and Get with ErrCorrupt
// naming the IDs hash before anything is written (a bitmap posting's
// SETBIT refused it after the other documents' writes).
func TestDocNumber_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b)
		search.SetBitmapMin(x, 2)
		s := x.Shard(0)
		prefix := strings.TrimSuffix(s.DocKey(1), "1")
		bads := []string{"01", "00"}
		if b.Real() {
			bads = append(bads, "4294967296", "18446744073709551617") // miniredis would grow the bitmap
		}
		for _, bad := range bads {
			for name, call := range map[string]func() error{
				"add": func() error {
					_, _, err := x.Add(ctx, search.Document{ID: "d2", Text: "beta"}, search.Document{ID: "d1", Text: "beta"})
					return err
				},
				"remove": func() error { _, err := x.Remove(ctx, "d2", "d1"); return err },
				"get":    func() error { _, err := x.Get(ctx, "d1"); return err },
			} {
				b.Flush()
				var docs []search.Document
				for i := 1; i <= 4; i++ {
					docs = append(docs, search.Document{ID: "d" + strconv.Itoa(i), Text: "common alpha"})
				}
				_, _, err := x.Add(ctx, docs...)
				require.NoError(t, err)
				require.Equal(t, "string", b.Client.Type(ctx, s.TermKey("common")).Val())
				require.NoError(t, b.Client.Rename(ctx, s.DocKey(1), prefix+bad).Err())
				require.NoError(t, b.Client.HSet(ctx, s.IDsKey(), "d1", bad).Err())
				before := b.Snapshot()
				assertCorrupt(t, b, name+" "+bad, s.IDsKey(), before, call())
			}
		}
		b.Flush()
	})
}

// TestStats_corrupt: a stats counter (seq, docs, len) that is negative or
// no integer fails Add, Remove and a relevance search (sharded or not)
// with ErrCorrupt naming the stats hash, and nothing is written (a
// negative seq numbered a new document -4).
func TestStats_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, shards := range []int{1, 3} {
			x := newIndex(t, b, search.WithShards(shards))
			add := func() error { _, _, err := x.Add(ctx, search.Document{ID: "new", Text: "fresh redis"}); return err }
			remove := func() error { _, err := x.Remove(ctx, "d1", "d2", "d3", "d4", "d5"); return err }
			rel := func() error { _, err := x.Search(ctx, "redis", search.ByRelevance()); return err }
			for _, c := range []struct {
				field, bad string
				calls      map[string]func() error
			}{
				{"seq", "-5", map[string]func() error{"add": add}},
				{"docs", "-1", map[string]func() error{"add": add, "remove": remove, "rel": rel}},
				{"len", "-40", map[string]func() error{"add": add, "remove": remove, "rel": rel}},
				{"docs", "abc", map[string]func() error{"rel": rel}},
				{"len", "nan", map[string]func() error{"rel": rel}},
				{"docs", "1e3", map[string]func() error{"rel": rel}},
			} {
				for name, call := range c.calls {
					if name == "add" && shards > 1 {
						continue // a sharded Add reserves its numbers (gseq) first, kept if it fails
					}
					what := fmt.Sprintf("%d shards: %s with %s %q", shards, name, c.field, c.bad)
					b.Flush()
					load(t, x)
					var stats []string
					for i := range shards {
						stats = append(stats, statsKey(x.Shard(i)))
						require.NoError(t, b.Client.HSet(ctx, statsKey(x.Shard(i)), c.field, c.bad).Err())
					}
					before := b.Snapshot()
					err := call()
					var kerr *ria.KeyError
					if assert.ErrorAs(t, err, &kerr, what) {
						assert.ErrorIs(t, err, ria.ErrCorrupt, what)
						assert.Contains(t, stats, kerr.Key, what)
					}
					assert.Equal(t, before, b.Snapshot(), "%s: nothing changed", what)
				}
			}
		}
		b.Flush()
	})
}

// TestPage_corruptTotal: a cached result whose total is digits but no
// count is ErrCorrupt, not a garbled total (it read as expired).
func TestPage_corruptTotal(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b)
		load(t, x)
		r, err := x.Search(ctx, "redis", search.Limit(0, 1))
		require.NoError(t, err)
		c := fmt.Sprintf("%s{books}:r:%s:c", b.Prefix, r.ID)
		require.NoError(t, b.Client.LSet(ctx, c, 0, "99999999999999999999").Err())
		_, err = x.Refresh(ctx, r.ID)
		var kerr *ria.KeyError
		if assert.ErrorAs(t, err, &kerr) {
			assert.ErrorIs(t, err, ria.ErrCorrupt)
			assert.Equal(t, c, kerr.Key)
		}
		b.Flush()
	})
}

// TestSearch_corruptPostingNumber: a SET posting member that is digits
// but no bit offset (a leading zero, 2^32), set into or cleared from a
// bitmap by a query, is ErrCorrupt naming the posting (it was the
// server's bare "bit offset" error), and nothing is left behind. (An
// excluded number past the result's bits is never cleared: no error.)
// Real servers only: miniredis has no BITFIELD, and its SETBIT takes "01"
// and would grow a 512 MB string for 2^32.
func TestSearch_corruptPostingNumber(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		if !b.Real() {
			return
		}
		ctx := t.Context()
		x := newIndex(t, b)
		search.SetBitmapMin(x, 4)
		s := x.Shard(0)
		for _, bad := range []string{"01", "4294967296"} {
			b.Flush()
			var docs []search.Document
			for i := 1; i <= 10; i++ {
				text := "common"
				if i == 3 {
					text += " rare"
				}
				docs = append(docs, search.Document{ID: "d" + strconv.Itoa(i), Text: text})
			}
			_, _, err := x.Add(ctx, docs...)
			require.NoError(t, err)
			require.Equal(t, "string", b.Client.Type(ctx, s.TermKey("common")).Val())
			require.NoError(t, b.Client.SAdd(ctx, s.TermKey("rare"), bad).Err())
			qs := []string{"common +rare"}
			if bad == "01" {
				qs = append(qs, "common -rare") // 2^32 is past the result: not cleared, no error
			}
			for _, q := range qs {
				before := b.Snapshot()
				_, err := x.Search(ctx, q)
				assertCorrupt(t, b, fmt.Sprintf("%s with %q", q, bad), s.TermKey("rare"), before, err)
			}
		}
		b.Flush()
	})
}

// TestSearch_numbersInExponentForm: a Numeric field Go stores as "2e+09"
// (strconv.FormatFloat 'g'), a weight sent as "1e-05", and the scores
// miniredis replies as "2e+9" are read as those numbers on every backend,
// sharded or not, by Search and by a Page that orders the rest: miniredis's
// Lua tonumber reads none of them (the field sorted as 0, the scores and
// weights failed the script).
func TestSearch_numbersInExponentForm(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, shards := range []int{1, 3} {
			x := newIndex(t, b, search.WithShards(shards))
			_, _, err := x.Add(ctx,
				search.Document{ID: "a", Text: "redis", Fields: map[string]string{"updated": "2000000000"},
					Scores: map[string]float64{"votes": 2e9}},
				search.Document{ID: "b", Text: "redis", Fields: map[string]string{"updated": "1500000000"},
					Scores: map[string]float64{"votes": 1.5e9}},
				search.Document{ID: "c", Text: "redis", Fields: map[string]string{"updated": "1e-5"},
					Scores: map[string]float64{"votes": 1e-9}},
				search.Document{ID: "d", Text: "redis", Fields: map[string]string{"updated": "3e+100"},
					Scores: map[string]float64{"votes": -1e300}})
			require.NoError(t, err)
			for _, tc := range []struct {
				name string
				by   search.SearchOption
				want []string
			}{
				{"by updated, newest first", search.ByField("updated", true), []string{"d", "a", "b", "c"}},
				{"by updated, oldest first", search.ByField("updated", false), []string{"c", "b", "a", "d"}},
				{"by votes", search.ByScores(map[string]float64{"votes": 1}, false), []string{"a", "b", "c", "d"}},
				{"by votes*1e-5", search.ByScores(map[string]float64{"votes": 0.00001}, false), []string{"a", "b", "c", "d"}},
				{"by votes*-2e9", search.ByScores(map[string]float64{"votes": -2e9, "update": 1e-300}, false), []string{"d", "c", "b", "a"}},
			} {
				what := fmt.Sprintf("%d shards, %s", shards, tc.name)
				r, err := x.Search(ctx, "redis", tc.by, search.Limit(0, 1))
				if !assert.NoError(t, err, what) {
					continue
				}
				ids := r.IDs
				p, err := x.Page(ctx, r.ID, 1, 3) // page.lua orders the rest
				if assert.NoError(t, err, what) {
					ids = append(ids, p.IDs...)
				}
				assert.Equal(t, tc.want, ids, what)
			}
			b.Flush()
		}
	})
}

// TestSearch_ByScores_overflow: scores and weights are finite, but a
// weighted sum can overflow both ways (1e308*10 + 1e308*-10 = inf - inf =
// NaN), which no order holds. Such a sum counts as 0 (the package doc):
// ties go by ID, and a sharded index answers as an unsharded one, on the
// first page and on the rest that Page orders.
func TestSearch_ByScores_overflow(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		plain := newIndex(t, b)
		sharded, err := search.New(b.Client, "sh", search.WithPrefix(b.Prefix), search.WithShards(3),
			search.WithScores("update", "votes"))
		require.NoError(t, err)
		var docs []search.Document
		for _, id := range []string{"e", "c", "a", "d", "b", "f", "g"} {
			docs = append(docs, search.Document{ID: id, Text: "redis",
				Scores: map[string]float64{"update": 1e308, "votes": 1e308}})
		}
		docs = append(docs,
			search.Document{ID: "up", Text: "redis", Scores: map[string]float64{"update": 1}},      // 10
			search.Document{ID: "down", Text: "redis", Scores: map[string]float64{"votes": 1}},     // -10
			search.Document{ID: "inf", Text: "redis", Scores: map[string]float64{"update": 1e308}}) // +inf
		w := map[string]float64{"update": 10, "votes": -10}
		for _, x := range []*search.Index{plain, sharded} {
			_, _, err := x.Add(ctx, docs...)
			require.NoError(t, err)
			for _, asc := range []bool{false, true} {
				want := []string{"inf", "up", "a", "b", "c", "d", "e", "f", "g", "down"}
				if asc {
					want = []string{"down", "a", "b", "c", "d", "e", "f", "g", "up", "inf"}
				}
				r, err := x.Search(ctx, "redis", search.ByScores(w, asc), search.Limit(0, 10))
				require.NoError(t, err, x.Name())
				assert.Equal(t, want, r.IDs, "%s asc %v: every inf-inf sum counts 0, ties by ID", x.Name(), asc)
				r, err = x.Search(ctx, "redis", search.ByScores(w, asc), search.Limit(0, 3))
				require.NoError(t, err, x.Name())
				p, err := x.Page(ctx, r.ID, 3, 7)
				require.NoError(t, err, x.Name())
				assert.Equal(t, want, append(r.IDs, p.IDs...), "%s asc %v, paged", x.Name(), asc)
			}
		}
	})
}
