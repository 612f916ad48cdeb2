package lock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/lock"
)

func newLocker(b *redistest.Backend) *lock.Locker {
	return must(lock.New(b.Client, lock.WithPrefix(b.Prefix)))
}

func ownerKey(b *redistest.Backend, name string) string { return b.Prefix + "{" + name + "}:owner" }

// waitForWaiters blocks until n Acquires of name are queued.
func waitForWaiters(t *testing.T, b *redistest.Backend, name string, n int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		got, err := b.Client.LLen(context.Background(), b.Prefix+"{"+name+"}:queue").Result()
		return err == nil && got == n
	}, 5*time.Second, time.Millisecond)
}

func TestLock_TryAcquire(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		l, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		assert.Equal(t, "job", l.Name())
		assert.NotEmpty(t, l.Token())

		_, err = locker.TryAcquire(ctx, "job", time.Minute)
		assert.ErrorIs(t, err, lock.ErrNotObtained)
		_, err = locker.TryAcquire(ctx, "other", time.Minute)
		assert.NoError(t, err, "locks of other names are independent")

		require.NoError(t, l.Release(ctx))
		assert.ErrorIs(t, l.Release(ctx), lock.ErrNotHeld, "second release")
		_, err = locker.TryAcquire(ctx, "job", time.Minute)
		assert.NoError(t, err)
	})
}

// The book's scenario: a second acquire fails within its wait.
func TestLock_Acquire_waitEnds(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		_, err := locker.Acquire(ctx, "job", time.Minute)
		require.NoError(t, err)

		start := time.Now()
		_, err = locker.Acquire(ctx, "job", time.Minute, lock.WithWait(200*time.Millisecond))
		took := time.Since(start)
		assert.ErrorIs(t, err, lock.ErrNotObtained)
		assert.NotErrorIs(t, err, context.DeadlineExceeded)
		assert.GreaterOrEqual(t, took, 200*time.Millisecond)
		assert.Less(t, took, 5*time.Second)
	})
}

// The book's scenario: after the TTL passes an acquire succeeds, and the new
// owner's release succeeds while the old owner's reports ErrNotHeld.
func TestLock_Acquire_afterTTL(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		old, err := locker.TryAcquire(ctx, "job", 200*time.Millisecond)
		require.NoError(t, err)
		b.FastForward(300 * time.Millisecond) // the holder stalls past its TTL

		l, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		assert.ErrorIs(t, old.Extend(ctx, time.Minute), lock.ErrNotHeld)
		assert.ErrorIs(t, old.Release(ctx), lock.ErrNotHeld)

		owner, err := b.Client.Get(ctx, ownerKey(b, "job")).Result()
		require.NoError(t, err)
		assert.Equal(t, l.Token(), owner, "the stale holder must not touch the new holder's lock")
		assert.NoError(t, l.Release(ctx))
	})
}

func TestLock_Extend(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l, err := newLocker(b).TryAcquire(ctx, "job", time.Second)
		require.NoError(t, err)
		require.NoError(t, l.Extend(ctx, time.Hour))
		pttl, err := b.Client.PTTL(ctx, ownerKey(b, "job")).Result()
		require.NoError(t, err)
		assert.Greater(t, pttl, 59*time.Minute)
		assert.ErrorContains(t, l.Extend(ctx, 0), "ttl")
	})
}

func TestLock_Fence(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		var last int64
		for i := range 20 {
			l, err := locker.TryAcquire(ctx, "job", time.Minute)
			require.NoError(t, err)
			assert.Greater(t, l.Fence(), last, "acquisition %d", i)
			last = l.Fence()
			require.NoError(t, l.Release(ctx))
		}
		// Losing the counter (a restart without persistence) does not reset it.
		require.NoError(t, b.Client.Del(ctx, b.Prefix+"{job}:fence").Err())
		b.FastForward(time.Millisecond) // miniredis's TIME is frozen between steps
		l, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		assert.Greater(t, l.Fence(), last)
	})
}

// A waiter is woken by the release, long before the holder's TTL would end,
// in a handful of round trips.
func TestLock_Acquire_wokenByRelease(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		holder, err := newLocker(b).TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)

		c2, count := b.NewClient()
		waiter := must(lock.New(c2, lock.WithPrefix(b.Prefix)))
		type result struct {
			l   *lock.Lock
			err error
			rt  int64
		}
		done := make(chan result, 1)
		go func() {
			var r result
			r.rt, _ = count.Delta(func() { r.l, r.err = waiter.Acquire(ctx, "job", time.Minute, lock.WithWait(20*time.Second)) })
			done <- r
		}()
		waitForWaiters(t, b, "job", 1)
		released := time.Now()
		require.NoError(t, holder.Release(ctx))

		r := <-done
		require.NoError(t, r.err)
		assert.Less(t, time.Since(released), 5*time.Second, "woken by the release, not by the TTL")
		assert.Greater(t, r.l.Fence(), holder.Fence())
		assert.LessOrEqual(t, r.rt, int64(5), "attempt, block, attempt (+1 script load)")
	})
}

// A holder that crashes never releases: waiters get the lock when its TTL ends.
func TestLock_Acquire_crashedHolder(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		_, err := locker.TryAcquire(ctx, "job", 300*time.Millisecond)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() {
			_, err := locker.Acquire(ctx, "job", time.Minute, lock.WithWait(20*time.Second))
			done <- err
		}()
		waitForWaiters(t, b, "job", 1)
		b.FastForward(400 * time.Millisecond)
		assert.NoError(t, <-done)
	})
}

func TestLock_Acquire_ctxCancelled(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		locker := newLocker(b)
		_, err := locker.TryAcquire(t.Context(), "job", time.Minute)
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := locker.Acquire(ctx, "job", time.Minute)
			done <- err
		}()
		waitForWaiters(t, b, "job", 1)
		cancel()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, lock.ErrNotObtained)
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("Acquire did not return after its ctx was cancelled")
		}
	})
}

func TestLock_KeepAlive(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		// A TTL whose third (the extension period) leaves a loaded machine
		// room: on real servers the test waits out real time.
		ttl := time.Second
		if b.Mini != nil {
			ttl = 300 * time.Millisecond
		}
		l, err := locker.TryAcquire(ctx, "job", ttl)
		require.NoError(t, err)
		held := l.KeepAlive(ctx)

		// Let more than three TTLs pass; after each step, wait until the
		// keep-alive has extended the lock again.
		for range 8 {
			b.FastForward(ttl / 2)
			require.Eventually(t, func() bool {
				pttl, err := b.Client.PTTL(ctx, ownerKey(b, "job")).Result()
				return err == nil && pttl > ttl*3/4
			}, 5*time.Second, time.Millisecond)
		}
		require.NoError(t, held.Err())
		_, err = locker.TryAcquire(ctx, "job", ttl)
		assert.ErrorIs(t, err, lock.ErrNotObtained, "still held thanks to KeepAlive")

		require.NoError(t, l.Release(ctx))
		assert.ErrorIs(t, held.Err(), context.Canceled, "Release cancels the holder's context")
		assert.NotErrorIs(t, context.Cause(held), lock.ErrNotHeld)
		assert.Error(t, l.KeepAlive(ctx).Err(), "KeepAlive after Release")
	})
}

func TestLock_KeepAlive_lost(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l, err := newLocker(b).TryAcquire(ctx, "job", 300*time.Millisecond)
		require.NoError(t, err)
		held := l.KeepAlive(ctx)
		// Someone else takes the lock behind our back (e.g. after a failover).
		require.NoError(t, b.Client.Set(ctx, ownerKey(b, "job"), "thief", time.Minute).Err())
		select {
		case <-held.Done():
			assert.ErrorIs(t, context.Cause(held), lock.ErrNotHeld)
		case <-time.After(5 * time.Second):
			t.Fatal("holder's context not cancelled after the lock was lost")
		}
		assert.ErrorIs(t, context.Cause(l.KeepAlive(ctx)), lock.ErrNotHeld, "KeepAlive after loss")
		assert.ErrorIs(t, l.Release(ctx), lock.ErrNotHeld)
		owner, err := b.Client.Get(ctx, ownerKey(b, "job")).Result()
		require.NoError(t, err)
		assert.Equal(t, "thief", owner)
	})
}

func TestLocker_Do(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		ran := false
		err := locker.Do(ctx, "job", time.Minute, func(ctx context.Context, _ *lock.Lock) error {
			ran = true
			_, err := locker.TryAcquire(ctx, "job", time.Minute)
			assert.ErrorIs(t, err, lock.ErrNotObtained, "held during fn")
			return nil
		})
		require.NoError(t, err)
		assert.True(t, ran)

		boom := errors.New("boom")
		err = locker.Do(ctx, "job", time.Minute, func(context.Context, *lock.Lock) error { return boom })
		assert.ErrorIs(t, err, boom)

		assert.Panics(t, func() {
			_ = locker.Do(ctx, "job", time.Minute, func(context.Context, *lock.Lock) error { panic("fn") })
		})
		l, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err, "released after success, error and panic")
		require.NoError(t, l.Release(ctx))

		// fn gets the lock, and its fence.
		var fence int64
		err = locker.Do(ctx, "job", time.Minute, func(_ context.Context, l *lock.Lock) error {
			fence = l.Fence()
			return nil
		})
		require.NoError(t, err)
		assert.Greater(t, fence, int64(0))
		f, err := b.Client.Get(ctx, b.Prefix+"{job}:fence").Int64()
		require.NoError(t, err)
		assert.Equal(t, f, fence, "the fence minted for this acquisition")

		// Lost during fn: fn's ctx is cancelled and Do reports ErrNotHeld,
		// whatever fn returns.
		for _, ret := range []func(held context.Context) error{
			func(held context.Context) error { return context.Cause(held) },
			func(held context.Context) error { return held.Err() },
			func(context.Context) error { return nil },
		} {
			err = locker.Do(ctx, "job", 300*time.Millisecond, func(held context.Context, _ *lock.Lock) error {
				require.NoError(t, b.Client.Set(ctx, ownerKey(b, "job"), "thief", time.Minute).Err())
				<-held.Done()
				return ret(held)
			})
			assert.ErrorIs(t, err, lock.ErrNotHeld)
			assert.Equal(t, 1, strings.Count(err.Error(), lock.ErrNotHeld.Error()), "said once: %v", err)
			owner, err := b.Client.Get(ctx, ownerKey(b, "job")).Result()
			require.NoError(t, err)
			assert.Equal(t, "thief", owner, "the thief's lock untouched")
			require.NoError(t, b.Client.Del(ctx, ownerKey(b, "job")).Err())
		}
	})
}

// Many goroutines over several clients: never two holders at once, and
// fences increase in the order the critical sections run.
func TestLock_contention(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		const (
			clients    = 4
			goroutines = 16
			total      = 2000
		)
		lockers := make([]*lock.Locker, clients)
		for i := range lockers {
			c, _ := b.NewClient()
			lockers[i] = must(lock.New(c, lock.WithPrefix(b.Prefix)))
		}
		var (
			inside, violations, acquired atomic.Int64
			lastFence                    atomic.Int64
			fenceErrors                  atomic.Int64
			wg                           sync.WaitGroup
			errs                         = make(chan error, goroutines)
		)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				locker := lockers[g%clients]
				for acquired.Load() < total {
					l, err := locker.Acquire(t.Context(), "hot", 10*time.Second, lock.WithWait(30*time.Second))
					if err != nil {
						errs <- err
						return
					}
					if inside.Add(1) != 1 {
						violations.Add(1)
					}
					if l.Fence() <= lastFence.Load() {
						fenceErrors.Add(1)
					}
					lastFence.Store(l.Fence())
					acquired.Add(1)
					inside.Add(-1)
					if err := l.Release(t.Context()); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		assert.Zero(t, violations.Load(), "mutual exclusion violations")
		assert.Zero(t, fenceErrors.Load(), "fences out of order")
		assert.GreaterOrEqual(t, acquired.Load(), int64(total))
		t.Logf("%d acquisitions by %d goroutines over %d clients", acquired.Load(), goroutines, clients)
	})
}

func TestLock_roundTrips(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		warm, err := locker.TryAcquire(ctx, "a", time.Minute) // load the scripts on a's server
		require.NoError(t, err)
		require.NoError(t, warm.Extend(ctx, time.Minute))
		require.NoError(t, warm.Release(ctx))

		for _, c := range []struct {
			op       string
			rt, cmds int64
			fn       func() error
		}{
			{"TryAcquire", 1, 1, func() (err error) { warm, err = locker.TryAcquire(ctx, "a", time.Minute); return err }},
			{"Extend", 1, 1, func() error { return warm.Extend(ctx, time.Minute) }},
			{"Release", 1, 1, func() error { return warm.Release(ctx) }},
			{"uncontended Acquire", 1, 1, func() (err error) { warm, err = locker.Acquire(ctx, "a", time.Minute); return err }},
			{"Release after Acquire", 1, 1, func() error { return warm.Release(ctx) }},
		} {
			rt, cmds := b.Count.Delta(func() { require.NoError(t, c.fn(), c.op) })
			assert.Equal(t, c.rt, rt, c.op+" round trips")
			assert.Equal(t, c.cmds, cmds, c.op+" commands")
		}
	})
}

// A contended acquisition: one round trip for "queue and block" (the
// attempt and the BLPOP in one pipeline) once the Locker has seen the lock
// taken, then the holder's release hands it over; the waiter's own release
// is one more. The first contended acquisition of a Locker that has not
// seen the lock taken pays a plain attempt and a plain wait.
func TestLock_roundTrips_contended(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		holderLk := newLocker(b)
		c2, count := b.NewClient()
		waiter := must(lock.New(c2, lock.WithPrefix(b.Prefix)))
		warm, err := waiter.TryAcquire(ctx, "warm", time.Minute) // load the scripts
		require.NoError(t, err)
		require.NoError(t, warm.Release(ctx))

		for _, hot := range []bool{true, false} {
			holder, err := holderLk.TryAcquire(ctx, "job", time.Minute)
			require.NoError(t, err)
			waiter.SetHotForTest("job", hot)
			type result struct {
				l        *lock.Lock
				err      error
				rt, cmds int64
			}
			done := make(chan result, 1)
			go func() {
				var r result
				r.rt, r.cmds = count.Delta(func() { r.l, r.err = waiter.Acquire(ctx, "job", time.Minute, lock.WithWait(20*time.Second)) })
				done <- r
			}()
			waitForWaiters(t, b, "job", 1)
			require.NoError(t, holder.Release(ctx))
			r := <-done
			require.NoError(t, r.err)
			if hot {
				assert.Equal(t, int64(1), r.rt, "queue and block in one round trip")
				assert.Equal(t, int64(2), r.cmds, "EVALSHA and BLPOP")
			} else {
				assert.Equal(t, int64(2), r.rt, "a plain attempt, then a plain wait")
				assert.True(t, waiter.HotForTest("job"), "it has seen the lock taken")
			}
			rt, _ := count.Delta(func() { require.NoError(t, r.l.Release(ctx)) })
			assert.Equal(t, int64(1), rt, "release")
		}
	})
}

func TestLock_badInput(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		_, err := locker.TryAcquire(ctx, "", time.Minute)
		assert.ErrorContains(t, err, "lock name")
		_, err = locker.Acquire(ctx, "}x", time.Minute)
		assert.ErrorContains(t, err, "lock name")
		_, err = locker.Acquire(ctx, "a{b", time.Minute)
		assert.ErrorContains(t, err, "lock name")
		_, err = locker.TryAcquire(ctx, "job", 0)
		assert.ErrorContains(t, err, "ttl")
		_, err = locker.Acquire(ctx, "job", -time.Second)
		assert.ErrorContains(t, err, "ttl")
		_, err = locker.Acquire(ctx, "job", time.Minute, lock.WithWait(-time.Second))
		assert.EqualError(t, err, `lock: acquire "job": wait -1s: must not be negative`)
		err = locker.Do(ctx, "", time.Minute, func(context.Context, *lock.Lock) error { t.Error("fn ran"); return nil })
		assert.ErrorContains(t, err, "lock name")
		assert.NotPanics(t, func() { err = locker.Do(ctx, "job", time.Minute, nil) })
		assert.EqualError(t, err, `lock: do "job": nil fn`)
		assert.Empty(t, b.Keys(""), "bad input wrote nothing")
	})
	assert.Panics(t, func() { _, _ = lock.New(nil) })
	for _, p := range []string{"a{b", "a}", "{"} {
		_, err := lock.New(redis.NewClient(&redis.Options{}), lock.WithPrefix(p))
		assert.ErrorContains(t, err, "prefix", p)
	}
}

// WithWait(0) makes one attempt, as TryAcquire does; no WithWait waits
// until ctx ends.
func TestLock_WithWait(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		holder, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)

		var rt int64
		rt, _ = b.Count.Delta(func() { _, err = locker.Acquire(ctx, "job", time.Minute, lock.WithWait(0)) })
		assert.ErrorIs(t, err, lock.ErrNotObtained)
		assert.Equal(t, int64(1), rt, "one attempt")
		assert.Zero(t, b.Client.Exists(ctx, b.Prefix+"{job}:queue").Val(), "not queued")

		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err = locker.Acquire(cctx, "job", time.Minute)
		assert.ErrorIs(t, err, lock.ErrNotObtained)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 1, strings.Count(err.Error(), context.DeadlineExceeded.Error()), "said once: %v", err)
		require.NoError(t, holder.Release(ctx))
	})
}
