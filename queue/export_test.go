package queue

import (
	"context"
	"time"
)

// TakeForTest takes up to k tasks of queues with a lease, as a worker that
// crashes right after its take would: nobody runs or settles them.
func (g *Group) TakeForTest(ctx context.Context, queues []string, k int, lease time.Duration) ([]Task, error) {
	tasks, _, err := g.take(ctx, queues, k, lease, true, false, nil)
	out := make([]Task, len(tasks))
	for i, t := range tasks {
		out[i] = t.task
	}
	return out, err
}
