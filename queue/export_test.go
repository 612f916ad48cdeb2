package queue

import (
	"context"
	"time"

	"github.com/ria-go/ria/internal/script"
)

// TakeForTest takes up to k tasks of queues with a lease, as a worker that
// crashes right after its take would: nobody runs or settles them.
func (g *Group) TakeForTest(ctx context.Context, queues []string, k int, lease time.Duration) ([]Task, error) {
	tasks, _, err := g.TakeRuns(ctx, "test", queues, k, lease, script.Nonce())
	return tasks, err
}

// Outcome is how a run ended, for SettleForTest and TakeRuns: Kind 'a'
// ack, 'r' retry, 'd' dead, 'l' release.
type Outcome struct {
	ID, Token string
	Kind      byte
	Attempts  string
	Backoff   time.Duration
	Err       string
	Unique    string // the task's uniqueness key (UniqueOf)
}

func outcomes(os []Outcome) []outcome {
	out := make([]outcome, len(os))
	for i, o := range os {
		out[i] = outcome{job: &job{task: Task{ID: o.ID, unique: o.Unique}, token: o.Token}, kind: o.Kind, attempts: o.Attempts, backoff: o.Backoff, err: o.Err}
	}
	return out
}

// TakeRuns is one take of the worker called worker (its take record is
// took:<worker>) with lease token token, settling outcomes first, always
// promoting and recovering. It returns the tasks taken and the waits.
func (g *Group) TakeRuns(ctx context.Context, worker string, queues []string, k int, lease time.Duration, token string, os ...Outcome) ([]Task, [2]time.Duration, error) {
	tasks, w, err := g.take(ctx, queues, g.keys.took+worker, k, lease, true, false, token, outcomes(os))
	out := make([]Task, len(tasks))
	for i, t := range tasks {
		out[i] = t.task
		if t.corrupt != nil && err == nil {
			err = t.corrupt
		}
	}
	return out, [2]time.Duration{w.delayed, w.inflight}, err
}

// SettleForTest settles outcomes as the worker called worker would while
// it waits for work, or, with stopQueues, when it stops serving them.
func (g *Group) SettleForTest(ctx context.Context, worker string, stopQueues []string, os ...Outcome) error {
	return g.settle(ctx, outcomes(os), g.keys.took+worker, g.keys.wake+worker, stopQueues != nil, stopQueues)
}

// ExtendForTest extends the leases of runs (ID, token pairs), as a
// heartbeat does.
func (g *Group) ExtendForTest(ctx context.Context, lease time.Duration, runs ...[2]string) ([]bool, error) {
	jobs := make([]*job, len(runs))
	for i, r := range runs {
		jobs[i] = &job{task: Task{ID: r[0]}, token: r[1]}
	}
	return g.extend(ctx, lease, jobs)
}

// Pack returns the packed form of a task, as the tasks hash holds it.
func Pack(queue, name string, maxRetry int, nonce string, payload []byte) string {
	return string(pack(nil, queue, name, maxRetry, nonce, payload))
}

// Nonce returns a new lease token.
func Nonce() string { return script.Nonce() }

// UniqueOf returns the uniqueness key of a task taken by TakeRuns.
func UniqueOf(t Task) string { return t.unique }

// UniqueKeyOf returns the default uniqueness key of a task.
func UniqueKeyOf(queue, name string, payload []byte) string { return uniqueKey(queue, name, payload) }

// SetBulkBatchForTest sets the tasks per script call of Purge,
// DeleteAllDead and RequeueAllDead (1 to MaxBulkBatch).
func (g *Group) SetBulkBatchForTest(n int) {
	if n < 1 || n > MaxBulkBatch {
		panic("queue: bulk batch out of range")
	}
	g.bulkBatch = n
}
