package lock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/lock"
)

// rwKey returns the key of part of read/write lock name.
func rwKey(b *redistest.Backend, name, part string) string {
	return b.Prefix + "{" + name + "}:rw:" + part
}

// waitForRWWaiters blocks until n waiters of read/write lock name are
// queued.
func waitForRWWaiters(t *testing.T, b *redistest.Backend, name string, n int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		got, err := b.Client.LLen(context.Background(), rwKey(b, name, "queue")).Result()
		return err == nil && got == n
	}, 10*time.Second, time.Millisecond)
}

// rwHeld returns the writer's token ("" if none) and the live readers'
// tokens of read/write lock name, as the server has them.
func rwHeld(t *testing.T, b *redistest.Backend, name string) (string, []string) {
	t.Helper()
	ctx := context.Background()
	w, err := b.Client.Get(ctx, rwKey(b, name, "writer")).Result()
	if err == redis.Nil {
		w, err = "", nil
	}
	require.NoError(t, err)
	now, err := b.Client.Time(ctx).Result()
	require.NoError(t, err)
	rs, err := b.Client.ZRangeByScore(ctx, rwKey(b, name, "readers"), &redis.ZRangeBy{
		Min: fmt.Sprintf("(%d", now.UnixMilli()), Max: "+inf",
	}).Result()
	require.NoError(t, err)
	return w, rs
}

type rwAcquired struct {
	who int
	h   *lock.RWHold
	err error
}

// rwWaiter starts an RLock (or Lock) of rw that waits up to 30 s, sending
// its result on the returned channel.
func rwWaiter(ctx context.Context, rw *lock.RWLock, who int, write bool) <-chan rwAcquired {
	got := make(chan rwAcquired, 1)
	go func() {
		var h *lock.RWHold
		var err error
		if write {
			h, err = rw.Lock(ctx, time.Minute, lock.WithWait(30*time.Second))
		} else {
			h, err = rw.RLock(ctx, time.Minute, lock.WithWait(30*time.Second))
		}
		got <- rwAcquired{who, h, err}
	}()
	return got
}

// pending fails the test if a value is on ch already.
func pending(t *testing.T, ch <-chan rwAcquired, what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s: got %v, %v while it should wait", what, r.h, r.err)
	default:
	}
}

// Readers share the lock, a writer excludes everyone.
func TestRW_TryLock(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("doc")
		r1, err := rw.TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		r2, err := rw.TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		assert.False(t, r1.Write())
		assert.Greater(t, r2.Fence(), r1.Fence())
		_, err = rw.TryLock(ctx, time.Minute)
		assert.ErrorIs(t, err, lock.ErrNotObtained, "readers hold it")
		require.NoError(t, r1.Release(ctx))
		_, err = rw.TryLock(ctx, time.Minute)
		assert.ErrorIs(t, err, lock.ErrNotObtained, "a reader holds it")
		require.NoError(t, r2.Release(ctx))
		assert.ErrorIs(t, r2.Release(ctx), lock.ErrNotHeld, "released already")

		w, err := rw.TryLock(ctx, time.Minute)
		require.NoError(t, err)
		assert.True(t, w.Write())
		assert.Greater(t, w.Fence(), r2.Fence())
		_, err = rw.TryRLock(ctx, time.Minute)
		assert.ErrorIs(t, err, lock.ErrNotObtained, "a writer holds it")
		_, err = rw.TryLock(ctx, time.Minute)
		assert.ErrorIs(t, err, lock.ErrNotObtained, "a writer holds it")
		require.NoError(t, w.Extend(ctx, 2*time.Minute))
		require.NoError(t, w.Release(ctx))
		assert.ErrorIs(t, w.Extend(ctx, time.Minute), lock.ErrNotHeld)

		r3, err := rw.TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		assert.Greater(t, r3.Fence(), w.Fence())
		require.NoError(t, r3.Release(ctx))
		// apart from the exclusive lock of the same name
		l, err := newLocker(b).TryAcquire(ctx, "doc", time.Minute)
		require.NoError(t, err)
		r4, err := rw.TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		require.NoError(t, r4.Release(ctx))
		require.NoError(t, l.Release(ctx))
		assertRWClean(t, b, "doc")
	})
}

// A waiting writer blocks the readers that come after it (no writer
// starvation); when the last reader leaves, the writer is handed the lock;
// when it leaves, the readers behind it are granted together.
func TestRW_writerBlocksLaterReaders(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("doc")
		r0, err := rw.TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		w := rwWaiter(ctx, rw, 1, true)
		waitForRWWaiters(t, b, "doc", 1)
		_, err = rw.TryRLock(ctx, time.Minute)
		assert.ErrorIs(t, err, lock.ErrNotObtained, "a newcomer reader cannot pass the waiting writer")
		r1 := rwWaiter(ctx, rw, 2, false)
		waitForRWWaiters(t, b, "doc", 2)
		r2 := rwWaiter(ctx, rw, 3, false)
		waitForRWWaiters(t, b, "doc", 3)
		pending(t, w, "writer")

		require.NoError(t, r0.Release(ctx)) // the last reader: hands over to the writer
		gw := <-w
		require.NoError(t, gw.err)
		assert.Greater(t, gw.h.Fence(), r0.Fence())
		writer, readers := rwHeld(t, b, "doc")
		assert.Equal(t, gw.h.Token(), writer)
		assert.Empty(t, readers)
		pending(t, r1, "reader behind the writer")
		pending(t, r2, "reader behind the writer")

		require.NoError(t, gw.h.Release(ctx)) // grants both readers at once
		g1, g2 := <-r1, <-r2
		require.NoError(t, g1.err)
		require.NoError(t, g2.err)
		_, readers = rwHeld(t, b, "doc")
		assert.ElementsMatch(t, []string{g1.h.Token(), g2.h.Token()}, readers, "both read at once")
		assert.Equal(t, gw.h.Fence()+1, g1.h.Fence(), "granted in order, with consecutive fences")
		assert.Equal(t, gw.h.Fence()+2, g2.h.Fence())
		require.NoError(t, g1.h.Release(ctx))
		require.NoError(t, g2.h.Release(ctx))
		assertRWClean(t, b, "doc")
	})
}

// Consecutive waiting readers are granted together; a waiting writer
// splits the batches: W0 holds; R1 R2 R3 W4 R5 wait; W0's release grants
// R1-R3, the last of them W4, W4's R5.
func TestRW_readersBatched(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("doc")
		w0, err := rw.TryLock(ctx, time.Minute)
		require.NoError(t, err)
		kinds := []bool{false, false, false, true, false} // write?
		chans := make([]<-chan rwAcquired, len(kinds))
		for i, write := range kinds {
			chans[i] = rwWaiter(ctx, rw, i+1, write)
			waitForRWWaiters(t, b, "doc", int64(i+1)) // queued in order
		}
		require.NoError(t, w0.Release(ctx))
		batch := make([]*lock.RWHold, 3)
		for i := range batch {
			g := <-chans[i]
			require.NoError(t, g.err)
			batch[i] = g.h
			assert.Equal(t, w0.Fence()+int64(i+1), g.h.Fence())
		}
		_, readers := rwHeld(t, b, "doc")
		assert.Len(t, readers, 3, "three readers at once")
		waitForRWWaiters(t, b, "doc", 2)
		pending(t, chans[3], "writer W4")
		pending(t, chans[4], "reader R5 behind W4")
		for i, h := range batch {
			require.NoError(t, h.Release(ctx))
			if i < 2 {
				pending(t, chans[3], "writer W4 while a reader holds")
			}
		}
		g4 := <-chans[3]
		require.NoError(t, g4.err)
		pending(t, chans[4], "reader R5 behind W4")
		require.NoError(t, g4.h.Release(ctx))
		g5 := <-chans[4]
		require.NoError(t, g5.err)
		assert.Greater(t, g5.h.Fence(), g4.h.Fence())
		require.NoError(t, g5.h.Release(ctx))
		assertRWClean(t, b, "doc")
	})
}

// Holders that crash never release: their leases expire, and the waiters
// get the lock in their order when they try again at the end of the
// leases.
func TestRW_crashedHolders(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("doc")
		// two readers crash
		_, err := rw.TryRLock(ctx, 300*time.Millisecond)
		require.NoError(t, err)
		_, err = rw.TryRLock(ctx, 200*time.Millisecond)
		require.NoError(t, err)
		w := rwWaiter(ctx, rw, 1, true)
		waitForRWWaiters(t, b, "doc", 1)
		behind := rwWaiter(ctx, rw, 2, false)
		waitForRWWaiters(t, b, "doc", 2)
		b.FastForward(400 * time.Millisecond)
		gw := <-w
		require.NoError(t, gw.err, "the writer got in when the readers' leases ended")
		_, readers := rwHeld(t, b, "doc")
		assert.Empty(t, readers)
		pending(t, behind, "the reader queued behind the writer, in FIFO order after the expiry")
		require.NoError(t, gw.h.Release(ctx))
		gb := <-behind
		require.NoError(t, gb.err)
		require.NoError(t, gb.h.Release(ctx))
		gw = <-rwWaiter(ctx, rw, 1, true)
		require.NoError(t, gw.err)

		// the writer crashes (its hold is abandoned): a reader waiting gets in
		// at its TTL, and is then extendable and releasable
		_, err = rw.TryLock(ctx, 300*time.Millisecond)
		require.ErrorIs(t, err, lock.ErrNotObtained)
		require.NoError(t, gw.h.Extend(ctx, 300*time.Millisecond))
		r := rwWaiter(ctx, rw, 2, false)
		waitForRWWaiters(t, b, "doc", 1)
		b.FastForward(400 * time.Millisecond)
		gr := <-r
		require.NoError(t, gr.err)
		assert.ErrorIs(t, gw.h.Release(ctx), lock.ErrNotHeld, "the crashed writer's lease ended")
		require.NoError(t, gr.h.Extend(ctx, time.Minute))
		require.NoError(t, gr.h.Release(ctx))
		assertRWClean(t, b, "doc")
	})
}

// assertRWClean checks that nothing of read/write lock name is left but
// its fence counter and reply records, which expire after the client's
// retry window.
func assertRWClean(t *testing.T, b *redistest.Backend, name string) {
	t.Helper()
	for _, k := range b.Keys("") {
		if k == rwKey(b, name, "fence") || k == b.Prefix+"{"+name+"}:fence" {
			continue
		}
		if assert.True(t, strings.HasPrefix(k, b.Prefix+"{"+name+"}:once:") || strings.HasPrefix(k, b.Prefix+"{"+name+"}:released:"), "left behind: %s", k) {
			ttl, err := b.Client.PTTL(context.Background(), k).Result()
			require.NoError(t, err)
			assert.Greater(t, ttl, time.Duration(0), "a record expires")
			assert.LessOrEqual(t, ttl, script.ReplayWindow(b.Client), "a record lives for the retry window")
		}
	}
}

// The invariant under load: goroutines on several clients mix readers and
// writers on one lock; a writer is never inside with anyone, and fences
// only grow across writers. That readers are inside together is shown
// without depending on scheduling by TestRW_readersBatched; here how many
// were at once is only logged.
func TestRW_contention(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const (
			clients    = 4
			goroutines = 16
			total      = 1500
		)
		rws := make([]*lock.RWLock, clients)
		for i := range rws {
			c, _ := b.NewClient()
			rws[i] = must(lock.New(c, lock.WithPrefix(b.Prefix))).RW("hot")
		}
		var (
			readers, writers, done    atomic.Int64
			violations, fenceErrs     atomic.Int64
			maxReaders, reads, writes atomic.Int64
			mu                        sync.Mutex
			maxFence, lastWriterFence int64
			wg                        sync.WaitGroup
			errs                      = make(chan error, goroutines)
		)
		for g := range goroutines {
			wg.Go(func() {
				rw := rws[g%clients]
				for i := 0; done.Load() < total; i++ {
					write := (g+i)%4 == 0 // a quarter of the acquisitions write
					var h *lock.RWHold
					var err error
					if write {
						h, err = rw.Lock(t.Context(), 10*time.Second, lock.WithWait(30*time.Second))
					} else {
						h, err = rw.RLock(t.Context(), 10*time.Second, lock.WithWait(30*time.Second))
					}
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					if write {
						if h.Fence() <= maxFence {
							fenceErrs.Add(1)
						}
						lastWriterFence = h.Fence()
					} else if h.Fence() <= lastWriterFence {
						fenceErrs.Add(1)
					}
					maxFence = max(maxFence, h.Fence())
					mu.Unlock()
					if write {
						writes.Add(1)
						if writers.Add(1) != 1 || readers.Load() != 0 {
							violations.Add(1)
						}
						time.Sleep(100 * time.Microsecond) // work
						writers.Add(-1)
					} else {
						reads.Add(1)
						n := readers.Add(1)
						if writers.Load() != 0 {
							violations.Add(1)
						}
						for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
						}
						time.Sleep(time.Millisecond) // work
						readers.Add(-1)
					}
					done.Add(1)
					if err := h.Release(t.Context()); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		assert.Zero(t, violations.Load(), "a writer inside with someone")
		assert.Zero(t, fenceErrs.Load(), "fences out of order")
		t.Logf("%d reads, %d writes by %d goroutines over %d clients; up to %d readers at once",
			reads.Load(), writes.Load(), goroutines, clients, maxReaders.Load())
		assertRWClean(t, b, "hot")
	})
}

// A writer waiting behind a stream of readers (the lock never free: the
// readers overlap) gets in after at most one more grant per reader: those
// whose attempts reached Redis before the writer's.
func TestRW_writerNotStarved(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		const streams = 6
		rw := newLocker(b).RW("doc")
		var (
			grants  atomic.Int64
			writing atomic.Bool
			overlap atomic.Int64 // reads granted while the writer held
			wg      sync.WaitGroup
		)
		started := make(chan struct{}, streams)
		for range streams {
			wg.Go(func() {
				first := true
				for ctx.Err() == nil {
					h, err := rw.RLock(ctx, time.Minute)
					if err != nil {
						return
					}
					if writing.Load() {
						overlap.Add(1)
					}
					grants.Add(1)
					if first {
						started <- struct{}{}
						first = false
					}
					time.Sleep(2 * time.Millisecond) // work
					_ = h.Release(context.WithoutCancel(ctx))
				}
			})
		}
		for range streams {
			<-started
		}
		before := grants.Load()
		w, err := rw.Lock(ctx, time.Minute, lock.WithWait(30*time.Second))
		require.NoError(t, err, "the writer got in")
		writing.Store(true)
		during := grants.Load() - before
		assert.LessOrEqual(t, during, int64(streams), "reads granted while the writer waited")
		writing.Store(false)
		require.NoError(t, w.Release(ctx))
		cancel()
		wg.Wait()
		assert.Zero(t, overlap.Load(), "no read while the writer held")
		t.Logf("reads granted while the writer waited: %d (bound %d)", during, streams)
	})
}

// A waiting writer that gives up leaves the queue, and the readers queued
// behind it (blocked only by it) are granted at once, while a reader still
// holds. Then a writer that gives up just as a release hands it the lock
// gives it back, which grants the readers behind it.
func TestRW_liveness_leavingWriter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		rw := locker.RW("doc")
		r0, err := rw.TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		var released atomic.Bool

		for _, handedOver := range []bool{false, true} {
			wctx, cancel := context.WithCancel(ctx)
			quit := make(chan error, 1)
			go func() {
				_, err := rw.Lock(wctx, time.Minute)
				quit <- err
			}()
			waitForRWWaiters(t, b, "doc", 1)
			r1 := rwWaiter(ctx, rw, 1, false)
			waitForRWWaiters(t, b, "doc", 2)
			if handedOver {
				// r0's release, as the writer gives up, hands it the lock
				locker.SetHookForTest(func(e string) {
					if e == "leave" && !released.Swap(true) {
						assert.NoError(t, r0.Release(context.Background()))
					}
				})
			}
			cancel()
			err := <-quit
			assert.ErrorIs(t, err, lock.ErrNotObtained)
			assert.ErrorIs(t, err, context.Canceled)
			g := <-r1
			require.NoError(t, g.err, "the reader behind the writer is granted")
			w, readers := rwHeld(t, b, "doc")
			assert.Empty(t, w, "the writer that left holds nothing")
			assert.Contains(t, readers, g.h.Token())
			locker.SetHookForTest(nil)
			require.NoError(t, g.h.Release(ctx))
		}
		assert.True(t, released.Load(), "the hand-over happened as the writer left")
		assertRWClean(t, b, "doc")
	})
}

// DoRead and DoWrite hold the lock while fn runs, keep it alive and
// release it; a hold lost while fn runs cancels fn's ctx with cause
// ErrNotHeld and is reported.
func TestRW_Do(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("doc")
		errFn := errors.New("fn failed")
		err := rw.DoRead(ctx, time.Minute, func(ctx context.Context, h *lock.RWHold) error {
			assert.False(t, h.Write())
			_, readers := rwHeld(t, b, "doc")
			assert.Equal(t, []string{h.Token()}, readers)
			return errFn
		})
		assert.ErrorIs(t, err, errFn)
		err = rw.DoWrite(ctx, time.Second, func(ctx context.Context, h *lock.RWHold) error {
			assert.True(t, h.Write())
			// outlive the TTL: KeepAlive extends it (every 333 ms)
			for range 3 {
				b.FastForward(400 * time.Millisecond)
				require.Eventually(t, func() bool {
					return b.Client.PTTL(ctx, rwKey(b, "doc", "writer")).Val() > 750*time.Millisecond
				}, 10*time.Second, time.Millisecond, "extended")
			}
			w, _ := rwHeld(t, b, "doc")
			assert.Equal(t, h.Token(), w, "kept alive")
			return ctx.Err()
		})
		assert.NoError(t, err)
		assertRWClean(t, b, "doc")

		// lost: someone deletes the reader's entry; KeepAlive notices
		err = rw.DoRead(ctx, 300*time.Millisecond, func(ctx context.Context, h *lock.RWHold) error {
			require.NoError(t, b.Client.Del(ctx, rwKey(b, "doc", "readers")).Err())
			<-ctx.Done()
			assert.ErrorIs(t, context.Cause(ctx), lock.ErrNotHeld)
			return nil
		})
		assert.ErrorIs(t, err, lock.ErrNotHeld)
	})
}

// A release skips the places of waiters that died (their place expired),
// waking them in case they are only late, and grants the live waiter
// behind them.
func TestRW_Release_skipsDeadWaiters(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		// A wake lives as long as the slack: long enough to be read below
		// however slow the machine is.
		locker.SetSlackForTest(time.Minute)
		rw := locker.RW("doc")
		holder, err := rw.TryLock(ctx, time.Minute)
		require.NoError(t, err)
		dead := rw.NewHoldForTest(time.Minute, false)
		ok, err := dead.AttemptForTest(ctx, 50*time.Millisecond) // queues, then "dies"
		require.NoError(t, err)
		require.False(t, ok)
		live := rwWaiter(ctx, rw, 1, true) // its long place keeps the queue's keys
		waitForRWWaiters(t, b, "doc", 2)
		// The dead one's place expires: its expiry (server ms, the first
		// field of its entry) is set in the past rather than waited out.
		waiters := rwKey(b, "doc", "waiters")
		place, err := b.Client.HGet(ctx, waiters, dead.Token()).Result()
		require.NoError(t, err)
		_, rest, found := strings.Cut(place, " ")
		require.True(t, found, place)
		require.NoError(t, b.Client.HSet(ctx, waiters, dead.Token(), "1 "+rest).Err())

		require.NoError(t, holder.Release(ctx))
		g := <-live
		require.NoError(t, g.err, "the live writer behind the dead reader is granted")
		w, readers := rwHeld(t, b, "doc")
		assert.Equal(t, g.h.Token(), w)
		assert.Empty(t, readers, "the dead reader was not granted")
		assert.Equal(t, []string{""}, b.Client.LRange(ctx, rwKey(b, "doc", "grant:"+dead.Token()), 0, -1).Val(), "woken")
		assert.Zero(t, b.Client.LLen(ctx, rwKey(b, "doc", "queue")).Val())
		require.NoError(t, g.h.Release(ctx))
	})
}
