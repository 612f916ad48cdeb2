package autocomplete

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
)

// Join adds names to the member set set (Redis in Action's join_guild).
// Adding a name that is there changes nothing; names that differ only in
// case are distinct members. One round trip (one script). A re-sent call
// (go-redis re-sends after a lost reply) is answered from a record of the
// first run and changes nothing, so it never undoes a later Leave or Join
// of another client (see Lost replies in the package doc).
//
// No names, more than [MaxBatch], or an empty, too long ([MaxName]) or
// malformed name is an error, as is a bad set name, and nothing is
// written. A set key holding another Redis type gives a *ria.KeyError and
// nothing is written.
func (c *Completer) Join(ctx context.Context, set string, names ...string) error {
	members, err := c.members(set, names)
	if err != nil {
		return fmt.Errorf("autocomplete: join: %w", err)
	}
	if _, err := joinScript.RunOnce(ctx, c.rdb, c.onceKey(set), []string{c.membersKey(set)}, members...); err != nil {
		return fmt.Errorf("autocomplete: join %q: %w", set, script.Unknown(err))
	}
	return nil
}

// Leave removes names from the member set set, those that are there
// (leave_guild). One round trip; a re-sent call changes nothing, as for
// [Completer.Join]. Errors as for [Completer.Join].
func (c *Completer) Leave(ctx context.Context, set string, names ...string) error {
	members, err := c.members(set, names)
	if err != nil {
		return fmt.Errorf("autocomplete: leave: %w", err)
	}
	if _, err := leaveScript.RunOnce(ctx, c.rdb, c.onceKey(set), []string{c.membersKey(set)}, members...); err != nil {
		return fmt.Errorf("autocomplete: leave %q: %w", set, script.Unknown(err))
	}
	return nil
}

// Complete returns up to n names of set that start with prefix,
// case-insensitively (see [Fold]), as they were spelled, in the order of
// their folded forms (names with one folded form in byte order). It is one
// ZRANGEBYLEX ... LIMIT 0 n over the range of folded forms that start
// with the folded prefix: one round trip, O(log N + n) on the server for a
// set of N names, with no sentinel members and nothing written, so
// concurrent joins and leaves never make it retry (the book's
// autocomplete_on_prefix inserts two sentinels under WATCH).
//
// An empty, too long ([MaxName]) or malformed prefix, an n outside 1 to
// [MaxCompletions], or a bad set name is an error. A set key holding
// another Redis type gives a *ria.KeyError.
func (c *Completer) Complete(ctx context.Context, set, prefix string, n int) ([]string, error) {
	if err := checkEntity("set", set); err != nil {
		return nil, fmt.Errorf("autocomplete: complete: %w", err)
	}
	if err := checkName("prefix", prefix); err != nil {
		return nil, fmt.Errorf("autocomplete: complete in %q: %w", set, err)
	}
	if n < 1 || n > MaxCompletions {
		return nil, fmt.Errorf("autocomplete: complete in %q: n %d: want 1 to %d: %w", set, n, MaxCompletions, ErrInvalid)
	}
	key := c.membersKey(set)
	p := Fold(prefix)
	// Every member that starts with p is longer than p (a NUL byte and a
	// name follow the folded form), so it sorts at or after p+"\x00"; being
	// valid UTF-8 and a NUL byte, it sorts before p+"\xff" (no UTF-8 byte
	// is 0xff). The NUL in the lower bound also keeps "[-" and "[+" from
	// reading as the infinities on servers that parse them loosely
	// (miniredis).
	ms, err := c.rdb.ZRangeByLex(ctx, key, &redis.ZRangeBy{Min: "[" + p + "\x00", Max: "(" + p + "\xff", Count: int64(n)}).Result()
	if err != nil {
		return nil, fmt.Errorf("autocomplete: complete in %q: %w", set, script.WrongType(ctx, c.rdb, err, key, "autocomplete members", "zset"))
	}
	out, err := spellings(key, ms)
	if err != nil {
		return nil, fmt.Errorf("autocomplete: complete in %q: %w", set, err)
	}
	return out, nil
}

// Members returns up to n names of set, as they were spelled, in the order
// of [Completer.Complete] (by folded form, then by bytes): the first n
// when after is "", else the first n that sort after the name after. To
// list a whole set (an operator, a migration), call it again with the
// last name of each page as after until a page holds fewer than n names.
// after need not be in the set (it may have left since). It is one
// ZRANGEBYLEX ... LIMIT 0 n from after's member on: one round trip,
// O(log N + n) on the server, nothing written.
//
// Under concurrent joins and leaves, paging lists every name that is in
// the set from the first page to the last exactly once, in order; a name
// that joins or leaves meanwhile is listed or not depending on whether its
// place was read before or after the change.
//
// A too long ([MaxName]) or malformed after, an n outside 1 to
// [MaxCompletions], or a bad set name is an error. A set key holding
// another Redis type gives a *ria.KeyError; a member this package did not
// write, a *ria.KeyError matching ria.ErrCorrupt.
func (c *Completer) Members(ctx context.Context, set, after string, n int) ([]string, error) {
	if err := checkEntity("set", set); err != nil {
		return nil, fmt.Errorf("autocomplete: members: %w", err)
	}
	lo := "-"
	if after != "" {
		if err := checkName("after", after); err != nil {
			return nil, fmt.Errorf("autocomplete: members of %q: %w", set, err)
		}
		lo = "(" + member(after)
	}
	if n < 1 || n > MaxCompletions {
		return nil, fmt.Errorf("autocomplete: members of %q: n %d: want 1 to %d: %w", set, n, MaxCompletions, ErrInvalid)
	}
	key := c.membersKey(set)
	ms, err := c.rdb.ZRangeByLex(ctx, key, &redis.ZRangeBy{Min: lo, Max: "+", Count: int64(n)}).Result()
	if err != nil {
		return nil, fmt.Errorf("autocomplete: members of %q: %w", set, script.WrongType(ctx, c.rdb, err, key, "autocomplete members", "zset"))
	}
	out, err := spellings(key, ms)
	if err != nil {
		return nil, fmt.Errorf("autocomplete: members of %q: %w", set, err)
	}
	return out, nil
}

// spellings returns the names the members ms of the member set key hold.
func spellings(key string, ms []string) ([]string, error) {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		name, ok := spelling(m)
		if !ok {
			return nil, &ria.KeyError{Role: "autocomplete members", Key: key,
				Got: fmt.Sprintf("member %q", m), Want: "folded name, NUL, name", Err: ria.ErrCorrupt}
		}
		out = append(out, name)
	}
	return out, nil
}

// members checks set and names and returns the names' ZSET members.
func (c *Completer) members(set string, names []string) ([]any, error) {
	if err := checkEntity("set", set); err != nil {
		return nil, err
	}
	if len(names) == 0 || len(names) > MaxBatch {
		return nil, fmt.Errorf("set %q: %d names: want 1 to %d: %w", set, len(names), MaxBatch, ErrInvalid)
	}
	out := make([]any, len(names))
	for i, name := range names {
		if err := checkName("name", name); err != nil {
			return nil, fmt.Errorf("set %q: %w", set, err)
		}
		out[i] = member(name)
	}
	return out, nil
}
