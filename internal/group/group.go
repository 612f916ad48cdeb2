// Package group sends what goroutines ask for at the same time in shared
// round trips (group commit): the first to ask sends at once, alone; those
// who ask while the round trips allowed are all on their way wait, and
// leave together in the next. It has no goroutine of its own.
package group

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/ria-go/ria"
)

// Group sends items of type T (calls, commands) in batches. An item made
// while fewer than inflight batches of its lane are on their way is sent at
// once, alone, by its own goroutine: one goroutine sees one round trip per
// item. An item made while all are on their way waits; when a batch comes
// back, every item waiting in its lane by then (up to maxBatch) leaves in
// the next one, sent by the goroutine of the first of them. Many goroutines
// so share round trips, and the server and the client read and write far
// fewer packets. Items of different lanes never share a batch. A Group is
// safe for concurrent use.
type Group[T any] struct {
	send     func(context.Context, []T)
	laneOf   func(T) int
	inflight int
	maxBatch int

	mu    sync.Mutex
	lanes map[int]*lane[T] // idle lanes but lane 0 are dropped
}

// lane is the batches of one lane on their way, and the items waiting for
// the next.
type lane[T any] struct {
	id      int
	running int          // batches on their way
	queue   []*waiter[T] // items waiting for a batch; only while running == inflight
}

// waiter is an item waiting in a lane's queue. Its channel gets exactly one
// message: the batch it is to send (it leads it), or nil when the item,
// sent in another's batch, is done.
type waiter[T any] struct {
	item T
	ch   chan []*waiter[T]
	err  error // set before the nil message when the batch's sender panicked
}

// New returns a Group that sends a batch with send (which stores each
// item's result in the item), at most inflight batches of a lane at once,
// each of at most maxBatch items. laneOf gives an item's lane (nil: one
// lane for all).
func New[T any](inflight, maxBatch int, laneOf func(T) int, send func(ctx context.Context, batch []T)) *Group[T] {
	if inflight < 1 || maxBatch < 1 {
		panic(fmt.Sprintf("group: New(inflight %d, maxBatch %d): both must be at least 1", inflight, maxBatch))
	}
	return &Group[T]{send: send, laneOf: laneOf, inflight: inflight, maxBatch: maxBatch, lanes: map[int]*lane[T]{}}
}

// Do sends item, alone or in a batch with others, and returns once its
// batch is back (nil: send has stored its result). If ctx has ended, or
// ends while the item waits for a batch (it is taken out of the queue), Do
// returns ctx's error: nothing was sent. If ctx ends while the item is on its way
// in another goroutine's batch, Do returns at once an error wrapping
// ria.ErrOutcomeUnknown and ctx's error. An item that leads a batch waits
// for it, whatever ctx (the batch carries other goroutines' items; the
// client's timeouts bound it).
func (g *Group[T]) Do(ctx context.Context, item T) error { return g.do(ctx, item, false) }

// DoSent is Do for an item whose reply must come back to its caller once
// it is sent (a claim that may take a lease): if ctx ends while the item
// waits for a batch, it is not sent, as with Do; once it has left the
// queue, DoSent waits for its batch whatever ctx.
func (g *Group[T]) DoSent(ctx context.Context, item T) error { return g.do(ctx, item, true) }

func (g *Group[T]) do(ctx context.Context, item T, waitSent bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("not sent: %w", err)
	}
	id := 0
	if g.laneOf != nil {
		id = g.laneOf(item)
	}
	g.mu.Lock()
	l := g.lanes[id]
	if l == nil {
		l = &lane[T]{id: id}
		g.lanes[id] = l
	}
	if l.running < g.inflight {
		l.running++
		g.mu.Unlock()
		defer g.next(l) // on a panic in send too, so that the lane goes on
		g.send(ctx, []T{item})
		return nil
	}
	w := &waiter[T]{item: item, ch: make(chan []*waiter[T], 1)}
	l.queue = append(l.queue, w)
	g.mu.Unlock()
	select {
	case batch := <-w.ch:
		return g.lead(ctx, l, w, batch)
	case <-ctx.Done():
	}
	g.mu.Lock()
	if i := slices.Index(l.queue, w); i >= 0 {
		l.queue = slices.Delete(l.queue, i, i+1)
		g.mu.Unlock()
		return fmt.Errorf("not sent: %w", ctx.Err())
	}
	g.mu.Unlock()
	// Out of the queue: made the leader of the next batch (its channel
	// already holds the batch: next sends it under the lock), or on its
	// way in another's batch.
	if waitSent {
		return g.lead(ctx, l, w, <-w.ch)
	}
	select {
	case batch := <-w.ch:
		return g.lead(ctx, l, w, batch)
	default:
		return fmt.Errorf("%w: %w", ria.ErrOutcomeUnknown, ctx.Err())
	}
}

// lead sends batch, which w leads (nil: w's item was done in another
// batch), then tells the other waiters in it that their items are done.
// The batch carries others' items, so the caller's cancellation does not
// stop it. If send panics, the others' Do return an unknown outcome, the
// lane goes on, and the panic goes on up the caller's stack.
func (g *Group[T]) lead(ctx context.Context, l *lane[T], w *waiter[T], batch []*waiter[T]) error {
	if batch == nil {
		return w.err
	}
	items := make([]T, len(batch))
	for i, b := range batch {
		items[i] = b.item
	}
	sent := false
	defer func() {
		for _, o := range batch[1:] {
			if !sent {
				o.err = fmt.Errorf("%w: the goroutine sending its batch panicked", ria.ErrOutcomeUnknown)
			}
			o.ch <- nil
		}
		g.next(l)
	}()
	g.send(context.WithoutCancel(ctx), items)
	sent = true
	return nil
}

// next ends a batch of l: the items waiting, if any, become the next
// batch, led by the first of them; otherwise one batch fewer is on its way.
func (g *Group[T]) next(l *lane[T]) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(l.queue) == 0 {
		if l.running--; l.running == 0 && l.id != 0 {
			delete(g.lanes, l.id)
		}
		return
	}
	n := min(len(l.queue), g.maxBatch)
	batch := slices.Clone(l.queue[:n])
	l.queue = slices.Delete(l.queue, 0, n)
	batch[0].ch <- batch
}

// Waiting returns how many items wait for a batch (for tests).
func (g *Group[T]) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, l := range g.lanes {
		n += len(l.queue)
	}
	return n
}
