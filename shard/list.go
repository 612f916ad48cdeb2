package shard

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/wait"
)

var (
	//go:embed push.lua
	pushLua    string
	pushScript = script.NewOnce("shard list push", pushLua)

	//go:embed pop.lua
	popLua    string
	popScript = script.NewOnce("shard list pop", popLua)

	//go:embed len.lua
	lenLua    string
	lenScript = script.New("shard list len", lenLua)
)

// List is a list spread over many small Redis lists (book 11.4): a push at
// either end fills the shard at that end and opens new shards past it, a
// pop empties the shard at its end and moves past it; each push and pop is
// one Lua script. Blocking pops wait without polling: a script cannot
// block (Redis refuses BLPOP inside one), so a pop that finds the list
// empty registers its caller in the same script, the caller blocks on a
// wake list of its own, and the next push wakes every registered caller.
// All of a list's keys share one hash tag, so a list lives on one server
// (one Cluster slot). It is safe for concurrent use.
type List struct {
	rdb  Client
	name string
	keys keys.Space
	size int64
}

// NewList returns the sharded list name. It takes [WithPrefix] and
// [WithShardSize] (default: 512, the book's list-max-ziplist-entries; Redis
// 7.0 keeps every list as a quicklist of listpack nodes, so the shard size
// only bounds how much one key holds). The first NewList of a name stores
// its shard size; later ones must agree ([ErrMismatch]).
func NewList(ctx context.Context, rdb Client, name string, opts ...Option) (*List, error) {
	if rdb == nil {
		return nil, fmt.Errorf("shard: list %q: nil client", name)
	}
	o, ks, err := newOptions("list", opts, "WithShardSize")
	if err != nil {
		return nil, err
	}
	if err := keys.CheckEntity("shard: list name", name); err != nil {
		return nil, err
	}
	ps, err := loadMeta(ctx, rdb, "list", name, ks.Key(name, "list:meta"),
		[]param{{name: "size", value: o.size, explicit: o.size > 0}},
		func(ps []param) error {
			if ps[0].value == 0 {
				ps[0].value = 512
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	if ps[0].value < 1 { // a push would find no room in any shard, and search for ever
		return nil, fmt.Errorf("shard: list %q: %w", name, corrupt(ks.Key(name, "list:meta"), "shard meta",
			"size="+strconv.FormatInt(ps[0].value, 10), "a positive size"))
	}
	return &List{rdb: rdb, name: name, keys: ks, size: ps[0].value}, nil
}

// Name returns the list's name.
func (l *List) Name() string { return l.name }

// firstKey and lastKey are STRINGs: the numbers of the end shards.
func (l *List) firstKey() string { return l.keys.Key(l.name, "first") }
func (l *List) lastKey() string  { return l.keys.Key(l.name, "last") }

// waitersKey is a ZSET of the blocked pops' waiter ids, scored by when
// their registration ends (ms).
func (l *List) waitersKey() string { return l.keys.Key(l.name, "waiters") }

// shardPrefix is the prefix of the shard keys (a LIST each, prefix+n) and
// of the wake lists (prefix+"wake:"+waiter id).
func (l *List) shardPrefix() string { return l.keys.Key(l.name, "") }

// maxPush bounds the values of one push, so that one script call stays
// short (it blocks the server while it runs).
const maxPush = 100_000

// PushLeft pushes values at the left end, in order (so the last one ends
// leftmost, as LPUSH does), and returns how many it pushed: one script, one
// round trip. A re-send after a lost reply is answered from the first
// run's record and pushes nothing twice; if every re-send fails, the error
// wraps ria.ErrOutcomeUnknown.
func (l *List) PushLeft(ctx context.Context, values ...string) (int64, error) {
	return l.push(ctx, "l", values)
}

// PushRight pushes values at the right end, in order; see [List.PushLeft].
func (l *List) PushRight(ctx context.Context, values ...string) (int64, error) {
	return l.push(ctx, "r", values)
}

func (l *List) push(ctx context.Context, dir string, values []string) (int64, error) {
	if len(values) == 0 {
		return 0, nil
	}
	if len(values) > maxPush {
		return 0, fmt.Errorf("shard: list %q: push of %d values, at most %d per call", l.name, len(values), maxPush)
	}
	args := make([]any, 0, len(values)+2)
	args = append(args, dir, l.size)
	for _, v := range values {
		args = append(args, v)
	}
	v, err := pushScript.RunOnce(ctx, l.rdb, l.keys.Once(l.name),
		[]string{l.firstKey(), l.lastKey(), l.waitersKey(), l.shardPrefix()}, args...)
	if err != nil {
		return 0, fmt.Errorf("shard: list %q: push: %w", l.name, err)
	}
	n, err := pushScript.AsInt64(v)
	if err != nil {
		return 0, fmt.Errorf("shard: list %q: push: %w", l.name, err)
	}
	return n, nil
}

// PopLeft removes and returns the leftmost value (ok false when the list
// is empty): one script, one round trip, answered truly after a lost reply
// (see [List.PushLeft]).
func (l *List) PopLeft(ctx context.Context) (string, bool, error) { return l.pop(ctx, "l", "", 0) }

// PopRight removes and returns the rightmost value; see [List.PopLeft].
func (l *List) PopRight(ctx context.Context) (string, bool, error) { return l.pop(ctx, "r", "", 0) }

// waitSlack is how long a blocked pop's registration outlives its wait.
const waitSlack = 2 * time.Second

// pop runs the pop script; with a waiter, an empty list registers it for
// wait (plus slack), and wait < 0 makes it leave instead.
func (l *List) pop(ctx context.Context, dir, waiter string, wait time.Duration) (string, bool, error) {
	ms := int64(-1)
	if wait >= 0 {
		ms = (wait + waitSlack).Milliseconds()
	}
	v, err := popScript.RunOnce(ctx, l.rdb, l.keys.Once(l.name),
		[]string{l.firstKey(), l.lastKey(), l.waitersKey(), l.shardPrefix()}, dir, waiter, ms)
	if err != nil {
		return "", false, fmt.Errorf("shard: list %q: pop: %w", l.name, err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return "", false, fmt.Errorf("shard: list %q: pop: unexpected reply %v", l.name, v)
	}
	if got, _ := arr[0].(int64); got == 0 {
		return "", false, nil
	}
	s, ok := arr[1].(string)
	if len(arr) != 2 || !ok {
		return "", false, fmt.Errorf("shard: list %q: pop: unexpected reply %v", l.name, v)
	}
	return s, true, nil
}

// BlockingPopLeft pops the leftmost value, waiting up to timeout for one
// (ok false when none came; timeout <= 0 does not wait), or until ctx
// ends. It costs one round trip when the list has a value; otherwise the
// pop registers the caller, which blocks (BLMOVE) on a wake list of its
// own until a push wakes it, and pops again: three round trips for a value
// that arrives while it waits, more if other pops take it first. Each
// waiting call holds a connection of the client's pool. A wait that ends
// with none ends when the server times the BLMOVE out: Redis does that at
// its next event loop tick, up to 1000/hz ms after timeout (100 ms at the
// default hz 10).
func (l *List) BlockingPopLeft(ctx context.Context, timeout time.Duration) (string, bool, error) {
	return l.bpop(ctx, "l", timeout)
}

// BlockingPopRight pops the rightmost value, waiting; see
// [List.BlockingPopLeft].
func (l *List) BlockingPopRight(ctx context.Context, timeout time.Duration) (string, bool, error) {
	return l.bpop(ctx, "r", timeout)
}

func (l *List) bpop(ctx context.Context, dir string, timeout time.Duration) (string, bool, error) {
	if timeout <= 0 {
		return l.pop(ctx, dir, "", 0)
	}
	deadline := time.Now().Add(timeout)
	waiter := script.Nonce()
	wake := l.shardPrefix() + "wake:" + waiter
	for {
		left := time.Until(deadline)
		if left <= 0 {
			// The wait is over: one last pop that leaves (deletes the
			// registration and the wake list), so that a value pushed as
			// the wait ended is not left behind while we report none.
			return l.pop(ctx, dir, waiter, -1)
		}
		// The registration lasts one block (re-made by the next pop): a
		// wait of "for ever" (math.MaxInt64) would overflow with the slack.
		v, ok, err := l.pop(ctx, dir, waiter, min(left, wait.MaxBlock))
		if err != nil || ok {
			return v, ok, err
		}
		// A push after the pop registered us wakes us; one before it
		// would have been popped. The wake value stays on the list (BLMOVE
		// onto itself), so a re-sent BLMOVE finds it too; the next pop
		// deletes it.
		if _, _, err := wait.Pop(ctx, l.rdb, wake, min(left, wait.MaxBlock)); err != nil {
			return "", false, fmt.Errorf("shard: list %q: wait: %w", l.name, err)
		}
	}
}

// Len returns the number of values: one read-only script summing the
// shards' lengths (one round trip; it runs over every shard of the list).
func (l *List) Len(ctx context.Context) (int64, error) {
	n, err := lenScript.Int64(ctx, l.rdb, []string{l.firstKey(), l.lastKey(), l.shardPrefix()})
	if err != nil {
		return 0, fmt.Errorf("shard: list %q: len: %w", l.name, err)
	}
	return n, nil
}
