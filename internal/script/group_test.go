package script_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/script"
)

// transactions matches a MULTI/EXEC pipeline.
func transactions(cmds []redis.Cmder) bool {
	return slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "exec" })
}

var incr = script.New("group incr", "-- "+script.Nonce()+`
local bad = check_types({KEYS[1], 'string', 'test counter'})
if bad then return bad end
return redis.call('incrby', KEYS[1], ARGV[1])`)

// gated returns a Group of one transaction at a time on rdb, a gate on
// rdb's transactions, and the key of a counter, the script cached.
func gated(t *testing.T, b *redistest.Backend, rdb redis.UniversalClient) (*script.Group, *redistest.Gate, string) {
	t.Helper()
	gt := redistest.NewGate(transactions)
	rdb.AddHook(gt)
	g := script.NewGroup(rdb, 1, 100)
	k := b.Prefix + "{n}:n"
	_, err := g.Run(t.Context(), incr.Call([]string{k}, 0))
	require.NoError(t, err)
	return g, gt, k
}

// result is what one Group.Run returned.
type result struct {
	v   any
	err error
}

// run starts g.Run of incr on key by delta in a goroutine.
func run(ctx context.Context, g *script.Group, s *script.Script, key string, delta int) chan result {
	ch := make(chan result, 1)
	go func() {
		v, err := g.Run(ctx, s.Call([]string{key}, delta))
		ch <- result{v, err}
	}()
	return ch
}

// waiting waits until n calls wait in g's queue.
func waiting(t *testing.T, g *script.Group, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return g.Waiting() == n }, time.Minute, time.Millisecond, "%d calls waiting", n)
}

// A call made while the only batch allowed is on its way waits; the calls
// waiting when it comes back leave together in one MULTI/EXEC, in the
// order they came, and each gets its own reply.
func TestGroup_shares(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, cnt := b.NewClient()
		g, gt, k := gated(t, b, rdb)

		first := gt.Arm()
		r0 := cnt.RoundTrips()
		a := run(ctx, g, incr, k, 1)
		first.Entered()
		var rs []chan result
		for i := range 10 {
			rs = append(rs, run(ctx, g, incr, k, 1))
			waiting(t, g, i+1) // one at a time, so the queue's order is known
		}
		first.Release()
		assert.Equal(t, result{int64(1), nil}, <-a)
		for i, r := range rs {
			assert.Equal(t, result{int64(i + 2), nil}, <-r, "call %d", i)
		}
		assert.Equal(t, int64(2), cnt.RoundTrips()-r0, "the first call alone, then one batch of 10")
		assert.Equal(t, "11", b.Client.Get(ctx, k).Val())
	})
}

// In one batch, a call of a script the server does not know is sent again
// with EVAL (it did not run), alone; a call on a key of another type gets
// its *ria.KeyError; the others' results are unchanged.
func TestGroup_batchErrors(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, cnt := b.NewClient()
		g, gt, k := gated(t, b, rdb)
		h := b.Prefix + "{n}:h"
		require.NoError(t, b.Client.HSet(ctx, h, "f", "v").Err())
		fresh := script.New("group fresh", "-- "+script.Nonce()+"\nreturn redis.call('incrby', KEYS[1], ARGV[1])")

		first := gt.Arm()
		r0 := cnt.RoundTrips()
		a := run(ctx, g, incr, k, 1)
		first.Entered()
		nos := run(ctx, g, fresh, k, 10)
		waiting(t, g, 1)
		bad := run(ctx, g, incr, h, 1)
		waiting(t, g, 2)
		ok := run(ctx, g, incr, k, 100)
		waiting(t, g, 3)
		first.Release()
		assert.Equal(t, result{int64(1), nil}, <-a)
		assert.Equal(t, result{int64(111), nil}, <-nos, "sent again after the batch")
		r := <-bad
		var kerr *ria.KeyError
		require.ErrorAs(t, r.err, &kerr)
		assert.Equal(t, h, kerr.Key)
		assert.Equal(t, result{int64(101), nil}, <-ok)
		assert.Equal(t, int64(3), cnt.RoundTrips()-r0, "the first call, the batch, the call sent again with EVAL")
		assert.Equal(t, "111", b.Client.Get(ctx, k).Val())
	})
}

// A call whose context ends while it waits is taken out of the queue and
// never sent; one whose context ends while it is on its way in another's
// batch returns at once with an unknown outcome, and runs once.
func TestGroup_cancel(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _ := b.NewClient()
		g, gt, k := gated(t, b, rdb)

		first := gt.Arm()
		a := run(ctx, g, incr, k, 1)
		first.Entered()
		qctx, cancelQueued := context.WithCancel(ctx)
		queued := run(qctx, g, incr, k, 1000)
		waiting(t, g, 1)
		cancelQueued()
		r := <-queued
		assert.ErrorIs(t, r.err, context.Canceled)
		assert.NotErrorIs(t, r.err, ria.ErrOutcomeUnknown, "never sent")
		assert.Equal(t, 0, g.Waiting())

		leader := run(ctx, g, incr, k, 1)
		waiting(t, g, 1)
		mctx, cancelMember := context.WithCancel(ctx)
		member := run(mctx, g, incr, k, 1)
		waiting(t, g, 2)
		second := gt.Arm()
		first.Release() // a done; leader and member leave in one batch, held
		assert.Equal(t, result{int64(1), nil}, <-a)
		second.Entered()
		cancelMember()
		r = <-member
		assert.ErrorIs(t, r.err, ria.ErrOutcomeUnknown)
		assert.ErrorIs(t, r.err, context.Canceled)
		second.Release()
		assert.Equal(t, result{int64(2), nil}, <-leader)
		assert.Equal(t, "3", b.Client.Get(ctx, k).Val(), "the queued call never ran; the others once each")
	})
}

// A batch whose EXEC reply is lost: every call in it ran once, and each
// says its outcome is unknown; the client is not sent it again.
func TestGroup_lostReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		g, gt, k := gated(t, b, rdb)

		first := gt.Arm()
		a := run(ctx, g, incr, k, 1)
		first.Entered()
		var rs []chan result
		for i := range 3 {
			rs = append(rs, run(ctx, g, incr, k, 10))
			waiting(t, g, i+1)
		}
		second := gt.Arm()
		first.Release()
		assert.Equal(t, result{int64(1), nil}, <-a)
		second.Entered()
		f.LoseReply(1, redistest.Commands("exec"))
		second.Release()
		for i, r := range rs {
			assert.ErrorIs(t, (<-r).err, ria.ErrOutcomeUnknown, "call %d", i)
		}
		assert.Equal(t, int64(1), f.Lost())
		assert.Equal(t, "31", b.Client.Get(ctx, k).Val(), "each call of the batch ran once")
	})
}

// Many goroutines on several clients, keys on several slots: every call
// runs exactly once.
func TestGroup_concurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		other, _ := b.NewClient()
		gs := []*script.Group{script.NewGroup(b.Client, 2, 8), script.NewGroup(other, 2, 8)}
		const workers, calls, keys = 32, 30, 8
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range calls {
					k := fmt.Sprintf("%s{k%d}:n", b.Prefix, (w+i)%keys)
					if _, err := gs[w%2].Run(ctx, incr.Call([]string{k}, 1)); !assert.NoError(t, err) {
						return
					}
				}
			})
		}
		wg.Wait()
		total := 0
		for i := range keys {
			n, err := b.Client.Get(ctx, fmt.Sprintf("%s{k%d}:n", b.Prefix, i)).Int()
			require.NoError(t, err)
			total += n
		}
		assert.Equal(t, workers*calls, total)
		for _, g := range gs {
			assert.Equal(t, 0, g.Waiting())
		}
	})
}

func TestNewGroup_bad(t *testing.T) {
	assert.PanicsWithValue(t, "group: New(inflight 0, maxBatch 1): both must be at least 1", func() { script.NewGroup(nil, 0, 1) })
	once := script.NewOnce("group once", "return 1")
	g := script.NewGroup(nil, 1, 1)
	assert.Panics(t, func() { _, _ = g.Run(context.Background(), once.Prepare("r", time.Second, nil)) })
}
