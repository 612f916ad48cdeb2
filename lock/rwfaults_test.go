package lock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/lock"
)

// The fault harness for the read/write lock: every state-changing call
// through a proxy that lets its command run on the server, then swallows
// the reply and cuts the connection, so that go-redis re-sends it; the
// answer is compared with the server's state.

// faultyRW returns a Locker on a faulty client of b, with the read/write
// scripts loaded on the server.
func faultyRW(t *testing.T, b *redistest.Backend, opts ...func(*redis.UniversalOptions)) (*lock.Locker, *redistest.Faults) {
	t.Helper()
	rdb, _, f := b.FaultyClient(opts...)
	locker := must(lock.New(rdb, lock.WithPrefix(b.Prefix)))
	h, err := locker.RW("warm").TryLock(t.Context(), time.Minute)
	require.NoError(t, err)
	require.NoError(t, h.Extend(t.Context(), time.Minute))
	require.NoError(t, h.Release(t.Context()))
	return locker, f
}

// rwHolds reports whether h holds its lock on the server, in its mode (a
// writer with the fence it says: the last minted).
func rwHolds(t *testing.T, b *redistest.Backend, h *lock.RWHold) bool {
	t.Helper()
	w, rs := rwHeld(t, b, h.Name())
	if h.Write() {
		f, err := b.Client.Get(t.Context(), rwKey(b, h.Name(), "fence")).Int64()
		require.NoError(t, err)
		return w == h.Token() && len(rs) == 0 && f == h.Fence()
	}
	return w == "" && slices.Contains(rs, h.Token())
}

// rwAcquireOp runs op%4: TryRLock, TryLock, RLock, Lock.
func rwAcquireOp(ctx context.Context, rw *lock.RWLock, op int) (*lock.RWHold, error) {
	switch op % 4 {
	case 0:
		return rw.TryRLock(ctx, time.Minute)
	case 1:
		return rw.TryLock(ctx, time.Minute)
	case 2:
		return rw.RLock(ctx, time.Minute, lock.WithWait(5*time.Second))
	default:
		return rw.Lock(ctx, time.Minute, lock.WithWait(5*time.Second))
	}
}

// TryRLock, TryLock, RLock, Lock: a re-sent attempt recognises the hold it
// took (a reader is counted once); a refusal stays a refusal.
func TestRWFaults_acquire(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker, f := faultyRW(t, b)
		h := redistest.NewHarness(t, f, "lock RW TryRLock/TryLock/RLock/Lock")
		// a reader of another client holds "shared", so that readers join it
		other := newLocker(b)
		_, err := other.RW("shared").TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		var shared []*lock.RWHold
		for i := range 8 {
			for _, lost := range []int{1, 2} {
				name := fmt.Sprintf("free-%d-%d", i, lost)
				var held *lock.RWHold
				h.Call(lost, redistest.Scripts, func() { held, err = rwAcquireOp(ctx, locker.RW(name), i) })
				if h.Check(err == nil, "acquire of a free lock %s: %v", name, err); err == nil {
					h.Check(rwHolds(t, b, held), "the answer's hold is the server's (%s, write %v)", name, held.Write())
					w, rs := rwHeld(t, b, name)
					n := len(rs)
					if w != "" {
						n++
					}
					h.Check(n == 1, "one holder: writer %q readers %v", w, rs)
				}
				if i%2 == 0 { // readers joining a reader
					var r *lock.RWHold
					h.Call(lost, redistest.Scripts, func() { r, err = rwAcquireOp(ctx, locker.RW("shared"), i) })
					if h.Check(err == nil, "RLock of a read lock: %v", err); err == nil {
						shared = append(shared, r)
					}
					_, rs := rwHeld(t, b, "shared")
					h.Check(len(rs) == len(shared)+1, "readers counted once: %d on the server, %d held", len(rs), len(shared)+1)
				}
			}
		}
		// refused: a writer holds
		wh, err := other.RW("held").TryLock(ctx, time.Minute)
		require.NoError(t, err)
		for op := range 2 {
			h.Call(1, redistest.Scripts, func() { _, err = rwAcquireOp(ctx, locker.RW("held"), op) })
			h.Check(errors.Is(err, lock.ErrNotObtained), "a try of a held lock: %v", err)
			h.Check(rwHolds(t, b, wh), "the writer still holds it")
		}
	})
}

// Every re-send lost: the error says the outcome is unknown, never "not
// obtained", and the hold the script took is given back in the background.
func TestRWFaults_acquire_allLost(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker, f := faultyRW(t, b)
		h := redistest.NewHarness(t, f, "lock RW acquire, all re-sends lost")
		for op := range 4 {
			name := fmt.Sprint("job", op)
			var err error
			var held *lock.RWHold
			h.Call(4, redistest.Scripts, func() { held, err = rwAcquireOp(ctx, locker.RW(name), op) })
			if op < 2 {
				h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "the outcome is unknown: %v", err)
				h.Check(!errors.Is(err, lock.ErrNotObtained), "not a refusal: %v", err)
				locker.WaitGiveBacksForTest()
				w, rs := rwHeld(t, b, name)
				h.Check(w == "" && len(rs) == 0, "given back: writer %q readers %v", w, rs)
				continue
			}
			// a waiting RLock or Lock retries a transient error while its wait
			// lasts: its next attempt finds the hold the lost ones took
			if h.Check(err == nil, "a waiting acquisition retries: %v", err); err == nil {
				h.Check(rwHolds(t, b, held), "the answer's hold is the server's")
			}
		}
	})
}

// Release and Extend, readers and writers: a re-sent release answers from
// its record (and releases one reader only); a re-sent extension extends
// again; with every re-send lost, Release gives back in the background.
func TestRWFaults_Release_Extend(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker, f := faultyRW(t, b)
		h := redistest.NewHarness(t, f, "lock RW Release/Extend")
		for i := range 8 {
			rw := locker.RW(fmt.Sprint("job", i/2))
			write := i%2 == 1
			var hs []*lock.RWHold
			for range 1 + 2*btoi(!write) { // three readers, or one writer
				x, err := rwAcquireOp(ctx, rw, 2+btoi(write))
				require.NoError(t, err)
				hs = append(hs, x)
			}
			x := hs[0]
			var err error
			h.Call(1+i%2, redistest.Scripts, func() { err = x.Extend(ctx, time.Hour) })
			h.Check(err == nil, "Extend answered %v", err)
			h.Call(1+i%2, redistest.Scripts, func() { err = x.Release(ctx) })
			h.Check(err == nil, "Release answered %v", err)
			w, rs := rwHeld(t, b, rw.Name())
			h.Check(w == "" && len(rs) == len(hs)-1 && !slices.Contains(rs, x.Token()), "released once: writer %q readers %v", w, rs)
			h.Call(1, redistest.Scripts, func() { err = x.Release(ctx) })
			h.Check(errors.Is(err, lock.ErrNotHeld), "a second Release: %v", err)
			for _, y := range hs[1:] {
				require.NoError(t, y.Release(ctx))
			}
		}
		// every re-send lost
		x, err := locker.RW("lost").TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		h.Call(4, redistest.Scripts, func() { err = x.Release(ctx) })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown) && !errors.Is(err, lock.ErrNotHeld), "Release with every reply lost: %v", err)
		locker.WaitGiveBacksForTest()
		w, rs := rwHeld(t, b, "lost")
		h.Check(w == "" && len(rs) == 0, "released in the background: writer %q readers %v", w, rs)
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A contended RLock or Lock loses the reply of its attempt, of its blocking
// pop (pipelined or plain); a hand-over's Release loses its reply: the
// waiter holds what it says, and the releaser says it released.
func TestRWFaults_contended(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker, f := faultyRW(t, b)
		holderLk := newLocker(b)
		h := redistest.NewHarness(t, f, "lock RW contended RLock/Lock")
		for i, c := range []struct {
			what  string
			hot   bool
			match func([]string) bool
		}{
			{"the pipelined attempt (it queued us)", true, redistest.Scripts},
			{"the pipelined pop, after the hand-over", true, redistest.Commands("blpop")},
			{"the plain attempt", false, redistest.Scripts},
			{"the plain wait, after the hand-over", false, redistest.Commands("blmove")},
		} {
			for _, write := range []bool{false, true} {
				name := fmt.Sprint("job", i, write)
				holder, err := holderLk.RW(name).TryLock(ctx, time.Minute)
				require.NoError(t, err)
				rw := locker.RW(name)
				rw.SetHotForTest(c.hot)
				var r rwAcquired
				h.Call(1, c.match, func() {
					done := rwWaiter(ctx, rw, i, write)
					waitForRWWaiters(t, b, name, 1)
					require.NoError(t, holder.Release(ctx)) // hands it over
					r = <-done
				})
				if h.Check(r.err == nil, "losing the reply of %s: %v", c.what, r.err); r.err == nil {
					h.Check(rwHolds(t, b, r.h), "losing the reply of %s: the answer's hold is the server's", c.what)
					h.Check(b.Client.LLen(ctx, rwKey(b, name, "queue")).Val() == 0, "left the queue")
					require.NoError(t, r.h.Release(ctx))
				}
			}
		}
		// the hand-over's release loses its reply: answered "released", and
		// the readers waiting are granted once
		holder, err := locker.RW("handover").TryLock(ctx, time.Minute)
		require.NoError(t, err)
		waiting := newLocker(b).RW("handover")
		r1 := rwWaiter(ctx, waiting, 1, false)
		waitForRWWaiters(t, b, "handover", 1)
		r2 := rwWaiter(ctx, waiting, 2, false)
		waitForRWWaiters(t, b, "handover", 2)
		h.Call(1, redistest.Scripts, func() { err = holder.Release(ctx) })
		h.Check(err == nil, "the hand-over's Release: %v", err)
		g1, g2 := <-r1, <-r2
		h.Check(g1.err == nil && g2.err == nil, "both readers granted: %v %v", g1.err, g2.err)
		w, rs := rwHeld(t, b, "handover")
		h.Check(w == "" && len(rs) == 2, "two readers on the server: writer %q readers %v", w, rs)
	})
}

// A waiter that gives up loses the replies of its leave: with a re-send
// answered it reports "not obtained", with every re-send lost "unknown",
// and either way it is out of the queue, and the holder keeps the lock.
func TestRWFaults_leave(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker, f := faultyRW(t, b)
		h := redistest.NewHarness(t, f, "lock RW waiter gives up (Leave)")
		holder, err := newLocker(b).RW("job").TryLock(ctx, time.Minute)
		require.NoError(t, err)
		for _, lost := range []int{1, 4} {
			rw := locker.RW("job")
			rw.SetHotForTest(false)
			locker.SetHookForTest(func(e string) {
				if e == "leave" {
					f.LoseReply(lost, redistest.Scripts)
				}
			})
			before := f.Lost()
			_, err := rw.RLock(ctx, time.Minute, lock.WithWait(100*time.Millisecond))
			h.Counted()
			require.Equal(t, before+int64(lost), f.Lost(), "the Leave's replies were lost")
			locker.WaitGiveBacksForTest()
			if lost < 4 {
				h.Check(errors.Is(err, lock.ErrNotObtained) && !errors.Is(err, ria.ErrOutcomeUnknown), "gave up: %v", err)
			} else {
				h.Check(errors.Is(err, ria.ErrOutcomeUnknown) && !errors.Is(err, lock.ErrNotObtained), "could not confirm leaving: %v", err)
			}
			h.Check(b.Client.LLen(ctx, rwKey(b, "job", "queue")).Val() == 0, "left the queue")
			h.Check(b.Client.HLen(ctx, rwKey(b, "job", "waiters")).Val() == 0, "no place left")
			h.Check(rwHolds(t, b, holder), "the holder still holds it")
		}
		locker.SetHookForTest(nil)
		require.NoError(t, holder.Release(ctx))
	})
}

// Replies delayed past the read timeout: every call fails with an error
// that wraps ria.ErrOutcomeUnknown (never a refusal), and once the server
// answers again the background give-backs leave the lock free.
func TestRWFaults_delay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker, f := faultyRW(t, b, func(o *redis.UniversalOptions) {
			o.ReadTimeout = 100 * time.Millisecond
			o.MaxRetries = 1
		})
		h := redistest.NewHarness(t, f, "lock RW delayed replies")
		rw := locker.RW("job")
		held, err := rw.TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		f.Delay(300 * time.Millisecond)
		var wg sync.WaitGroup
		results := make([]error, 4)
		for op := range 4 {
			wg.Go(func() {
				rw := locker.RW(fmt.Sprint("d", op))
				switch op {
				case 0, 1:
					_, results[op] = rwAcquireOp(ctx, rw, op)
				case 2:
					_, results[op] = rw.RLock(ctx, time.Minute, lock.WithWait(time.Second))
				default:
					_, results[op] = rw.Lock(ctx, time.Minute, lock.WithWait(time.Second))
				}
			})
		}
		relErr := held.Release(ctx)
		wg.Wait()
		f.Delay(0)
		for op, err := range results {
			h.Counted()
			h.Check(errors.Is(err, ria.ErrOutcomeUnknown) && !errors.Is(err, lock.ErrNotObtained), "op %d under delay: %v", op, err)
		}
		h.Counted()
		h.Check(errors.Is(relErr, ria.ErrOutcomeUnknown) && !errors.Is(relErr, lock.ErrNotHeld), "Release under delay: %v", relErr)
		locker.WaitGiveBacksForTest()
		for _, name := range []string{"job", "d0", "d1", "d2", "d3"} {
			w, rs := rwHeld(t, b, name)
			h.Check(w == "" && len(rs) == 0, "%s given back: writer %q readers %v", name, w, rs)
		}
	})
}
