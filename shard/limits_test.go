package shard_test

import (
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// Shards sized from the server's limits stay in the compact encoding
// (listpack for hashes, intset for sets); shards past the limit fall back
// to a hashtable. OBJECT ENCODING is checked on the real servers (miniredis
// has no OBJECT).
func TestLimits_compactEncoding(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		if !b.Real() {
			return // no OBJECT ENCODING on miniredis: the real backends check it
		}
		ctx := t.Context()
		fill := func(h *shard.Hash, n int) {
			vals := map[string]string{}
			for i := range n {
				vals[strconv.Itoa(i)] = "v" + strconv.Itoa(i)
			}
			require.NoError(t, h.SetMany(ctx, vals))
		}
		h := must(shard.NewHash(ctx, b.Client, "fit", 100_000, shard.WithPrefix(b.Prefix)))
		require.Equal(t, int64(512), h.ShardSize(), "Redis 7.0's hash-max-listpack-entries")
		fill(h, 512)
		assert.Equal(t, "listpack", encoding(t, b.Client, h.ShardKey("0")), "512 fields: a full shard stays compact")

		over := must(shard.NewHash(ctx, b.Client, "over", 100_000, shard.WithShardSize(1000), shard.WithPrefix(b.Prefix)))
		fill(over, 1000)
		assert.Equal(t, "hashtable", encoding(t, b.Client, over.ShardKey("0")), "1,000 fields: past the limit")

		s := must(shard.NewSet(ctx, b.Client, "fit", 10_000, shard.WithPrefix(b.Prefix)))
		members := make([]int64, 10_000)
		for i := range members {
			members[i] = visitorID(int64(i))
		}
		require.NoError(t, s.Add(ctx, members...))
		for i := range int64(5) {
			k := s.ShardKey(members[i])
			assert.Equal(t, "intset", encoding(t, b.Client, k), k)
			n := b.Client.SCard(ctx, k).Val()
			assert.LessOrEqual(t, n, int64(512))
		}
		big := must(shard.NewSet(ctx, b.Client, "big", 2000, shard.WithShardSize(2000), shard.WithPrefix(b.Prefix)))
		require.NoError(t, big.Add(ctx, members[:2000]...))
		assert.Equal(t, "hashtable", encoding(t, b.Client, big.ShardKey(members[0])), "about 1,000 members: past set-max-intset-entries")
	})
}

// A server configured with other limits: new structures are sized from
// them (CONFIG GET), and stay compact.
func TestLimits_fromServer(t *testing.T) {
	srv := redistest.StartServer(t, "--hash-max-listpack-entries", "1000", "--set-max-intset-entries", "300")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	l, err := shard.ReadLimits(ctx, rdb)
	require.NoError(t, err)
	assert.True(t, l.FromServer)
	assert.Equal(t, int64(1000), l.HashEntries)
	assert.Equal(t, int64(300), l.SetIntEntries)

	h := must(shard.NewHash(ctx, rdb, "h", 100_000))
	assert.Equal(t, int64(1000), h.ShardSize())
	vals := map[string]string{}
	for i := range 1000 {
		vals[strconv.Itoa(i)] = "x"
	}
	require.NoError(t, h.SetMany(ctx, vals))
	assert.Equal(t, "listpack", encoding(t, rdb, h.ShardKey("0")))
	s := must(shard.NewSet(ctx, rdb, "s", 3000))
	assert.Equal(t, int64(20), s.Shards(), "2·3000/300")
}
