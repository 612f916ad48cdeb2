package script

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Call is one run of a script made ready to be sent in a pipeline with
// other calls ([Send]): what [Script.Run] sends ([Script.Call]), or what
// [Script.RunOnce] sends, with a reply record that lives for ttl
// ([Script.Prepare]). After Send, Val and Err hold its result as Run or
// RunOnce would return it (*ria.KeyError; for a once-script,
// ria.ErrOutcomeUnknown when the reply was lost).
type Call struct {
	s    *Script
	keys []string // the script's keys, then the record
	args []any    // the script's arguments, then the record's TTL in ms

	Val any
	Err error
}

// Prepare returns the call of once-script s with record (see
// [Script.RunOnce]), keys and args, whose reply record lives for ttl.
func (s *Script) Prepare(record string, ttl time.Duration, keys []string, args ...any) *Call {
	if !s.once {
		panic("script " + s.name + ": Prepare of a script not built with NewOnce")
	}
	k := make([]string, 0, len(keys)+1)
	a := make([]any, 0, len(args)+1)
	return &Call{s: s, keys: append(append(k, keys...), record), args: append(append(a, args...), max(ttl.Milliseconds(), 1))}
}

// Call returns the call of s with keys and args, as [Script.Run] sends it.
func (s *Script) Call(keys []string, args ...any) *Call {
	if s.once {
		panic("script " + s.name + ": a once script is sent with Prepare")
	}
	return &Call{s: s, keys: keys, args: args}
}

// Pipeliner is what [Send] needs of a client.
type Pipeliner interface {
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// Send runs calls in one pipeline (one round trip per node on a Cluster),
// then again with EVAL those whose script the server did not know, and
// sets each call's Val and Err.
func Send(ctx context.Context, rdb Pipeliner, calls []*Call) {
	send(ctx, calls, false, func(fn func(redis.Pipeliner) error) { _, _ = rdb.Pipelined(ctx, fn) })
}

// SendWith runs calls as [Send] does, in one pipeline with the commands
// that also queues first (one round trip per node for both). Those are
// sent once: not again with the calls whose script the server did not
// know (EVAL after NOSCRIPT).
func SendWith(ctx context.Context, rdb Pipeliner, also func(redis.Pipeliner), calls []*Call) {
	first := true
	send(ctx, calls, false, func(fn func(redis.Pipeliner) error) {
		_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			if first && also != nil {
				also(p)
			}
			first = false
			return fn(p)
		})
	})
}

// SendTx runs calls as [Send] does, inside MULTI/EXEC (one per slot on a
// Cluster), which go-redis never sends again once it has written it: a
// call whose reply was lost ran once or not at all, and its Err wraps
// ria.ErrOutcomeUnknown. It serves scripts whose effect must not be
// doubled and that keep no reply record (not once-scripts: those are sent
// with Send).
func SendTx(ctx context.Context, c TxPipeliner, calls []*Call) {
	for _, call := range calls {
		if call.s.once {
			panic("script " + call.s.name + ": SendTx of a once script")
		}
	}
	send(ctx, calls, true, func(fn func(redis.Pipeliner) error) { _, _ = c.TxPipelined(ctx, fn) })
}

// send runs calls through exec (a pipeline, or MULTI/EXEC when tx), then
// again with EVAL those the server refused with NOSCRIPT (refused whole:
// they did not run), and sets each call's Val and Err.
func send(ctx context.Context, calls []*Call, tx bool, exec func(func(redis.Pipeliner) error)) {
	cmds := make([]*redis.Cmd, len(calls))
	exec(func(p redis.Pipeliner) error {
		for i, c := range calls {
			cmds[i] = c.s.s.EvalSha(ctx, p, c.keys, c.args...)
		}
		return nil
	})
	var again []int
	for i, cmd := range cmds {
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		exec(func(p redis.Pipeliner) error {
			for _, i := range again {
				cmds[i] = calls[i].s.s.Eval(ctx, p, calls[i].keys, calls[i].args...)
			}
			return nil
		})
	}
	for i, c := range calls {
		v, err := cmds[i].Result()
		switch {
		case err == redis.Nil:
			v, err = nil, nil
		case err != nil:
			if kerr := keyError(err); kerr != nil {
				err = kerr
			} else if err = fmt.Errorf("script %s: %w", c.s.name, err); c.s.once || tx {
				err = Unknown(err)
			}
		}
		c.Val, c.Err = v, err
	}
}

// TxPipeliner is what [Script.RunTx] needs of a client.
type TxPipeliner interface {
	TxPipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// RunTx runs s as [Script.Run] does, inside MULTI/EXEC (see [SendTx]): a
// call whose reply was lost is not re-run by the client, and its error
// wraps ria.ErrOutcomeUnknown (the script ran once or not at all). One
// round trip, two more commands on the server (MULTI, EXEC) instead of a
// reply record. The keys must share a slot.
func (s *Script) RunTx(ctx context.Context, c TxPipeliner, keys []string, args ...any) (any, error) {
	call := s.Call(keys, args...)
	SendTx(ctx, c, []*Call{call})
	return call.Val, call.Err
}
