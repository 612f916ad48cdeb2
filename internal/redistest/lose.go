package redistest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// ErrReplyLost is the error [ReplyLoser] puts in place of a reply: it looks
// like a connection dropped mid-reply, a transient error.
var ErrReplyLost = fmt.Errorf("redistest: reply lost: %w", io.ErrUnexpectedEOF)

// ErrLoading is a LOADING error reply (a redis.Error), as a restarting
// server answers: go-redis re-sends a command on it, so it may be the last
// answer to a call whose first attempt ran and lost its reply.
var ErrLoading error = serverError("LOADING Redis is loading the dataset in memory")

// ErrBusy is a BUSY error reply, as a server running a long script
// answers: go-redis does not re-send on it, but it can answer a re-send
// (after a lost reply) of a call whose first attempt ran.
var ErrBusy error = serverError("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.")

type serverError string

func (e serverError) Error() string { return string(e) }
func (serverError) RedisError()     {}

// ReplyLoser is a redis.Hook that, once armed, lets the next script call
// (EVAL, EVALSHA) run on the server and then fails it with Err
// ([ErrReplyLost] if nil), as a connection dropped after the request would
// (with Err = [ErrLoading]: and go-redis's re-sends were refused). It is
// safe for concurrent use; set Err before arming.
type ReplyLoser struct {
	Err   error
	armed atomic.Bool
}

// Arm makes the next script call lose its reply.
func (h *ReplyLoser) Arm() { h.armed.Store(true) }

// DialHook implements redis.Hook.
func (h *ReplyLoser) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook implements redis.Hook.
func (h *ReplyLoser) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook implements redis.Hook.
func (h *ReplyLoser) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil && strings.HasPrefix(cmd.Name(), "eval") && h.armed.CompareAndSwap(true, false) {
			lost := h.Err
			if lost == nil {
				lost = ErrReplyLost
			}
			cmd.SetErr(lost)
			return lost
		}
		return err
	}
}
