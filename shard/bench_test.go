package shard_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// benchLocations fills a server of its own with users' locations (2 bytes
// each, ids per string 2^20) written as whole strings, for speed, and
// returns the Locations.
func benchLocations(b *testing.B, users int64) (*shard.Locations, *redis.Client) {
	srv := redistest.StartServer(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	b.Cleanup(func() { _ = rdb.Close() })
	ctx := b.Context()
	locs := must(shard.NewLocations(ctx, rdb, "loc", nil))
	codes := shard.BookCodes()
	usa := must(codes.Encode("USA", "CA"))
	fra := must(codes.Encode("FRA", ""))
	const per = 1 << 20
	for lo := int64(0); lo < users; lo += per {
		n := min(per, users-lo)
		var buf bytes.Buffer
		for i := range n {
			if i%3 == 0 {
				buf.Write(fra)
			} else {
				buf.Write(usa)
			}
		}
		require.NoError(b, rdb.Set(ctx, "shard:{loc:"+strconv.FormatInt(lo/per, 10)+"}:records", buf.Bytes(), 0).Err())
	}
	require.NoError(b, rdb.Set(ctx, "shard:{loc}:records:max", (users-1)/per, 0).Err())
	return locs, rdb
}

// Aggregating by scanning packed records (blocks of 1 MiB, 4 GETRANGEs in
// flight) against reading the same records one GETRANGE per id
// (pipelined by 10,000): MB/s of records.
func BenchmarkLocations(b *testing.B) {
	const users = 32 << 20 // 64 MB of records
	locs, _ := benchLocations(b, users)
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(2 * users)
		b.ReportAllocs()
		for b.Loop() {
			a, err := locs.Aggregate(b.Context())
			require.NoError(b, err)
			require.Equal(b, int64(users), a.Countries["USA"]+a.Countries["FRA"])
		}
	})
	b.Run("per-id", func(b *testing.B) {
		const n = 200_000
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = int64(i) * (users / n)
		}
		b.SetBytes(2 * n)
		b.ReportAllocs()
		for b.Loop() {
			a, err := locs.AggregateUsers(b.Context(), ids...)
			require.NoError(b, err)
			require.Equal(b, int64(n), a.Countries["USA"]+a.Countries["FRA"])
		}
	})
}
