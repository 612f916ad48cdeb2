package cache

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed countset.lua
	countSetLua string
	// countSetScript sets a counter after checking its type: a re-send is
	// answered from a record.
	countSetScript = script.NewOnce("cache counter set", countSetLua)
)

// Set sets counter key to v and renews its TTL, in one round trip (a
// script that checks the key's type first): for example to take a count back to 0 once it is
// written back to the system of record (or Incr by minus what was written,
// which loses no increment made meanwhile). A restore running meanwhile
// adds only its own n to the value set. A Set that go-redis re-sends after
// a lost reply is answered from a record of its first run instead of
// setting v again, which would undo an Incr that another client made
// between the two runs (see the package doc, "Lost replies"); if every
// attempt lost its reply, the error wraps [ria.ErrOutcomeUnknown]. A key
// that holds another type gives a [*ria.KeyError] and is left alone.
func (c *Counter) Set(ctx context.Context, key string, v int64) error {
	if err := checkKey("counter set", key); err != nil {
		return err
	}
	k := c.counterKeys(key)
	if _, err := countSetScript.RunOnce(ctx, c.rdb, c.keys.Once(k.entity), []string{k.count}, strconv.FormatInt(v, 10), ms(c.ttl)); err != nil {
		return fmt.Errorf("cache: counter %s set %q: %w", c.name, key, err)
	}
	return nil
}

// Keys returns the keys of the counters that exist now, sorted: what the
// blog's write-back reads before it flushes counts to the system of
// record (read their values with [Counter.Get] or a [Batch]). It scans the
// keyspace of every node (SCAN MATCH <prefix>{<name>:*}:count): on a
// Cluster every master, on a Ring every shard. One round trip per 1,000
// keys of the database, per node. A counter made during the scan may be
// missed.
func (c *Counter) Keys(ctx context.Context) ([]string, error) {
	head, tail := c.keys.Prefix()+"{"+c.name+":", "}:count"
	var (
		mu  sync.Mutex
		out []string
	)
	err := keys.Scan(ctx, c.rdb, keys.GlobEscape(head)+"*"+keys.GlobEscape(tail), func(_ context.Context, ks []string) error {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range ks {
			if key, ok := strings.CutPrefix(k, head); ok {
				if key, ok = strings.CutSuffix(key, tail); ok {
					out = append(out, key)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cache: counter %s keys: %w", c.name, err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
