package shard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Limits are the sizes up to which a server keeps a structure in its compact
// encoding (listpack, intset), where an element costs a few bytes instead of
// the tens of bytes of a hashtable entry. They are server settings; a shard
// sized within them stays compact.
type Limits struct {
	// HashEntries and HashValue: a hash stays a listpack while it has at
	// most HashEntries fields and every field and value is at most
	// HashValue bytes (hash-max-listpack-entries, -value; *-ziplist-* before
	// Redis 7.0).
	HashEntries, HashValue int64
	// SetIntEntries: a set of integers (each fitting an int64) stays an
	// intset up to this many members (set-max-intset-entries). On Redis 7.0
	// a set of other members is always a hashtable (7.2 adds a listpack for
	// up to set-max-listpack-entries of them).
	SetIntEntries int64
	// ZSetEntries and ZSetValue: as for hashes (zset-max-listpack-*).
	ZSetEntries, ZSetValue int64
	// ListSize is list-max-listpack-size: a positive count of entries per
	// quicklist node, or -1 to -5 for 4 to 64 KB per node. Redis 7.0 keeps
	// every list as a quicklist of listpack nodes.
	ListSize int64
	// FromServer says whether the values were read from the server (false:
	// the server refused CONFIG GET, and these are [DefaultLimits]).
	FromServer bool
}

// DefaultLimits are Redis 7.0's built-in defaults (also Debian's
// redis.conf), used where CONFIG GET is refused (managed services,
// miniredis).
var DefaultLimits = Limits{HashEntries: 512, HashValue: 64, SetIntEntries: 512, ZSetEntries: 128, ZSetValue: 64, ListSize: -2}

// ReadLimits reads the compact-encoding limits of the servers behind rdb
// with CONFIG GET (on a Cluster or a [Router], the smallest of its
// primaries'; on a Ring, of its shards'). When a server refuses CONFIG
// (an error reply: unknown or renamed command, no permission) it returns
// [DefaultLimits]; other errors (the server is down) are returned.
func ReadLimits(ctx context.Context, rdb Client) (Limits, error) {
	var (
		mu    sync.Mutex
		out   Limits
		first = true
	)
	err := forEachPrimary(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		l, err := readLimits(ctx, c)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if first {
			out, first = l, false
			return nil
		}
		out.HashEntries, out.HashValue = min(out.HashEntries, l.HashEntries), min(out.HashValue, l.HashValue)
		out.SetIntEntries = min(out.SetIntEntries, l.SetIntEntries)
		out.ZSetEntries, out.ZSetValue = min(out.ZSetEntries, l.ZSetEntries), min(out.ZSetValue, l.ZSetValue)
		if l.ListSize != out.ListSize {
			out.ListSize = DefaultLimits.ListSize
		}
		out.FromServer = out.FromServer && l.FromServer
		return nil
	})
	if err != nil {
		return Limits{}, fmt.Errorf("shard: read limits: %w", err)
	}
	return out, nil
}

func readLimits(ctx context.Context, c *redis.Client) (Limits, error) {
	m, err := c.ConfigGet(ctx, "*-max-*").Result()
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return DefaultLimits, nil
	}
	if err != nil {
		return Limits{}, err
	}
	l := DefaultLimits
	l.FromServer = true
	get := func(dst *int64, names ...string) {
		for _, n := range names {
			if v, err := strconv.ParseInt(m[n], 10, 64); err == nil {
				*dst = v
				return
			}
		}
	}
	get(&l.HashEntries, "hash-max-listpack-entries", "hash-max-ziplist-entries")
	get(&l.HashValue, "hash-max-listpack-value", "hash-max-ziplist-value")
	get(&l.SetIntEntries, "set-max-intset-entries")
	get(&l.ZSetEntries, "zset-max-listpack-entries", "zset-max-ziplist-entries")
	get(&l.ZSetValue, "zset-max-listpack-value", "zset-max-ziplist-value")
	get(&l.ListSize, "list-max-listpack-size", "list-max-ziplist-size")
	return l, nil
}
