package cache

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed push.lua
	pushLua    string
	pushScript = script.NewOnce("cache push", pushLua)

	//go:embed top.lua
	topLua    string
	topScript = script.NewOnce("cache top", topLua)

	//go:embed topremove.lua
	topRemoveLua    string
	topRemoveScript = script.NewOnce("cache top remove", topRemoveLua)
)

// Latest keeps the n most recent values pushed under each key (the blog's
// "latest 3 job views"). It is safe for concurrent use.
type Latest[T any] struct {
	rdb   Client
	name  string
	keys  keys.Space
	codec Codec
	n     int
	ttl   time.Duration
}

// NewLatest returns the latest-n lists name of values of type T, backed by
// rdb. Options: [WithCodec], [WithPrefix], [WithTTL] (a list then lives that
// long after its last push; default: no expiry). It returns an error for an
// invalid name, n < 1 or above [MaxN], or an invalid option; a nil rdb
// panics.
func NewLatest[T any](rdb Client, name string, n int, opts ...Option) (*Latest[T], error) {
	if rdb == nil {
		panic("cache: NewLatest with nil client")
	}
	if err := checkName("latest", name); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxN {
		return nil, fmt.Errorf("cache: latest %s: n %d: must be at least 1 and at most %d", name, n, MaxN)
	}
	o, err := build("latest "+name, []string{"WithPrefix", "WithTTL", "WithCodec"}, opts)
	if err != nil {
		return nil, err
	}
	return &Latest[T]{rdb: rdb, name: name, keys: keys.New(o.prefix), codec: o.codec, n: n, ttl: o.ttl}, nil
}

// Name returns the lists' name.
func (l *Latest[T]) Name() string { return l.name }

// Push adds vs to the list key, the last one newest, and trims the list to
// its n newest values, atomically in one round trip (a script: LPUSH,
// LTRIM, and PEXPIRE with [WithTTL]). Only the n last of vs can stay, so
// only those are sent. A Push that go-redis re-sends after a lost reply is
// answered from a record of its first run instead of pushing twice (see
// the package doc, "Lost replies"); if every attempt lost its reply, the
// error wraps [ria.ErrOutcomeUnknown]. A key that holds another type than
// a LIST gives a [*ria.KeyError].
func (l *Latest[T]) Push(ctx context.Context, key string, vs ...T) error {
	if err := checkKey("latest push", key); err != nil {
		return err
	}
	if len(vs) == 0 {
		return fmt.Errorf("cache: latest %s push %q: no values", l.name, key)
	}
	if len(vs) > l.n {
		vs = vs[len(vs)-l.n:]
	}
	args := make([]any, 2, len(vs)+2)
	args[0], args[1] = l.n, ttlArg(l.ttl)
	for i, v := range vs {
		b, err := l.codec.Marshal(v)
		if err != nil {
			return fmt.Errorf("cache: latest %s push %q: encode value %d: %w", l.name, key, i, err)
		}
		args = append(args, b)
	}
	e := l.name + ":" + key
	if _, err := pushScript.RunOnce(ctx, l.rdb, l.keys.Once(e), []string{l.listKey(key)}, args...); err != nil {
		return fmt.Errorf("cache: latest %s push %q: %w", l.name, key, err)
	}
	return nil
}

// ttlArg is the ttl argument of push.lua and top.lua: ms, or 0 for none.
func ttlArg(ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return ms(ttl)
}

// List returns the list key, newest first (empty if it does not exist), in
// one round trip. A value that cannot be decoded gives an error wrapping
// [ErrDecode].
func (l *Latest[T]) List(ctx context.Context, key string) ([]T, error) {
	if err := checkKey("latest list", key); err != nil {
		return nil, err
	}
	raw, err := l.rdb.LRange(ctx, l.listKey(key), 0, int64(l.n)-1).Result()
	if err != nil {
		err = script.WrongType(ctx, l.rdb, err, l.listKey(key), "cache latest list", "list")
		return nil, fmt.Errorf("cache: latest %s list %q: %w", l.name, key, err)
	}
	out, err := l.decode(raw)
	if err != nil {
		return nil, fmt.Errorf("cache: latest %s list %q: %w", l.name, key, err)
	}
	return out, nil
}

// Len returns the length of the list key (0 if it does not exist; at most
// n), in one round trip (LLEN). A key that holds another type than a LIST
// gives a [*ria.KeyError].
func (l *Latest[T]) Len(ctx context.Context, key string) (int, error) {
	if err := checkKey("latest len", key); err != nil {
		return 0, err
	}
	n, err := l.rdb.Do(ctx, "llen", l.listKey(key)).Int64()
	if err != nil {
		err = script.WrongType(ctx, l.rdb, err, l.listKey(key), "cache latest list", "list")
		return 0, fmt.Errorf("cache: latest %s len %q: %w", l.name, key, err)
	}
	return int(n), nil
}

// Clear deletes the list key, whatever it holds, in one round trip (DEL).
// It is idempotent (clearing a missing list is no error), so a re-send
// after a lost reply is harmless; if every attempt lost its reply, the
// error wraps [ria.ErrOutcomeUnknown].
func (l *Latest[T]) Clear(ctx context.Context, key string) error {
	if err := checkKey("latest clear", key); err != nil {
		return err
	}
	if err := l.rdb.Do(ctx, "del", l.listKey(key)).Err(); err != nil {
		return fmt.Errorf("cache: latest %s clear %q: %w", l.name, key, script.Unknown(err))
	}
	return nil
}

func (l *Latest[T]) decode(raw []string) ([]T, error) {
	out := make([]T, len(raw))
	for i, s := range raw {
		if err := l.codec.Unmarshal([]byte(s), &out[i]); err != nil {
			return nil, fmt.Errorf("value %d: %w: %w", i, ErrDecode, err)
		}
	}
	return out, nil
}

// Ranked is a member of a [Top] ranking with its score.
type Ranked[T any] struct {
	Member T
	Score  float64
}

// Top keeps a ranking per key: members of type T scored by counts (the
// blog's "top 3 jobs by views"). Members are stored encoded by the codec, so
// equal members must encode to equal bytes (true of encoding/json for
// numbers, strings and structs). It is safe for concurrent use.
type Top[T any] struct {
	rdb   Client
	name  string
	keys  keys.Space
	codec Codec
	ttl   time.Duration
}

// NewTop returns the rankings name of members of type T, backed by rdb.
// Options: [WithCodec], [WithPrefix], [WithTTL] (a ranking then lives that
// long after its last write; default: no expiry). It returns an error for an
// invalid name or option; a nil rdb panics.
func NewTop[T any](rdb Client, name string, opts ...Option) (*Top[T], error) {
	if rdb == nil {
		panic("cache: NewTop with nil client")
	}
	if err := checkName("top", name); err != nil {
		return nil, err
	}
	o, err := build("top "+name, []string{"WithPrefix", "WithTTL", "WithCodec"}, opts)
	if err != nil {
		return nil, err
	}
	return &Top[T]{rdb: rdb, name: name, keys: keys.New(o.prefix), codec: o.codec, ttl: o.ttl}, nil
}

// Name returns the rankings' name.
func (t *Top[T]) Name() string { return t.name }

// Incr adds by to member's score in the ranking key (ZINCRBY; a new member
// starts from 0) and returns the new score, in one round trip (a script,
// with PEXPIRE when a TTL is set). An Incr that go-redis re-sends after a
// lost reply is answered from a record of its first run instead of counting
// twice (see the package doc, "Lost replies"); if every attempt lost its
// reply, the error wraps [ria.ErrOutcomeUnknown]. by must be finite; a key
// that holds another type than a ZSET gives a [*ria.KeyError].
func (t *Top[T]) Incr(ctx context.Context, key string, member T, by float64) (float64, error) {
	return t.write(ctx, "incr", key, member, by)
}

// Add sets member's score in the ranking key (ZADD), in one round trip (a
// script, with PEXPIRE when a TTL is set). An Add that go-redis re-sends
// after a lost reply is answered from a record of its first run instead of
// setting the score again, which would undo an Incr that another client
// made between the two runs (see the package doc, "Lost replies"); if
// every attempt lost its reply, the error wraps [ria.ErrOutcomeUnknown].
// score must be finite; a key that holds another type than a ZSET gives a
// [*ria.KeyError].
func (t *Top[T]) Add(ctx context.Context, key string, member T, score float64) error {
	_, err := t.write(ctx, "add", key, member, score)
	return err
}

// write runs top.lua, a once-script: op "incr" or "add".
func (t *Top[T]) write(ctx context.Context, op, key string, member T, score float64) (float64, error) {
	if err := checkKey("top "+op, key); err != nil {
		return 0, err
	}
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return 0, fmt.Errorf("cache: top %s %s %q: score %v: must be finite", t.name, op, key, score)
	}
	m, err := t.codec.Marshal(member)
	if err != nil {
		return 0, fmt.Errorf("cache: top %s %s %q: encode member: %w", t.name, op, key, err)
	}
	ks := []string{t.rankKey(key)}
	s := strconv.FormatFloat(score, 'g', -1, 64)
	v, err := topScript.RunOnce(ctx, t.rdb, t.keys.Once(t.name+":"+key), ks, op, s, m, ttlArg(t.ttl))
	if err != nil {
		return 0, fmt.Errorf("cache: top %s %s %q: %w", t.name, op, key, err)
	}
	str, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("cache: top %s %s %q: script %s: want a score, got %T", t.name, op, key, topScript.Name(), v)
	}
	f, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return 0, fmt.Errorf("cache: top %s %s %q: score %q: %w", t.name, op, key, str, err)
	}
	return f, nil
}

// Range returns the n highest-scored members of the ranking key, highest
// first (ties: the member whose encoding sorts last first), in one round
// trip. n must be at least 1 and at most [MaxN]. An undecodable member gives an error wrapping
// [ErrDecode].
func (t *Top[T]) Range(ctx context.Context, key string, n int) ([]Ranked[T], error) {
	if err := checkKey("top range", key); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxN {
		return nil, fmt.Errorf("cache: top %s range %q: n %d: must be at least 1 and at most %d", t.name, key, n, MaxN)
	}
	zs, err := t.rdb.ZRevRangeWithScores(ctx, t.rankKey(key), 0, int64(n)-1).Result()
	if err != nil {
		err = script.WrongType(ctx, t.rdb, err, t.rankKey(key), "cache top ranking", "zset")
		return nil, fmt.Errorf("cache: top %s range %q: %w", t.name, key, err)
	}
	out, err := t.decode(zs)
	if err != nil {
		return nil, fmt.Errorf("cache: top %s range %q: %w", t.name, key, err)
	}
	return out, nil
}

// Remove removes members from the ranking key and returns how many of them
// were in it, in one round trip (a script: ZREM). The ranking's TTL is
// left as it is; a ranking left empty no longer exists. A Remove that
// go-redis re-sends after a lost reply is answered from a record of its
// first run, so the count stays true (see the package doc, "Lost
// replies"); if every attempt lost its reply, the error wraps
// [ria.ErrOutcomeUnknown]. At least one member must be given; a key that
// holds another type than a ZSET gives a [*ria.KeyError].
func (t *Top[T]) Remove(ctx context.Context, key string, members ...T) (int, error) {
	if err := checkKey("top remove", key); err != nil {
		return 0, err
	}
	if len(members) == 0 {
		return 0, fmt.Errorf("cache: top %s remove %q: no members", t.name, key)
	}
	args := make([]any, len(members))
	for i, m := range members {
		b, err := t.codec.Marshal(m)
		if err != nil {
			return 0, fmt.Errorf("cache: top %s remove %q: encode member %d: %w", t.name, key, i, err)
		}
		args[i] = b
	}
	v, err := topRemoveScript.RunOnce(ctx, t.rdb, t.keys.Once(t.name+":"+key), []string{t.rankKey(key)}, args...)
	if err != nil {
		return 0, fmt.Errorf("cache: top %s remove %q: %w", t.name, key, err)
	}
	n, err := topRemoveScript.AsInt64(v)
	if err != nil {
		return 0, fmt.Errorf("cache: top %s remove %q: %w", t.name, key, err)
	}
	return int(n), nil
}

// Score returns member's score in the ranking key, and false if member is
// not in it (or the ranking does not exist), in one round trip (ZSCORE). A
// key that holds another type than a ZSET gives a [*ria.KeyError].
func (t *Top[T]) Score(ctx context.Context, key string, member T) (float64, bool, error) {
	k, m, err := t.lookup("score", key, member)
	if err != nil {
		return 0, false, err
	}
	v, err := t.rdb.Do(ctx, "zscore", k, m).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, false, nil
	case err != nil:
		err = script.WrongType(ctx, t.rdb, err, k, "cache top ranking", "zset")
		return 0, false, fmt.Errorf("cache: top %s score %q: %w", t.name, key, err)
	}
	// A double on RESP3, a bulk string on RESP2.
	switch v := v.(type) {
	case float64:
		return v, true, nil
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f, true, nil
		}
	}
	return 0, false, fmt.Errorf("cache: top %s score %q: want a score, got %T %v", t.name, key, v, v)
}

// Rank returns member's rank in the ranking key, 0 for the top, in the
// order of [Top.Range] (highest score first; ties: the member whose
// encoding sorts last first), and false if member is not in it (or the
// ranking does not exist), in one round trip (ZREVRANK). A key that holds
// another type than a ZSET gives a [*ria.KeyError].
func (t *Top[T]) Rank(ctx context.Context, key string, member T) (int64, bool, error) {
	k, m, err := t.lookup("rank", key, member)
	if err != nil {
		return 0, false, err
	}
	r, err := t.rdb.Do(ctx, "zrevrank", k, m).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, false, nil
	case err != nil:
		err = script.WrongType(ctx, t.rdb, err, k, "cache top ranking", "zset")
		return 0, false, fmt.Errorf("cache: top %s rank %q: %w", t.name, key, err)
	}
	return r, true, nil
}

// lookup checks key and returns the ranking's key and member's encoding
// for op.
func (t *Top[T]) lookup(op, key string, member T) (string, []byte, error) {
	if err := checkKey("top "+op, key); err != nil {
		return "", nil, err
	}
	m, err := t.codec.Marshal(member)
	if err != nil {
		return "", nil, fmt.Errorf("cache: top %s %s %q: encode member: %w", t.name, op, key, err)
	}
	return t.rankKey(key), m, nil
}

func (t *Top[T]) decode(zs []redis.Z) ([]Ranked[T], error) {
	out := make([]Ranked[T], len(zs))
	for i, z := range zs {
		s, ok := z.Member.(string)
		if !ok {
			return nil, errors.New("member is not a string")
		}
		if err := t.codec.Unmarshal([]byte(s), &out[i].Member); err != nil {
			return nil, fmt.Errorf("member %d: %w: %w", i, ErrDecode, err)
		}
		out[i].Score = z.Score
	}
	return out, nil
}
