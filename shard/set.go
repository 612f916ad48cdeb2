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
// agree ([ErrMismatch]).
func NewSet(ctx context.Context, rdb Client, name string, total int64, opts ...Option) (*Set, error) {
	sd, err := newSized(ctx, rdb, "set", name, total, opts, func(l Limits) int64 { return l.SetIntEntries })
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

// Len returns the number of members: SCARD of every shard, in one pipeline
// (one round trip per server).
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

// cardSum returns the sum of SCARD over shards 0..n-1, in one pipeline.
func cardSum(ctx context.Context, rdb Client, n int64, shardKey func(int64) string) (int64, error) {
	p := rdb.Pipeline()
	for i := range n {
		p.Do(ctx, "scard", shardKey(i))
	}
	cmds, err := p.Exec(ctx)
	if err != nil {
		return 0, batchErr(ctx, rdb, cmds, arg1, setRole, "set")
	}
	var sum int64
	for _, c := range cmds {
		v, err := c.(*redis.Cmd).Int64()
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}
