package shard_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// The book's sharded hash test: 50 string keys and 50 numeric keys, each
// read back; get and set cost one round trip, a batch one per server.
func TestHash_book(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		h1 := must(shard.NewHash(ctx, b.Client, "test", 1000, shard.WithShardSize(100), shard.WithPrefix(b.Prefix)))
		h2 := must(shard.NewHash(ctx, b.Client, "test2", 1000, shard.WithShardSize(100), shard.WithPrefix(b.Prefix)))
		require.NoError(t, h1.Set(ctx, "warm", "up")) // EVALSHA-free, but a first connection
		for i := range 50 {
			f := fmt.Sprintf("keyname:%d", i)
			rt, _ := b.Count.Delta(func() { require.NoError(t, h1.Set(ctx, f, strconv.Itoa(i))) })
			assert.Equal(t, int64(1), rt, "set: one round trip")
			var v string
			var ok bool
			var err error
			rt, _ = b.Count.Delta(func() { v, ok, err = h1.Get(ctx, f) })
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, strconv.Itoa(i), v)
			assert.Equal(t, int64(1), rt, "get: one round trip")

			require.NoError(t, h2.Set(ctx, strconv.Itoa(i), strconv.Itoa(i)))
			v, ok, err = h2.Get(ctx, strconv.Itoa(i))
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, strconv.Itoa(i), v)
		}
		// Numeric keys 0..49 all go to shard 0 of size 100; string keys
		// spread over 2·1000/100 = 20 shards.
		assert.Equal(t, b.Prefix+"{test2:0}:hash", h2.ShardKey("49"))
		assert.Equal(t, b.Prefix+"{test2:1}:hash", h2.ShardKey("100"))
		_, ok, err := h1.Get(ctx, "missing")
		require.NoError(t, err)
		assert.False(t, ok)
		ok, err = h1.Exists(ctx, "keyname:3")
		require.NoError(t, err)
		assert.True(t, ok)

		fields := make([]string, 0, 50)
		shardKeys := make([]string, 0, 50)
		want := map[string]string{}
		for i := range 50 {
			f := fmt.Sprintf("keyname:%d", i)
			fields = append(fields, f)
			shardKeys = append(shardKeys, h1.ShardKey(f))
			want[f] = strconv.Itoa(i)
		}
		var got map[string]string
		rt, _ := b.Count.Delta(func() { got, err = h1.GetMany(ctx, append(fields, "missing")...) })
		require.NoError(t, err)
		assert.Equal(t, want, got)
		assert.Equal(t, nodes(t, b, shardKeys...), rt, "a batch: one round trip per server")

		n, err := h1.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(51), n)

		rt, _ = b.Count.Delta(func() { require.NoError(t, h1.Delete(ctx, fields[:10]...)) })
		assert.Equal(t, nodes(t, b, shardKeys[:10]...), rt)
		got, err = h1.GetMany(ctx, fields...)
		require.NoError(t, err)
		assert.Len(t, got, 40)
	})
}

// SetMany writes a batch with one HSET per shard; shards spread over the
// Cluster's nodes.
func TestHash_SetMany(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		h := must(shard.NewHash(ctx, b.Client, "users", 10_000, shard.WithShardSize(100), shard.WithPrefix(b.Prefix)))
		vals := map[string]string{}
		var keys []string
		for i := range 2000 {
			f := strconv.Itoa(i * 7)
			vals[f] = strconv.Itoa(i)
			keys = append(keys, h.ShardKey(f))
		}
		rt, cmds := b.Count.Delta(func() { require.NoError(t, h.SetMany(ctx, vals)) })
		assert.Equal(t, nodes(t, b, keys...), rt)
		assert.Equal(t, int64(140), cmds, "one HSET per shard: ids 0..13993 in shards of 100")
		if b.Kind == redistest.Cluster || b.Kind == redistest.Sharded {
			assert.Equal(t, int64(3), rt, "the shards spread over every server")
		}
		got, err := h.GetMany(ctx, "0", "7", "13993", "1")
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"0": "0", "7": "1", "13993": "1999"}, got)
		n, err := h.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2000), n)
	})
}

// A decimal field is stored as its offset in its shard; fields that look
// alike (leading zeros, numbers past int64, the same offset in another
// shard, hashed names made of an offset's digits) never share a slot.
func TestHash_shardField(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		h := must(shard.NewHash(ctx, b.Client, "f", 1000, shard.WithShardSize(100), shard.WithPrefix(b.Prefix)))
		assert.Equal(t, "55", h.ShardField("1155"))
		assert.Equal(t, "0", h.ShardField("0"))
		assert.Equal(t, "007", h.ShardField("007"), "not canonical: stored as given")
		assert.Equal(t, "x7", h.ShardField("x7"))
		big := "99999999999999999999" // past int64; its shard number (10^18 - 1) is not
		assert.Equal(t, big, h.ShardField(big))
		assert.Equal(t, "99999999999999999999999", h.ShardField("99999999999999999999999"))
		fields := []string{"7", "07", "007", "107", "1007", "x7", "7x", "0", "00", big, "9223372036854775807"}
		vals := map[string]string{}
		for i, f := range fields {
			vals[f] = "v" + strconv.Itoa(i)
		}
		require.NoError(t, h.SetMany(ctx, vals))
		got, err := h.GetMany(ctx, fields...)
		require.NoError(t, err)
		assert.Equal(t, vals, got)
		for f, v := range vals {
			g, ok, err := h.Get(ctx, f)
			require.NoError(t, err)
			assert.True(t, ok, f)
			assert.Equal(t, v, g, f)
			assert.Equal(t, v, b.Client.HGet(ctx, h.ShardKey(f), h.ShardField(f)).Val(), "stored under ShardField(%q)", f)
		}
		require.NoError(t, h.Delete(ctx, "07", "107"))
		ok, err := h.Exists(ctx, "7")
		require.NoError(t, err)
		assert.True(t, ok, "deleting 07 and 107 leaves 7")
		ok, err = h.Exists(ctx, "107")
		require.NoError(t, err)
		assert.False(t, ok)
		n, err := h.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(len(fields)-2), n)
	})
}

// The first NewHash of a name keeps its parameters; another with other
// ones is refused; one without a shard size adopts the stored one.
func TestHash_parameters(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		h := must(shard.NewHash(ctx, b.Client, "p", 1000, shard.WithPrefix(b.Prefix)))
		want := shard.DefaultLimits.HashEntries
		if b.Real() {
			l, err := shard.ReadLimits(ctx, b.Client)
			require.NoError(t, err)
			assert.True(t, l.FromServer)
			want = l.HashEntries
		}
		assert.Equal(t, want, h.ShardSize(), "sized from the server's hash-max-listpack-entries")
		_, err := shard.NewHash(ctx, b.Client, "p", 1000, shard.WithShardSize(want+1), shard.WithPrefix(b.Prefix))
		assert.ErrorIs(t, err, shard.ErrMismatch)
		_, err = shard.NewHash(ctx, b.Client, "p", 2000, shard.WithPrefix(b.Prefix))
		assert.ErrorIs(t, err, shard.ErrMismatch)
		h2, err := shard.NewHash(ctx, b.Client, "p", 1000, shard.WithPrefix(b.Prefix))
		require.NoError(t, err)
		assert.Equal(t, h.ShardSize(), h2.ShardSize())
		rt, _ := b.Count.Delta(func() { _, err = shard.NewHash(ctx, b.Client, "p", 1000, shard.WithPrefix(b.Prefix)) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "NewHash of an existing hash: one round trip")
	})
}

func TestReadLimits(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		l, err := shard.ReadLimits(t.Context(), b.Client)
		require.NoError(t, err)
		if !b.Real() {
			assert.Equal(t, shard.DefaultLimits, l, "miniredis has no CONFIG: the documented defaults")
			return
		}
		assert.True(t, l.FromServer)
		assert.Equal(t, int64(512), l.HashEntries, "Redis 7.0's default")
		assert.Equal(t, int64(64), l.HashValue)
		assert.Equal(t, int64(512), l.SetIntEntries)
	})
}

// A digit field whose shard number does not fit in an int64 has no shard:
// every call on it fails with ErrSize and writes nothing, instead of
// landing in shard 0.
func TestHash_fieldBeyondInt64(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		h := must(shard.NewHash(ctx, b.Client, "h", 1000, shard.WithShardSize(1), shard.WithPrefix(b.Prefix)))
		const big = "9223372036854775808" // 2^63: shard 2^63 with shards of 1
		assert.Empty(t, h.ShardKey(big))
		assert.ErrorIs(t, h.Set(ctx, big, "v"), shard.ErrSize)
		assert.ErrorIs(t, h.SetMany(ctx, map[string]string{"1": "a", big: "v"}), shard.ErrSize)
		_, _, err := h.Get(ctx, big)
		assert.ErrorIs(t, err, shard.ErrSize)
		_, err = h.Exists(ctx, big)
		assert.ErrorIs(t, err, shard.ErrSize)
		_, err = h.GetMany(ctx, "1", big)
		assert.ErrorIs(t, err, shard.ErrSize)
		assert.ErrorIs(t, h.Delete(ctx, big), shard.ErrSize)
		assert.Empty(t, b.Keys(b.Prefix+"{h:*"), "nothing written")

		require.NoError(t, h.Set(ctx, "9223372036854775807", "max"), "the largest int64 has a shard")
		v, ok, err := h.Get(ctx, "9223372036854775807")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "max", v)
	})
}
