package search_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

func TestWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b)
		s := x.Shard(0)
		setup := func() { load(t, x) } // d1 is document number 1
		post := s.TermKey("redis")
		newPost := s.TermKey("brand")
		roles := func(extra ...redistest.KeyRole) []redistest.KeyRole {
			return append([]redistest.KeyRole{
				{Key: s.IDsKey(), Type: "hash", Role: "search document IDs"},
				{Key: s.Key("")[:len(s.Key(""))-2] + "n", Type: "hash", Role: "search index stats"},
			}, extra...)
		}
		// Add: re-index d1 with a new term and a score.
		b.CheckWrongTypes(t, setup, func() error {
			_, _, err := x.Add(ctx, search.Document{ID: "d1", Text: "brand new redis", Scores: map[string]float64{"votes": 3}})
			return err
		}, roles(
			redistest.KeyRole{Key: s.DocKey(1), Type: "hash", Role: "search document"},
			redistest.KeyRole{Key: newPost, Type: "set or a bitmap", Role: "search posting", Wrong: "hash"},
			redistest.KeyRole{Key: s.ScoreKey("votes"), Type: "zset", Role: "search score"},
		)...)
		// Remove d1.
		b.CheckWrongTypes(t, setup, func() error {
			_, err := x.Remove(ctx, "d1")
			return err
		}, roles(
			redistest.KeyRole{Key: s.DocKey(1), Type: "hash", Role: "search document"},
			redistest.KeyRole{Key: post, Type: "set or a bitmap", Role: "search posting", Wrong: "hash"},
			redistest.KeyRole{Key: s.ScoreKey("votes"), Type: "zset", Role: "search score"},
			redistest.KeyRole{Key: s.ScoreKey("update"), Type: "zset", Role: "search score"},
		)...)
		// Search: postings (wanted, synonym, excluded) and scores.
		sets := s.TermKey("sets")
		cluster := s.TermKey("cluster")
		b.CheckWrongTypes(t, setup, func() error {
			_, err := x.Search(ctx, "redis +sets -cluster", search.ByScores(map[string]float64{"votes": 1}, false))
			return err
		},
			redistest.KeyRole{Key: post, Type: "set or a bitmap", Role: "search posting", Wrong: "hash"},
			redistest.KeyRole{Key: sets, Type: "set or a bitmap", Role: "search posting", Wrong: "hash"},
			redistest.KeyRole{Key: cluster, Type: "set or a bitmap", Role: "search posting", Wrong: "hash"},
			redistest.KeyRole{Key: s.ScoreKey("votes"), Type: "zset", Role: "search score"},
		)
		b.CheckWrongTypes(t, setup, func() error {
			_, err := x.Search(ctx, "redis", search.ByRelevance())
			return err
		},
			redistest.KeyRole{Key: post, Type: "set or a bitmap", Role: "search posting", Wrong: "hash"},
			redistest.KeyRole{Key: s.Key("")[:len(s.Key(""))-2] + "n", Type: "hash", Role: "search index stats"},
		)
		// A sharded relevance search reads every shard's statistics and
		// document frequencies first, in one pipeline.
		y, err := search.New(b.Client, "sharded", search.WithPrefix(b.Prefix), search.WithShards(3),
			search.WithFields(search.NumericField("updated"), search.TextField("title")), search.WithScores("update", "votes"))
		require.NoError(t, err)
		var sharded []redistest.KeyRole
		for i := range 3 {
			s := y.Shard(i)
			sharded = append(sharded,
				redistest.KeyRole{Key: s.Key("")[:len(s.Key(""))-2] + "n", Type: "hash", Role: "search index stats"},
				redistest.KeyRole{Key: s.TermKey("redis"), Type: "set or a bitmap", Role: "search posting", Wrong: "hash"})
		}
		b.CheckWrongTypes(t, func() { load(t, y) }, func() error {
			_, err := y.Search(ctx, "redis", search.ByRelevance())
			return err
		}, sharded...)
		// Page: the cached result (renamed to a fixed search ID so that
		// the keys are known before setup runs).
		const sid = "id0.fixed"
		cache := fmt.Sprintf("%s{books}:r:", b.Prefix)
		b.CheckWrongTypes(t, func() {
			setup()
			r, err := x.Search(ctx, "redis")
			require.NoError(t, err)
			for _, sfx := range []string{":c"} {
				require.NoError(t, b.Client.Rename(ctx, cache+r.ID+sfx, cache+sid+sfx).Err())
			}
		}, func() error {
			_, err := x.Page(ctx, sid, 1, 1)
			return err
		},
			redistest.KeyRole{Key: cache + sid + ":c", Type: "list", Role: "search cached result"},
		)
	})
}

func TestRoundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, shards := range []int{1, 3} {
			x := newIndex(t, b, search.WithShards(shards))
			load(t, x) // loads the scripts
			r, err := x.Search(ctx, "redis")
			require.NoError(t, err)
			_, err = x.Page(ctx, r.ID, 0, 1)
			require.NoError(t, err)
			_, err = x.Remove(ctx, "none")
			require.NoError(t, err)
			want := int64(1)
			if b.Kind == redistest.Cluster {
				want = int64(min(shards, 3)) // shards spread over the 3 masters
			}
			for name, fn := range map[string]func(){
				"add batch": func() {
					_, _, err := x.Add(ctx, search.Document{ID: "n1", Text: "one"}, search.Document{ID: "n2", Text: "two"},
						search.Document{ID: "n3", Text: "three"}, search.Document{ID: "n4", Text: "four"})
					require.NoError(t, err)
				},
				"search": func() { r, err = x.Search(ctx, "redis", search.ByField("updated", true)); require.NoError(t, err) },
				"page":   func() { _, err := x.Page(ctx, r.ID, 1, 1); require.NoError(t, err) },
				"remove": func() {
					_, err := x.Remove(ctx, "n1", "n2", "n3", "n4", "d1", "d2")
					require.NoError(t, err)
				},
			} {
				rt, cmds := b.Count.Delta(fn)
				extra := int64(0) // a sharded Add reserves its document numbers first
				if name == "add batch" && shards > 1 {
					extra = 1
				}
				if shards == 1 || b.Kind != redistest.Cluster {
					assert.Equal(t, want+extra, rt, "shards=%d %s round trips", shards, name)
				} else {
					assert.LessOrEqual(t, rt, want+extra, "shards=%d %s: one round trip per node", shards, name)
				}
				assert.LessOrEqual(t, cmds, int64(shards)+extra, "shards=%d %s: one script per shard", shards, name)
			}
			b.Flush()
		}
	})
}

func TestFaults_Add_Remove(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		x, err := search.New(rdb, "books", search.WithPrefix(b.Prefix), search.WithScores("votes"), search.WithShards(2))
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "search Add")
		for i := range 6 {
			id := fmt.Sprintf("doc%d", i)
			var added, replaced int
			h.Call(1, redistest.Scripts, func() {
				added, replaced, err = x.Add(ctx, search.Document{ID: id, Text: "lost reply words", Scores: map[string]float64{"votes": float64(i)}})
			})
			require.NoError(t, err)
			h.Check(added == 1 && replaced == 0, "add %s: added=%d replaced=%d", id, added, replaced)
			h.Call(1, redistest.Scripts, func() {
				added, replaced, err = x.Add(ctx, search.Document{ID: id, Text: "lost reply again"})
			})
			require.NoError(t, err)
			h.Check(added == 0 && replaced == 1, "re-add %s: added=%d replaced=%d", id, added, replaced)
		}
		r, err := x.Search(ctx, "again", search.Limit(0, 100))
		require.NoError(t, err)
		h.Check(r.Total == 6, "6 documents indexed once each, got %d", r.Total)

		hr := redistest.NewHarness(t, f, "search Remove")
		for i := range 6 {
			var n int
			hr.Call(1, redistest.Scripts, func() { n, err = x.Remove(ctx, fmt.Sprintf("doc%d", i)) })
			require.NoError(t, err)
			hr.Check(n == 1, "remove doc%d: %d", i, n)
		}
		r, err = x.Search(ctx, "again")
		require.NoError(t, err)
		hr.Check(r.Total == 0, "all removed, %d left", r.Total)
	})
}

func TestFaults_delay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.ReadTimeout = 50 * time.Millisecond
			o.MaxRetries = -1
		})
		x, err := search.New(rdb, "books", search.WithPrefix(b.Prefix))
		require.NoError(t, err)
		f.Delay(200 * time.Millisecond)
		_, _, err = x.Add(ctx, search.Document{ID: "slow", Text: "slow reply"})
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, "the reply timed out: the outcome is unknown")
		f.Delay(0)
		// Whatever happened, the index is whole: the document is indexed
		// fully or not at all.
		y := newIndex(t, b)
		r, err := y.Search(ctx, "slow reply")
		require.NoError(t, err)
		assert.True(t, slices.Equal(r.IDs, []string{"slow"}) || len(r.IDs) == 0, "%v", r.IDs)
		n, err := x.Remove(ctx, "slow")
		require.NoError(t, err)
		assert.Equal(t, len(r.IDs), n)
	})
}
