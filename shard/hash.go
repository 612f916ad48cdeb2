package shard

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/script"
)

// Hash is a hash of string fields and values spread over many small Redis
// hashes (the book's shard_hset and shard_hget), each small enough to stay
// in Redis's compact listpack encoding. A field made of digits goes to the
// shard of its number divided by the shard size; another to the shard of
// its CRC32 mod 2·total/size (see [ID]). It is safe for concurrent use.
type Hash struct {
	sized
}

// NewHash returns the sharded hash name, sized for total fields (used for
// fields that are not numbers). It takes [WithPrefix] and [WithShardSize];
// without the latter, a new hash's shards hold the server's
// hash-max-listpack-entries ([ReadLimits]). The first NewHash of a name
// stores its shard size and total with it (one HASH); later ones use them
// and fail with [ErrMismatch] if given others. It costs one round trip for
// an existing hash, a few more for a new one.
func NewHash(ctx context.Context, rdb Client, name string, total int64, opts ...Option) (*Hash, error) {
	s, err := newSized(ctx, rdb, "hash", name, total, 0, opts, func(l Limits) int64 { return l.HashEntries })
	if err != nil {
		return nil, err
	}
	return &Hash{s}, nil
}

// Name returns the hash's name.
func (h *Hash) Name() string { return h.name }

// ShardSize returns how many fields a shard is sized for.
func (h *Hash) ShardSize() int64 { return h.size }

// ShardKey returns the Redis key of the shard that holds field: a HASH.
// It returns "" for a field that has no shard: a number whose shard number
// does not fit in an int64 (the calls on such a field fail with an error
// wrapping [ErrSize]).
func (h *Hash) ShardKey(field string) string {
	k, _ := h.key(field)
	return k
}

// key returns the key of field's shard, or an error wrapping [ErrSize]
// for a numeric field whose shard number does not fit in an int64 (New
// checked total and size).
func (h *Hash) key(field string) (string, error) {
	id, err := ID(field, h.total, h.size)
	if err != nil {
		return "", err
	}
	return h.shardKey(id), nil
}

// ShardField returns the name field has inside its shard ([Hash.ShardKey]).
// A decimal field that fits an int64 and has no leading zero is stored as
// its offset in its shard, n mod the shard size: a number below the shard
// size, which the listpack keeps in 1 to 3 bytes instead of up to 9 (the
// shard key already says which block of numbers it is). Any other field is
// stored as given; it can never equal an offset, which is always canonical
// and below the shard size.
func (h *Hash) ShardField(field string) string {
	if !canonical(field) {
		return field
	}
	n, err := strconv.ParseInt(field, 10, 64)
	if err != nil {
		return field
	}
	return strconv.FormatInt(n%h.size, 10)
}

// canonical reports whether s is a decimal number as strconv formats one:
// digits only, no leading zero unless it is "0".
func canonical(s string) bool {
	return digits(s) && (s[0] != '0' || len(s) == 1)
}

func (h *Hash) shardKey(id int64) string {
	return h.keys.Key(h.name+":"+strconv.FormatInt(id, 10), "hash")
}

const hashRole = "shard hash"

// Get returns the value of field (ok false when it has none). One round
// trip.
func (h *Hash) Get(ctx context.Context, field string) (string, bool, error) {
	k, err := h.key(field)
	if err != nil {
		return "", false, fmt.Errorf("shard: hash %q: get %q: %w", h.name, field, err)
	}
	v, err := h.rdb.Do(ctx, "hget", k, h.ShardField(field)).Text()
	switch {
	case err == redis.Nil:
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("shard: hash %q: get %q: %w", h.name, field, wrongType(ctx, h.rdb, err, k, hashRole, "hash"))
	}
	return v, true, nil
}

// Set sets field to value: one HSET, one round trip. It is idempotent, so
// a re-send after a lost reply changes nothing more.
func (h *Hash) Set(ctx context.Context, field, value string) error {
	k, err := h.key(field)
	if err != nil {
		return fmt.Errorf("shard: hash %q: set %q: %w", h.name, field, err)
	}
	if err := h.rdb.Do(ctx, "hset", k, h.ShardField(field), value).Err(); err != nil {
		return fmt.Errorf("shard: hash %q: set %q: %w", h.name, field, script.Unknown(wrongType(ctx, h.rdb, err, k, hashRole, "hash")))
	}
	return nil
}

// Exists reports whether field has a value. One round trip.
func (h *Hash) Exists(ctx context.Context, field string) (bool, error) {
	k, err := h.key(field)
	if err != nil {
		return false, fmt.Errorf("shard: hash %q: exists %q: %w", h.name, field, err)
	}
	ok, err := h.rdb.Do(ctx, "hexists", k, h.ShardField(field)).Bool()
	if err != nil {
		return false, fmt.Errorf("shard: hash %q: exists %q: %w", h.name, field, wrongType(ctx, h.rdb, err, k, hashRole, "hash"))
	}
	return ok, nil
}

// Delete removes fields: one HDEL per shard they fall in, all in one
// pipeline (one round trip per server). Idempotent.
func (h *Hash) Delete(ctx context.Context, fields ...string) error {
	groups, order, err := h.group(fields)
	if err != nil {
		return fmt.Errorf("shard: hash %q: delete: %w", h.name, err)
	}
	if len(order) == 0 {
		return nil
	}
	p := h.rdb.Pipeline()
	for _, k := range order {
		args := make([]any, 0, len(groups[k])+2)
		args = append(args, "hdel", k)
		for _, f := range groups[k] {
			args = append(args, h.ShardField(f))
		}
		p.Do(ctx, args...)
	}
	cmds, err := p.Exec(ctx)
	if err != nil {
		return fmt.Errorf("shard: hash %q: delete: %w", h.name, script.Unknown(batchErr(ctx, h.rdb, cmds, arg1, hashRole, "hash")))
	}
	return nil
}

// GetMany returns the values of fields that have one: one HMGET per shard,
// all in one pipeline (one round trip per server).
func (h *Hash) GetMany(ctx context.Context, fields ...string) (map[string]string, error) {
	groups, order, err := h.group(fields)
	if err != nil {
		return nil, fmt.Errorf("shard: hash %q: get: %w", h.name, err)
	}
	out := make(map[string]string, len(fields))
	if len(order) == 0 {
		return out, nil
	}
	p := h.rdb.Pipeline()
	for _, k := range order {
		args := make([]any, 0, len(groups[k])+2)
		args = append(args, "hmget", k)
		for _, f := range groups[k] {
			args = append(args, h.ShardField(f))
		}
		p.Do(ctx, args...)
	}
	cmds, err := p.Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("shard: hash %q: get: %w", h.name, batchErr(ctx, h.rdb, cmds, arg1, hashRole, "hash"))
	}
	for i, k := range order {
		vals, err := cmds[i].(*redis.Cmd).Slice()
		if err != nil || len(vals) != len(groups[k]) {
			return nil, fmt.Errorf("shard: hash %q: get: HMGET %s: unexpected reply (%v)", h.name, k, err)
		}
		for j, v := range vals {
			if s, ok := v.(string); ok {
				out[groups[k][j]] = s
			}
		}
	}
	return out, nil
}

// SetMany sets every field of values: one HSET per shard, all in one
// pipeline (one round trip per server). Each shard's HSET is atomic; the
// batch as a whole is not (its shards live on different servers): if a
// shard key holds another type, that shard's part fails (a *ria.KeyError
// in the joined error) and the others are written. Idempotent.
func (h *Hash) SetMany(ctx context.Context, values map[string]string) error {
	if len(values) == 0 {
		return nil
	}
	fields := make([]string, 0, len(values))
	for f := range values {
		fields = append(fields, f)
	}
	groups, order, err := h.group(fields)
	if err != nil {
		return fmt.Errorf("shard: hash %q: set: %w", h.name, err)
	}
	p := h.rdb.Pipeline()
	for _, k := range order {
		args := make([]any, 0, 2*len(groups[k])+2)
		args = append(args, "hset", k)
		for _, f := range groups[k] {
			args = append(args, h.ShardField(f), values[f])
		}
		p.Do(ctx, args...)
	}
	cmds, err := p.Exec(ctx)
	if err != nil {
		return fmt.Errorf("shard: hash %q: set: %w", h.name, script.Unknown(batchErr(ctx, h.rdb, cmds, arg1, hashRole, "hash")))
	}
	return nil
}

// Len returns the number of fields, summed over every shard found by a
// SCAN of each primary server (a Cluster's replicas are not visited): it
// reads the whole keyspace, for checks and tools rather than requests.
func (h *Hash) Len(ctx context.Context) (int64, error) {
	n, err := scanSum(ctx, h.rdb, h.keys.Prefix()+"{"+h.name+":", "}:hash", "hlen", hashRole, "hash")
	if err != nil {
		return 0, fmt.Errorf("shard: hash %q: len: %w", h.name, err)
	}
	return n, nil
}

// group sorts fields by shard key, keeping the shards in first-seen order.
// A field without a shard is an error ([Hash.key]).
func (h *Hash) group(fields []string) (map[string][]string, []string, error) {
	groups := map[string][]string{}
	var order []string
	for _, f := range fields {
		k, err := h.key(f)
		if err != nil {
			return nil, nil, fmt.Errorf("field %.40q: %w", f, err)
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	return groups, order, nil
}

// arg1 returns a command's first argument after its name: its key.
func arg1(c redis.Cmder) string { return str(c.Args()[1]) }
