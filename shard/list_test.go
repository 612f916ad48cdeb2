package shard_test

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

func strs(lo, hi int) []string {
	out := make([]string, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

// The book's sharded list test (11.4): 100 pushes give length 100; with
// 1,000 left pushes and 1,000 right pushes, the left pop gives the last
// left-pushed value and the right pop the last right-pushed one. Push, pop
// and len cost one round trip each.
func TestList_book(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := must(shard.NewList(ctx, b.Client, "lst", shard.WithShardSize(10), shard.WithPrefix(b.Prefix)))
		_, _, err := l.PopLeft(ctx) // loads the scripts: later calls are one EVALSHA each
		require.NoError(t, err)
		_, err = l.Len(ctx)
		require.NoError(t, err)
		_, err = l.PushRight(ctx, "warm")
		require.NoError(t, err)
		_, _, err = l.PopLeft(ctx)
		require.NoError(t, err)

		var n int64
		rt, _ := b.Count.Delta(func() { n, err = l.PushRight(ctx, strs(0, 100)...) })
		require.NoError(t, err)
		assert.Equal(t, int64(100), n)
		assert.Equal(t, int64(1), rt, "push: one round trip")
		rt, _ = b.Count.Delta(func() { n, err = l.Len(ctx) })
		require.NoError(t, err)
		assert.Equal(t, int64(100), n)
		assert.Equal(t, int64(1), rt, "len: one round trip")
		assert.Len(t, b.Keys(b.Prefix+"{lst}:[0-9]*"), 10, "100 values in shards of 10")

		l2 := must(shard.NewList(ctx, b.Client, "lst2", shard.WithShardSize(10), shard.WithPrefix(b.Prefix)))
		_, _, err = l2.PopLeft(ctx) // loads the scripts on l2's server (a Router's may be another)
		require.NoError(t, err)
		_, err = l2.PushLeft(ctx, strs(0, 1000)...)
		require.NoError(t, err)
		_, err = l2.PushRight(ctx, strs(0, 1000)...)
		require.NoError(t, err)
		n, err = l2.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2000), n)
		var v string
		var ok bool
		rt, _ = b.Count.Delta(func() { v, ok, err = l2.PopLeft(ctx) })
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "999", v, "the last value pushed left")
		assert.Equal(t, int64(1), rt, "pop: one round trip")
		v, ok, err = l2.PopRight(ctx)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "999", v, "the last value pushed right")

		// The rest drains in list order across every shard: 998..0 then 0..998.
		var got []string
		for {
			v, ok, err := l2.PopLeft(ctx)
			require.NoError(t, err)
			if !ok {
				break
			}
			got = append(got, v)
		}
		want := make([]string, 0, 1998)
		for i := 998; i >= 0; i-- {
			want = append(want, strconv.Itoa(i))
		}
		want = append(want, strs(0, 999)...)
		assert.Equal(t, want, got)
		n, err = l2.Len(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Empty(t, b.Keys(b.Prefix+"{lst2}:[0-9]*"), "an empty list keeps no shard")
		_, ok, err = l2.PopRight(ctx)
		require.NoError(t, err)
		assert.False(t, ok)
	})
}

// The book's blocking-pop sequence: a consumer making ten blocking pops of
// 1 s while the producer pushes 0 to 3, pauses, then pushes 4 to 7, gets 0,
// 1, 2, 3, nothing, 4, 5, 6, 7, nothing. The producer's pause ends on an
// event (the consumer reported its empty pop and waits again), not on a
// clock.
func TestList_blockingBook(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		t.Parallel() // mostly waiting: the backends wait side by side
		ctx := t.Context()
		l := must(shard.NewList(ctx, b.Client, "blst", shard.WithPrefix(b.Prefix)))
		type result struct {
			v   string
			ok  bool
			err error
		}
		res := make(chan result, 10)
		go func() {
			for range 10 {
				v, ok, err := l.BlockingPopLeft(ctx, time.Second)
				res <- result{v, ok, err}
			}
		}()
		for i := range 4 {
			_, err := l.PushRight(ctx, strconv.Itoa(i))
			require.NoError(t, err)
		}
		var got []string
		next := func() {
			select {
			case r := <-res:
				require.NoError(t, r.err)
				if r.ok {
					got = append(got, r.v)
				} else {
					got = append(got, "nothing")
				}
			case <-time.After(30 * time.Second): // bounds a hang only
				t.Fatal("no pop result within 30 s")
			}
		}
		for range 5 {
			next()
		}
		waitWaiter(t, b, b.Prefix+"{blst}:waiters")
		for i := 4; i < 8; i++ {
			_, err := l.PushRight(ctx, strconv.Itoa(i))
			require.NoError(t, err)
		}
		for range 5 {
			next()
		}
		assert.Equal(t, []string{"0", "1", "2", "3", "nothing", "4", "5", "6", "7", "nothing"}, got)
	})
}

// waitWaiter waits until a blocking pop is registered in the waiters ZSET.
func waitWaiter(t *testing.T, b *redistest.Backend, key string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // bounds a hang only
	for b.Client.ZCard(t.Context(), key).Val() == 0 {
		require.True(t, time.Now().Before(deadline), "no waiter registered within 30 s")
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(time.Millisecond): // polls the server for the event
		}
	}
}

// A blocking pop wakes on a push, not on its timeout: with a 30 s timeout
// the value arrives within milliseconds of the push.
func TestList_blockingWakes(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := must(shard.NewList(ctx, b.Client, "wake", shard.WithPrefix(b.Prefix)))
		for _, dir := range []string{"left", "right"} {
			done := make(chan time.Time, 1)
			var v string
			var ok bool
			var err error
			go func() {
				if dir == "left" {
					v, ok, err = l.BlockingPopLeft(ctx, 30*time.Second)
				} else {
					v, ok, err = l.BlockingPopRight(ctx, 30*time.Second)
				}
				done <- time.Now()
			}()
			waitWaiter(t, b, b.Prefix+"{wake}:waiters")
			start := time.Now()
			_, perr := l.PushLeft(ctx, "x-"+dir)
			require.NoError(t, perr)
			end := <-done
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, "x-"+dir, v)
			wake := end.Sub(start)
			t.Logf("%s: blocking pop woke %v after the push", dir, wake)
			assert.Less(t, wake, 10*time.Second, "woken by the push, not by its 30 s timeout")
		}
		assert.Zero(t, b.Client.Exists(ctx, b.Prefix+"{wake}:waiters").Val(), "no registration left")
		assert.Empty(t, b.Keys(b.Prefix+"{wake}:wake:*"), "no wake list left")
	})
}

// Eight producers and eight blocking consumers: every value is delivered
// exactly once.
func TestList_concurrent(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const producers, consumers, each = 8, 8, 100
		l := must(shard.NewList(ctx, b.Client, "conc", shard.WithShardSize(16), shard.WithPrefix(b.Prefix)))
		var (
			mu       sync.Mutex
			seen     = map[string]int{}
			received atomic.Int64
			errs     = make(chan error, producers+consumers)
			wg       sync.WaitGroup
		)
		for c := range consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for received.Load() < producers*each {
					var v string
					var ok bool
					var err error
					if c%2 == 0 {
						v, ok, err = l.BlockingPopLeft(ctx, 200*time.Millisecond)
					} else {
						v, ok, err = l.BlockingPopRight(ctx, 200*time.Millisecond)
					}
					if err != nil {
						errs <- err
						return
					}
					if ok {
						mu.Lock()
						seen[v]++
						mu.Unlock()
						received.Add(1)
					}
				}
			}()
		}
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					v := strconv.Itoa(p*each + i)
					var err error
					if i%2 == 0 {
						_, err = l.PushLeft(ctx, v)
					} else {
						_, err = l.PushRight(ctx, v)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		assert.Len(t, seen, producers*each)
		for v, n := range seen {
			if n != 1 {
				t.Errorf("value %s delivered %d times", v, n)
			}
		}
		n, err := l.Len(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
	})
}

// Bad input: a shard size below 1, a bad name, a nil client, too many
// values; nothing is written.
func TestList_badInput(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		_, err := shard.NewList(ctx, b.Client, "x", shard.WithShardSize(0), shard.WithPrefix(b.Prefix))
		assert.ErrorIs(t, err, shard.ErrSize)
		_, err = shard.NewList(ctx, b.Client, "a{b", shard.WithPrefix(b.Prefix))
		assert.Error(t, err)
		_, err = shard.NewList(ctx, nil, "x", shard.WithPrefix(b.Prefix))
		assert.ErrorContains(t, err, "nil client")
		_, err = shard.NewList(ctx, b.Client, "x", shard.WithDailyExpected(5), shard.WithPrefix(b.Prefix))
		assert.ErrorContains(t, err, "does not take WithDailyExpected")
		assert.Empty(t, b.Keys(""))
		l := must(shard.NewList(ctx, b.Client, "x", shard.WithPrefix(b.Prefix)))
		before := b.Snapshot()
		_, err = l.PushRight(ctx, make([]string, 100_001)...)
		assert.ErrorContains(t, err, "at most 100000")
		assert.Equal(t, before, b.Snapshot())
		_, err = shard.NewList(ctx, b.Client, "x", shard.WithShardSize(7), shard.WithPrefix(b.Prefix))
		assert.ErrorIs(t, err, shard.ErrMismatch, "created with shard size 512")
	})
}
