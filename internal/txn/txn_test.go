package txn_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/txn"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// incr returns a Watch body that reads key and writes it back plus one,
// counting its calls in calls. before, if set, runs between the read and the
// MULTI/EXEC (to interfere); ops use opCtx.
func incr(opCtx context.Context, key string, calls *atomic.Int64, before func(call int64)) func(*redis.Tx) error {
	return func(tx *redis.Tx) error {
		call := calls.Add(1)
		n, err := tx.Get(opCtx, key).Int()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		if before != nil {
			before(call)
		}
		_, err = tx.TxPipelined(opCtx, func(p redis.Pipeliner) error {
			p.Set(opCtx, key, n+1, 0)
			return nil
		})
		return err
	}
}

func TestWatch_noLostUpdates(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		key := b.Prefix + "{k}:counter"
		other, _ := b.NewClient()
		clients := []redis.UniversalClient{b.Client, other}

		const workers, each = 16, 8
		var calls atomic.Int64
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for i := range workers {
			c := clients[i%len(clients)]
			wg.Go(func() {
				for range each {
					if err := txn.Watch(ctx, c, 0, incr(ctx, key, &calls, nil), key); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}

		got, err := b.Client.Get(ctx, key).Int()
		require.NoError(t, err)
		assert.Equal(t, workers*each, got, "no increment may be lost")
		assert.GreaterOrEqual(t, calls.Load(), int64(workers*each))
		t.Logf("%d attempts for %d increments (%d retried after contention)",
			calls.Load(), workers*each, calls.Load()-workers*each)
	})
}

func TestWatch_retriesAfterConflict(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		key := b.Prefix + "{k}:counter"
		other, _ := b.NewClient()
		var calls atomic.Int64
		interfere := func(call int64) {
			if call == 1 { // a write between our read and our EXEC
				assert.NoError(t, other.Set(ctx, key, 10, 0).Err())
			}
		}

		err := txn.Watch(ctx, b.Client, 5*time.Second, incr(ctx, key, &calls, interfere), key)
		require.NoError(t, err)
		assert.Equal(t, int64(2), calls.Load(), "the aborted attempt is retried once")
		got, err := b.Client.Get(ctx, key).Int()
		require.NoError(t, err)
		assert.Equal(t, 11, got, "the retry read the other client's write")
	})
}

func TestWatch_fnError(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		key := b.Prefix + "{k}:a"
		errBoom := errors.New("boom")
		calls := 0
		err := txn.Watch(ctx, b.Client, 5*time.Second, func(tx *redis.Tx) error {
			calls++
			return errBoom
		}, key)
		assert.Equal(t, errBoom, err, "fn's error comes back unchanged")
		assert.ErrorIs(t, err, errBoom)
		assert.Equal(t, 1, calls, "fn's own error is not retried")
	})
}

func TestWatch_redisError(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		key := b.Prefix + "{k}:a"
		require.NoError(t, b.Client.Set(ctx, key, "x", 0).Err())
		calls := 0
		err := txn.Watch(ctx, b.Client, 5*time.Second, func(tx *redis.Tx) error {
			calls++
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.LPush(ctx, key, "y") // WRONGTYPE inside EXEC
				return nil
			})
			return err
		}, key)
		assert.ErrorContains(t, err, "WRONGTYPE")
		assert.Equal(t, 1, calls)
	})
}

// alwaysContended returns a Watch body whose EXEC always aborts: it changes
// the watched key from another client between WATCH and EXEC.
func alwaysContended(t *testing.T, b *redistest.Backend, key string, calls *atomic.Int64, onCall func(call int64)) func(*redis.Tx) error {
	other, _ := b.NewClient()
	opCtx := context.WithoutCancel(t.Context()) // ops finish even once the Watch ctx ends
	return incr(opCtx, key, calls, func(call int64) {
		assert.NoError(t, other.Incr(opCtx, key).Err())
		if onCall != nil {
			onCall(call)
		}
	})
}

func TestWatch_contendedTimeout(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:counter"
		var calls atomic.Int64
		const timeout = 150 * time.Millisecond
		start := time.Now()
		err := txn.Watch(t.Context(), b.Client, timeout, alwaysContended(t, b, key, &calls, nil), key)
		elapsed := time.Since(start)

		assert.ErrorIs(t, err, txn.ErrContended)
		assert.ErrorContains(t, err, fmt.Sprintf("after %d attempts", calls.Load()))
		assert.Greater(t, calls.Load(), int64(1), "retried while the timeout lasted")
		assert.GreaterOrEqual(t, elapsed, timeout)
		assert.Less(t, elapsed, 10*time.Second, "gave up soon after the timeout")
		got, err := b.Client.Get(t.Context(), key).Int()
		require.NoError(t, err)
		assert.Equal(t, int(calls.Load()), got, "only the interfering INCRs were applied")
	})
}

func TestWatch_contendedCancel(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:counter"
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var calls atomic.Int64
		fn := alwaysContended(t, b, key, &calls, func(call int64) {
			if call == 3 {
				cancel()
			}
		})
		err := txn.Watch(ctx, b.Client, 0, fn, key)
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, txn.ErrContended)
		assert.Equal(t, int64(3), calls.Load(), "no attempt after the cancel")
	})
}

func TestWatch_cancelledBefore(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:counter"
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		var calls atomic.Int64
		err := txn.Watch(ctx, b.Client, time.Second, incr(t.Context(), key, &calls, nil), key)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, int64(0), calls.Load())
	})
}

func TestChunked_roundTrips(t *testing.T) {
	tests := []struct {
		n, size int
		want    int64
	}{
		{n: 1000, size: 100, want: 10},
		{n: 1001, size: 100, want: 11},
		{n: 5, size: 100, want: 1},
		{n: 3, size: 1, want: 3},
		{n: 0, size: 100, want: 0},
	}
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		require.NoError(t, b.Client.Exists(ctx, b.Prefix+"{k}:warm").Err()) // connect and load cluster state first
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%d/%d", tt.n, tt.size), func(t *testing.T) {
				prefix := fmt.Sprintf("%s{k}:%d-%d:", b.Prefix, tt.n, tt.size)
				items := make([]int, tt.n)
				keys := make([]string, tt.n)
				for i := range items {
					items[i] = i
					keys[i] = prefix + strconv.Itoa(i)
				}
				var err error
				rt, cmds := b.Count.Delta(func() {
					err = txn.Chunked(ctx, b.Client, items, tt.size, func(p redis.Pipeliner, i int) {
						p.Set(ctx, keys[i], i, 0)
					})
				})
				require.NoError(t, err)
				assert.Equal(t, tt.want, rt, "round trips")
				assert.Equal(t, int64(tt.n), cmds, "commands")
				if tt.n == 0 {
					return
				}
				got, err := b.Client.MGet(ctx, keys...).Result()
				require.NoError(t, err)
				for i, v := range got {
					assert.Equal(t, strconv.Itoa(i), v, keys[i])
				}
			})
		}
	})
}

func TestChunked_badSize(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, size := range []int{0, -1} {
			var err error
			rt, _ := b.Count.Delta(func() {
				err = txn.Chunked(t.Context(), b.Client, []int{1, 2}, size, func(p redis.Pipeliner, i int) {
					t.Error("add called")
				})
			})
			assert.ErrorContains(t, err, "chunk size")
			assert.ErrorContains(t, err, strconv.Itoa(size))
			assert.Equal(t, int64(0), rt)
		}
	})
}

func TestChunked_stopsAtFailingChunk(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		str := b.Prefix + "{k}:string"
		list := func(i int) string { return fmt.Sprintf("%s{k}:list%d", b.Prefix, i) }
		require.NoError(t, b.Client.Set(ctx, str, "x", 0).Err())
		// Items 0..5 in chunks of 2; item 3 pushes to a string (WRONGTYPE).
		var err error
		rt, _ := b.Count.Delta(func() {
			err = txn.Chunked(ctx, b.Client, []int{0, 1, 2, 3, 4, 5}, 2, func(p redis.Pipeliner, i int) {
				key := list(i)
				if i == 3 {
					key = str
				}
				p.LPush(ctx, key, "v")
			})
		})
		assert.ErrorContains(t, err, "WRONGTYPE")
		assert.ErrorContains(t, err, "items 2..3")
		var rerr redis.Error
		assert.ErrorAs(t, err, &rerr, "the Redis error is wrapped")
		assert.Equal(t, int64(2), rt, "the chunk after the failing one is not sent")
		for i, want := range []int64{1, 1, 1, 0, 0, 0} {
			n, err := b.Client.Exists(ctx, list(i)).Result()
			require.NoError(t, err)
			assert.Equal(t, want, n, "item %d written", i)
		}
	})
}

func TestChunked_nilIsNotAnError(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var gets []*redis.StringCmd
		err := txn.Chunked(ctx, b.Client, []string{"a", "b", "c"}, 2, func(p redis.Pipeliner, k string) {
			gets = append(gets, p.Get(ctx, b.Prefix+"{k}:missing-"+k))
		})
		assert.NoError(t, err, "GET of a missing key is not a failure")
		require.Len(t, gets, 3)
		for _, g := range gets {
			assert.ErrorIs(t, g.Err(), redis.Nil)
		}
	})
}

// A redis.Nil early in a chunk must not hide a real failure later in the
// same chunk: p.Exec returns only the first command error.
func TestChunked_errorAfterNilInSameChunk(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		str := b.Prefix + "{k}:string"
		require.NoError(t, b.Client.Set(ctx, str, "x", 0).Err())
		var push *redis.IntCmd
		err := txn.Chunked(ctx, b.Client, []int{0, 1}, 10, func(p redis.Pipeliner, i int) {
			if i == 0 {
				p.Get(ctx, b.Prefix+"{k}:missing") // redis.Nil
				return
			}
			push = p.LPush(ctx, str, "v") // WRONGTYPE
		})
		require.NotNil(t, push)
		require.ErrorContains(t, push.Err(), "WRONGTYPE", "precondition: the second command failed")
		assert.ErrorContains(t, err, "WRONGTYPE", "Chunked must report the failed command")
	})
}
