package counters

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ria-go/ria/internal/keys"
)

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

// scan calls fn with each page of counter names found, node by node (the
// nodes of a Cluster or Ring concurrently). A name may be seen twice (SCAN
// may return a key twice) and a counter made during the scan may be missed.
func (c *Counters) scan(ctx context.Context, fn func(ctx context.Context, names []string) error) error {
	head, tail := c.keys.Prefix()+"{", "}:known"
	return keys.Scan(ctx, c.rdb, keys.GlobEscape(c.keys.Prefix())+"{*}:known", func(ctx context.Context, ks []string) error {
		names := make([]string, 0, len(ks))
		for _, k := range ks {
			name, ok := strings.CutPrefix(k, head)
			if name, ok2 := strings.CutSuffix(name, tail); ok && ok2 && !strings.ContainsAny(name, "{}") && name != "" {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			return nil
		}
		return fn(ctx, names)
	})
}
