package queue

import (
	"context"
	_ "embed"
	"fmt"
	"slices"

	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed pause.lua
	pauseLua string
	//go:embed paused.lua
	pausedLua string

	pauseScript  = script.NewOnce("queue pause", libLua+pauseLua)
	pausedScript = script.New("queue paused", libLua+pausedLua)
)

// Pause pauses the queue called queue, in one round trip: until
// [Group.Resume], no worker takes its tasks. It keeps accepting enqueues,
// and its delayed tasks are promoted into it when due; tasks already taken
// (running, or prefetched by a worker: see [Prefetch]) finish normally. A
// worker that serves other queues too keeps taking from them, in priority
// order. The paused state is kept in Redis, for every process; pausing a
// paused queue does nothing. An empty queue name is an error; a key of the
// wrong type gives a *ria.KeyError. A re-sent call (go-redis re-sends a
// script whose reply was lost) is answered from a record of its first run
// and changes nothing more: it cannot pause again a queue another client
// resumed meanwhile. If every re-send fails, the error wraps
// ria.ErrOutcomeUnknown.
func (g *Group) Pause(ctx context.Context, queue string) error {
	return g.pause(ctx, "pause", queue, "1")
}

// Resume resumes the paused queue called queue, in one round trip, and
// wakes an idle worker of it at once if it has ready tasks (that worker
// wakes the next one if it leaves tasks behind). Resuming a queue that is
// not paused does nothing. Its errors are those of [Group.Pause].
func (g *Group) Resume(ctx context.Context, queue string) error {
	return g.pause(ctx, "resume", queue, "0")
}

func (g *Group) pause(ctx context.Context, op, queue, flag string) error {
	if queue == "" {
		return fmt.Errorf("queue: %s in %q: queue name: empty name", op, g.name)
	}
	_, err := pauseScript.RunOnce(ctx, g.rdb, g.keys.once(), []string{g.keys.paused, g.keys.ready + queue, g.keys.signal + queue}, queue, flag)
	if err != nil {
		return fmt.Errorf("queue: %s %q in %q: %w", op, queue, g.name, err)
	}
	return nil
}

// Paused returns the names of the group's paused queues, sorted, in one
// round trip.
func (g *Group) Paused(ctx context.Context) ([]string, error) {
	v, err := pausedScript.Run(ctx, g.rdb, []string{g.keys.paused})
	if err != nil {
		return nil, fmt.Errorf("queue: paused in %q: %w", g.name, err)
	}
	arr, ok := v.([]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("queue: paused in %q: script %s: malformed reply %T", g.name, pausedScript.Name(), v)
	}
	out := make([]string, len(arr))
	for i, x := range arr {
		if out[i], ok = x.(string); !ok {
			return nil, fmt.Errorf("queue: paused in %q: script %s: malformed reply %T", g.name, pausedScript.Name(), x)
		}
	}
	slices.Sort(out)
	return out, nil
}
