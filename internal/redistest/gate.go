package redistest

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Gate is a redis.Hook that holds requests on their way (a command alone or
// a pipeline) that match, one per [Hold] armed, until the test releases
// them: a test so knows which calls are on their way and which wait,
// whatever the scheduling. Add it to a client of its own ([Backend.NewClient]).
type Gate struct {
	match func(cmds []redis.Cmder) bool
	mu    sync.Mutex
	holds []*Hold
}

// Hold is one request held by a [Gate].
type Hold struct {
	entered chan struct{}
	release chan struct{}
}

// NewGate returns a Gate holding the requests for which match is true.
func NewGate(match func(cmds []redis.Cmder) bool) *Gate { return &Gate{match: match} }

// Arm makes the gate hold the next matching request (after those armed
// before).
func (g *Gate) Arm() *Hold {
	h := &Hold{entered: make(chan struct{}), release: make(chan struct{})}
	g.mu.Lock()
	g.holds = append(g.holds, h)
	g.mu.Unlock()
	return h
}

// Entered waits until a request is held.
func (h *Hold) Entered() { <-h.entered }

// Release lets the request go on to the server.
func (h *Hold) Release() { close(h.release) }

func (g *Gate) wait(cmds []redis.Cmder) {
	if !g.match(cmds) {
		return
	}
	g.mu.Lock()
	var h *Hold
	if len(g.holds) > 0 {
		h, g.holds = g.holds[0], g.holds[1:]
	}
	g.mu.Unlock()
	if h != nil {
		close(h.entered)
		<-h.release
	}
}

// DialHook implements redis.Hook.
func (g *Gate) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (g *Gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		g.wait([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (g *Gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		g.wait(cmds)
		return next(ctx, cmds)
	}
}
