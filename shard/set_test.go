package shard_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// The book's shard_sadd test: 50 members over 2·50/50 = 2 shards.
func TestSet_book(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := must(shard.NewSet(ctx, b.Client, "testx", 50, shard.WithShardSize(50), shard.WithPrefix(b.Prefix)))
		assert.Equal(t, int64(2), s.Shards())
		members := make([]int64, 50)
		for i := range members {
			members[i] = int64(i)
		}
		for _, m := range members {
			require.NoError(t, s.Add(ctx, m))
		}
		c0 := b.Client.SCard(ctx, b.Prefix+"{testx:0}:set").Val()
		c1 := b.Client.SCard(ctx, b.Prefix+"{testx:1}:set").Val()
		assert.Equal(t, int64(50), c0+c1, "scard(testx:0) + scard(testx:1)")
		assert.Positive(t, c0)
		assert.Positive(t, c1)
		var n int64
		var err error
		rt, _ := b.Count.Delta(func() { n, err = s.Len(ctx) })
		require.NoError(t, err)
		assert.Equal(t, int64(50), n)
		assert.Equal(t, nodes(t, b, s.ShardKey(0), b.Prefix+"{testx:0}:set", b.Prefix+"{testx:1}:set"), rt)

		ok, err := s.Contains(ctx, 7)
		require.NoError(t, err)
		assert.True(t, ok)
		require.NoError(t, s.Remove(ctx, 7, 8, 1000))
		ok, err = s.Contains(ctx, 7)
		require.NoError(t, err)
		assert.False(t, ok)
		rt, _ = b.Count.Delta(func() { require.NoError(t, s.Add(ctx, members...)) })
		assert.Equal(t, nodes(t, b, b.Prefix+"{testx:0}:set", b.Prefix+"{testx:1}:set"), rt, "a batch: one round trip per server")
		if b.Real() {
			assert.Equal(t, "intset", encoding(t, b.Client, b.Prefix+"{testx:0}:set"), "integers: the compact encoding")
		}
	})
}

// sessions returns the IDs of n random UUIDs drawn from a generator seeded
// with n: the same on every run, so that a HyperLogLog estimate is too (its
// error over random sets is ~1% at these counts, and a 2% bound on fresh
// random IDs failed about once in a few hundred runs).
func sessions(n int) []int64 {
	var seed [32]byte
	seed[0] = byte(n)
	seed[1] = byte(n >> 8)
	r := rand.NewChaCha8(seed)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = must(shard.SessionID(must(uuid.NewRandomFromReader(r)).String()))
	}
	return ids
}

// The book's unique-visitor test, by both methods: 179 visits count 179;
// after a day of 1,000 visitors, 183 visits count 183 (in 8 shards: the
// day is sized for 2^ceil(log2(1.5·1000)) = 2048 visitors).
func TestVisitors_book(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		for _, m := range []shard.Method{shard.Sets, shard.HyperLogLog} {
			t.Run(m.String(), func(t *testing.T) {
				ctx := t.Context()
				v := must(shard.NewVisitors(ctx, b.Client, "unique-"+m.String(), m, shard.WithDailyExpected(10_000), shard.WithPrefix(b.Prefix)))
				day := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
				for _, id := range sessions(179) {
					require.NoError(t, v.Visit(ctx, day, id))
				}
				n, err := v.Count(ctx, day)
				require.NoError(t, err)
				countIs(t, m, 179, n)

				next := day.AddDate(0, 0, 10)
				require.NoError(t, v.Visit(ctx, next.AddDate(0, 0, -1), sessions(1000)...))
				for _, id := range sessions(183) {
					require.NoError(t, v.Visit(ctx, next, id))
				}
				n, err = v.Count(ctx, next)
				require.NoError(t, err)
				countIs(t, m, 183, n)
				if m == shard.Sets {
					e := b.Client.Get(ctx, b.Prefix+"{unique-sets:2024-05-11}:expected").Val()
					assert.Equal(t, "2048", e, "sized from the day before")
					e = b.Client.Get(ctx, b.Prefix+"{unique-sets:2024-05-01}:expected").Val()
					assert.Equal(t, "16384", e, "2^ceil(log2(1.5·10,000)) without a day before")
					ks := b.Keys(b.Prefix + "{unique-sets:2024-05-11:*}:set")
					assert.Len(t, ks, 8, "2·2048/512 shards")
					// Visits are idempotent; a visit of one id is one round trip.
					rt, _ := b.Count.Delta(func() { require.NoError(t, v.Visit(ctx, next, 42)) })
					assert.Equal(t, int64(1), rt)
					require.NoError(t, v.Visit(ctx, next, 42))
					n, err = v.Count(ctx, next)
					require.NoError(t, err)
					assert.Equal(t, int64(184), n)
				}
			})
		}
	})
}

func countIs(t *testing.T, m shard.Method, want, got int64) {
	t.Helper()
	if m == shard.Sets {
		assert.Equal(t, want, got)
		return
	}
	assert.InDelta(t, want, got, 0.02*float64(want), "HyperLogLog: within 2%%")
	t.Logf("hyperloglog: %d visitors counted %d", want, got)
}

func TestSessionID(t *testing.T) {
	id, err := shard.SessionID("00000000-0000-0010-0000-000000000000")
	require.NoError(t, err)
	assert.Equal(t, int64(1), id, "the first 15 hex digits")
	id, err = shard.SessionID("ffffffff-ffff-ffff-ffff-ffffffffffff")
	require.NoError(t, err)
	assert.Equal(t, int64(1)<<60-1, id)
	for _, bad := range []string{"", "1234", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz"} {
		_, err := shard.SessionID(bad)
		assert.ErrorContains(t, err, "want a UUID", fmt.Sprintf("%q", bad))
	}
}

// members returns the members Members visits, failing on one visited twice.
func members(t *testing.T, s *shard.Set) map[int64]bool {
	t.Helper()
	got := map[int64]bool{}
	require.NoError(t, s.Members(t.Context(), func(m int64) error {
		assert.False(t, got[m], "member %d visited twice", m)
		got[m] = true
		return nil
	}))
	return got
}

func memberSet(ms ...int64) map[int64]bool {
	out := map[int64]bool{}
	for _, m := range ms {
		out[m] = true
	}
	return out
}

// Members visits every member of every shard once: compact shards whole in
// one pipeline (one round trip per server), shards over the compact
// encoding (and over the shard size) in several SSCANs.
func TestSet_Members(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := shard.WithPrefix(b.Prefix)
		s := must(shard.NewSet(ctx, b.Client, "testx", 50, shard.WithShardSize(50), p))
		assert.Empty(t, members(t, s), "an empty set")
		all := make([]int64, 50)
		for i := range all {
			all[i] = int64(i) * 1_000_003
		}
		all[49] = -7
		require.NoError(t, s.Add(ctx, all...))
		var got map[int64]bool
		rt, _ := b.Count.Delta(func() { got = members(t, s) })
		assert.Equal(t, memberSet(all...), got)
		assert.Equal(t, nodes(t, b, b.Prefix+"{testx:0}:set", b.Prefix+"{testx:1}:set"), rt, "one pipeline: one round trip per server")

		// 65,536/size shards per pipeline: 4 shards of 65,536, 4 pipelines
		// of one shard (one round trip each).
		big := must(shard.NewSet(ctx, b.Client, "big", 2*65_536, shard.WithShardSize(65_536), p))
		require.Equal(t, int64(4), big.Shards())
		require.NoError(t, big.Add(ctx, all...))
		rt, _ = b.Count.Delta(func() { got = members(t, big) })
		assert.Equal(t, memberSet(all...), got)
		assert.Equal(t, int64(4), rt, "4 pipelines of one shard")

		// 2,400 members in 4 shards of size 50: hashtable shards on a
		// real server, read in many SSCANs of COUNT 50.
		over := must(shard.NewSet(ctx, b.Client, "over", 100, shard.WithShardSize(50), p))
		many := make([]int64, 2400)
		for i := range many {
			many[i] = int64(i)*7919 + 1
		}
		require.NoError(t, over.Add(ctx, many...))
		if b.Real() {
			assert.Equal(t, "hashtable", encoding(t, b.Client, over.ShardKey(many[0])))
		}
		assert.Equal(t, memberSet(many...), members(t, over))
	})
}

// Members under concurrent writes (made from fn, between its round trips):
// every member there from start to end is visited, once; one removed may
// or may not be, one added may or may not be, nothing else is.
func TestSet_Members_concurrent(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := must(shard.NewSet(ctx, b.Client, "c", 100, shard.WithShardSize(20), shard.WithPrefix(b.Prefix)))
		var kept, removed, added []int64
		for i := range int64(300) {
			if i%3 == 0 {
				removed = append(removed, i)
			} else {
				kept = append(kept, i)
			}
			added = append(added, 1000+i)
		}
		require.NoError(t, s.Add(ctx, kept...))
		require.NoError(t, s.Add(ctx, removed...))
		got := map[int64]bool{}
		first := true
		require.NoError(t, s.Members(ctx, func(m int64) error {
			if first {
				first = false
				if err := s.Remove(ctx, removed...); err != nil {
					return err
				}
				if err := s.Add(ctx, added...); err != nil {
					return err
				}
			}
			assert.False(t, got[m], "member %d visited twice", m)
			got[m] = true
			return nil
		}))
		for _, m := range kept {
			assert.True(t, got[m], "member %d, there throughout, not visited", m)
		}
		maybe := memberSet(append(append(append([]int64(nil), kept...), removed...), added...)...)
		for m := range got {
			assert.True(t, maybe[m], "member %d was never in the set", m)
		}
	})
}

// fn's error stops Members and comes back as it is; a nil fn is an error.
func TestSet_Members_stop(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := must(shard.NewSet(ctx, b.Client, "s", 100, shard.WithShardSize(10), shard.WithPrefix(b.Prefix)))
		require.NoError(t, s.Add(ctx, 1, 2, 3, 4, 5, 6, 7, 8, 9))
		stop := errors.New("enough")
		calls := 0
		err := s.Members(ctx, func(int64) error { calls++; return stop })
		assert.Same(t, stop, err)
		assert.Equal(t, 1, calls)
		assert.ErrorContains(t, s.Members(ctx, nil), "nil func")
	})
}
