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

// The Instagram-style figure of the package doc, measured with INFO
// used_memory on a real server of the test's own, one run for all three
// layouts of the same 1,000,000 values (numeric ids to numeric values, as
// Instagram's media id -> user id): one STRING key per value; a sharded
// hash sized from the server's limits (shards of 512, listpack); and a
// sharded hash with shards of 1,000, past hash-max-listpack-entries 512,
// whose shards fall back to hashtables and save little.
func TestHash_memory(t *testing.T) {
	t.Parallel() // a server of its own: runs beside the other tests
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	const n = 1_000_000
	value := func(i int) string { return strconv.Itoa(1_000_000_000 + i*7) }

	before := usedMemory(t, rdb)
	const chunk = 10_000
	for lo := 0; lo < n; lo += chunk {
		args := make([]any, 0, 2*chunk)
		for i := lo; i < lo+chunk; i++ {
			args = append(args, "media:"+strconv.Itoa(i), value(i))
		}
		require.NoError(t, rdb.MSet(ctx, args...).Err())
	}
	strings := usedMemory(t, rdb) - before
	require.NoError(t, rdb.FlushAll(ctx).Err())

	fill := func(h *shard.Hash) int64 {
		before := usedMemory(t, rdb)
		for lo := 0; lo < n; lo += chunk {
			vals := make(map[string]string, chunk)
			for i := lo; i < lo+chunk; i++ {
				vals[strconv.Itoa(i)] = value(i)
			}
			require.NoError(t, h.SetMany(ctx, vals))
		}
		used := usedMemory(t, rdb) - before
		got, ok, err := h.Get(ctx, "999999")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, value(999_999), got)
		return used
	}
	compact := fill(must(shard.NewHash(ctx, rdb, "media", n)))
	assert.Equal(t, "listpack", encoding(t, rdb, "shard:{media:1953}:hash"))
	require.NoError(t, rdb.FlushAll(ctx).Err())
	over := fill(must(shard.NewHash(ctx, rdb, "media", n, shard.WithShardSize(1000))))
	assert.Equal(t, "hashtable", encoding(t, rdb, "shard:{media:999}:hash"))

	per := func(b int64) float64 { return float64(b) / n }
	t.Logf("1,000,000 values: STRING keys %d bytes (%.1f B/value); sharded hash, shards of 512 (listpack) %d bytes (%.1f B/value, %.1fx less); shards of 1,000 (hashtable) %d bytes (%.1f B/value, %.1fx less)",
		strings, per(strings), compact, per(compact), float64(strings)/float64(compact), over, per(over), float64(strings)/float64(over))
	// Measured 7.1x (10.2 B/value: a listpack entry is a 3-byte integer
	// field, the id's offset in its shard, and a 6-byte integer value, and a
	// full shard's 4.6 KB listpack sits in a 5 KB allocation). The issue's
	// target is 7x.
	assert.GreaterOrEqual(t, float64(strings)/float64(compact), 7.0, "at least 7x less memory while shards stay compact")
	assert.Less(t, float64(strings)/float64(over), 2.0, "shards past the limit save little")
}
