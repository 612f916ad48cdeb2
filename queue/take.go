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

// waits are the times until the first due time in delayed and the first
// lease deadline in inflight, by the server's clock, as a take found them;
// negative: none, or not asked for.
type waits struct{ delayed, inflight time.Duration }

// take settles outcomes, promotes due tasks, recovers expired leases and
// takes up to k ready tasks of queues (in priority order) with a lease, in
// one round trip. With maintain it promotes and recovers first; without,
// only if it is about to take fewer than k. The waits are returned when it
// takes fewer than k, or with hint.
func (g *Group) take(ctx context.Context, queues []string, k int, lease time.Duration, maintain, hint bool, os []outcome) (tasks []taken, w waits, err error) {
	keys := g.keys.base()
	for _, q := range queues {
		keys = append(keys, g.keys.ready+q)
	}
	for _, q := range queues {
		keys = append(keys, g.keys.signal+q)
	}
	args := appendOutcomes([]any{k, lease.Milliseconds(), batch, g.deadLimit, len(queues), flag(maintain), flag(hint)}, os)
	w = waits{-1, -1}
	v, err := takeScript.Run(ctx, g.rdb, keys, args...)
	if err != nil {
		return nil, w, err
	}
	arr, ok := v.([]any)
	if !ok || len(arr) < 2 || (len(arr)-2)%7 != 0 {
		return nil, w, fmt.Errorf("script %s: malformed reply %v", takeScript.Name(), v)
	}
	for i, d := range []*time.Duration{&w.delayed, &w.inflight} {
		ms, ok := arr[i].(int64)
		if !ok {
			return nil, waits{-1, -1}, fmt.Errorf("script %s: want an integer wait, got %T", takeScript.Name(), arr[i])
		}
		if ms >= 0 {
			*d = time.Duration(ms) * time.Millisecond
		}
	}
	tasks = make([]taken, 0, (len(arr)-2)/7)
	for i := 2; i < len(arr); i += 7 {
		var (
			t                      taken
			j                      int64
			payload, attempt, maxr string
		)
		if err := scan(arr[i:i+7], &t.task.ID, &t.token, &t.task.Name, &payload, &attempt, &maxr, &j); err != nil {
			return nil, w, fmt.Errorf("script %s: %w", takeScript.Name(), err)
		}
		if j < 1 || int(j) > len(queues) {
			return nil, w, fmt.Errorf("script %s: queue index %d out of range", takeScript.Name(), j)
		}
		t.task.Queue = queues[j-1]
		t.task.Payload = []byte(payload)
		t.task.Attempt, _ = strconv.Atoi(attempt)
		t.task.MaxRetry, _ = strconv.Atoi(maxr)
		t.task.codec = g.codec
		tasks = append(tasks, t)
	}
	return tasks, w, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// settle applies outcomes in one round trip. With stop, for a worker that
// stops, it also wakes the worker's queues that have ready tasks (and an
// idle worker if tasks are delayed): the wake tokens the worker may have
// taken without taking tasks after them are passed on; and it deletes
// wakeKey, the worker's own wake list.
func (g *Group) settle(ctx context.Context, os []outcome, wakeKey string, stop bool, queues []string) error {
	keys := append(g.keys.base(), wakeKey)
	n := 0
	if stop {
		n = len(queues)
		for _, q := range queues {
			keys = append(keys, g.keys.ready+q)
		}
		for _, q := range queues {
			keys = append(keys, g.keys.signal+q)
		}
	}
	_, err := settleScript.Run(ctx, g.rdb, keys, appendOutcomes([]any{g.deadLimit, n}, os)...)
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
