package queue

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// maxTake is the most tasks one take asks for.
const maxTake = 64

// extendChunk is the most leases one heartbeat call extends.
const extendChunk = 1000

// outcome is how a run of a task ended, to be settled on the server.
type outcome struct {
	job      *job
	kind     byte          // 'a' ack, 'r' retry, 'd' dead now, 'l' release
	backoff  time.Duration // before the retry
	attempts string        // the failed attempts to record ('r', 'd'); "" leaves them
	err      string        // the handler's error
}

// appendOutcomes encodes outcomes as read_outcomes in common.lua reads them.
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
			args = append(args, o.job.task.ID, o.job.token, o.job.task.unique)
		}
	}
	args = append(args, len(os)-acks)
	for _, o := range os {
		if o.kind != 'a' {
			args = append(args, o.job.task.ID, o.job.token, string(o.kind), o.attempts, max(o.backoff.Milliseconds(), 1), o.err, o.job.task.unique)
		}
	}
	return args
}

// malformedError is a reply of a script that this version of the package
// cannot read: retrying will not help.
type malformedError struct{ msg string }

func (e *malformedError) Error() string { return e.msg }

func malformed(format string, args ...any) error {
	return &malformedError{fmt.Sprintf(format, args...)}
}

// taken is one task that take handed out.
type taken struct {
	task    Task
	token   string
	corrupt error // its fields do not parse: it goes to the dead letters unrun
}

// waits are the times until the first due time in delayed and the first
// lease deadline in inflight, by the server's clock, as a take found them;
// negative: none, or not asked for.
type waits struct{ delayed, inflight time.Duration }

// take settles outcomes, promotes due tasks, recovers expired leases and
// takes up to k ready tasks of queues (in priority order) with a lease, in
// one round trip. With maintain it promotes and recovers first; without,
// only if the queues hold fewer than k tasks. The waits are returned when
// it takes fewer than k, or with hint. token is the take's lease token:
// a take sent again with the same token (and record, the worker's take
// record) hands out the tasks the first one took instead of taking more.
func (g *Group) take(ctx context.Context, queues []string, record string, k int, lease time.Duration,
	maintain, hint bool, token string, os []outcome) (tasks []taken, w waits, err error) {
	keys := make([]string, 0, 10+2*len(queues))
	keys = append(append(keys, g.keys.base()...), record, g.keys.unique, g.keys.paused)
	for _, q := range queues {
		keys = append(keys, g.keys.ready+q)
	}
	for _, q := range queues {
		keys = append(keys, g.keys.signal+q)
	}
	args := appendOutcomes([]any{k, lease.Milliseconds(), batch, g.deadLimit, len(queues), flag(maintain), flag(hint), token}, os)
	w = waits{-1, -1}
	v, err := takeScript.Run(ctx, g.rdb, keys, args...)
	if err != nil {
		return nil, w, err
	}
	arr, ok := v.([]any)
	if !ok || len(arr) < 2 || (len(arr)-2)%4 != 0 {
		return nil, w, malformed("script %s: malformed reply %v", takeScript.Name(), v)
	}
	for i, d := range []*time.Duration{&w.delayed, &w.inflight} {
		ms, ok := arr[i].(int64)
		if !ok {
			return nil, waits{-1, -1}, malformed("script %s: want an integer wait, got %T", takeScript.Name(), arr[i])
		}
		if ms >= 0 {
			*d = time.Duration(ms) * time.Millisecond
		}
	}
	tasks = make([]taken, 0, (len(arr)-2)/4)
	for i := 2; i < len(arr); i += 4 {
		var (
			t             taken
			j             int64
			blob, attempt string
		)
		if err := scan(arr[i:i+4], &t.task.ID, &blob, &attempt, &j); err != nil {
			return nil, w, malformed("script %s: %v", takeScript.Name(), err)
		}
		if j < 1 || int(j) > len(queues) {
			return nil, w, malformed("script %s: queue index %d out of range", takeScript.Name(), j)
		}
		t.token = token
		t.task.Queue = queues[j-1]
		t.task.codec = g.codec
		p, err := unpack(blob)
		if err == nil {
			t.task.Name, t.task.MaxRetry, t.task.Payload, t.task.unique = p.name, p.maxRetry, []byte(p.payload), p.unique
			if t.task.Attempt, err = strconv.Atoi(attempt); err != nil || t.task.Attempt < 0 {
				err = fmt.Errorf("failed attempts %q: not a count", attempt)
			}
		}
		if err != nil {
			t.corrupt = fmt.Errorf("queue: corrupt task %q in %q: %w", t.task.ID, g.keys.tasks, err)
		}
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
// taken without taking tasks after them are passed on; and it deletes the
// worker's take record and wake list.
func (g *Group) settle(ctx context.Context, os []outcome, record, wakeKey string, stop bool, queues []string) error {
	keys := append(g.keys.base(), record, wakeKey, g.keys.unique)
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
// server's now + lease, in one round trip per 1000 jobs, and reports which
// were held.
func (g *Group) extend(ctx context.Context, lease time.Duration, jobs []*job) ([]bool, error) {
	held := make([]bool, 0, len(jobs))
	for len(jobs) > 0 {
		chunk := jobs[:min(len(jobs), extendChunk)]
		jobs = jobs[len(chunk):]
		args := make([]any, 1, 1+2*len(chunk))
		args[0] = lease.Milliseconds()
		for _, j := range chunk {
			args = append(args, j.task.ID, j.token)
		}
		r, err := extendScript.Int64s(ctx, g.rdb, []string{g.keys.inflight}, args...)
		if err != nil {
			return nil, err
		}
		if len(r) != len(chunk) {
			return nil, malformed("script %s: want %d results, got %d", extendScript.Name(), len(chunk), len(r))
		}
		for _, n := range r {
			held = append(held, n == 1)
		}
	}
	return held, nil
}
