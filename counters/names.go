package counters

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// scanCount is the COUNT hint of each SCAN: keys looked at per round trip.
const scanCount = 1000

// Names returns the names of the known counters (those updated and not yet
// forgotten by a cleaner), sorted. It scans the keyspace of every node
// (SCAN MATCH <prefix>{*}:known): on a *redis.ClusterClient every master
// (ForEachMaster), on a *redis.Ring every shard, otherwise the one server.
// It costs one round trip per 1000 keys of the database (all keys, not
// only this package's), per node.
func (c *Counters) Names(ctx context.Context) ([]string, error) {
	var (
		mu  sync.Mutex
		out []string
	)
	err := c.scan(ctx, func(_ context.Context, names []string) error {
		mu.Lock()
		out = append(out, names...)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("counters: names: %w", err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// scanner is a client of one node.
type scanner interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
}

// scan calls fn with each page of counter names found, node by node (the
// nodes of a Cluster or Ring concurrently). A name may be seen twice (SCAN
// may return a key twice) and a counter made during the scan may be missed.
func (c *Counters) scan(ctx context.Context, fn func(ctx context.Context, names []string) error) error {
	pattern := globEscape(c.keys.Prefix()) + "{*}:known"
	head, tail := c.keys.Prefix()+"{", "}:known"
	node := func(ctx context.Context, s scanner) error {
		var cursor uint64
		for {
			ks, next, err := s.Scan(ctx, cursor, pattern, scanCount).Result()
			if err != nil {
				return err
			}
			names := make([]string, 0, len(ks))
			for _, k := range ks {
				name, ok := strings.CutPrefix(k, head)
				if name, ok2 := strings.CutSuffix(name, tail); ok && ok2 && !strings.ContainsAny(name, "{}") && name != "" {
					names = append(names, name)
				}
			}
			if len(names) > 0 {
				if err := fn(ctx, names); err != nil {
					return err
				}
			}
			if next == 0 {
				return nil
			}
			cursor = next
		}
	}
	switch rdb := c.rdb.(type) {
	case *redis.ClusterClient:
		return rdb.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return node(ctx, n) })
	case *redis.Ring:
		return rdb.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return node(ctx, n) })
	default:
		return node(ctx, c.rdb)
	}
}

// globEscape escapes the characters SCAN MATCH treats as pattern syntax.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
