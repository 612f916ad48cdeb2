package queue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// tally counts the calls of one operation in a fault test and the answers
// that disagreed with the server's state.
type tally struct {
	t             *testing.T
	op            string
	f             *redistest.Faults
	lost0         int64
	calls, misses int
}

func newTally(t *testing.T, op string, f *redistest.Faults) *tally {
	return &tally{t: t, op: op, f: f, lost0: f.Lost()}
}

// agree records one call, whose answer agreed with the state or not.
func (c *tally) agree(ok bool, format string, args ...any) {
	c.t.Helper()
	c.calls++
	if !ok {
		c.misses++
		c.t.Errorf("%s: answer disagrees with the server: "+format, append([]any{c.op}, args...)...)
	}
}

// done logs the counts and checks that the faults happened (an honest
// test) and no answer disagreed.
func (c *tally) done() {
	c.t.Helper()
	lost := c.f.Lost() - c.lost0
	c.t.Logf("fault harness: queue %s: calls=%d lost=%d disagreements=%d", c.op, c.calls, lost, c.misses)
	assert.Positive(c.t, lost, "%s: no reply was lost", c.op)
	assert.Zero(c.t, c.misses, "%s: disagreements", c.op)
}

// loseOne arms f to lose the next reply matching match, and returns a
// wait for the reply to be lost (the fault happened).
func loseOne(t *testing.T, f *redistest.Faults, match func([]string) bool) func() {
	before := f.Lost()
	f.LoseReply(1, match)
	return func() {
		t.Helper()
		waitFor(t, func() bool { return f.Lost() > before })
		require.Equal(t, before+1, f.Lost(), "one reply was lost")
		require.Zero(t, f.Armed())
	}
}

// scriptKeys returns the keys of a script call, or nil for another command.
func scriptKeys(cmd []string) []string {
	if !redistest.Scripts(cmd) || len(cmd) < 3 {
		return nil
	}
	n, err := strconv.Atoi(cmd[2])
	if err != nil || len(cmd) < 3+n {
		return nil
	}
	return cmd[3 : 3+n]
}

func hasKey(keys []string, part string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, part) })
}

// The matchers of the worker's scripts.
func isTake(cmd []string) bool {
	ks := scriptKeys(cmd)
	return hasKey(ks, "}:took:") && !hasKey(ks, "}:wake:")
}
func isSettle(cmd []string) bool { return hasKey(scriptKeys(cmd), "}:wake:") }
func isExtend(cmd []string) bool {
	ks := scriptKeys(cmd)
	return len(ks) == 1 && strings.HasSuffix(ks[0], "}:inflight")
}

// count returns how many times s is in the list or set part of the group.
func count(t *testing.T, b *redistest.Backend, part, s string) int {
	t.Helper()
	ctx := t.Context()
	typ, err := b.Client.Type(ctx, key(b, part)).Result()
	require.NoError(t, err)
	n := 0
	switch typ {
	case "list":
		l, err := b.Client.LRange(ctx, key(b, part), 0, -1).Result()
		require.NoError(t, err)
		for _, v := range l {
			if v == s {
				n++
			}
		}
	case "zset":
		if err := b.Client.ZScore(ctx, key(b, part), s).Err(); err == nil {
			n = 1
		}
	}
	return n
}

func hasTask(t *testing.T, b *redistest.Backend, id string) bool {
	t.Helper()
	ok, err := b.Client.HExists(t.Context(), key(b, "tasks"), id).Result()
	require.NoError(t, err)
	return ok
}

// warmScripts loads every script of the group on the server (the first
// call of each goes EVALSHA, NOSCRIPT, EVAL), so that a lost reply is
// that of a script that ran.
func warmScripts(t *testing.T, g *queue.Group) {
	t.Helper()
	ctx := t.Context()
	_, err := g.Enqueue(ctx, "warm", "t", nil)
	require.NoError(t, err)
	id, err := g.Enqueue(ctx, "warm", "t", nil, queue.Delay(time.Hour))
	require.NoError(t, err)
	_, err = g.EnqueueBatch(ctx, []queue.Job{{Queue: "warm", Name: "t"}, {Queue: "warm", Name: "t"}})
	require.NoError(t, err)
	require.NoError(t, g.Cancel(ctx, id))
	require.ErrorIs(t, g.Requeue(ctx, id), queue.ErrNotFound)
	for _, f := range []func(context.Context) (int, error){g.Promote, g.Recover} {
		_, err := f(ctx)
		require.NoError(t, err)
	}
	tok := queue.Nonce()
	tasks, _, err := g.TakeRuns(ctx, "warm", []string{"warm"}, 3, time.Minute, tok)
	require.NoError(t, err)
	require.Len(t, tasks, 3)
	var acks []queue.Outcome
	for _, task := range tasks {
		acks = append(acks, queue.Outcome{ID: task.ID, Token: tok, Kind: 'a'})
	}
	require.NoError(t, g.SettleForTest(ctx, "warm", nil, acks...))
	_, err = g.ExtendForTest(ctx, time.Minute, [2]string{"x", "y"})
	require.NoError(t, err)
	_, err = g.Dead(ctx, 0, 1)
	require.NoError(t, err)
}

// Every state-changing call of a Group answers truly when its reply is
// lost and go-redis re-sends it (default retries): Enqueue enqueues once
// and says so, Cancel and Requeue do not answer ErrNotFound for what they
// did, Promote and Recover count what they moved.
func TestGroup_lostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient()
		g := newGroup(t, b, c)
		warmScripts(t, g)
		const calls = 3

		tl := newTally(t, "Enqueue", f)
		for range calls {
			lost := loseOne(t, f, redistest.Scripts)
			id, err := g.Enqueue(ctx, "default", "t", 1)
			lost()
			tl.agree(err == nil && count(t, b, "ready:default", id) == 1 && hasTask(t, b, id), "err %v", err)
		}
		tl.done()

		tl = newTally(t, "Enqueue with ID", f)
		for i := range calls {
			lost := loseOne(t, f, redistest.Scripts)
			id, err := g.Enqueue(ctx, "default", "t", 1, queue.ID("order-"+strconv.Itoa(i)))
			lost()
			tl.agree(err == nil && count(t, b, "ready:default", id) == 1, "err %v", err)
		}
		tl.done()

		tl = newTally(t, "EnqueueBatch", f)
		for i := range calls {
			lost := loseOne(t, f, redistest.Scripts)
			ids, err := g.EnqueueBatch(ctx, []queue.Job{
				{Queue: "default", Name: "t"},
				{Queue: "other", Name: "t", Options: []queue.EnqueueOption{queue.ID("batch-" + strconv.Itoa(i))}},
				{Queue: "default", Name: "t", Options: []queue.EnqueueOption{queue.Delay(time.Hour)}},
			})
			lost()
			tl.agree(err == nil && count(t, b, "ready:default", ids[0]) == 1 && count(t, b, "ready:other", ids[1]) == 1 &&
				count(t, b, "delayed", ids[2]) == 1, "err %v", err)
		}
		tl.done()

		tl = newTally(t, "Cancel", f)
		for range calls {
			id, err := g.Enqueue(ctx, "default", "t", 1, queue.Delay(time.Hour))
			require.NoError(t, err)
			lost := loseOne(t, f, redistest.Scripts)
			err = g.Cancel(ctx, id)
			lost()
			tl.agree(err == nil && count(t, b, "delayed", id) == 0 && !hasTask(t, b, id), "err %v", err)

			lost = loseOne(t, f, redistest.Scripts)
			err = g.Cancel(ctx, id) // not there (any more)
			lost()
			tl.agree(errors.Is(err, queue.ErrNotFound), "err %v", err)
		}
		tl.done()

		tl = newTally(t, "Requeue", f)
		for i := range calls {
			id := "dead-" + strconv.Itoa(i)
			put(t, b, id, "requeued", 5)
			zadd(t, b, "dead", 1, id)
			lost := loseOne(t, f, redistest.Scripts)
			err := g.Requeue(ctx, id)
			lost()
			tl.agree(err == nil && count(t, b, "ready:requeued", id) == 1 && count(t, b, "dead", id) == 0, "err %v", err)
		}
		tl.done()

		tl = newTally(t, "Promote", f)
		for i := range calls {
			for j := range 3 {
				id := "due-" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
				put(t, b, id, "promoted", 5)
				zadd(t, b, "delayed", 1, id)
			}
			before := len(readyIDs(t, b, "promoted"))
			lost := loseOne(t, f, redistest.Scripts)
			n, err := g.Promote(ctx)
			lost()
			moved := len(readyIDs(t, b, "promoted")) - before
			tl.agree(err == nil && n == 3 && moved == 3, "n %d, moved %d, err %v", n, moved, err)
		}
		tl.done()

		tl = newTally(t, "Recover", f)
		for i := range calls {
			for j := range 2 {
				id := "run-" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
				put(t, b, id, "recovered", 5)
				zadd(t, b, "inflight", 1, id+":tok")
			}
			before := len(readyIDs(t, b, "recovered"))
			lost := loseOne(t, f, redistest.Scripts)
			n, err := g.Recover(ctx)
			lost()
			moved := len(readyIDs(t, b, "recovered")) - before
			tl.agree(err == nil && n == 2 && moved == 2, "n %d, moved %d, err %v", n, moved, err)
		}
		tl.done()
	})
}

// With replies stalled past a short ReadTimeout, every attempt of a call
// runs on the server and then times out: the answer is the truth if the
// stall ends in time, else an error wrapping ria.ErrOutcomeUnknown (never
// a refusal), and the state shows the call's effect at most once.
func TestGroup_stalledReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		// The timeout is well above a round trip on a loaded machine; the
		// stalls are well above the timeout.
		c, _, f := b.FaultyClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 200 * time.Millisecond })
		g := newGroup(t, b, c)
		warmScripts(t, g)
		caller := newGroup(t, b, b.Client) // the caller finding out, after the faults
		var (
			calls, misses, unknown int
		)
		agree := func(ok bool, err error, format string, args ...any) {
			t.Helper()
			calls++
			if errors.Is(err, ria.ErrOutcomeUnknown) {
				unknown++
			}
			if !ok {
				misses++
				t.Errorf("answer disagrees with the server (err %v): "+format, append([]any{err}, args...)...)
			}
		}
		// stalled runs call with every reply held back 400ms, lifting the
		// stall after lift (0: not during the call).
		stalled := func(lift time.Duration, call func()) {
			f.Delay(400 * time.Millisecond)
			if lift > 0 {
				stop := time.AfterFunc(lift, func() { f.Delay(0) })
				defer stop.Stop()
			}
			call()
			f.Delay(0)
		}
		for i, lift := range []time.Duration{0, 300 * time.Millisecond, 700 * time.Millisecond} {
			var (
				id  string
				err error
			)
			stalled(lift, func() { id, err = g.Enqueue(ctx, "default", "t", 1, queue.ID("s-"+strconv.Itoa(i))) })
			n := count(t, b, "ready:default", "s-"+strconv.Itoa(i))
			agree(err == nil && n == 1 && id == "s-"+strconv.Itoa(i) || errors.Is(err, ria.ErrOutcomeUnknown) && n <= 1, err, "Enqueue: %d in ready", n)
			if errors.Is(err, ria.ErrOutcomeUnknown) {
				// The caller finds out by enqueueing again with the same ID.
				_, err := caller.Enqueue(ctx, "default", "t", 1, queue.ID("s-"+strconv.Itoa(i)))
				agree(n == 1 && errors.Is(err, queue.ErrDuplicate) || n == 0 && err == nil, err, "Enqueue again: %d in ready", n)
			}

			del, err := g.Enqueue(ctx, "default", "t", 1, queue.Delay(time.Hour))
			require.NoError(t, err)
			stalled(lift, func() { err = g.Cancel(ctx, del) })
			n = count(t, b, "delayed", del)
			agree(err == nil && n == 0 || errors.Is(err, ria.ErrOutcomeUnknown), err, "Cancel: %d in delayed", n)

			dead := "stalled-dead-" + strconv.Itoa(i)
			put(t, b, dead, "requeued", 5)
			zadd(t, b, "dead", 1, dead)
			stalled(lift, func() { err = g.Requeue(ctx, dead) })
			n = count(t, b, "ready:requeued", dead)
			agree(err == nil && n == 1 || errors.Is(err, ria.ErrOutcomeUnknown) && n <= 1, err, "Requeue: %d in ready", n)

			put(t, b, "due-"+dead, "promoted", 5)
			zadd(t, b, "delayed", 1, "due-"+dead)
			before := len(readyIDs(t, b, "promoted"))
			var moved int
			stalled(lift, func() { moved, err = g.Promote(ctx) })
			delta := len(readyIDs(t, b, "promoted")) - before
			n = count(t, b, "ready:promoted", "due-"+dead)
			// An earlier Promote whose outcome was unknown may have left a
			// due task that this one moves too.
			agree(err == nil && n == 1 && moved == delta || errors.Is(err, ria.ErrOutcomeUnknown) && n <= 1, err,
				"Promote: %d moved, %d more in ready, this one %d times", moved, delta, n)

			batch := []string{"sb-" + strconv.Itoa(i) + "-0", "sb-" + strconv.Itoa(i) + "-1"}
			var ids []string
			stalled(lift, func() {
				ids, err = g.EnqueueBatch(ctx, []queue.Job{
					{Queue: "default", Name: "t", Options: []queue.EnqueueOption{queue.ID(batch[0])}},
					{Queue: "other", Name: "t", Options: []queue.EnqueueOption{queue.ID(batch[1])}},
				})
			})
			n0, n1 := count(t, b, "ready:default", batch[0]), count(t, b, "ready:other", batch[1])
			agree(err == nil && slices.Equal(ids, batch) && n0 == 1 && n1 == 1 || errors.Is(err, ria.ErrOutcomeUnknown) && n0 <= 1 && n1 <= 1 && n0 == n1,
				err, "EnqueueBatch: %d and %d in ready", n0, n1)

			run := "stalled-run-" + strconv.Itoa(i)
			put(t, b, run, "recovered", 5)
			zadd(t, b, "inflight", 1, run+":tok")
			before = len(readyIDs(t, b, "recovered"))
			stalled(lift, func() { moved, err = g.Recover(ctx) })
			delta = len(readyIDs(t, b, "recovered")) - before
			n = count(t, b, "ready:recovered", run)
			agree(err == nil && n == 1 && moved == delta || errors.Is(err, ria.ErrOutcomeUnknown) && n <= 1, err,
				"Recover: %d moved, %d more in ready, this one %d times", moved, delta, n)
		}
		t.Logf("fault harness: queue stalled replies (Enqueue, Cancel, Requeue, Promote, EnqueueBatch, Recover): calls=%d outcome-unknown=%d disagreements=%d", calls, unknown, misses)
		assert.Positive(t, unknown, "some calls ran out of retries")
		assert.Less(t, unknown, calls, "some calls got their answer")
		assert.Zero(t, misses)
	})
}

// runs counts the runs of each task of a worker's handler.
type runs struct {
	mu sync.Mutex
	n  map[string]int
	ch chan string
}

func newRuns() *runs { return &runs{n: map[string]int{}, ch: make(chan string, 1000)} }

func (r *runs) record(id string) {
	r.mu.Lock()
	r.n[id]++
	r.mu.Unlock()
	r.ch <- id
}

// wait waits until every one of ids has run, for at most d.
func (r *runs) wait(t *testing.T, ids []string, d time.Duration) {
	t.Helper()
	left := map[string]bool{}
	for _, id := range ids {
		left[id] = true
	}
	r.mu.Lock()
	for id := range left {
		if r.n[id] > 0 {
			delete(left, id)
		}
	}
	r.mu.Unlock()
	timeout := time.After(d)
	for len(left) > 0 {
		select {
		case id := <-r.ch:
			delete(left, id)
		case <-timeout:
			t.Fatalf("%d tasks did not run within %v", len(left), d)
		}
	}
}

func (r *runs) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[id]
}

// A take whose reply is lost is re-sent with the same lease token, by
// go-redis or, after its retries, by the worker: the re-send hands out the
// tasks the first run took, so each runs once and at once, not after its
// lease (a minute) expires with an attempt counted.
func TestWorker_lostTakeReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient()
		g := newGroup(t, b, c)
		warmScripts(t, g)
		w := newWorker(t, g, queue.Lease(time.Minute), queue.Concurrency(8))
		r := newRuns()
		handle(t, w, "t", func(_ context.Context, task *queue.Task) error { r.record(task.ID); return nil })
		start(t, w)
		producer := newGroup(t, b, b.Client)

		tl := newTally(t, "worker take", f)
		// 1 lost reply: go-redis re-sends the take. 4: every attempt of
		// go-redis loses its reply, and the worker sends the take again.
		for _, lose := range []int{1, 1, 4} {
			before := f.Lost()
			f.LoseReply(lose, isTake)
			ids, err := producer.EnqueueBatch(ctx, []queue.Job{{Queue: "default", Name: "t"}, {Queue: "default", Name: "t"}, {Queue: "default", Name: "t"}})
			require.NoError(t, err)
			r.wait(t, ids, 20*time.Second)
			require.Equal(t, before+int64(lose), f.Lost(), "the replies were lost")
			waitSettled(t, b)
			for _, id := range ids {
				tl.agree(r.count(id) == 1, "task %s ran %d times", id, r.count(id))
			}
		}
		tl.done()
		assertEmpty(t, b, "default")
	})
}

// blpops counts the BLPOPs under way on c: a worker waiting for work.
func blpops(c redis.UniversalClient) *atomic.Int64 {
	var n atomic.Int64
	c.AddHook(hook{process: func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if cmd.Name() != "blpop" {
			return next(ctx, cmd)
		}
		n.Add(1)
		defer n.Add(-1)
		return next(ctx, cmd)
	}})
	return &n
}

// The outcomes a waiting worker settles, and a heartbeat, are applied once
// whatever the re-sends: a retry counts one attempt, an ack deletes the
// task once, a lease extended twice is still held.
func TestWorker_lostSettleAndHeartbeatReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient()
		waiting := blpops(c)
		g := newGroup(t, b, c)
		warmScripts(t, g)
		// A heartbeat call gets lease/3 before it gives up: long enough on a
		// loaded machine for the server's reply to reach the proxy (which
		// then loses it).
		const lease = 3 * time.Second
		w := newWorker(t, g, queue.Lease(lease), queue.Backoff(time.Hour, time.Hour), queue.Concurrency(4))
		running := make(chan string, 4)
		release := make(chan error)
		var cancelled atomic.Int64
		handle(t, w, "t", func(ctx context.Context, task *queue.Task) error {
			running <- task.ID
			select {
			case err := <-release:
				return err
			case <-ctx.Done():
				cancelled.Add(1)
				return ctx.Err()
			}
		})
		start(t, w)
		producer := newGroup(t, b, b.Client)

		// Each outcome a settle call carries: a retry (one attempt counted,
		// delayed once), a dead task (in the dead set once, its attempt and
		// error recorded), an ack (deleted).
		attempts := func(id string) string {
			a, err := b.Client.HGet(ctx, key(b, "tasks"), id+":a").Result()
			if errors.Is(err, redis.Nil) {
				return "none"
			}
			require.NoError(t, err)
			return a
		}
		tl := newTally(t, "worker settle (retry, dead, ack)", f)
		for i, tc := range []struct {
			kind string
			err  error
		}{
			{"retry", errors.New("failed once")}, {"dead", fmt.Errorf("boom: %w", queue.ErrNoRetry)}, {"ack", nil},
			{"retry", errors.New("failed once")}, {"dead", fmt.Errorf("boom: %w", queue.ErrNoRetry)}, {"ack", nil},
		} {
			id, err := producer.Enqueue(ctx, "default", "t", i, queue.MaxRetry(5))
			require.NoError(t, err)
			require.Equal(t, id, receive(t, running))
			// The worker waits for work when the handler returns: its
			// outcome goes in a settle call.
			require.Eventually(t, func() bool { return waiting.Load() == 1 }, 10*time.Second, time.Millisecond)
			lost := loseOne(t, f, isSettle)
			release <- tc.err
			lost()
			waitFor(t, func() bool { return stats(t, g).InFlight == 0 })
			switch tc.kind {
			case "retry":
				tl.agree(count(t, b, "delayed", id) == 1 && attempts(id) == "1", "%s: attempts %q", tc.kind, attempts(id))
				require.NoError(t, g.Cancel(ctx, id))
			case "dead":
				dead, err := g.Dead(ctx, 0, 100)
				require.NoError(t, err)
				n := 0
				for _, d := range dead {
					if d.ID == id {
						n++
					}
				}
				tl.agree(n == 1 && count(t, b, "delayed", id) == 0 && attempts(id) == "1", "%s: %d times in dead, attempts %q", tc.kind, n, attempts(id))
				// Out of the way of the checks below.
				require.NoError(t, b.Client.ZRem(ctx, key(b, "dead"), id).Err())
				require.NoError(t, b.Client.HDel(ctx, key(b, "tasks"), id, id+":a", id+":e").Err())
			case "ack":
				tl.agree(!hasTask(t, b, id) && count(t, b, "delayed", id) == 0 && count(t, b, "dead", id) == 0, "%s: task left", tc.kind)
			}
		}
		tl.done()

		tl = newTally(t, "worker heartbeat", f)
		id, err := producer.Enqueue(ctx, "default", "t", nil)
		require.NoError(t, err)
		require.Equal(t, id, receive(t, running))
		deadline := func() float64 {
			score, err := b.Client.ZScore(ctx, key(b, "inflight"), inflightRun(t, b, id)).Result()
			require.NoError(t, err, "the task is in flight")
			return score
		}
		for range 3 {
			lost := loseOne(t, f, isExtend)
			lost()
			// The heartbeat after the lost one still finds the lease held,
			// and pushes its deadline further.
			before := deadline()
			b.FastForward(10 * time.Millisecond)
			waitFor(t, func() bool { return deadline() > before })
			n, err := g.Recover(ctx)
			require.NoError(t, err)
			tl.agree(n == 0 && cancelled.Load() == 0, "recovered %d, cancelled %d", n, cancelled.Load())
		}
		release <- nil
		waitSettled(t, b)
		tl.done()
	})
}

// A worker that stops gives its tasks back (a prefetched one at once, a
// running one after the grace period) in settle calls: with the reply of
// one lost, each task is back in its queue once, in order, with no
// attempt counted.
func TestWorker_lostGiveBackReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient()
		g := newGroup(t, b, c)
		warmScripts(t, g)
		producer := newGroup(t, b, b.Client)
		tl := newTally(t, "worker give-back", f)
		for round := range 3 {
			w := newWorker(t, g, queue.Concurrency(1), queue.Prefetch(2), queue.Grace(0), queue.Lease(time.Minute), queue.Logger(discard))
			running := make(chan string, 3)
			handle(t, w, "t", func(ctx context.Context, task *queue.Task) error {
				running <- task.ID
				<-ctx.Done()
				return ctx.Err()
			})
			var ids []string
			for i := range 3 {
				id, err := producer.Enqueue(ctx, "default", "t", i, queue.ID(fmt.Sprintf("r%d-%d", round, i)))
				require.NoError(t, err)
				ids = append(ids, id)
			}
			s := start(t, w)
			require.Equal(t, ids[0], receive(t, running))
			waitFor(t, func() bool { return stats(t, g).InFlight == 3 }) // one running, two prefetched
			lost := loseOne(t, f, isSettle)
			require.NoError(t, s.stop(t))
			lost()
			ready := readyIDs(t, b, "default")
			var attempted []string
			for _, id := range ids {
				if ok, err := b.Client.HExists(ctx, key(b, "tasks"), id+":a").Result(); assert.NoError(t, err) && ok {
					attempted = append(attempted, id)
				}
			}
			tl.agree(slices.Equal(ready, ids) && stats(t, g).InFlight == 0 && len(attempted) == 0,
				"ready %v (want %v), attempts counted for %v", ready, ids, attempted)
			require.NoError(t, b.Client.Del(ctx, key(b, "ready:default"), key(b, "tasks")).Err())
		}
		tl.done()
	})
}

// inflightRun returns the in-flight member of task id.
func inflightRun(t *testing.T, b *redistest.Backend, id string) string {
	t.Helper()
	runs, err := b.Client.ZRange(t.Context(), key(b, "inflight"), 0, -1).Result()
	require.NoError(t, err)
	for _, r := range runs {
		if strings.HasPrefix(r, id+":") {
			return r
		}
	}
	return id + ":none"
}

// waitFor waits for cond, for at most 20s (it only bounds a hang).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 20*time.Second, time.Millisecond)
}

// A worker whose replies stall past its ReadTimeout for a while (every
// attempt of go-redis runs on the server and times out) runs each task
// once, and without waiting for leases to expire: it sends its failed
// take again with the same token.
func TestWorker_stalledReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 200 * time.Millisecond })
		g := newGroup(t, b, c)
		warmScripts(t, g)
		w := newWorker(t, g, queue.Lease(time.Minute), queue.Concurrency(4), queue.Logger(discard))
		r := newRuns()
		handle(t, w, "t", func(_ context.Context, task *queue.Task) error { r.record(task.ID); return nil })
		start(t, w)
		producer := newGroup(t, b, b.Client)
		var calls, misses int
		for round := range 3 {
			jobs := make([]queue.Job, 6)
			for i := range jobs {
				jobs[i] = queue.Job{Queue: "default", Name: "t", Payload: i}
			}
			f.Delay(400 * time.Millisecond)
			ids, err := producer.EnqueueBatch(ctx, jobs)
			require.NoError(t, err)
			lift := time.AfterFunc(time.Duration(600+400*round)*time.Millisecond, func() { f.Delay(0) })
			r.wait(t, ids, 20*time.Second)
			lift.Stop()
			f.Delay(0)
			waitSettled(t, b)
			for _, id := range ids {
				calls++
				if r.count(id) != 1 {
					misses++
					t.Errorf("task %s ran %d times", id, r.count(id))
				}
				a, err := b.Client.HExists(ctx, key(b, "tasks"), id+":a").Result()
				require.NoError(t, err)
				assert.False(t, a, "no attempt counted: the task did not wait for its lease")
			}
		}
		t.Logf("fault harness: queue worker stalled replies: calls=%d disagreements=%d", calls, misses)
		assert.Zero(t, misses)
	})
}
