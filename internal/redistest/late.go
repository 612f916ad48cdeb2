package redistest

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// NoTimeouts is a redis.Hook that sends every blocking pop or move (BLPOP,
// BRPOP, BLMOVE, BRPOPLPUSH, BZPOPMIN, BZPOPMAX) with the timeout 0, so the
// server never times it out: a server whose timeouts come late (Redis
// times a blocked command out at its next event loop tick, up to 1000/hz
// ms late) taken to the limit. A caller that must stop waiting on time has
// to end its wait itself. Add it to a client of its own
// ([Backend.NewClient]).
type NoTimeouts struct{}

func (NoTimeouts) DialHook(next redis.DialHook) redis.DialHook { return next }

func (NoTimeouts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		noTimeout(cmd)
		return next(ctx, cmd)
	}
}

func (NoTimeouts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			noTimeout(cmd)
		}
		return next(ctx, cmds)
	}
}

func noTimeout(cmd redis.Cmder) {
	switch strings.ToLower(cmd.Name()) {
	case "blpop", "brpop", "blmove", "brpoplpush", "bzpopmin", "bzpopmax":
		args := cmd.Args()
		args[len(args)-1] = 0
	}
}
