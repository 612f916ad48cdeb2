package queue

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ria-go/ria/internal/keys"
)

// State is where a task is.
type State string

// The states of a task.
const (
	StateReady   State = "ready"   // in its queue's ready list (or being taken)
	StateDelayed State = "delayed" // waiting for its due time or its retry
	StateRunning State = "running" // leased by a worker
	StateDead    State = "dead"    // out of retries, or failed for good
)

// TaskInfo is what [Group.Task] tells about one task.
type TaskInfo struct {
	ID       string
	Queue    string
	Name     string
	Payload  []byte // as enqueued (JSON unless the task was enqueued raw)
	MaxRetry int
	State    State
	Attempts int    // failed attempts
	Error    string // the last error, after a failure
	Unique   string // its uniqueness key ([Unique]), "" if none
	// At is the due time of a delayed task, the lease deadline of a
	// running one, the time of death of a dead one (server clock); zero
	// for a ready task.
	At time.Time
}

// Task returns the state of task id, in one round trip (a read-only
// script), or [ErrNotFound] if the group holds no such task (never
// enqueued, done, or cancelled). An empty id is an error. A key of this
// group holding another type gives a [*ria.KeyError].
func (g *Group) Task(ctx context.Context, id string) (TaskInfo, error) {
	if id == "" {
		return TaskInfo{}, fmt.Errorf("queue: task in %q: empty ID", g.name)
	}
	v, err := infoScript.Run(ctx, g.rdb, []string{g.keys.tasks, g.keys.delayed, g.keys.inflight, g.keys.dead}, id, keys.GlobEscape(id))
	if err != nil {
		return TaskInfo{}, fmt.Errorf("queue: task %q in %q: %w", id, g.name, err)
	}
	arr, _ := v.([]any)
	if len(arr) == 0 {
		return TaskInfo{}, fmt.Errorf("queue: task %q in %q: %w", id, g.name, ErrNotFound)
	}
	var state, raw, attempts, lastErr string
	var at int64
	if len(arr) != 5 {
		return TaskInfo{}, fmt.Errorf("queue: task %q in %q: script %s: malformed reply %v", id, g.name, infoScript.Name(), v)
	}
	if err := scan(arr, &state, &raw, &attempts, &lastErr, &at); err != nil {
		return TaskInfo{}, fmt.Errorf("queue: task %q in %q: script %s: %w", id, g.name, infoScript.Name(), err)
	}
	p, err := unpack(raw)
	if err != nil {
		return TaskInfo{}, fmt.Errorf("queue: task %q in %q: %w", id, g.name, err)
	}
	info := TaskInfo{ID: id, Queue: p.queue, Name: p.name, Payload: []byte(p.payload), MaxRetry: p.maxRetry,
		State: State(state), Error: lastErr, Unique: p.unique}
	info.Attempts, _ = strconv.Atoi(attempts)
	if at != 0 {
		info.At = time.UnixMilli(at)
	}
	return info, nil
}
