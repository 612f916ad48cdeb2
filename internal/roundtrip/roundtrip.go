// Package roundtrip counts the round trips and commands a go-redis client
// sends, for the tests' round-trip assertions and the benchmarks' reports.
package roundtrip

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Counter is a redis.Hook that counts round trips (one per command, one per
// pipeline or transaction) and commands. The commands go-redis sends on its
// own, to set up a new connection (HELLO, AUTH, SELECT, CLIENT, READONLY) or
// to learn a cluster's layout (CLUSTER, COMMAND), are not counted: they are
// not part of any operation. A blocking command (BLPOP) is
// one round trip however long it blocks. Retries and MOVED redirects inside
// go-redis are not seen: it counts what the caller asked for. It is safe for
// concurrent use.
type Counter struct {
	roundTrips atomic.Int64
	commands   atomic.Int64
}

// RoundTrips returns the round trips counted so far.
func (c *Counter) RoundTrips() int64 { return c.roundTrips.Load() }

// Commands returns the commands counted so far.
func (c *Counter) Commands() int64 { return c.commands.Load() }

// Delta runs fn and returns the round trips and commands it made.
func (c *Counter) Delta(fn func()) (roundTrips, commands int64) {
	r0, c0 := c.RoundTrips(), c.Commands()
	fn()
	return c.RoundTrips() - r0, c.Commands() - c0
}

// DialHook implements redis.Hook.
func (c *Counter) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (c *Counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !connSetup(cmd) {
			c.roundTrips.Add(1)
			c.commands.Add(1)
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (c *Counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		n := int64(0)
		for _, cmd := range cmds {
			if !connSetup(cmd) {
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

// connSetup reports whether cmd is one go-redis sends on its own.
func connSetup(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "auth", "select", "client", "readonly", "cluster", "command":
		return true
	}
	return false
}

var _ redis.Hook = (*Counter)(nil)
