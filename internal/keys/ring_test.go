package keys_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/redistest"
)

// Scan reads every shard of a *redis.Ring. A shard that the Ring's
// heartbeat marked down is skipped by Ring.ForEachShard: Scan then fails
// (it reported success with that shard's keys missing), as it does for a
// *redis.Client or a Cluster master that cannot be reached.
func TestScan_ringShardDown(t *testing.T) {
	redistest.New(t, redistest.Standalone) // skips/fails as the harness does
	s1 := redistest.StartServer(t)
	s2 := redistest.StartServer(t)
	ctx := context.Background()
	ring := redis.NewRing(&redis.RingOptions{
		Addrs:              map[string]string{"a": s1.Addr(), "b": s2.Addr()},
		HeartbeatFrequency: 10 * time.Millisecond,
		MaxRetries:         -1,
	})
	t.Cleanup(func() { _ = ring.Close() })
	for i := range 100 {
		require.NoError(t, ring.Set(ctx, fmt.Sprintf("scan:%d", i), 1, 0).Err())
	}
	c2 := redis.NewClient(&redis.Options{Addr: s2.Addr()})
	defer c2.Close()
	on2 := c2.DBSize(ctx).Val()
	require.Greater(t, on2, int64(0), "both shards hold keys")

	s2.Kill()
	deadline := time.Now().Add(20 * time.Second)
	for ring.Len() != 1 { // the heartbeat marks shard b down
		require.True(t, time.Now().Before(deadline), "ring never marked the dead shard down")
		time.Sleep(5 * time.Millisecond) // polling a state change of the heartbeat
	}
	var n int
	err := keys.Scan(ctx, ring, "scan:*", func(_ context.Context, ks []string) error { n += len(ks); return nil })
	require.Error(t, err, "Scan saw %d of 100 keys (%d were on the down shard)", n, on2)
	assert.ErrorIs(t, err, keys.ErrShardsDown)
	assert.Contains(t, err.Error(), "1 of the Ring's 2 shards not visited")
}

// A closed Ring has no shards: Scan fails, as it does on a closed
// *redis.Client (it reported success having scanned nothing).
func TestScan_closedRing(t *testing.T) {
	b := redistest.New(t, redistest.Standalone)
	ctx := context.Background()
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": b.Addrs()[0]}})
	require.NoError(t, ring.Set(ctx, b.Prefix+"x", 1, time.Minute).Err())
	require.NoError(t, ring.Close())
	err := keys.Scan(ctx, ring, keys.GlobEscape(b.Prefix)+"*", func(context.Context, []string) error { return nil })
	assert.ErrorIs(t, err, keys.ErrShardsDown, "Scan on a closed Ring reported success having scanned nothing")
}
