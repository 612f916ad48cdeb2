package server

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Counter is a redis.Hook that counts round trips (one per command, one per
// pipeline or transaction) and the commands they carry. The commands go-redis
// sends to set up a new connection (HELLO, AUTH, CLIENT, SELECT, READONLY) are
// not counted. A blocking command (BLPOP) is one round trip however long it
// blocks. It is safe for concurrent use.
type Counter struct {
	roundTrips atomic.Int64
	commands   atomic.Int64
}

var _ redis.Hook = (*Counter)(nil)

// RoundTrips returns the round trips counted so far.
func (c *Counter) RoundTrips() int64 { return c.roundTrips.Load() }

// Commands returns the commands counted so far.
func (c *Counter) Commands() int64 { return c.commands.Load() }

// DialHook implements redis.Hook.
func (c *Counter) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (c *Counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !connSetup(cmd.Name()) {
			c.roundTrips.Add(1)
			c.commands.Add(1)
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (c *Counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var n int64
		for _, cmd := range cmds {
			if !connSetup(cmd.Name()) {
				n++
			}
		}
		if n > 0 {
			c.roundTrips.Add(1)
			c.commands.Add(n)
		}
		return next(ctx, cmds)
	}
}

// connSetup reports whether name is a command go-redis sends to set up a
// connection.
func connSetup(name string) bool {
	switch name {
	case "hello", "auth", "client", "select", "readonly":
		return true
	}
	return false
}
