package logs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/script"
)

// call is one run of a once-script made ready to be sent in a pipeline
// (internal/script runs a script alone): the EVALSHA that
// script.Script.RunOnce would send, with a record TTL of the caller's
// choosing, and then its reply, read back through RunOnce so that errors
// come out as RunOnce gives them (*ria.KeyError, ria.ErrOutcomeUnknown).
type call struct {
	s        *script.Script
	sha, src string
	record   string
	keys     []string // the script's keys, then the record
	args     []any    // the script's arguments, then the record's TTL in ms

	val any
	err error
}

// errCaptured is what [capture] answers; nobody sees it.
var errCaptured = errors.New("logs: captured")

// capture is a redis.Scripter that sends nothing: it notes what a
// script's Run would send. redis.Script.Run sends EVALSHA and, when that
// fails with NOSCRIPT, EVAL with the source: capture fails the first with
// NOSCRIPT to see both.
type capture struct {
	sha, src string
	keys     []string
	args     []any
}

func (c *capture) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	c.sha, c.keys, c.args = sha, keys, args
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(redis.ErrNoScript)
	return cmd
}

func (c *capture) Eval(ctx context.Context, src string, _ []string, _ ...any) *redis.Cmd {
	c.src = src
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(errCaptured)
	return cmd
}

func (c *capture) EvalRO(ctx context.Context, src string, keys []string, args ...any) *redis.Cmd {
	return c.Eval(ctx, src, keys, args...)
}

func (c *capture) EvalShaRO(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	return c.EvalSha(ctx, sha, keys, args...)
}

func (c *capture) ScriptExists(ctx context.Context, _ ...string) *redis.BoolSliceCmd {
	cmd := redis.NewBoolSliceCmd(ctx)
	cmd.SetErr(errCaptured)
	return cmd
}

func (c *capture) ScriptLoad(ctx context.Context, _ string) *redis.StringCmd {
	cmd := redis.NewStringCmd(ctx)
	cmd.SetErr(errCaptured)
	return cmd
}

// replay is a redis.Scripter whose EVALSHA answers with a reply received
// in a pipeline.
type replay struct{ cmd *redis.Cmd }

func (r replay) EvalSha(context.Context, string, []string, ...any) *redis.Cmd { return r.cmd }
func (r replay) Eval(context.Context, string, []string, ...any) *redis.Cmd    { return r.cmd }
func (r replay) EvalRO(context.Context, string, []string, ...any) *redis.Cmd  { return r.cmd }
func (r replay) EvalShaRO(context.Context, string, []string, ...any) *redis.Cmd {
	return r.cmd
}
func (r replay) ScriptExists(ctx context.Context, _ ...string) *redis.BoolSliceCmd {
	return redis.NewBoolSliceCmd(ctx)
}
func (r replay) ScriptLoad(ctx context.Context, _ string) *redis.StringCmd {
	return redis.NewStringCmd(ctx)
}

// prepare returns the call of once-script s with record, keys and args,
// whose reply record will live for ttl.
func prepare(s *script.Script, record string, ttl time.Duration, keys []string, args ...any) (*call, error) {
	var c capture
	_, _ = s.RunOnce(context.Background(), &c, record, keys, args...)
	if c.sha == "" || c.src == "" || len(c.args) != len(args)+1 || len(c.keys) != len(keys)+1 {
		return nil, fmt.Errorf("logs: script %s: cannot prepare a pipelined run", s.Name())
	}
	c.args[len(c.args)-1] = max(ttl.Milliseconds(), 1)
	return &call{s: s, sha: c.sha, src: c.src, record: record, keys: c.keys, args: c.args}, nil
}

// send runs calls in one pipeline (one round trip per node on a Cluster),
// then again with EVAL those the server did not know the script of, and
// sets each call's val and err. (The same as in package counters; see
// there.)
func send(ctx context.Context, rdb Client, calls []*call) {
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range calls {
			cmds[i] = p.EvalSha(ctx, c.sha, c.keys, c.args...)
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
		_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range again {
				cmds[i] = p.Eval(ctx, calls[i].src, calls[i].keys, calls[i].args...)
			}
			return nil
		})
	}
	for i, c := range calls {
		n := len(c.keys) - 1
		c.val, c.err = c.s.RunOnce(ctx, replay{cmds[i]}, c.record, c.keys[:n], c.args[:len(c.args)-1]...)
	}
}
