package queue

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed inspect_list.lua
	inspectListLua string
	//go:embed inspect_delete.lua
	inspectDeleteLua string
	//go:embed inspect_runnow.lua
	inspectRunNowLua string
	//go:embed inspect_bulk.lua
	inspectBulkLua string

	listScript = script.New("queue list", libLua+inspectListLua)
	// Run once per call: a re-send is answered from a record of the first
	// reply.
	deleteScript = script.NewOnce("queue delete", libLua+commonLua+dropLua+inspectDeleteLua)
	bulkScript   = script.NewOnce("queue bulk", libLua+commonLua+dropLua+inspectBulkLua)
	runNowScript = script.NewOnce("queue run now", libLua+commonLua+inspectRunNowLua)
)

// ErrInFlight is returned by [Group.Delete] for a task that a worker holds
// (state [StateRunning]): it is left alone.
var ErrInFlight = errors.New("queue: task in flight")

const (
	// MaxListPage is the most tasks one [Group.List] returns. A page
	// carries the tasks' payloads: mind their size.
	MaxListPage = 1000
	// MaxListOffset is the largest offset of [Group.List].
	MaxListOffset = 1 << 40
	// MaxBulkBatch is the most tasks that one script call of
	// [Group.Purge], [Group.DeleteAllDead] or [Group.RequeueAllDead]
	// deletes or requeues: each call blocks the server for a few
	// milliseconds at most, whatever the number of tasks.
	MaxBulkBatch = 1000
)

// List returns up to limit tasks in state, skipping the first offset, with
// their payloads, failed attempts, last errors and times, in one round trip
// (a read-only script): every task listed was in that state at one moment.
//
//   - [StateReady]: the ready tasks of queue (required: each queue has its
//     own ready list), in the order workers take them.
//   - [StateDelayed]: the group's tasks waiting for their due time or their
//     retry, the earliest due first; At is the due time.
//   - [StateRunning]: the group's tasks held by workers, the earliest lease
//     deadline first; At is the lease deadline.
//   - [StateDead]: the group's dead tasks, the most recent first; At is the
//     time of death.
//
// The delayed, in-flight and dead sets are the group's, shared by its
// queues: for those states queue must be "" (each task's Queue tells its
// queue). Offsets count entries of the list or set, so paging on with
// offset+limit while tasks move may skip or repeat a task, never invent
// one; an entry whose task has no fields left is skipped, so a page may
// hold fewer than limit tasks although more follow.
//
// An unknown state, a missing or extra queue name, an offset that is
// negative or above [MaxListOffset], or a limit that is not between 1 and
// [MaxListPage] is an error, and nothing is sent. A key of the wrong type
// gives a [*ria.KeyError]; a task whose stored fields do not parse, an
// error naming it.
func (g *Group) List(ctx context.Context, state State, queue string, offset, limit int) ([]TaskInfo, error) {
	var key string
	switch state {
	case StateReady:
		if queue == "" {
			return nil, fmt.Errorf("queue: list %s in %q: queue name: empty name (ready tasks are listed per queue)", state, g.name)
		}
		key = g.keys.ready + queue
	case StateDelayed, StateRunning, StateDead:
		if queue != "" {
			return nil, fmt.Errorf("queue: list %s in %q: queue name %q: must be empty (the %s set is the group's)", state, g.name, queue, state)
		}
		key = map[State]string{StateDelayed: g.keys.delayed, StateRunning: g.keys.inflight, StateDead: g.keys.dead}[state]
	default:
		return nil, fmt.Errorf("queue: list in %q: state %q: unknown state", g.name, state)
	}
	if offset < 0 || offset > MaxListOffset {
		return nil, fmt.Errorf("queue: list %s in %q: offset %d: must be between 0 and %d", state, g.name, offset, MaxListOffset)
	}
	if limit < 1 || limit > MaxListPage {
		return nil, fmt.Errorf("queue: list %s in %q: limit %d: must be between 1 and %d", state, g.name, limit, MaxListPage)
	}
	v, err := listScript.Run(ctx, g.rdb, []string{g.keys.tasks, key}, string(state), offset, limit)
	if err != nil {
		return nil, fmt.Errorf("queue: list %s in %q: %w", state, g.name, err)
	}
	arr, ok := v.([]any)
	if !ok && v != nil || len(arr)%5 != 0 {
		return nil, fmt.Errorf("queue: list %s in %q: script %s: malformed reply %T", state, g.name, listScript.Name(), v)
	}
	out := make([]TaskInfo, 0, len(arr)/5)
	for i := 0; i < len(arr); i += 5 {
		var id, raw, attempts, lastErr string
		var at int64
		if err := scan(arr[i:i+5], &id, &raw, &attempts, &lastErr, &at); err != nil {
			return nil, fmt.Errorf("queue: list %s in %q: script %s: %w", state, g.name, listScript.Name(), err)
		}
		p, err := unpack(raw)
		if err != nil {
			return nil, fmt.Errorf("queue: list %s in %q: task %q: %w", state, g.name, id, err)
		}
		info := TaskInfo{ID: id, Queue: p.queue, Name: p.name, Payload: []byte(p.payload), MaxRetry: p.maxRetry,
			Unique: p.unique, State: state, Error: lastErr}
		info.Attempts, _ = strconv.Atoi(attempts)
		if at != 0 {
			info.At = time.UnixMilli(at)
		}
		out = append(out, info)
	}
	return out, nil
}

// Delete deletes task id, ready, delayed (or waiting to retry) or dead,
// with everything the group keeps of it, in one round trip (a script, so
// that nothing is left behind): its fields, its entry in its ready list
// or in the delayed or dead set, and its unique lock ([Unique]) if it
// still holds it. Deleting a ready task costs a scan of its queue's ready
// list.
//
// A task in flight (held by a worker) is left alone: Delete returns
// [ErrInFlight]; cancel it through its handler's context, or delete it
// once it has failed. Delete returns [ErrNotFound] if the group holds no
// such task, and an error for an empty id. A key of the wrong type, or a
// ready task whose stored fields do not parse, gives a [*ria.KeyError],
// with nothing changed. A re-send of a Delete whose reply was lost gets
// the first run's answer; if every re-send fails, the error wraps
// ria.ErrOutcomeUnknown. [Group.Purge] and [Group.DeleteAllDead] delete a
// queue's ready tasks, or the dead tasks, all at once.
func (g *Group) Delete(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("queue: delete in %q: empty ID", g.name)
	}
	n, err := g.once(ctx, deleteScript, append(g.keys.base(), g.keys.unique), id, keys.GlobEscape(id))
	if err != nil {
		return fmt.Errorf("queue: delete %q in %q: %w", id, g.name, err)
	}
	switch n {
	case 1:
		return nil
	case 2:
		return fmt.Errorf("queue: delete %q in %q: %w", id, g.name, ErrInFlight)
	}
	return fmt.Errorf("queue: delete %q in %q: %w", id, g.name, ErrNotFound)
}

// RunNow makes a delayed task (one enqueued with a delay that is not yet
// due, or a failed one waiting for its retry) ready at once, in one round
// trip: it goes to the back of its queue's ready list, as if it had just
// come due, and wakes an idle worker of its queue as a promotion does.
// Its failed attempts and last error are kept. It returns [ErrNotFound]
// if the task is not delayed (for a dead task, see [Group.Requeue]), and
// an error for an empty id. A key of the wrong type, or a task whose
// stored fields do not parse, gives a [*ria.KeyError], with nothing
// changed. A re-send of a RunNow whose reply was lost gets the first
// run's answer; if every re-send fails, the error wraps
// ria.ErrOutcomeUnknown.
func (g *Group) RunNow(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("queue: run now in %q: empty ID", g.name)
	}
	n, err := g.once(ctx, runNowScript, g.keys.base(), id)
	if err != nil {
		return fmt.Errorf("queue: run now %q in %q: %w", id, g.name, err)
	}
	if n == 0 {
		return fmt.Errorf("queue: run now %q in %q: %w", id, g.name, ErrNotFound)
	}
	return nil
}

// Purge deletes every ready task of queue, each as [Group.Delete] does
// (its fields and its unique lock, if it still holds it), and returns how
// many it deleted. The queue's delayed, retrying, running and dead tasks
// are left alone, as are the other queues. It works in batches of
// [MaxBulkBatch] tasks, one round trip each (an empty queue costs 1):
// each batch is atomic (a script), so a worker taking tasks from the
// queue meanwhile takes each task or leaves it to Purge, never both, and
// between batches the server serves other clients. Purge ends when it
// finds the queue empty or has taken out as many tasks as the queue held
// at its first batch, so producers cannot keep it going forever: a task
// enqueued while it runs may be deleted too, or left.
//
// An empty queue name is an error, and nothing is sent; a queue that holds
// no task (or does not exist: queues need no declaring) gives 0. An ID
// left in the queue without its task (only a hand edit leaves one) is
// taken out and not counted. A wake token pending for the queue's idle
// workers stays: one of them wakes and finds nothing. After an
// error, the count is of the batches that were answered; an error that
// wraps ria.ErrOutcomeUnknown means the last batch may have been deleted.
// A re-send of a batch whose reply was lost gets the first run's answer.
// A key of the wrong type gives a [*ria.KeyError], with nothing changed by
// that batch.
func (g *Group) Purge(ctx context.Context, queue string) (int, error) {
	if queue == "" {
		return 0, fmt.Errorf("queue: purge in %q: queue name: empty name", g.name)
	}
	n, err := g.bulk(ctx, "purge", g.keys.ready+queue)
	if err != nil {
		return n, fmt.Errorf("queue: purge %q in %q: %w", queue, g.name, err)
	}
	return n, nil
}

// DeleteAllDead deletes every dead task of the group (the dead set is the
// group's, shared by its queues), each as [Group.Delete] does, oldest
// first, and returns how many it deleted. It works as [Group.Purge] does:
// batches of [MaxBulkBatch], 1 round trip each, each atomic, until it
// finds no dead task or has taken out as many as there were at its first
// batch (a task that dies meanwhile may be deleted too, or left); errors
// as there.
func (g *Group) DeleteAllDead(ctx context.Context) (int, error) {
	n, err := g.bulk(ctx, "delete", "")
	if err != nil {
		return n, fmt.Errorf("queue: delete all dead in %q: %w", g.name, err)
	}
	return n, nil
}

// RequeueAllDead moves every dead task of the group back to the end of
// its queue, each as [Group.Requeue] does (failed attempts and last error
// cleared, the queue's idle workers woken), oldest death first, and
// returns how many it requeued. It works as [Group.Purge] does: batches of
// [MaxBulkBatch], 1 round trip each, each atomic, until it finds no dead
// task or has taken out as many as there were at its first batch, so
// tasks that die again at once cannot keep it going forever (but one that
// dies again while it runs may be requeued twice); errors as there. A
// dead task whose stored fields do not parse makes the batch that meets
// it fail with a [*ria.KeyError] naming it: delete it ([Group.Delete]).
func (g *Group) RequeueAllDead(ctx context.Context) (int, error) {
	n, err := g.bulk(ctx, "requeue", "")
	if err != nil {
		return n, fmt.Errorf("queue: requeue all dead in %q: %w", g.name, err)
	}
	return n, nil
}

// bulk runs inspect_bulk.lua's op in batches of g.bulkBatch IDs, each
// once (a reply record per call), until the list or set is empty or as
// many IDs as it held at the first batch are out, and returns the count of
// tasks of the answered batches.
func (g *Group) bulk(ctx context.Context, op, ready string) (int, error) {
	ks := append(g.keys.base(), g.keys.unique)
	if ready != "" {
		ks = append(ks, ready)
	}
	total, out, budget := 0, int64(0), int64(-1)
	for {
		limit := int64(g.bulkBatch)
		if budget >= 0 && budget-out < limit {
			limit = budget - out
		}
		v, err := bulkScript.RunOnce(ctx, g.rdb, g.keys.once(), ks, op, limit)
		var r []int64
		if err == nil {
			r, err = bulkScript.AsInt64s(v)
		}
		if err == nil && (len(r) != 3 || r[0] < 0 || r[1] < 0 || r[2] < 0) {
			err = fmt.Errorf("script %s: malformed reply %v", bulkScript.Name(), r)
		}
		if err != nil {
			return total, err
		}
		if budget < 0 {
			budget = r[1] + r[2] // the size at the first batch
		}
		total += int(r[0])
		out += r[1]
		if r[2] == 0 || r[1] == 0 || out >= budget {
			return total, nil
		}
	}
}
