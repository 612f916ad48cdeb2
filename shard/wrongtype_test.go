package shard_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// Every New refuses a parameters key of another type, and a parameter
// that is not an integer, writing nothing.
func TestWrongTypes_meta(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := shard.WithPrefix(b.Prefix)
		for _, tc := range []struct {
			kind string
			call func() error
		}{
			{"hash", func() error { _, err := shard.NewHash(ctx, b.Client, "n", 100, p); return err }},
			{"set", func() error { _, err := shard.NewSet(ctx, b.Client, "n", 100, p); return err }},
			{"visitors", func() error { _, err := shard.NewVisitors(ctx, b.Client, "n", shard.Sets, p); return err }},
			{"list", func() error { _, err := shard.NewList(ctx, b.Client, "n", p); return err }},
			{"records", func() error { _, err := shard.NewRecords(ctx, b.Client, "n", 2, p); return err }},
		} {
			key := b.Prefix + "{n}:" + tc.kind + ":meta"
			b.CheckWrongTypes(t, func() {}, tc.call, redistest.KeyRole{Key: key, Type: "hash", Role: "shard meta"})

			require.NoError(t, b.Client.HSet(ctx, key, "size", "big", "total", "big", "method", "big", "width", "big", "per", "big").Err())
			before := b.Snapshot()
			err := tc.call()
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, tc.kind) {
				assert.ErrorIs(t, err, ria.ErrCorrupt)
				assert.Equal(t, key, kerr.Key)
			}
			assert.Equal(t, before, b.Snapshot())
			b.Flush()
		}
	})
}

// Hash and Set operations (plain commands) name a shard of the wrong type
// and change nothing.
func TestWrongTypes_hashAndSet(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var h *shard.Hash
		var s *shard.Set
		setup := func() {
			h = must(shard.NewHash(ctx, b.Client, "h", 1000, shard.WithShardSize(10), shard.WithPrefix(b.Prefix)))
			require.NoError(t, h.Set(ctx, "1", "one"))
			s = must(shard.NewSet(ctx, b.Client, "s", 1000, shard.WithShardSize(10), shard.WithPrefix(b.Prefix)))
			require.NoError(t, s.Add(ctx, 1))
		}
		hk := redistest.KeyRole{Key: b.Prefix + "{h:0}:hash", Type: "hash", Role: "shard hash"}
		for name, call := range map[string]func() error{
			"Set":    func() error { return h.Set(ctx, "2", "two") },
			"Get":    func() error { _, _, err := h.Get(ctx, "2"); return err },
			"Exists": func() error { _, err := h.Exists(ctx, "2"); return err },
			"Delete": func() error { return h.Delete(ctx, "1", "2") },
			"GetMany": func() error {
				_, err := h.GetMany(ctx, "1", "2")
				return err
			},
			"SetMany": func() error { return h.SetMany(ctx, map[string]string{"3": "x", "4": "y"}) },
			"Len":     func() error { _, err := h.Len(ctx); return err },
		} {
			t.Run("hash "+name, func(t *testing.T) { b.CheckWrongTypes(t, setup, call, hk) })
		}
		setup()
		sk := redistest.KeyRole{Key: s.ShardKey(1), Type: "set", Role: "shard set"}
		for name, call := range map[string]func() error{
			"Add":      func() error { return s.Add(ctx, 1) },
			"Remove":   func() error { return s.Remove(ctx, 1) },
			"Contains": func() error { _, err := s.Contains(ctx, 1); return err },
			"Len":      func() error { _, err := s.Len(ctx); return err },
			"Members":  func() error { return s.Members(ctx, func(int64) error { return nil }) },
		} {
			t.Run("set "+name, func(t *testing.T) { b.CheckWrongTypes(t, setup, call, sk) })
		}
	})
}

// Members names a shard holding a member that is not an integer.
func TestWrongTypes_setMembersCorrupt(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := must(shard.NewSet(ctx, b.Client, "s", 1000, shard.WithShardSize(10), shard.WithPrefix(b.Prefix)))
		require.NoError(t, s.Add(ctx, 1))
		require.NoError(t, b.Client.SAdd(ctx, s.ShardKey(1), "one").Err())
		err := s.Members(ctx, func(int64) error { return nil })
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.ErrorIs(t, err, ria.ErrCorrupt)
		assert.Equal(t, s.ShardKey(1), kerr.Key)
		assert.Equal(t, "shard set", kerr.Role)
	})
}

// A batch over several shards is not atomic: a shard of the wrong type
// fails (named in the error) and the others are written.
func TestWrongTypes_batchPartial(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		h := must(shard.NewHash(ctx, b.Client, "h", 1000, shard.WithShardSize(10), shard.WithPrefix(b.Prefix)))
		require.NoError(t, b.Client.Set(ctx, h.ShardKey("5"), "x", 0).Err())
		err := h.SetMany(ctx, map[string]string{"5": "a", "15": "b", "25": "c"})
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.Equal(t, h.ShardKey("5"), kerr.Key)
		assert.NotErrorIs(t, err, ria.ErrOutcomeUnknown, "a refusal, not a doubt")
		got, err := h.GetMany(ctx, "15", "25")
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"15": "b", "25": "c"}, got)
	})
}

// Visitors: each key a visit or a count relies on.
func TestWrongTypes_visitors(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		day := time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)
		var sets, hll *shard.Visitors
		setup := func() {
			sets = must(shard.NewVisitors(ctx, b.Client, "v", shard.Sets, shard.WithDailyExpected(100), shard.WithPrefix(b.Prefix)))
			require.NoError(t, sets.Visit(ctx, day, 1))
		}
		setupHLL := func() {
			hll = must(shard.NewVisitors(ctx, b.Client, "w", shard.HyperLogLog, shard.WithPrefix(b.Prefix)))
			if b.Real() { // miniredis's TYPE says "hll", which Snapshot does not read; the check overwrites the key anyway
				require.NoError(t, hll.Visit(ctx, day, 1))
			}
		}
		// 2·256/512 rounds up to one shard: every id is in shard 0.
		shardKey := redistest.KeyRole{Key: b.Prefix + "{v:2024-05-02:0}:set", Type: "set", Role: "shard set"}
		b.CheckWrongTypes(t, setup, func() error { return sets.Visit(ctx, day, 2) }, shardKey)
		b.CheckWrongTypes(t, setup, func() error { _, err := sets.Count(ctx, day); return err }, shardKey)
		// A new day: its size key, and the day before's (whose count sizes it).
		next := day.AddDate(0, 0, 1)
		b.CheckWrongTypes(t, setup, func() error { return sets.Visit(ctx, next, 2) },
			redistest.KeyRole{Key: b.Prefix + "{v:2024-05-03}:expected", Type: "string", Role: "shard visitors expected"})
		b.CheckWrongTypes(t, setup, func() error {
			v := must(shard.NewVisitors(ctx, b.Client, "v", shard.Sets, shard.WithPrefix(b.Prefix))) // no day in memory
			return v.Visit(ctx, next, 2)
		}, redistest.KeyRole{Key: b.Prefix + "{v:2024-05-02}:expected", Type: "string", Role: "shard visitors expected"})
		hk := redistest.KeyRole{Key: b.Prefix + "{w:2024-05-02}:hll", Type: "string", Role: "shard visitors hyperloglog"}
		b.CheckWrongTypes(t, setupHLL, func() error { return hll.Visit(ctx, day, 2) }, hk)
		b.CheckWrongTypes(t, setupHLL, func() error { _, err := hll.Count(ctx, day); return err }, hk)

		// A string that is no HyperLogLog: corrupt.
		setupHLL()
		require.NoError(t, b.Client.Set(ctx, hk.Key, "not an hll", 0).Err())
		before := b.Snapshot()
		assert.ErrorIs(t, hll.Visit(ctx, day, 3), ria.ErrCorrupt)
		assert.Equal(t, before, b.Snapshot())
		b.Flush()
	})
}

// Records: the max key (raise script) and the record strings.
func TestWrongTypes_records(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var r *shard.Records
		setup := func() {
			r = must(shard.NewRecords(ctx, b.Client, "r", 2, shard.WithIDsPerShard(10), shard.WithPrefix(b.Prefix)))
			require.NoError(t, r.Put(ctx, 1, []byte("ab")))
		}
		maxKey := redistest.KeyRole{Key: b.Prefix + "{r}:records:max", Type: "string", Role: "shard records max"}
		// A Put into a string this Records has not written yet raises the max first.
		b.CheckWrongTypes(t, setup, func() error { return r.Put(ctx, 25, []byte("cd")) }, maxKey)
		b.CheckWrongTypes(t, setup, func() error { return r.Scan(ctx, func(int64, []byte) error { return nil }) }, maxKey)
		strKey := redistest.KeyRole{Key: b.Prefix + "{r:0}:records", Type: "string", Role: "shard records"}
		for name, call := range map[string]func() error{
			"Put":     func() error { return r.Put(ctx, 2, []byte("cd")) },
			"Get":     func() error { _, err := r.Get(ctx, 2); return err },
			"GetMany": func() error { _, err := r.GetMany(ctx, 2, 3); return err },
			"Scan":    func() error { return r.Scan(ctx, func(int64, []byte) error { return nil }) },
		} {
			t.Run(name, func(t *testing.T) { b.CheckWrongTypes(t, setup, call, strKey) })
		}
		// A max that is not an integer: corrupt.
		setup()
		require.NoError(t, b.Client.Set(ctx, maxKey.Key, "many", 0).Err())
		assert.ErrorIs(t, r.Scan(ctx, func(int64, []byte) error { return nil }), ria.ErrCorrupt)
		r2 := must(shard.NewRecords(ctx, b.Client, "r", 2, shard.WithPrefix(b.Prefix)))
		before := b.Snapshot()
		assert.ErrorIs(t, r2.Put(ctx, 1, []byte("zz")), ria.ErrCorrupt)
		assert.Equal(t, before, b.Snapshot())
		b.Flush()
	})
}

// List scripts check every key they rely on, the shards they reach and
// the wake lists of registered pops included, before their first write.
func TestWrongTypes_list(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var l *shard.List
		key := func(part string) string { return b.Prefix + "{l}:" + part }
		setup := func() {
			l = must(shard.NewList(ctx, b.Client, "l", shard.WithShardSize(2), shard.WithPrefix(b.Prefix)))
			_, err := l.PushRight(ctx, "a", "b", "c") // shards 0 (a b) and 1 (c)
			require.NoError(t, err)
			_, err = l.PushLeft(ctx, "z") // shard -1
			require.NoError(t, err)
			// A blocked pop's registration, as its pop script leaves it.
			require.NoError(t, b.Client.ZAdd(ctx, key("waiters"), redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: "w1"}).Err())
		}
		first := redistest.KeyRole{Key: key("first"), Type: "string", Role: "shard list first"}
		last := redistest.KeyRole{Key: key("last"), Type: "string", Role: "shard list last"}
		waiters := redistest.KeyRole{Key: key("waiters"), Type: "zset", Role: "shard list waiters"}
		shardRole := func(i int) redistest.KeyRole {
			return redistest.KeyRole{Key: key(strconv.Itoa(i)), Type: "list", Role: "shard list shard"}
		}
		wake := redistest.KeyRole{Key: key("wake:w1"), Type: "list", Role: "shard list wake"}
		t.Run("PushRight", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := l.PushRight(ctx, "d", "e", "f"); return err },
				first, last, waiters, shardRole(1), shardRole(2), wake)
		})
		t.Run("PushLeft", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := l.PushLeft(ctx, "y", "x"); return err },
				first, last, waiters, shardRole(-1), shardRole(-2), wake)
		})
		t.Run("PopLeft", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, _, err := l.PopLeft(ctx); return err },
				first, last, waiters, shardRole(-1))
		})
		t.Run("PopRight", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, _, err := l.PopRight(ctx); return err },
				first, last, waiters, shardRole(1))
		})
		t.Run("BlockingPopLeft", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, _, err := l.BlockingPopLeft(ctx, time.Second); return err },
				first, last, waiters, shardRole(-1))
		})
		t.Run("Len", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := l.Len(ctx); return err },
				first, last, shardRole(-1), shardRole(0), shardRole(1))
		})
		// Ends that cross: corrupt, nothing changed (the search for a
		// non-empty shard would not end).
		setup()
		require.NoError(t, b.Client.Set(ctx, first.Key, "5", 0).Err())
		before := b.Snapshot()
		_, _, err := l.PopLeft(ctx)
		var kerr *ria.KeyError
		if assert.ErrorAs(t, err, &kerr) {
			assert.ErrorIs(t, err, ria.ErrCorrupt)
			assert.Equal(t, first.Key, kerr.Key)
		}
		assert.Equal(t, before, b.Snapshot())
		b.Flush()
		// An end that is not an integer: corrupt, nothing changed.
		setup()
		require.NoError(t, b.Client.Set(ctx, first.Key, "left", 0).Err())
		before = b.Snapshot()
		_, err = l.PushLeft(ctx, "q")
		assert.True(t, errors.Is(err, ria.ErrCorrupt), "%v", err)
		assert.Equal(t, before, b.Snapshot())
		b.Flush()
	})
}
