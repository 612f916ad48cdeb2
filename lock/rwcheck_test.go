package lock_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/lock"
)

// Round trips: each uncontended call is one script call.
func TestRW_roundTrips(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("a")
		warm, err := rw.TryLock(ctx, time.Minute) // load the scripts on a's server
		require.NoError(t, err)
		require.NoError(t, warm.Extend(ctx, time.Minute))
		require.NoError(t, warm.Release(ctx))

		var r1, r2, w *lock.RWHold
		for _, c := range []struct {
			op string
			fn func() error
		}{
			{"TryRLock", func() (err error) { r1, err = rw.TryRLock(ctx, time.Minute); return err }},
			{"RLock (readers hold)", func() (err error) { r2, err = rw.RLock(ctx, time.Minute); return err }},
			{"Extend (reader)", func() error { return r1.Extend(ctx, time.Minute) }},
			{"Release (reader)", func() error { return r1.Release(ctx) }},
			{"Release (last reader)", func() error { return r2.Release(ctx) }},
			{"Lock", func() (err error) { w, err = rw.Lock(ctx, time.Minute); return err }},
			{"Extend (writer)", func() error { return w.Extend(ctx, time.Minute) }},
			{"Release (writer)", func() error { return w.Release(ctx) }},
			{"TryLock", func() (err error) { w, err = rw.TryLock(ctx, time.Minute); return err }},
			{"Release after TryLock", func() error { return w.Release(ctx) }},
		} {
			rt, cmds := b.Count.Delta(func() { require.NoError(t, c.fn(), c.op) })
			assert.Equal(t, int64(1), rt, c.op+" round trips")
			assert.Equal(t, int64(1), cmds, c.op+" commands")
		}
	})
}

// A contended RLock once the RWLock has seen the lock taken: one round trip
// for "queue and block" (EVALSHA and BLPOP pipelined); the writer's release
// hands it over.
func TestRW_roundTrips_contended(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		holder := newLocker(b).RW("job")
		c2, count := b.NewClient()
		rw := must(lock.New(c2, lock.WithPrefix(b.Prefix))).RW("job")
		warm, err := rw.TryLock(ctx, time.Minute)
		require.NoError(t, err)
		require.NoError(t, warm.Release(ctx))
		for _, hot := range []bool{true, false} {
			w, err := holder.TryLock(ctx, time.Minute)
			require.NoError(t, err)
			rw.SetHotForTest(hot)
			type result struct {
				h        *lock.RWHold
				err      error
				rt, cmds int64
			}
			done := make(chan result, 1)
			go func() {
				var r result
				r.rt, r.cmds = count.Delta(func() { r.h, r.err = rw.RLock(ctx, time.Minute, lock.WithWait(20*time.Second)) })
				done <- r
			}()
			waitForRWWaiters(t, b, "job", 1)
			require.NoError(t, w.Release(ctx))
			r := <-done
			require.NoError(t, r.err)
			if hot {
				assert.Equal(t, int64(1), r.rt, "queue and block in one round trip")
				assert.Equal(t, int64(2), r.cmds, "EVALSHA and BLPOP")
			} else {
				assert.Equal(t, int64(2), r.rt, "a plain attempt, then a plain wait")
			}
			rt, _ := count.Delta(func() { require.NoError(t, r.h.Release(ctx)) })
			assert.Equal(t, int64(1), rt, "release")
		}
	})
}

// Every script refuses a key of another type than its own, among those its
// path relies on, with a *ria.KeyError naming the key and its role, having
// changed nothing.
func TestRW_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("job")
		kr := func(part, typ, role string) redistest.KeyRole {
			return redistest.KeyRole{Key: rwKey(b, "job", part), Type: typ, Role: role}
		}
		writer := kr("writer", "string", "lock rw writer")
		readers := kr("readers", "zset", "lock rw readers")
		fence := kr("fence", "string", "lock rw fence")
		queue := kr("queue", "list", "lock rw queue")
		waiters := kr("waiters", "hash", "lock rw waiters")
		// fixed holders and waiters, whose keys are known in advance
		wh := rw.NewHoldForTest(time.Minute, true)
		rh := rw.NewHoldForTest(time.Minute, false)
		ww := rw.NewHoldForTest(time.Minute, true)
		rwt := rw.NewHoldForTest(time.Minute, false)
		grant := func(h *lock.RWHold) redistest.KeyRole { return kr("grant:"+h.Token(), "list", "lock rw grant") }
		fenced := func() { require.NoError(t, b.Client.Set(ctx, fence.Key, "7", 0).Err()) }
		take := func(h *lock.RWHold) {
			ok, err := h.AttemptForTest(ctx, 0)
			require.NoError(t, err)
			require.True(t, ok)
		}
		queueUp := func(h *lock.RWHold) {
			ok, err := h.AttemptForTest(ctx, 10*time.Second)
			require.NoError(t, err)
			require.False(t, ok)
		}
		writing := func() { fenced(); take(wh) }
		reading := func() { fenced(); take(rh) }

		t.Run("TryRLock", func(t *testing.T) {
			b.CheckWrongTypes(t, fenced, func() error { _, err := rw.TryRLock(ctx, time.Minute); return err },
				writer, readers, fence, queue)
		})
		t.Run("TryLock", func(t *testing.T) {
			b.CheckWrongTypes(t, fenced, func() error { _, err := rw.TryLock(ctx, time.Minute); return err },
				writer, readers, fence, queue)
		})
		for _, hot := range []bool{true, false} {
			t.Run("RLock contended/hot="+strconv.FormatBool(hot), func(t *testing.T) {
				b.CheckWrongTypes(t, writing, func() error {
					rw.SetHotForTest(hot)
					_, err := rw.WaitForTest(ctx, rwt, lock.WithWait(5*time.Second))
					return err
				}, writer, readers, queue, waiters, grant(rwt))
			})
			t.Run("Lock contended/hot="+strconv.FormatBool(hot), func(t *testing.T) {
				b.CheckWrongTypes(t, reading, func() error {
					rw.SetHotForTest(hot)
					_, err := rw.WaitForTest(ctx, ww, lock.WithWait(5*time.Second))
					return err
				}, writer, readers, queue, waiters, grant(ww))
			})
		}
		t.Run("Release reader", func(t *testing.T) {
			b.CheckWrongTypes(t, reading, func() error { return rh.Release(ctx) }, writer, readers, queue)
		})
		t.Run("Release writer hands over to readers", func(t *testing.T) {
			b.CheckWrongTypes(t, func() { writing(); queueUp(rwt); queueUp(rh) }, func() error { return wh.Release(ctx) },
				writer, readers, fence, queue, waiters, grant(rwt), grant(rh))
		})
		t.Run("Release reader hands over to a writer", func(t *testing.T) {
			b.CheckWrongTypes(t, func() { reading(); queueUp(ww) }, func() error { return rh.Release(ctx) },
				writer, readers, fence, queue, waiters, grant(ww))
		})
		t.Run("Extend", func(t *testing.T) {
			b.CheckWrongTypes(t, writing, func() error { return wh.Extend(ctx, time.Minute) }, writer, readers)
			b.CheckWrongTypes(t, reading, func() error { return rh.Extend(ctx, time.Minute) }, writer, readers)
		})
	})
}

// A corrupt fence counter is reported (ria.ErrCorrupt) by an acquisition
// and by a release that would grant, and nothing changes.
func TestRW_corruptFence(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("job")
		fence := rwKey(b, "job", "fence")
		for _, v := range []string{"abc", "1.5", strconv.FormatInt(math.MaxInt64, 10)} {
			require.NoError(t, b.Client.Set(ctx, fence, v, 0).Err())
			before := b.Snapshot()
			_, err := rw.TryRLock(ctx, time.Minute)
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, v) {
				assert.ErrorIs(t, err, ria.ErrCorrupt)
				assert.Equal(t, "lock rw fence", kerr.Role)
			}
			assert.Equal(t, before, b.Snapshot(), "nothing changed (%s)", v)

			require.NoError(t, b.Client.Set(ctx, fence, "1", 0).Err())
			w, err := rw.TryLock(ctx, time.Minute)
			require.NoError(t, err)
			r := rw.NewHoldForTest(time.Minute, false)
			ok, err := r.AttemptForTest(ctx, 10*time.Second)
			require.NoError(t, err)
			require.False(t, ok)
			require.NoError(t, b.Client.Set(ctx, fence, v, 0).Err())
			before = b.Snapshot()
			err = w.Release(ctx)
			assert.True(t, errors.Is(err, ria.ErrCorrupt), "%v", err)
			assert.Equal(t, before, b.Snapshot(), "nothing changed (%s)", v)
			b.Flush()
		}
	})
}

func TestRW_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		for _, name := range []string{"", "}x", "a{b"} {
			rw := locker.RW(name)
			_, err := rw.TryRLock(ctx, time.Minute)
			assert.ErrorContains(t, err, "lock name")
			_, err = rw.Lock(ctx, time.Minute)
			assert.ErrorContains(t, err, "lock name")
			err = rw.DoRead(ctx, time.Minute, func(context.Context, *lock.RWHold) error { t.Error("fn ran"); return nil })
			assert.ErrorContains(t, err, "lock name")
		}
		rw := locker.RW("job")
		_, err := rw.TryLock(ctx, 0)
		assert.EqualError(t, err, `lock: lock "job": ttl 0s: must be at least 1ms`)
		_, err = rw.RLock(ctx, -time.Second)
		assert.EqualError(t, err, `lock: rlock "job": ttl -1s: must be at least 1ms`)
		_, err = rw.RLock(ctx, time.Minute, lock.WithWait(-time.Second))
		assert.EqualError(t, err, `lock: rlock "job": wait -1s: must not be negative`)
		assert.NotPanics(t, func() { err = rw.DoWrite(ctx, time.Minute, nil) })
		assert.EqualError(t, err, `lock: do write "job": nil fn`)
		assert.NotPanics(t, func() { err = rw.DoRead(ctx, time.Minute, nil) })
		assert.EqualError(t, err, `lock: do read "job": nil fn`)
		assert.Empty(t, b.Keys(""), "bad input wrote nothing")
		h, err := rw.TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		assert.ErrorContains(t, h.Extend(ctx, 0), "ttl")
		require.NoError(t, h.Release(ctx))
	})
}

// A writer key without TTL (set by hand) makes a reader wait for a release
// rather than spin; a waiter whose ctx ends leaves the queue.
func TestRW_ctxCancelled(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		rw := newLocker(b).RW("job")
		require.NoError(t, b.Client.Set(t.Context(), rwKey(b, "job", "writer"), "someone", 0).Err())
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := rw.RLock(ctx, time.Minute)
			done <- err
		}()
		waitForRWWaiters(t, b, "job", 1)
		cancel()
		err := <-done
		assert.ErrorIs(t, err, lock.ErrNotObtained)
		assert.ErrorIs(t, err, context.Canceled)
		waitForRWWaiters(t, b, "job", 0)
		assert.Zero(t, b.Client.HLen(t.Context(), rwKey(b, "job", "waiters")).Val())
		_, err = b.Client.Get(t.Context(), rwKey(b, "job", "writer")).Result()
		assert.NotEqual(t, redis.Nil, err)
	})
}
