package shard_test

import (
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// visitorID returns the i-th of distinct pseudo-random 60-bit visitor ids
// (multiplication by an odd number is a bijection mod 2^60), like the ids
// SessionID derives from UUIDs.
func visitorID(i int64) int64 { return int64(uint64(i) * 0x9E3779B97F4A7C15 & (1<<60 - 1)) }

// visitAll records visitors [lo, hi) on day, 10,000 ids per call.
func visitAll(t *testing.T, v *shard.Visitors, day time.Time, lo, hi int64) {
	t.Helper()
	ids := make([]int64, 0, 10_000)
	for i := lo; i < hi; i++ {
		ids = append(ids, visitorID(i))
		if len(ids) == cap(ids) || i == hi-1 {
			require.NoError(t, v.Visit(t.Context(), day, ids...))
			ids = ids[:0]
		}
	}
}

// The figures of the package doc, on a real server of the test's own (so
// that INFO used_memory sees only this test's data): 1,000,000 unique
// visitors by the sharded-set method take at most 10 MB (intsets of 60-bit
// ids: 8 bytes each plus the shards' overhead) and count exactly;
// 10,000,000 by HyperLogLog count within 2% in 12 KB (about 17 KB of used_memory).
func TestVisitors_memory(t *testing.T) {
	t.Parallel() // a server of its own: runs beside the other tests
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)

	sets := must(shard.NewVisitors(ctx, rdb, "sets", shard.Sets))
	before := usedMemory(t, rdb)
	const n = 1_000_000
	visitAll(t, sets, day, 0, n)
	used := usedMemory(t, rdb) - before
	got, err := sets.Count(ctx, day)
	require.NoError(t, err)
	assert.Equal(t, int64(n), got)
	t.Logf("sets: %d visitors: %d bytes (%.1f bytes/visitor)", n, used, float64(used)/n)
	assert.LessOrEqual(t, used, int64(10<<20), "1,000,000 visitors in at most 10 MB")
	// The day is sized for 2^21 visitors (1.5 × the default 1,000,000,
	// rounded up to a power of two): 8,192 shards of at most 512.
	keys, err := rdb.Keys(ctx, "shard:{sets:2024-05-01:*}:set").Result()
	require.NoError(t, err)
	assert.Len(t, keys, 8192)
	for _, k := range keys[:20] {
		assert.Equal(t, "intset", encoding(t, rdb, k), k)
	}

	hll := must(shard.NewVisitors(ctx, rdb, "hll", shard.HyperLogLog))
	const m = 10_000_000
	before = usedMemory(t, rdb)
	visitAll(t, hll, day, 0, m)
	used = usedMemory(t, rdb) - before
	got, err = hll.Count(ctx, day)
	require.NoError(t, err)
	errPct := 100 * math.Abs(float64(got-m)) / m
	t.Logf("hyperloglog: %d visitors counted %d (error %.2f%%): %d bytes", m, got, errPct, used)
	assert.Less(t, errPct, 2.0, "within 2%")
	// used_memory also moves with client buffers and the allocator's
	// state; the key's own footprint is what the method costs.
	hllKey := "shard:{hll:2024-05-01}:hll"
	usage, err := rdb.MemoryUsage(ctx, hllKey).Result()
	require.NoError(t, err)
	t.Logf("hyperloglog key: MEMORY USAGE %d bytes", usage)
	assert.LessOrEqual(t, usage, int64(20<<10), "a dense HyperLogLog: 12 KB, in a 14 KB allocation, plus the key")
	assert.Equal(t, int64(12304), rdb.StrLen(ctx, hllKey).Val(), "dense: 16384 6-bit registers + header")
}

// Visitors sized from the server's set-max-intset-entries; bad input.
func TestVisitors_badInput(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		_, err := shard.NewVisitors(ctx, b.Client, "v", shard.Method(7), shard.WithPrefix(b.Prefix))
		assert.ErrorContains(t, err, "unknown method")
		_, err = shard.NewVisitors(ctx, b.Client, "v", shard.Sets, shard.WithDailyExpected(0), shard.WithPrefix(b.Prefix))
		assert.ErrorIs(t, err, shard.ErrSize)
		_, err = shard.NewVisitors(ctx, b.Client, "v", shard.Sets, shard.WithShardSize(-1), shard.WithPrefix(b.Prefix))
		assert.ErrorIs(t, err, shard.ErrSize)
		_, err = shard.NewVisitors(ctx, b.Client, "v", shard.Sets, shard.WithIDsPerShard(3), shard.WithPrefix(b.Prefix))
		assert.ErrorContains(t, err, "does not take WithIDsPerShard")
		_, err = shard.NewVisitors(ctx, nil, "v", shard.Sets)
		assert.ErrorContains(t, err, "nil client")
		_, err = shard.NewVisitors(ctx, b.Client, "v", shard.Sets, shard.WithPrefix("bad{"))
		assert.Error(t, err)
		assert.Empty(t, b.Keys(""), "nothing written")

		v := must(shard.NewVisitors(ctx, b.Client, "v", shard.Sets, shard.WithPrefix(b.Prefix)))
		assert.Equal(t, shard.Sets, v.Method())
		_, err = shard.NewVisitors(ctx, b.Client, "v", shard.HyperLogLog, shard.WithPrefix(b.Prefix))
		assert.ErrorIs(t, err, shard.ErrMismatch, "created with the Sets method")
		require.NoError(t, v.Visit(ctx, time.Now()), "no ids: nothing to do")
		n, err := v.Count(ctx, time.Now().AddDate(-1, 0, 0))
		require.NoError(t, err)
		assert.Zero(t, n, "a day without visits")
	})
}

// Visiting days backwards (a backfill) keeps at most RememberDays days'
// sizes in memory: a day older than every remembered one is not kept.
// Forwards, the newest days are kept.
func TestVisitors_remember_bounded(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		v := must(shard.NewVisitors(ctx, b.Client, "v", shard.Sets, shard.WithShardSize(512),
			shard.WithDailyExpected(100), shard.WithPrefix(b.Prefix)))
		start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
		for i := range 100 {
			day := start.AddDate(0, 0, -i)
			require.NoError(t, v.Visit(ctx, day, int64(i)))
			assert.LessOrEqual(t, shard.RememberedDays(v), shard.RememberDays, "day %d back", i)
		}
		assert.Equal(t, shard.RememberDays, shard.RememberedDays(v))
		for i := range 100 {
			n, err := v.Count(ctx, start.AddDate(0, 0, -i))
			require.NoError(t, err)
			assert.Equal(t, int64(1), n, "day %d back", i)
		}
		assert.Equal(t, shard.RememberDays, shard.RememberedDays(v))
		for i := range 20 { // forwards again
			require.NoError(t, v.Visit(ctx, start.AddDate(0, 0, i+1), 1))
		}
		assert.Equal(t, shard.RememberDays, shard.RememberedDays(v))
	})
}
