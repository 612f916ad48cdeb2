package script

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/slot"
)

// Group sends the calls that goroutines make at the same time in shared
// MULTI/EXEC round trips (group commit). A call made while fewer than
// inflight batches are on their way is sent at once, alone, by its own
// goroutine: one goroutine sees one round trip per call, as with
// [SendTx]. A call made while all are on their way waits; when a batch
// comes back, every call waiting by then (up to maxBatch) leaves in the
// next one, sent by the first of them. Many goroutines so share round
// trips, and the server and the client read and write far fewer packets.
// Each call keeps the semantics of [SendTx]: it runs once or not at all,
// and a lost reply is an unknown outcome. A Group is safe for concurrent
// use and needs no closing: it has no goroutine of its own.
type Group struct {
	c        TxPipeliner
	inflight int
	maxBatch int
	bySlot   bool // calls of different slots never share a batch

	mu    sync.Mutex
	lanes map[int]*lane // by slot when bySlot (idle lanes dropped), else all in lane 0
}

// lane is the batches of one Group on their way, and the calls waiting for
// the next.
type lane struct {
	slot    int
	running int       // batches on their way
	queue   []*waiter // calls waiting for a batch; only while running == inflight
}

// waiter is a call waiting in a lane's queue. Its channel gets exactly one
// message: the batch it is to send (it leads it), or nil when its call,
// sent in another's batch, is done.
type waiter struct {
	call *Call
	ch   chan []*waiter
}

// NewGroup returns a Group sending on c at most inflight batches at once,
// each of at most maxBatch calls. On a *redis.Client or a *redis.Ring
// (which splits a transaction by shard) any calls may share a batch; on
// any other client (a *redis.ClusterClient refuses a transaction over
// several slots) only calls whose keys share a slot, and inflight counts
// per slot.
func NewGroup(c TxPipeliner, inflight, maxBatch int) *Group {
	if inflight < 1 || maxBatch < 1 {
		panic(fmt.Sprintf("script: NewGroup(inflight %d, maxBatch %d): both must be at least 1", inflight, maxBatch))
	}
	g := &Group{c: c, inflight: inflight, maxBatch: maxBatch, lanes: map[int]*lane{}}
	switch c.(type) {
	case *redis.Client, *redis.Ring:
	default:
		g.bySlot = true
	}
	return g
}

// Run sends call, alone or in a batch with others, and returns its Val and
// Err. If ctx ends while the call waits for a batch, it is taken out of the
// queue and Run returns ctx's error: nothing was sent. If ctx ends while
// the call is on its way in another goroutine's batch, Run returns at once
// an error wrapping ria.ErrOutcomeUnknown and ctx's error. A call that
// leads a batch waits for it (the client's read and write timeouts bound
// that), as the batch carries other goroutines' calls.
func (g *Group) Run(ctx context.Context, call *Call) (any, error) {
	if call.s.once {
		panic("script " + call.s.name + ": a once script in a Group")
	}
	s := 0
	if g.bySlot && len(call.keys) > 0 {
		s = slot.Of(call.keys[0])
	}
	g.mu.Lock()
	l := g.lanes[s]
	if l == nil {
		l = &lane{slot: s}
		g.lanes[s] = l
	}
	if l.running < g.inflight {
		l.running++
		g.mu.Unlock()
		SendTx(ctx, g.c, []*Call{call})
		g.next(l)
		return call.Val, call.Err
	}
	w := &waiter{call: call, ch: make(chan []*waiter, 1)}
	l.queue = append(l.queue, w)
	g.mu.Unlock()
	select {
	case batch := <-w.ch:
		g.lead(ctx, l, batch)
		return call.Val, call.Err
	case <-ctx.Done():
	}
	g.mu.Lock()
	if i := slices.Index(l.queue, w); i >= 0 {
		l.queue = slices.Delete(l.queue, i, i+1)
		g.mu.Unlock()
		return nil, fmt.Errorf("script %s: not sent: %w", call.s.name, ctx.Err())
	}
	g.mu.Unlock()
	// Out of the queue: made the leader of the next batch (its channel
	// already holds the batch: next sends it under the lock), or on its
	// way in another's batch.
	select {
	case batch := <-w.ch:
		g.lead(ctx, l, batch)
		return call.Val, call.Err
	default:
		return nil, fmt.Errorf("script %s: %w: %w", call.s.name, ria.ErrOutcomeUnknown, ctx.Err())
	}
}

// lead sends batch (nil: the caller's call was done in another batch), then
// tells the other waiters in it that their calls are done. The batch
// carries others' calls, so the caller's cancellation does not stop it.
func (g *Group) lead(ctx context.Context, l *lane, batch []*waiter) {
	if batch == nil {
		return
	}
	calls := make([]*Call, len(batch))
	for i, w := range batch {
		calls[i] = w.call
	}
	SendTx(context.WithoutCancel(ctx), g.c, calls)
	for _, w := range batch[1:] {
		w.ch <- nil
	}
	g.next(l)
}

// next ends a batch of l: the calls waiting, if any, become the next batch,
// led by the first of them; otherwise one batch fewer is on its way.
func (g *Group) next(l *lane) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(l.queue) == 0 {
		if l.running--; l.running == 0 && g.bySlot {
			delete(g.lanes, l.slot)
		}
		return
	}
	n := min(len(l.queue), g.maxBatch)
	batch := slices.Clone(l.queue[:n])
	l.queue = slices.Delete(l.queue, 0, n)
	batch[0].ch <- batch
}

// Waiting returns how many calls wait for a batch (for tests).
func (g *Group) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, l := range g.lanes {
		n += len(l.queue)
	}
	return n
}
