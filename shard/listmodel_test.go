package shard_test

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// A random sequence of pushes and pops at both ends, with tiny shards,
// matches a plain deque, and Len always agrees.
func TestList_model(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, size := range []int64{1, 2, 3} {
			name := "model" + strconv.FormatInt(size, 10)
			l := must(shard.NewList(ctx, b.Client, name, shard.WithShardSize(size), shard.WithPrefix(b.Prefix)))
			r := rand.New(rand.NewPCG(uint64(size), 7))
			var model []string
			seq := 0
			for step := range 300 {
				switch op := r.IntN(4); op {
				case 0, 1:
					n := 1 + r.IntN(5)
					vals := make([]string, n)
					for i := range vals {
						seq++
						vals[i] = strconv.Itoa(seq)
					}
					var got int64
					var err error
					if op == 0 {
						got, err = l.PushLeft(ctx, vals...)
						for _, v := range vals {
							model = append([]string{v}, model...)
						}
					} else {
						got, err = l.PushRight(ctx, vals...)
						model = append(model, vals...)
					}
					require.NoError(t, err)
					require.EqualValues(t, n, got)
				case 2, 3:
					var v string
					var ok bool
					var err error
					if op == 2 {
						v, ok, err = l.PopLeft(ctx)
					} else {
						v, ok, err = l.PopRight(ctx)
					}
					require.NoError(t, err)
					if len(model) == 0 {
						require.False(t, ok, "step %d: popped %q from an empty list", step, v)
						continue
					}
					require.True(t, ok, "step %d: nothing popped, model %v", step, model)
					var want string
					if op == 2 {
						want, model = model[0], model[1:]
					} else {
						want, model = model[len(model)-1], model[:len(model)-1]
					}
					require.Equal(t, want, v, "step %d size %d", step, size)
				}
				n, err := l.Len(ctx)
				require.NoError(t, err)
				require.EqualValues(t, len(model), n, "step %d size %d", step, size)
			}
		}
	})
}

// Blocking pops with short timeouts racing pushes at both ends: every
// value pushed is popped exactly once or is still in the list.
func TestList_blockingRace(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := must(shard.NewList(ctx, b.Client, "brace", shard.WithShardSize(2), shard.WithPrefix(b.Prefix)))
		const producers, consumers, each = 4, 6, 150
		var (
			mu   sync.Mutex
			seen = map[string]int{}
			done atomic.Bool
			wg   sync.WaitGroup
			errs = make(chan error, producers+consumers)
		)
		for c := range consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !done.Load() {
					to := time.Duration(1+c) * 7 * time.Millisecond
					var v string
					var ok bool
					var err error
					if c%2 == 0 {
						v, ok, err = l.BlockingPopLeft(ctx, to)
					} else {
						v, ok, err = l.BlockingPopRight(ctx, to)
					}
					if err != nil {
						errs <- err
						return
					}
					if ok {
						mu.Lock()
						seen[v]++
						mu.Unlock()
					}
				}
			}()
		}
		var pw sync.WaitGroup
		for p := range producers {
			pw.Add(1)
			go func() {
				defer pw.Done()
				for i := range each {
					v := strconv.Itoa(p*each + i)
					var err error
					if i%2 == 0 {
						_, err = l.PushLeft(ctx, v)
					} else {
						_, err = l.PushRight(ctx, v, "x"+v)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		pw.Wait()
		done.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		for {
			v, ok, err := l.PopLeft(ctx)
			require.NoError(t, err)
			if !ok {
				break
			}
			seen[v]++
		}
		want := producers*each + producers*each/2
		require.Len(t, seen, want)
		for v, n := range seen {
			require.Equal(t, 1, n, "value %s", v)
		}
	})
}

// A blocking pop "waits up to timeout": on a client whose read timeout
// leaves no room for a sub-second wait through Do, a 50 ms blocking pop of
// an empty list gives up at 50 ms, not after the whole second go-redis's
// BLMove rounds its wait up to.
func TestList_BlockingPop_subSecondShortReadTimeout(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := b.NewClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 200 * time.Millisecond })
		l := must(shard.NewList(ctx, c, "over", shard.WithPrefix(b.Prefix)))
		_, _, err := l.PopLeft(ctx) // loads the script
		require.NoError(t, err)
		start := time.Now()
		_, ok, err := l.BlockingPopLeft(ctx, 50*time.Millisecond)
		took := time.Since(start)
		require.NoError(t, err)
		require.False(t, ok)
		require.Less(t, took, 900*time.Millisecond, "a 50 ms blocking pop took %v", took)
	})
}
