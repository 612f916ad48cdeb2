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

// ReplyLoser is a redis.Hook that, once armed, lets the next script call
// (EVAL, EVALSHA) run on the server and then fails it with [ErrReplyLost],
// as a connection dropped after the request would. It is safe for
// concurrent use.
type ReplyLoser struct{ armed atomic.Bool }

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
			cmd.SetErr(ErrReplyLost)
			return ErrReplyLost
		}
		return err
	}
}
