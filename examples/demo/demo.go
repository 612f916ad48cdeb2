// Package demo gives the programs in examples/ their Redis: a Redis Cluster
// when REDIS_CLUSTER lists its nodes, the server at REDIS_URL when that is
// set, otherwise an embedded miniredis. It is public so that an example
// copied into another module still builds; in a service, build the
// go-redis client your deployment needs instead.
//
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/lock
//	REDIS_CLUSTER=127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002 go run ./examples/lock
package demo

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
)

// Client returns a client and a function that closes it (and the embedded
// server, if any). REDIS_URL is parsed with redis.ParseURL; REDIS_CLUSTER
// is a comma-separated list of host:port addresses of cluster nodes.
func Client() (redis.UniversalClient, func(), error) {
	if nodes := os.Getenv("REDIS_CLUSTER"); nodes != "" {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(nodes, ",")})
		return c, func() { _ = c.Close() }, nil
	}
	if url := os.Getenv("REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			return nil, nil, fmt.Errorf("demo: REDIS_URL: %w", err)
		}
		c := redis.NewClient(opt)
		return c, func() { _ = c.Close() }, nil
	}
	srv, err := miniredis.Run()
	if err != nil {
		return nil, nil, fmt.Errorf("demo: start miniredis: %w", err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	return c, func() { _ = c.Close(); srv.Close() }, nil
}

// Clean deletes every key that starts with prefix, on every node of a
// Cluster (SCAN of each master), one key at a time (on a Cluster they may
// lie in several slots): what an example's earlier run left.
func Clean(ctx context.Context, rdb redis.UniversalClient, prefix string) error {
	return keys.Scan(ctx, rdb, keys.GlobEscape(prefix)+"*", func(ctx context.Context, ks []string) error {
		for _, k := range ks {
			if err := rdb.Del(ctx, k).Err(); err != nil {
				return err
			}
		}
		return nil
	})
}
