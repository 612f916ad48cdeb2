package lock_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/lock"
)

// queueWaiter queues a waiter of lock name (held by another) without
// blocking: one acquire attempt that keeps its place for wait.
func queueWaiter(t *testing.T, locker *lock.Locker, name string, wait time.Duration) *lock.Lock {
	t.Helper()
	w := locker.NewLockForTest(name, time.Minute)
	ok, err := w.AttemptForTest(t.Context(), wait)
	require.NoError(t, err)
	require.False(t, ok, "the lock is held: queued")
	return w
}

// expireNow ends the TTL of key now rather than waiting it out on the
// clock: PEXPIRE of 1 ms, then it waits until the key is gone (on
// miniredis, whose clock the test moves, at once).
func expireNow(t *testing.T, b *redistest.Backend, key string) {
	t.Helper()
	require.NoError(t, b.Client.PExpire(t.Context(), key, time.Millisecond).Err())
	b.FastForward(2 * time.Millisecond)
	require.Eventually(t, func() bool { return b.Client.Exists(t.Context(), key).Val() == 0 }, 10*time.Second, time.Millisecond)
}

// assertBroken checks that nothing of lock name is left but its fence
// counter and the records of Release and Break calls (which expire after
// the client's retry window).
func assertBroken(t *testing.T, b *redistest.Backend, name string) {
	t.Helper()
	for _, k := range b.Keys("") {
		p := b.Prefix + "{" + name + "}:"
		if k == p+"fence" || strings.HasPrefix(k, p+"released:") {
			continue
		}
		if assert.True(t, strings.HasPrefix(k, p+"once:"), "left behind: %s", k) {
			ttl, err := b.Client.PTTL(context.Background(), k).Result()
			require.NoError(t, err)
			assert.Greater(t, ttl, time.Duration(0), "a record expires")
			assert.LessOrEqual(t, ttl, script.ReplayWindow(b.Client), "a record lives for the retry window")
		}
	}
}

// State: free, held, with waiters (live ones counted, the holder's own
// place not), after the holder's TTL; and it writes nothing.
func TestLock_State(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		locker.SetSlackForTest(0) // places live exactly as long as their wait

		s, err := locker.State(ctx, "job")
		require.NoError(t, err)
		assert.Equal(t, lock.State{}, s, "never used")
		assert.Empty(t, b.Keys(""), "State writes nothing")

		holder, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		s, err = locker.State(ctx, "job")
		require.NoError(t, err)
		assert.True(t, s.Held)
		assert.Greater(t, s.TTL, 50*time.Second)
		assert.LessOrEqual(t, s.TTL, time.Minute)
		assert.Equal(t, holder.Fence(), s.Fence)
		assert.Zero(t, s.Waiters)

		// two waiters, then the place of one expires (its expiry, server
		// ms, the first field of its entry, set in the past rather than
		// waited out: however slow the machine, the other's lasts)
		queueWaiter(t, locker, "job", 30*time.Second)
		gone := queueWaiter(t, locker, "job", 30*time.Second)
		s, err = locker.State(ctx, "job")
		require.NoError(t, err)
		assert.Equal(t, 2, s.Waiters)
		waiters := b.Prefix + "{job}:waiters"
		place, err := b.Client.HGet(ctx, waiters, gone.Token()).Result()
		require.NoError(t, err)
		_, ttl, found := strings.Cut(place, " ")
		require.True(t, found, place)
		require.NoError(t, b.Client.HSet(ctx, waiters, gone.Token(), "1 "+ttl).Err())
		before := b.Snapshot()
		s, err = locker.State(ctx, "job")
		require.NoError(t, err)
		assert.Equal(t, 1, s.Waiters, "the expired place is not counted")
		assert.True(t, s.Held)
		assert.Equal(t, before, b.Snapshot(), "State writes nothing")

		// a lock set by hand without a TTL
		require.NoError(t, b.Client.Set(ctx, ownerKey(b, "manual"), "x", 0).Err())
		s, err = locker.State(ctx, "manual")
		require.NoError(t, err)
		assert.True(t, s.Held)
		assert.Negative(t, s.TTL, "no TTL")
		assert.Zero(t, s.Fence, "none minted")

		// after the holder's TTL: free, the last fence kept; a waiter that
		// takes the lock by its own attempt keeps a stale place, not counted
		short, err := locker.TryAcquire(ctx, "short", time.Minute)
		require.NoError(t, err)
		w := queueWaiter(t, newLocker(b), "short", 30*time.Second)
		expireNow(t, b, ownerKey(b, "short"))
		s, err = locker.State(ctx, "short")
		require.NoError(t, err)
		assert.Equal(t, lock.State{Fence: short.Fence(), Waiters: 1}, s, "expired: free, the waiter still waits")
		ok, err := w.AttemptForTest(ctx, 30*time.Second)
		require.NoError(t, err)
		require.True(t, ok)
		s, err = locker.State(ctx, "short")
		require.NoError(t, err)
		assert.True(t, s.Held)
		assert.Greater(t, s.Fence, short.Fence())
		assert.Equal(t, w.Fence(), s.Fence)
		assert.Zero(t, s.Waiters, "the holder's own place is not a waiter")
	})
}

// Break hands the lock to the waiting Acquire, which holds it with a
// greater fence; the broken holder's Release and Extend answer ErrNotHeld.
func TestLock_Break(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		ok, err := locker.Break(ctx, "job")
		require.NoError(t, err)
		assert.False(t, ok, "a free lock")
		assertBroken(t, b, "job")

		holder, err := locker.TryAcquire(ctx, "job", time.Hour)
		require.NoError(t, err)
		c2, _ := b.NewClient()
		other := must(lock.New(c2, lock.WithPrefix(b.Prefix)))
		type result struct {
			l   *lock.Lock
			err error
		}
		done := make(chan result, 1)
		go func() {
			l, err := other.Acquire(ctx, "job", time.Minute, lock.WithWait(30*time.Second))
			done <- result{l, err}
		}()
		waitForWaiters(t, b, "job", 1)
		s, err := locker.State(ctx, "job")
		require.NoError(t, err)
		assert.Equal(t, 1, s.Waiters)

		ok, err = locker.Break(ctx, "job")
		require.NoError(t, err)
		assert.True(t, ok)
		r := <-done
		require.NoError(t, r.err)
		assert.Greater(t, r.l.Fence(), holder.Fence(), "the next holder's fence is greater")
		assert.Equal(t, r.l.Token(), owner(t, b, "job"))
		assert.ErrorIs(t, holder.Extend(ctx, time.Hour), lock.ErrNotHeld)
		assert.ErrorIs(t, holder.Release(ctx), lock.ErrNotHeld)
		assert.Equal(t, r.l.Token(), owner(t, b, "job"), "the broken holder touched nothing")
		s, err = locker.State(ctx, "job")
		require.NoError(t, err)
		assert.Equal(t, lock.State{Held: true, TTL: s.TTL, Fence: r.l.Fence()}, s)

		// no waiter: the lock is deleted; breaking again is false
		ok, err = locker.Break(ctx, "job")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.ErrorIs(t, r.l.Release(ctx), lock.ErrNotHeld)
		ok, err = locker.Break(ctx, "job")
		require.NoError(t, err)
		assert.False(t, ok)
		assertBroken(t, b, "job")
		next, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		assert.Greater(t, next.Fence(), r.l.Fence())
		require.NoError(t, next.Release(ctx))

		// an owner key set by hand, without a TTL
		require.NoError(t, b.Client.Set(ctx, ownerKey(b, "manual"), "stuck", 0).Err())
		ok, err = locker.Break(ctx, "manual")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Empty(t, owner(t, b, "manual"))
	})
}

// A broken holder that still has a place in the queue never gets the
// lock back: Break skips and removes its place and hands the lock to the
// next waiter. (A holder that took the lock by its own attempt leaves the
// queue then; the test puts a place back by hand, as an attempt of its
// wait re-sent late by go-redis could.) A holder handed the lock by a
// release it has not read yet loses the fence left on its grant key.
func TestLock_Break_queuedHolder(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		first, err := locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		w := queueWaiter(t, locker, "job", 30*time.Second)
		expireNow(t, b, ownerKey(b, "job"))
		ok, err := w.AttemptForTest(ctx, 30*time.Second)
		require.NoError(t, err)
		require.True(t, ok, "taken by its own attempt")
		require.Zero(t, b.Client.LLen(ctx, keyOf(b, "job", "queue")).Val(), "it left the queue")
		require.NoError(t, b.Client.HSet(ctx, keyOf(b, "job", "waiters"), w.Token(), strconv.FormatInt(1<<50, 10)+" 60000").Err())
		require.NoError(t, b.Client.RPush(ctx, keyOf(b, "job", "queue"), w.Token()).Err())
		w2 := queueWaiter(t, locker, "job", 30*time.Second)
		require.Equal(t, int64(2), b.Client.LLen(ctx, keyOf(b, "job", "queue")).Val())

		ok, err = locker.Break(ctx, "job")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, w2.Token(), owner(t, b, "job"), "handed to the next waiter, not back to the broken holder")
		assert.Zero(t, b.Client.Exists(ctx, keyOf(b, "job", "queue"), keyOf(b, "job", "waiters")).Val(), "no place left")
		assert.Greater(t, fence(t, b, "job"), w.Fence())
		assert.Greater(t, w.Fence(), first.Fence())
		assert.ErrorIs(t, w.Release(ctx), lock.ErrNotHeld)

		// w2 was handed the lock without reading its grant key: Break
		// deletes it, so w2 cannot take the fence there for a hold
		ok, err = locker.Break(ctx, "job")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Zero(t, b.Client.Exists(ctx, keyOf(b, "job", "grant:"+w2.Token())).Val(), "the broken holder's grant key")
		assertBroken(t, b, "job")
	})
}

// State and Break check every key they read or write, and a failed Break
// changes nothing.
func TestLock_State_Break_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		owner := redistest.KeyRole{Key: keyOf(b, "job", "owner"), Type: "string", Role: "lock owner"}
		fence := redistest.KeyRole{Key: keyOf(b, "job", "fence"), Type: "string", Role: "lock fence"}
		queue := redistest.KeyRole{Key: keyOf(b, "job", "queue"), Type: "list", Role: "lock queue"}
		waiters := redistest.KeyRole{Key: keyOf(b, "job", "waiters"), Type: "hash", Role: "lock waiters"}
		w := locker.NewLockForTest("job", time.Minute)
		grant := redistest.KeyRole{Key: keyOf(b, "job", "grant:"+w.Token()), Type: "list", Role: "lock grant"}
		held := func() {
			require.NoError(t, b.Client.Set(ctx, fence.Key, "7", 0).Err())
			require.NoError(t, b.Client.Set(ctx, owner.Key, "holder", time.Minute).Err())
		}
		withWaiter := func() {
			held()
			ok, err := w.AttemptForTest(ctx, 10*time.Second)
			require.NoError(t, err)
			require.False(t, ok)
		}
		t.Run("State", func(t *testing.T) {
			b.CheckWrongTypes(t, withWaiter, func() error {
				_, err := locker.State(ctx, "job")
				return err
			}, owner, fence, queue, waiters)
		})
		t.Run("Break", func(t *testing.T) {
			b.CheckWrongTypes(t, held, func() error {
				_, err := locker.Break(ctx, "job")
				return err
			}, owner, queue, waiters)
		})
		t.Run("Break hand-over", func(t *testing.T) {
			b.CheckWrongTypes(t, withWaiter, func() error {
				_, err := locker.Break(ctx, "job")
				return err
			}, owner, fence, queue, waiters, grant)
		})
		t.Run("corrupt fence", func(t *testing.T) {
			b.Flush()
			withWaiter()
			require.NoError(t, b.Client.Set(ctx, fence.Key, "abc", 0).Err())
			before := b.Snapshot()
			_, err := locker.State(ctx, "job")
			assert.ErrorIs(t, err, ria.ErrCorrupt)
			_, err = locker.Break(ctx, "job")
			assert.ErrorIs(t, err, ria.ErrCorrupt)
			assert.Equal(t, before, b.Snapshot(), "nothing changed")
		})
	})
}

func TestLock_State_Break_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		// load the scripts on the node of "job" (on a Cluster, another
		// name's node may not be it)
		_, err := locker.State(ctx, "job")
		require.NoError(t, err)
		_, err = locker.Break(ctx, "job")
		require.NoError(t, err)
		_, err = locker.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		queueWaiter(t, locker, "job", 10*time.Second)
		for _, c := range []struct {
			op string
			fn func() error
		}{
			{"State", func() error { _, err := locker.State(ctx, "job"); return err }},
			{"Break hand-over", func() error { _, err := locker.Break(ctx, "job"); return err }},
			{"Break", func() error { _, err := locker.Break(ctx, "job"); return err }},
			{"Break free", func() error { _, err := locker.Break(ctx, "job"); return err }},
		} {
			rt, cmds := b.Count.Delta(func() { require.NoError(t, c.fn(), c.op) })
			assert.Equal(t, int64(1), rt, c.op+" round trips")
			assert.Equal(t, int64(1), cmds, c.op+" commands")
		}
	})
}

func TestLock_State_Break_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		for _, name := range []string{"", "a{b", "}x"} {
			_, err := locker.State(ctx, name)
			assert.ErrorContains(t, err, "lock name", "%q", name)
			ok, err := locker.Break(ctx, name)
			assert.ErrorContains(t, err, "lock name", "%q", name)
			assert.False(t, ok)
			_, err = locker.RW(name).State(ctx)
			assert.ErrorContains(t, err, "lock name", "%q", name)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := locker.Break(cctx, "job")
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, ria.ErrOutcomeUnknown, "nothing was sent")
		assert.Empty(t, b.Keys(""), "bad input wrote nothing")
	})
}

// Break through lost replies: a re-send is answered from the record of
// the first run; it never breaks the lock of the waiter the first run
// handed it to, and a Break of a free lock stays false.
func TestFaults_Break(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker, f := faultyLocker(t, b)
		_, err := locker.Break(ctx, "warm") // load the script
		require.NoError(t, err)
		other := newLocker(b)
		h := redistest.NewHarness(t, f, "lock Break")
		for i := range 6 {
			name := fmt.Sprint("job", i)
			holder, err := other.TryAcquire(ctx, name, time.Minute)
			require.NoError(t, err)
			w := queueWaiter(t, other, name, 30*time.Second)
			var ok bool
			h.Call(1+i%2, redistest.Scripts, func() { ok, err = locker.Break(ctx, name) })
			h.Check(err == nil && ok, "Break of a held lock answered %v, %v", ok, err)
			h.Check(owner(t, b, name) == w.Token(), "handed to the waiter once, not broken again: owner %q", owner(t, b, name))
			h.Check(fence(t, b, name) > holder.Fence(), "a new fence minted")

			require.NoError(t, b.Client.Del(ctx, ownerKey(b, name)).Err())
			h.Call(1+i%2, redistest.Scripts, func() { ok, err = locker.Break(ctx, name) })
			h.Check(err == nil && !ok, "Break of a free lock answered %v, %v", ok, err)
		}
		// every re-send lost
		holder, err := other.TryAcquire(ctx, "lost", time.Minute)
		require.NoError(t, err)
		h.Call(4, redistest.Scripts, func() { _, err = locker.Break(ctx, "lost") })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "the outcome is unknown: %v", err)
		h.Check(owner(t, b, "lost") == "", "the first run broke it")
		h.Check(errors.Is(holder.Release(ctx), lock.ErrNotHeld), "the broken holder is told")
	})
}

// RWLock.State: free, a writer, readers, a waiting writer, after expiry.
func TestRWLock_State(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("cat")
		s, err := rw.State(ctx)
		require.NoError(t, err)
		assert.Equal(t, lock.RWState{}, s)

		wr, err := rw.TryLock(ctx, time.Minute)
		require.NoError(t, err)
		s, err = rw.State(ctx)
		require.NoError(t, err)
		assert.True(t, s.Writer)
		assert.Zero(t, s.Readers)
		assert.Greater(t, s.TTL, 50*time.Second)
		assert.Equal(t, wr.Fence(), s.Fence)
		require.NoError(t, wr.Release(ctx))

		r1, err := rw.TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		r2, err := rw.TryRLock(ctx, time.Minute)
		require.NoError(t, err)
		ww := rw.NewHoldForTest(time.Minute, true)
		ok, err := ww.AttemptForTest(ctx, 30*time.Second)
		require.NoError(t, err)
		require.False(t, ok)
		s, err = rw.State(ctx)
		require.NoError(t, err)
		assert.Equal(t, lock.RWState{Readers: 2, TTL: s.TTL, Fence: r2.Fence(), Waiters: 1}, s)
		assert.Greater(t, s.TTL, 50*time.Second, "the longest lease")
		assert.Greater(t, r2.Fence(), r1.Fence())

		// r1's lease ends: its deadline (server ms) set in the past rather
		// than waited out
		require.NoError(t, b.Client.ZAddXX(ctx, rwKey(b, "cat", "readers"), redis.Z{Score: 1, Member: r1.Token()}).Err())
		before := b.Snapshot()
		s, err = rw.State(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, s.Readers, "r1's lease ended")
		assert.Equal(t, before, b.Snapshot(), "State writes nothing")
		require.NoError(t, r2.Release(ctx))
		_ = r1.Release(ctx)
	})
}

func TestRWLock_State_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("cat")
		kr := func(part, typ, role string) redistest.KeyRole {
			return redistest.KeyRole{Key: rwKey(b, "cat", part), Type: typ, Role: role}
		}
		setup := func() {
			_, err := rw.TryRLock(ctx, time.Minute)
			require.NoError(t, err)
			require.NoError(t, b.Client.Set(ctx, rwKey(b, "cat", "writer"), "w", time.Minute).Err())
			ok, err := rw.NewHoldForTest(time.Minute, true).AttemptForTest(ctx, 30*time.Second)
			require.NoError(t, err)
			require.False(t, ok)
		}
		b.CheckWrongTypes(t, setup, func() error {
			_, err := rw.State(ctx)
			return err
		}, kr("writer", "string", "lock rw writer"), kr("readers", "zset", "lock rw readers"),
			kr("fence", "string", "lock rw fence"), kr("queue", "list", "lock rw queue"),
			kr("waiters", "hash", "lock rw waiters"))
	})
}

// Replies delayed past the read timeout: Break answers that its outcome is
// unknown (never false), and the lock was broken once: handed to the
// waiter, whose lock the re-send did not break again.
func TestFaults_Break_delay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker, f := faultyLocker(t, b, func(o *redis.UniversalOptions) {
			o.ReadTimeout = 100 * time.Millisecond
			o.MaxRetries = 1
		})
		// Load the script on the node of "job" (on a Cluster another name's
		// node may not be it): a NOSCRIPT reply held past the read timeout
		// would leave the Break never run.
		_, err := locker.Break(ctx, "job")
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "lock Break delayed replies")
		other := newLocker(b)
		holder, err := other.TryAcquire(ctx, "job", time.Minute)
		require.NoError(t, err)
		w := queueWaiter(t, other, "job", 30*time.Second)
		f.Delay(300 * time.Millisecond)
		ok, err := locker.Break(ctx, "job")
		f.Delay(0)
		h.Counted()
		h.Check(!ok && errors.Is(err, ria.ErrOutcomeUnknown), "Break under delay: %v, %v", ok, err)
		h.Check(owner(t, b, "job") == w.Token(), "broken once, handed to the waiter: owner %q", owner(t, b, "job"))
		h.Check(errors.Is(holder.Release(ctx), lock.ErrNotHeld), "the broken holder is told")
	})
}
