package shard_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// Scatter-gather visits each primary once: on a Cluster client whose slots
// are served by a primary and its (real, synced) replica, Hash.Len,
// Records.Scan and ReadLimits count the primary's data once, where
// go-redis's ForEachShard would visit the replica too and double it.
func TestScan_replicasNotCounted(t *testing.T) {
	primary, replica := redistest.StartReplicated(t)
	slots := []redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{Addr: primary.Addr()}, {Addr: replica.Addr()}}}}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{primary.Addr()},
		ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) { return slots, nil }})
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()

	h := must(shard.NewHash(ctx, c, "h", 1000, shard.WithShardSize(10)))
	vals := map[string]string{}
	for i := range 100 {
		vals[strconv.Itoa(i)] = "v"
	}
	require.NoError(t, h.SetMany(ctx, vals))
	locs := must(shard.NewLocations(ctx, c, "loc", nil, shard.WithIDsPerShard(10)))
	for i := range int64(25) {
		require.NoError(t, locs.Set(ctx, i, "USA", "CA"))
	}
	// Wait until the replica holds everything (WAIT: the writes reached it).
	pc := redis.NewClient(&redis.Options{Addr: primary.Addr()})
	t.Cleanup(func() { _ = pc.Close() })
	require.NoError(t, pc.Do(ctx, "wait", 1, 10_000).Err())

	var visits atomic.Int64
	var keys atomic.Int64
	require.NoError(t, c.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error {
		visits.Add(1)
		keys.Add(n.DBSize(ctx).Val())
		return nil
	}))
	require.Equal(t, int64(2), visits.Load(), "ForEachShard visits the primary and its replica")
	require.Equal(t, 2*pc.DBSize(ctx).Val(), keys.Load(), "the replica holds the same keys")

	n, err := h.Len(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(100), n, "each field counted once")
	a, err := locs.Aggregate(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(25), a.Countries["USA"], "each record counted once")
	l, err := shard.ReadLimits(ctx, c)
	require.NoError(t, err)
	assert.True(t, l.FromServer)
}
