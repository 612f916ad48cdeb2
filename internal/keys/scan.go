package keys

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// ScanCount is the COUNT hint of each SCAN of [Scan]: keys looked at per
// round trip.
const ScanCount = 1000

// Scanner is a client whose keyspace [Scan] reads.
type Scanner interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
}

// Scan calls fn with each page of the keys that match pattern (SCAN MATCH,
// see [GlobEscape]) on every node: every master of a *redis.ClusterClient
// and every shard of a *redis.Ring, concurrently (an error if one is down:
// see [ForEachRingShard]); otherwise the one server. A key may come twice (SCAN may return it twice) and a key made
// during the scan may be missed. One round trip per [ScanCount] keys of the
// database (all keys, not only the matching ones), per node.
func Scan(ctx context.Context, rdb Scanner, pattern string, fn func(ctx context.Context, keys []string) error) error {
	node := func(ctx context.Context, s Scanner) error {
		var cursor uint64
		for {
			ks, next, err := s.Scan(ctx, cursor, pattern, ScanCount).Result()
			if err != nil {
				return err
			}
			if len(ks) > 0 {
				if err := fn(ctx, ks); err != nil {
					return err
				}
			}
			if next == 0 {
				return nil
			}
			cursor = next
		}
	}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return node(ctx, n) })
	case *redis.Ring:
		return ForEachRingShard(ctx, c, func(ctx context.Context, n *redis.Client) error { return node(ctx, n) })
	default:
		return node(ctx, rdb)
	}
}

// ErrShardsDown is the error of [ForEachRingShard] (and so of [Scan]) when
// go-redis skipped a shard of a Ring that it marks down; it may go away
// when the shard comes back (internal/wait's Transient says so).
var ErrShardsDown = errors.New("keys: a Ring shard is down")

// ForEachRingShard calls fn on every shard of c concurrently, as
// c.ForEachShard does, and fails if that skipped a shard: go-redis skips
// the shards its heartbeat marks down (and a closed Ring has none), so a
// scan of the others would answer as if it had seen every key. The shards
// are those of c's options (a Ring changed by SetAddrs is counted by them).
func ForEachRingShard(ctx context.Context, c *redis.Ring, fn func(ctx context.Context, n *redis.Client) error) error {
	var visited atomic.Int64
	err := c.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error {
		visited.Add(1)
		return fn(ctx, n)
	})
	if err != nil {
		return err
	}
	if n, all := visited.Load(), len(c.Options().Addrs); n < int64(all) {
		return fmt.Errorf("%w: %d of the Ring's %d shards not visited (down, or the Ring is closed)", ErrShardsDown, int64(all)-n, all)
	}
	return nil
}

// GlobEscape escapes the characters SCAN MATCH reads as pattern syntax.
// It works byte by byte, as Redis matches: any other byte, a byte of
// invalid UTF-8 included, is kept as it is.
func GlobEscape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := range len(s) {
		switch c := s[i]; c {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
