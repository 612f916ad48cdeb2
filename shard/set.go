package shard

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/script"
)

// Set is a set of int64 members spread over many small Redis sets (the
// book's shard_sadd): member m goes to the shard of "x"+m ([ID]: CRC32 mod
// 2·total/size). Members are stored as integers, which Redis keeps in the
// compact intset encoding up to set-max-intset-entries per set (on Redis
// 7.0 only integer members get a compact set). It is safe for concurrent
// use.
type Set struct {
	sized
}

// NewSet returns the sharded set name, sized for total members. It takes
// [WithPrefix] and [WithShardSize]; without the latter, a new set's shards
// hold the server's set-max-intset-entries ([ReadLimits]). Like [NewHash],
// the first NewSet of a name stores its parameters and later ones must
// agree ([ErrMismatch]). A total that gives more than [MaxShards] shards
// (2·total/size) is an error wrapping [ErrSize], and nothing is written.
func NewSet(ctx context.Context, rdb Client, name string, total int64, opts ...Option) (*Set, error) {
	sd, err := newSized(ctx, rdb, "set", name, total, MaxShards, opts, func(l Limits) int64 { return l.SetIntEntries })
	if err != nil {
		return nil, err
	}
	return &Set{sd}, nil
}

// Name returns the set's name.
func (s *Set) Name() string { return s.name }

// Shards returns the number of shards, 2·total/size.
func (s *Set) Shards() int64 { return s.nShd }

// ShardKey returns the Redis key of the shard that holds member: a SET.
func (s *Set) ShardKey(member int64) string {
	return s.shardKey(memberShard(member, s.nShd))
}

func (s *Set) shardKey(id int64) string {
	return s.keys.Key(s.name+":"+strconv.FormatInt(id, 10), "set")
}

const setRole = "shard set"

// Add adds members: one SADD per shard they fall in, all in one pipeline
// (one round trip per server). Idempotent; see [Hash.SetMany] for a shard
// that holds another type.
func (s *Set) Add(ctx context.Context, members ...int64) error {
	if err := setCmd(ctx, s.rdb, "sadd", members, s.ShardKey); err != nil {
		return fmt.Errorf("shard: set %q: add: %w", s.name, script.Unknown(err))
	}
	return nil
}

// Remove removes members: one SREM per shard, in one pipeline (one round
// trip per server). Idempotent.
func (s *Set) Remove(ctx context.Context, members ...int64) error {
	if err := setCmd(ctx, s.rdb, "srem", members, s.ShardKey); err != nil {
		return fmt.Errorf("shard: set %q: remove: %w", s.name, script.Unknown(err))
	}
	return nil
}

// Contains reports whether member is in the set. One round trip.
func (s *Set) Contains(ctx context.Context, member int64) (bool, error) {
	k := s.ShardKey(member)
	ok, err := s.rdb.Do(ctx, "sismember", k, member).Bool()
	if err != nil {
		return false, fmt.Errorf("shard: set %q: contains %d: %w", s.name, member, wrongType(ctx, s.rdb, err, k, setRole, "set"))
	}
	return ok, nil
}

// Len returns the number of members: SCARD of every shard, 10,000 shards
// per pipeline (one round trip per server per pipeline). It stops at the
// end of ctx, between pipelines.
func (s *Set) Len(ctx context.Context) (int64, error) {
	n, err := cardSum(ctx, s.rdb, s.nShd, s.shardKey)
	if err != nil {
		return 0, fmt.Errorf("shard: set %q: len: %w", s.name, err)
	}
	return n, nil
}

// memberShard is the shard of member among n: the book's shard_sadd
// (CRC32 of "x"+member mod n).
func memberShard(member, n int64) int64 {
	id, _ := ID("x"+strconv.FormatInt(member, 10), n, 2) // Count(n, 2) == n
	return id
}

// setCmd sends cmd (SADD, SREM) for members grouped by shard key, in one
// pipeline.
func setCmd(ctx context.Context, rdb Client, cmd string, members []int64, keyOf func(int64) string) error {
	if len(members) == 0 {
		return nil
	}
	groups := map[string][]any{}
	var order []string
	for _, m := range members {
		k := keyOf(m)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
			groups[k] = []any{cmd, k}
		}
		groups[k] = append(groups[k], m)
	}
	p := rdb.Pipeline()
	for _, k := range order {
		p.Do(ctx, groups[k]...)
	}
	cmds, err := p.Exec(ctx)
	if err != nil {
		return batchErr(ctx, rdb, cmds, arg1, setRole, "set")
	}
	return nil
}

// cardSum returns the sum of SCARD over shards 0..n-1, pipelineChunk
// shards per pipeline, checking ctx between pipelines.
func cardSum(ctx context.Context, rdb Client, n int64, shardKey func(int64) string) (int64, error) {
	var sum int64
	for lo := int64(0); lo < n; lo += pipelineChunk {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		p := rdb.Pipeline()
		for i := lo; i < min(lo+pipelineChunk, n); i++ {
			p.Do(ctx, "scard", shardKey(i))
		}
		cmds, err := p.Exec(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			return 0, batchErr(ctx, rdb, cmds, arg1, setRole, "set")
		}
		for _, c := range cmds {
			v, err := c.(*redis.Cmd).Int64()
			if err != nil {
				return 0, err
			}
			sum += v
		}
	}
	return sum, nil
}

// membersChunk bounds the members one pipeline of [Set.Members] reads: it
// asks for 65,536/size shards at a time.
const membersChunk = 1 << 16

// Members calls fn with every member of the set, shard by shard (an
// operator's listing, a migration), and returns fn's first error as it
// is, having stopped there. It reads the shards with SSCAN ... COUNT size,
// 65,536/size shards per pipeline (one round trip per server per
// pipeline): a shard in the compact encoding comes whole in one reply; a
// larger one needs further SSCANs, sent in the next pipelines. Memory stays
// bounded by one pipeline's replies (and, for a shard that takes several
// SSCANs, the members of that shard seen so far). fn is called from the
// caller's goroutine, between round trips, and may call the set; members
// come in no particular order.
//
// Concurrent writes (SSCAN's guarantees, per shard): a member in the set
// from the start to the end of Members is visited; one added or removed
// meanwhile may or may not be. No member is visited twice. Members is not a
// snapshot: use it where that is enough (a migration also applies the
// writes made while it ran).
//
// A shard holding another Redis type gives a *ria.KeyError naming it (the
// shards of earlier pipelines have been visited); a member that is not an
// integer, a *ria.KeyError matching ria.ErrCorrupt. fn nil is an error.
func (s *Set) Members(ctx context.Context, fn func(member int64) error) error {
	if fn == nil {
		return fmt.Errorf("shard: set %q: members: nil func", s.name)
	}
	type shardScan struct {
		id     int64
		cursor uint64
		seen   map[int64]struct{} // the shard's members so far, once it takes more than one SSCAN
	}
	per := max(1, membersChunk/s.size)
	var open []*shardScan // shards with an SSCAN cursor to follow
	for next := int64(0); next < s.nShd || len(open) > 0; {
		batch := open
		open = nil
		for ; int64(len(batch)) < per && next < s.nShd; next++ {
			batch = append(batch, &shardScan{id: next})
		}
		p := s.rdb.Pipeline()
		for _, sh := range batch {
			p.Do(ctx, "sscan", s.shardKey(sh.id), sh.cursor, "count", s.size)
		}
		cmds, err := p.Exec(ctx)
		if err != nil {
			return fmt.Errorf("shard: set %q: members: %w", s.name, batchErr(ctx, s.rdb, cmds, arg1, setRole, "set"))
		}
		for i, c := range cmds {
			sh := batch[i]
			ms, cursor, err := sscanReply(c.(*redis.Cmd))
			if err != nil {
				return fmt.Errorf("shard: set %q: members: %w", s.name, corrupt(arg1(c), setRole, fmt.Sprint(c.(*redis.Cmd).Val()), "an SSCAN reply"))
			}
			if cursor != 0 && sh.seen == nil {
				sh.seen = make(map[int64]struct{}, len(ms))
			}
			for _, m := range ms {
				v, err := strconv.ParseInt(m, 10, 64)
				if err != nil {
					return fmt.Errorf("shard: set %q: members: %w", s.name, corrupt(arg1(c), setRole, m, "an integer member"))
				}
				if sh.seen != nil {
					if _, dup := sh.seen[v]; dup {
						continue // SSCAN may return a member twice across a rehash
					}
					sh.seen[v] = struct{}{}
				}
				if err := fn(v); err != nil {
					return err
				}
			}
			if cursor != 0 {
				sh.cursor = cursor
				open = append(open, sh)
			}
		}
	}
	return nil
}

// sscanReply parses an SSCAN reply: the next cursor and the members.
func sscanReply(c *redis.Cmd) (members []string, cursor uint64, err error) {
	v, err := c.Slice()
	if err != nil || len(v) != 2 {
		return nil, 0, fmt.Errorf("not a cursor and members")
	}
	cs, ok := v[0].(string)
	if !ok {
		return nil, 0, fmt.Errorf("cursor not a string")
	}
	if cursor, err = strconv.ParseUint(cs, 10, 64); err != nil {
		return nil, 0, err
	}
	raw, ok := v[1].([]any)
	if !ok {
		return nil, 0, fmt.Errorf("members not an array")
	}
	members = make([]string, len(raw))
	for i, m := range raw {
		if members[i], ok = m.(string); !ok {
			return nil, 0, fmt.Errorf("member not a string")
		}
	}
	return members, cursor, nil
}
