package search_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

// statsKey returns the stats HASH of shard s ({tag}:n).
func statsKey(s search.Shard) string { k := s.Key(""); return k[:len(k)-2] + "n" }

func count(t *testing.T, x *search.Index) int {
	t.Helper()
	n, err := x.Count(t.Context())
	require.NoError(t, err)
	return n
}

func TestCount(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, shards := range []int{1, 3} {
			x := newIndex(t, b, search.WithShards(shards))
			assert.Equal(t, 0, count(t, x), "shards=%d: empty index", shards)
			load(t, x)
			assert.Equal(t, len(corpus), count(t, x), "shards=%d: after adds", shards)
			_, replaced, err := x.Add(ctx, search.Document{ID: "d1", Text: "other words"}, corpus[2])
			require.NoError(t, err)
			require.Equal(t, 2, replaced)
			assert.Equal(t, len(corpus), count(t, x), "shards=%d: re-indexing counts no new document", shards)
			_, _, err = x.Add(ctx, search.Document{ID: "d6", Text: "six"}, search.Document{ID: "d7", Text: "seven"})
			require.NoError(t, err)
			assert.Equal(t, len(corpus)+2, count(t, x), "shards=%d: after more adds", shards)
			n, err := x.Remove(ctx, "d1", "d2", "none")
			require.NoError(t, err)
			require.Equal(t, 2, n)
			assert.Equal(t, len(corpus), count(t, x), "shards=%d: after removes", shards)
			_, err = x.Remove(ctx, "d3", "d4", "d5", "d6", "d7")
			require.NoError(t, err)
			assert.Equal(t, 0, count(t, x), "shards=%d: all removed", shards)
			b.Flush()
		}
	})
}

func terms(x *search.Index, text string) int { return len(x.Analyzer().Terms(text)) }

func TestGet(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, shards := range []int{1, 3} {
			x := newIndex(t, b, search.WithShards(shards))
			load(t, x)
			for _, d := range corpus {
				got, err := x.Get(ctx, d.ID)
				require.NoError(t, err, "shards=%d %s", shards, d.ID)
				want := &search.Stored{ID: d.ID, Terms: terms(x, d.Text), Fields: map[string]string{}, Scores: map[string]float64{}}
				for k, v := range d.Fields {
					want.Fields[k] = v
				}
				for k, v := range d.Scores {
					want.Scores[k] = v
				}
				assert.Equal(t, want, got, "shards=%d %s", shards, d.ID)
			}
			require.Positive(t, terms(x, corpus[0].Text))

			// Re-indexed: fields replaced, scores kept unless given.
			text := "a fresh text about fresh things"
			_, replaced, err := x.Add(ctx, search.Document{ID: "d1", Text: text,
				Fields: map[string]string{"title": "Fresh"}, Scores: map[string]float64{"votes": 7.5}})
			require.NoError(t, err)
			require.Equal(t, 1, replaced)
			got, err := x.Get(ctx, "d1")
			require.NoError(t, err)
			assert.Equal(t, &search.Stored{ID: "d1", Terms: terms(x, text), Fields: map[string]string{"title": "Fresh"},
				Scores: map[string]float64{"update": 30, "votes": 7.5}}, got, "shards=%d", shards)

			// Numeric fields come back as stored: formatted from their float64.
			_, _, err = x.Add(ctx, search.Document{ID: "num", Text: "", Fields: map[string]string{"updated": " 1000000 ", "title": " x "},
				Scores: map[string]float64{"update": -0.25}})
			require.NoError(t, err)
			got, err = x.Get(ctx, "num")
			require.NoError(t, err)
			assert.Equal(t, &search.Stored{ID: "num", Terms: 0, Fields: map[string]string{"updated": "1e+06", "title": " x "},
				Scores: map[string]float64{"update": -0.25}}, got, "shards=%d", shards)

			// Another Index on the same keys that declares less sees less.
			y, err := search.New(b.Client, "books", search.WithPrefix(b.Prefix), search.WithShards(shards),
				search.WithFields(search.NumericField("updated")), search.WithScores("votes"))
			require.NoError(t, err)
			got, err = y.Get(ctx, "d2")
			require.NoError(t, err)
			assert.Equal(t, &search.Stored{ID: "d2", Terms: terms(x, corpus[1].Text), Fields: map[string]string{"updated": "10"},
				Scores: map[string]float64{"votes": 50}}, got, "shards=%d", shards)

			// Removed, or never indexed.
			_, err = x.Remove(ctx, "d1")
			require.NoError(t, err)
			for _, id := range []string{"d1", "unknown", "D2"} {
				got, err = x.Get(ctx, id)
				assert.ErrorIs(t, err, search.ErrNotFound, "shards=%d %s", shards, id)
				assert.Nil(t, got)
			}
			b.Flush()
		}
	})
}

func TestGet_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		x := newIndex(t, b)
		for _, id := range []string{"", strings.Repeat("x", search.MaxIDBytes+1), "\xff"} {
			rt, cmds := b.Count.Delta(func() {
				got, err := x.Get(t.Context(), id)
				assert.ErrorIs(t, err, search.ErrInvalid, "%q", id)
				assert.Nil(t, got)
			})
			assert.Zero(t, rt+cmds, "nothing sent for %q", id)
		}
		got, err := x.Get(t.Context(), strings.Repeat("x", search.MaxIDBytes))
		assert.ErrorIs(t, err, search.ErrNotFound, "the longest ID is valid")
		assert.Nil(t, got)
	})
}

func TestGet_Count_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, shards := range []int{1, 3} {
			x := newIndex(t, b, search.WithShards(shards))
			load(t, x)
			_, err := x.Get(ctx, "d1") // loads the script
			require.NoError(t, err)
			for _, id := range []string{"d1", "d5", "none"} {
				rt, cmds := b.Count.Delta(func() { _, _ = x.Get(ctx, id) })
				assert.Equal(t, int64(1), rt, "shards=%d get %s: one round trip", shards, id)
				assert.Equal(t, int64(1), cmds, "shards=%d get %s: one script", shards, id)
			}
			rt, cmds := b.Count.Delta(func() { assert.Equal(t, len(corpus), count(t, x)) })
			if shards == 1 || b.Kind != redistest.Cluster {
				assert.Equal(t, int64(1), rt, "shards=%d count: one round trip", shards)
			} else {
				assert.LessOrEqual(t, rt, int64(min(shards, 3)), "shards=%d count: one round trip per node", shards)
			}
			assert.Equal(t, int64(shards), cmds, "shards=%d count: one HGET per shard", shards)
			b.Flush()
		}
	})
}

func TestGet_Count_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b)
		s := x.Shard(0)
		setup := func() { load(t, x) } // d1 is document number 1
		b.CheckWrongTypes(t, setup, func() error {
			_, err := x.Get(ctx, "d1")
			return err
		},
			redistest.KeyRole{Key: s.IDsKey(), Type: "hash", Role: "search document IDs"},
			redistest.KeyRole{Key: s.DocKey(1), Type: "hash", Role: "search document"},
			redistest.KeyRole{Key: s.ScoreKey("update"), Type: "zset", Role: "search score"},
			redistest.KeyRole{Key: s.ScoreKey("votes"), Type: "zset", Role: "search score"},
		)
		b.CheckWrongTypes(t, setup, func() error {
			_, err := x.Count(ctx)
			return err
		}, redistest.KeyRole{Key: statsKey(s), Type: "hash", Role: "search index stats"})

		y := newIndex(t, b, search.WithShards(3))
		var stats []redistest.KeyRole
		for i := range 3 {
			stats = append(stats, redistest.KeyRole{Key: statsKey(y.Shard(i)), Type: "hash", Role: "search index stats"})
		}
		b.CheckWrongTypes(t, func() { load(t, y) }, func() error {
			_, err := y.Count(ctx)
			return err
		}, stats...)
	})
}

func TestGet_Count_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		x := newIndex(t, b)
		s := x.Shard(0)
		corrupt := func(what string, key string, f func(), call func() error) {
			t.Helper()
			b.Flush()
			load(t, x)
			f()
			before := b.Snapshot()
			err := call()
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, what) {
				assert.ErrorIs(t, err, ria.ErrCorrupt, what)
				assert.Equal(t, key, kerr.Key, what)
			}
			assert.Equal(t, before, b.Snapshot(), "%s: nothing changed", what)
		}
		get := func() error { _, err := x.Get(ctx, "d1"); return err }
		hset := func(key string, kv ...any) func() {
			return func() { require.NoError(t, b.Client.HSet(ctx, key, kv...).Err()) }
		}
		corrupt("document number", s.IDsKey(), hset(s.IDsKey(), "d1", "x1"), get)
		corrupt("document ID", s.DocKey(1), hset(s.DocKey(1), "#id", "d9"), get)
		corrupt("document length", s.DocKey(1), hset(s.DocKey(1), "#n", "many"), get)
		corrupt("document hash gone", s.DocKey(1), func() { require.NoError(t, b.Client.Del(ctx, s.DocKey(1)).Err()) }, get)
		cnt := func() error { _, err := x.Count(ctx); return err }
		corrupt("count", statsKey(s), hset(statsKey(s), "docs", "five"), cnt)
		corrupt("negative count", statsKey(s), hset(statsKey(s), "docs", "-1"), cnt)
		b.Flush()
	})
}

func ExampleIndex_Get() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	ctx := context.Background()

	x, err := search.New(rdb, "posts",
		search.WithFields(search.NumericField("updated"), search.TextField("title")),
		search.WithScores("votes"))
	if err != nil {
		panic(err)
	}
	_, _, err = x.Add(ctx,
		search.Document{ID: "p1", Text: "Redis in Action: searching with sets",
			Fields: map[string]string{"updated": "1700000000", "title": "Redis"}, Scores: map[string]float64{"votes": 10}},
		search.Document{ID: "p2", Text: "Connecting to a Redis cluster"})
	if err != nil {
		panic(err)
	}
	n, _ := x.Count(ctx)
	fmt.Println("documents:", n)
	d, _ := x.Get(ctx, "p1")
	fmt.Println(d.ID, d.Terms, d.Fields, d.Scores)
	_, err = x.Get(ctx, "p3")
	fmt.Println(err)
	// Output:
	// documents: 2
	// p1 4 map[title:Redis updated:1.7e+09] map[votes:10]
	// search: get "p3": search: document not indexed
}
