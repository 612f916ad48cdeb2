package search_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
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
			_, err = x.Remove(ctx, "none", "n1", "n2", "n3", "n4") // loads the check pass's script too
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
				// A sharded Add first reserves its document numbers and
				// runs each shard's checks (one pipeline); a sharded
				// Remove runs the checks first.
				passes, extra := int64(1), int64(0)
				if shards > 1 && name == "add batch" {
					passes, extra = 2, int64(shards)+1
				} else if shards > 1 && name == "remove" {
					passes, extra = 2, int64(shards)
				}
				if shards == 1 || b.Kind != redistest.Cluster {
					assert.Equal(t, want*passes, rt, "shards=%d %s round trips", shards, name)
				} else {
					assert.LessOrEqual(t, rt, want*passes, "shards=%d %s: one round trip per node", shards, name)
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

// TestAdd_shardedWrongType: a sharded Add or Remove whose batch spans
// shards checks every shard's part before any shard writes: a key of
// another type in one shard fails the whole call with a *ria.KeyError
// naming the shard, and no shard is written.
func TestAdd_shardedWrongType(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x, err := search.New(b.Client, "sh", search.WithPrefix(b.Prefix), search.WithShards(2))
		require.NoError(t, err)
		on := idsOnShards(x)
		docs := []search.Document{{ID: on[0], Text: "redis"}, {ID: on[1], Text: "redis"}}
		require.NoError(t, b.Client.Set(ctx, x.Shard(1).IDsKey(), "not a hash", 0).Err())
		added, _, err := x.Add(ctx, docs...)
		var ke *ria.KeyError
		require.ErrorAs(t, err, &ke)
		assert.Equal(t, x.Shard(1).IDsKey(), ke.Key)
		assert.ErrorContains(t, err, "shard 1:")
		assert.Zero(t, added)
		_, gerr := x.Get(ctx, on[0])
		assert.ErrorIs(t, gerr, search.ErrNotFound, "the failed Add wrote %q (shard 0) anyway", on[0])
		n, err := x.Count(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "documents written by an Add that reported a wrong-type key")

		// Remove: the same check pass.
		require.NoError(t, b.Client.Del(ctx, x.Shard(1).IDsKey()).Err())
		_, _, err = x.Add(ctx, docs...)
		require.NoError(t, err)
		require.NoError(t, b.Client.Del(ctx, x.Shard(1).TermKey("redis")).Err())
		require.NoError(t, b.Client.HSet(ctx, x.Shard(1).TermKey("redis"), "f", "v").Err())
		removed, err := x.Remove(ctx, on[0], on[1])
		require.ErrorAs(t, err, &ke)
		assert.Equal(t, x.Shard(1).TermKey("redis"), ke.Key)
		assert.ErrorContains(t, err, "shard 1:")
		assert.Zero(t, removed)
		_, gerr = x.Get(ctx, on[0])
		assert.NoError(t, gerr, "the failed Remove removed %q (shard 0) anyway", on[0])
	})
}

// TestAdd_shardedPartApplied: a key that only the writes reach (the hash
// at a document number the Add reserved, which the check pass cannot
// know) fails that shard's part after the other shard wrote its own: the
// error names the failed shard, and the counts are the applied parts'.
func TestAdd_shardedPartApplied(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x, err := search.New(b.Client, "sh", search.WithPrefix(b.Prefix), search.WithShards(2))
		require.NoError(t, err)
		on := idsOnShards(x)
		// The batch reserves numbers 1 and 2: on[1] gets 2.
		require.NoError(t, b.Client.Set(ctx, x.Shard(1).DocKey(2), "not a hash", 0).Err())
		added, _, err := x.Add(ctx, search.Document{ID: on[0], Text: "redis"}, search.Document{ID: on[1], Text: "redis"})
		var ke *ria.KeyError
		require.ErrorAs(t, err, &ke)
		assert.ErrorIs(t, err, ria.ErrWrongType)
		assert.Equal(t, x.Shard(1).DocKey(2), ke.Key)
		assert.ErrorContains(t, err, "shard 1:")
		assert.NotContains(t, err.Error(), "shard 0:")
		assert.Equal(t, 1, added, "shard 0's part was applied")
		_, gerr := x.Get(ctx, on[0])
		assert.NoError(t, gerr, "shard 0's part")
		_, gerr = x.Get(ctx, on[1])
		assert.ErrorIs(t, gerr, search.ErrNotFound, "shard 1's part")
	})
}

// idsOnShards returns a document ID on shard 0 and one on shard 1 of x.
func idsOnShards(x *search.Index) [2]string {
	var on [2]string
	for i := 0; on[0] == "" || on[1] == ""; i++ {
		id := "doc" + strconv.Itoa(i)
		if s := x.ShardOf(id); s < 2 && on[s] == "" {
			on[s] = id
		}
	}
	return on
}

// A sharded Add whose reserved numbers pass 2^32 (add.lua's bound:
// "document numbers below 2^32") fails before any shard writes, naming
// shard 0's gseq. (The check pass runs with number 0, so it could not see
// the bound: shard 0 wrote its part and shard 1 failed on its own seq.)
func TestAdd_shardedNumbersExhausted(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x, err := search.New(b.Client, "sh", search.WithPrefix(b.Prefix), search.WithShards(2))
		require.NoError(t, err)
		on := idsOnShards(x)
		stats := strings.TrimSuffix(x.Shard(0).IDsKey(), "ids") + "n"
		// The batch reserves 4294967295 (the last number below 2^32) for
		// on[0] and 4294967296 for on[1].
		require.NoError(t, b.Client.HSet(ctx, stats, "gseq", "4294967294").Err())
		added, _, err := x.Add(ctx, search.Document{ID: on[0], Text: "redis"}, search.Document{ID: on[1], Text: "redis"})
		var ke *ria.KeyError
		require.ErrorAs(t, err, &ke)
		assert.ErrorIs(t, err, ria.ErrCorrupt)
		assert.Equal(t, stats, ke.Key)
		assert.Equal(t, "search index stats field gseq", ke.Role)
		assert.Zero(t, added, "a part was applied")
		_, gerr := x.Get(ctx, on[0])
		assert.ErrorIs(t, gerr, search.ErrNotFound, "the Add that failed its check of a value there before it wrote %q (shard 0)", on[0])
	})
}
