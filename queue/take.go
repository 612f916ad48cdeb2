package queue

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// maxTake is the most tasks one take asks for.
const maxTake = 64

// outcome is how a run of a task ended, to be settled on the server.
type outcome struct {
	job     *job
	kind    byte          // 'a' ack, 'r' retry, 'd' dead now, 'l' release
	backoff time.Duration // before the retry
	err     string        // the handler's error
}

// appendOutcomes encodes outcomes as settle in common.lua reads them.
func appendOutcomes(args []any, os []outcome) []any {
	acks := 0
	for _, o := range os {
		if o.kind == 'a' {
			acks++
		}
	}
	args = append(args, acks)
	for _, o := range os {
		if o.kind == 'a' {
			args = append(args, o.job.task.ID, o.job.token)
		}
	}
	args = append(args, len(os)-acks)
	for _, o := range os {
		if o.kind != 'a' {
			args = append(args, o.job.task.ID, o.job.token, string(o.kind), max(o.backoff.Milliseconds(), 1), o.err)
		}
	}
	return args
}

// taken is one task that take handed out.
type taken struct {
	task  Task
	token string
}

// take settles outcomes, promotes due tasks, recovers expired leases and
// takes up to k ready tasks of queues (in priority order) with a lease, in
// one round trip. When it takes fewer than k, wait is the time until the
// earliest due time or lease deadline, or -1 if there is none.
// With maintain it also promotes and recovers first; without, only if it
// is about to take fewer than k.
func (g *Group) take(ctx context.Context, queues []string, k int, lease time.Duration, maintain bool, os []outcome) (tasks []taken, wait time.Duration, err error) {
	keys := g.keys.base()
	for _, q := range queues {
		keys = append(keys, g.keys.ready+q)
	}
	for _, q := range queues {
		keys = append(keys, g.keys.signal+q)
	}
	m := "0"
	if maintain {
		m = "1"
	}
	args := appendOutcomes([]any{k, lease.Milliseconds(), batch, g.deadLimit, len(queues), m}, os)
	v, err := takeScript.Run(ctx, g.rdb, keys, args...)
	if err != nil {
		return nil, 0, err
	}
	arr, ok := v.([]any)
	if !ok || len(arr) < 1 || (len(arr)-1)%7 != 0 {
		return nil, 0, fmt.Errorf("script %s: malformed reply %v", takeScript.Name(), v)
	}
	hint, ok := arr[0].(int64)
	if !ok {
		return nil, 0, fmt.Errorf("script %s: want an integer wait, got %T", takeScript.Name(), arr[0])
	}
	wait = -1
	if hint >= 0 {
		wait = time.Duration(hint) * time.Millisecond
	}
	tasks = make([]taken, 0, (len(arr)-1)/7)
	for i := 1; i < len(arr); i += 7 {
		var (
			t                      taken
			token, j               int64
			payload, attempt, maxr string
		)
		if err := scan(arr[i:i+7], &t.task.ID, &token, &t.task.Name, &payload, &attempt, &maxr, &j); err != nil {
			return nil, 0, fmt.Errorf("script %s: %w", takeScript.Name(), err)
		}
		if j < 1 || int(j) > len(queues) {
			return nil, 0, fmt.Errorf("script %s: queue index %d out of range", takeScript.Name(), j)
		}
		t.token = strconv.FormatInt(token, 10)
		t.task.Queue = queues[j-1]
		t.task.Payload = []byte(payload)
		t.task.Attempt, _ = strconv.Atoi(attempt)
		t.task.MaxRetry, _ = strconv.Atoi(maxr)
		t.task.codec = g.codec
		tasks = append(tasks, t)
	}
	return tasks, wait, nil
}

// settle applies outcomes in one round trip. With wake, a retry pushes a
// token to wakeKey, the wake list of the worker that settles.
func (g *Group) settle(ctx context.Context, os []outcome, wakeKey string, wake bool) error {
	w := "0"
	if wake {
		w = "1"
	}
	_, err := settleScript.Run(ctx, g.rdb, append(g.keys.base(), wakeKey), appendOutcomes([]any{g.deadLimit, w}, os)...)
	return err
}

// extend pushes back the lease deadline of each job still held to the
// server's now + lease, in one round trip, and reports which were held.
func (g *Group) extend(ctx context.Context, lease time.Duration, jobs []*job) ([]bool, error) {
	args := make([]any, 1, 1+2*len(jobs))
	args[0] = lease.Milliseconds()
	for _, j := range jobs {
		args = append(args, j.task.ID, j.token)
	}
	r, err := extendScript.Int64s(ctx, g.rdb, []string{g.keys.inflight}, args...)
	if err != nil {
		return nil, err
	}
	if len(r) != len(jobs) {
		return nil, fmt.Errorf("script %s: want %d results, got %d", extendScript.Name(), len(jobs), len(r))
	}
	held := make([]bool, len(r))
	for i, n := range r {
		held[i] = n == 1
	}
	return held, nil
}
