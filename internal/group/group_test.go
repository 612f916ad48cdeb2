package group_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/group"
)

// item is what the tests send: a lane and, once sent, its batch number.
type item struct {
	lane  int
	batch int
}

// sender records the batches sent and holds each until the test releases
// it, so that the tests know which items are on their way and which wait.
type sender struct {
	mu      sync.Mutex
	batches [][]*item
	ctxErrs []error       // ctx.Err() of each send after its batch came back
	sent    chan []*item  // each batch, as it is sent
	release chan struct{} // one receive lets one batch come back
}

func newSender() *sender {
	return &sender{sent: make(chan []*item, 100), release: make(chan struct{}, 100)}
}

func (s *sender) send(ctx context.Context, batch []*item) {
	s.mu.Lock()
	s.batches = append(s.batches, batch)
	n := len(s.batches)
	s.mu.Unlock()
	for _, it := range batch {
		it.batch = n
	}
	s.sent <- batch
	<-s.release
	s.mu.Lock()
	s.ctxErrs = append(s.ctxErrs, ctx.Err())
	s.mu.Unlock()
}

func do(ctx context.Context, g *group.Group[*item], it *item) chan error {
	ch := make(chan error, 1)
	go func() { ch <- g.Do(ctx, it) }()
	return ch
}

func waiting(t *testing.T, g *group.Group[*item], n int) {
	t.Helper()
	require.Eventually(t, func() bool { return g.Waiting() == n }, time.Minute, time.Millisecond, "%d items waiting", n)
}

// The first item goes alone; those made while it is on its way leave
// together, in order, at most maxBatch at a time, each lane on its own.
func TestGroup(t *testing.T) {
	s := newSender()
	g := group.New(1, 3, func(it *item) int { return it.lane }, s.send)
	ctx := t.Context()
	first := &item{}
	e0 := do(ctx, g, first)
	assert.Equal(t, []*item{first}, <-s.sent)
	other := &item{lane: 7}
	eo := do(ctx, g, other) // another lane: not held back by lane 0
	assert.Equal(t, []*item{other}, <-s.sent)
	var items []*item
	var errs []chan error
	for i := range 5 {
		it := &item{}
		items = append(items, it)
		errs = append(errs, do(ctx, g, it))
		waiting(t, g, i+1)
	}
	s.release <- struct{}{} // first (or other) back
	s.release <- struct{}{}
	require.NoError(t, <-e0)
	require.NoError(t, <-eo)
	assert.Equal(t, items[:3], <-s.sent, "the first three waiting, in order")
	s.release <- struct{}{}
	assert.Equal(t, items[3:], <-s.sent)
	s.release <- struct{}{}
	for i, e := range errs {
		require.NoError(t, <-e, "item %d", i)
	}
	assert.Equal(t, 0, g.Waiting())
	assert.Len(t, s.batches, 4)
}

// An item whose context ends while it waits is not sent; one whose context
// ends while it is on its way in another's batch returns an unknown
// outcome at once; the leader's batch goes on when the leader's context
// ends.
func TestGroup_cancel(t *testing.T) {
	s := newSender()
	g := group.New(1, 10, nil, s.send)
	ctx := t.Context()
	e0 := do(ctx, g, &item{})
	<-s.sent
	qctx, cancelQueued := context.WithCancel(ctx)
	queued := &item{}
	eq := do(qctx, g, queued)
	waiting(t, g, 1)
	cancelQueued()
	err := <-eq
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ria.ErrOutcomeUnknown)
	assert.Equal(t, 0, g.Waiting())

	lctx, cancelLeader := context.WithCancel(ctx)
	el := do(lctx, g, &item{})
	waiting(t, g, 1)
	mctx, cancelMember := context.WithCancel(ctx)
	member := &item{}
	em := do(mctx, g, member)
	waiting(t, g, 2)
	s.release <- struct{}{}
	require.NoError(t, <-e0)
	batch := <-s.sent
	assert.Len(t, batch, 2)
	cancelLeader()
	cancelMember()
	err = <-em
	assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
	assert.ErrorIs(t, err, context.Canceled)
	s.release <- struct{}{}
	require.NoError(t, <-el, "the leader waits for its batch")
	assert.Equal(t, 0, queued.batch, "never sent")
	assert.Equal(t, 2, member.batch)
	assert.Equal(t, []error{nil, nil}, s.ctxErrs, "a batch is not cancelled with its leader")
}

func TestNew_bad(t *testing.T) {
	assert.PanicsWithValue(t, "group: New(inflight 1, maxBatch 0): both must be at least 1", func() {
		group.New(1, 0, nil, func(context.Context, []int) {})
	})
}

// A send that panics: the panic reaches the goroutine that sent, the other
// items of its batch get an unknown outcome, and the Group goes on.
func TestGroup_sendPanics(t *testing.T) {
	s := newSender()
	var panicking atomic.Bool
	send := func(ctx context.Context, batch []*item) {
		if panicking.Load() {
			panic("boom")
		}
		s.send(ctx, batch)
	}
	g := group.New(1, 10, nil, send)
	ctx := t.Context()
	e0 := do(ctx, g, &item{})
	<-s.sent
	leader := make(chan any, 1)
	go func() {
		defer func() { leader <- recover() }()
		_ = g.Do(ctx, &item{})
	}()
	waiting(t, g, 1)
	em := do(ctx, g, &item{})
	waiting(t, g, 2)
	panicking.Store(true)
	s.release <- struct{}{}
	require.NoError(t, <-e0)
	assert.Equal(t, "boom", <-leader)
	assert.ErrorIs(t, <-em, ria.ErrOutcomeUnknown)
	panicking.Store(false)
	e := do(ctx, g, &item{})
	<-s.sent
	s.release <- struct{}{}
	require.NoError(t, <-e, "the lane goes on")

	panicking.Store(true)
	assert.PanicsWithValue(t, "boom", func() { _ = g.Do(ctx, &item{}) }, "alone")
	panicking.Store(false)
	e = do(ctx, g, &item{})
	<-s.sent
	s.release <- struct{}{}
	require.NoError(t, <-e, "the lane goes on")
}

// DoSent: an item whose context ends while it waits is not sent, as with
// Do; one whose context ends once it is on its way waits for its batch and
// gets its result. A context ended before Do sends nothing.
func TestGroup_DoSent(t *testing.T) {
	s := newSender()
	g := group.New(1, 10, nil, s.send)
	ctx := t.Context()
	ended, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, g.Do(ended, &item{}), context.Canceled)
	assert.ErrorIs(t, g.DoSent(ended, &item{}), context.Canceled)
	assert.Empty(t, s.batches, "nothing sent")

	e0 := do(ctx, g, &item{})
	<-s.sent
	leader := do(ctx, g, &item{})
	waiting(t, g, 1)
	mctx, cancelMember := context.WithCancel(ctx)
	member := &item{}
	em := make(chan error, 1)
	go func() { em <- g.DoSent(mctx, member) }()
	waiting(t, g, 2)
	s.release <- struct{}{}
	require.NoError(t, <-e0)
	<-s.sent // leader and member on their way
	cancelMember()
	select {
	case err := <-em:
		t.Fatalf("DoSent returned %v while its batch was on its way", err)
	default:
	}
	s.release <- struct{}{}
	require.NoError(t, <-leader)
	require.NoError(t, <-em, "waited for its batch")
	assert.Equal(t, 2, member.batch)
}
