package shard_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// nodes returns how many servers of b hold keys: the round trips of a
// pipeline over them.
func nodes(t *testing.T, b *redistest.Backend, keys ...string) int64 {
	t.Helper()
	seen := map[string]bool{}
	for _, k := range keys {
		seen[nodeOf(t, b, k)] = true
	}
	return int64(len(seen))
}

// nodeOf returns the address of the server of b that holds key.
func nodeOf(t *testing.T, b *redistest.Backend, key string) string {
	t.Helper()
	switch b.Kind {
	case redistest.Cluster:
		shards, err := b.Client.(*redis.ClusterClient).ClusterShards(context.Background()).Result()
		require.NoError(t, err)
		s := shard.Slot(key)
		for _, sh := range shards {
			for _, r := range sh.Slots {
				if s < int(r.Start) || s > int(r.End) {
					continue
				}
				for _, n := range sh.Nodes {
					if n.Role == "master" {
						return net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
					}
				}
			}
		}
		t.Fatalf("no node serves slot %d", s)
	case redistest.Sharded:
		return b.Addrs()[shard.Slot(key)%len(b.Addrs())]
	}
	return b.Addrs()[0]
}

// usedMemory returns INFO memory's used_memory of the server of c.
func usedMemory(t testing.TB, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "memory").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}

// encoding returns OBJECT ENCODING of key.
func encoding(t testing.TB, c redis.Cmdable, key string) string {
	t.Helper()
	e, err := c.ObjectEncoding(context.Background(), key).Result()
	require.NoError(t, err)
	return e
}
