package semaphore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/semaphore"
)

// shortLease is a timeout whose third (the refresh period) leaves a loaded
// machine room: on real servers the tests wait out real time.
func shortLease(b *redistest.Backend) time.Duration {
	if b.Mini != nil {
		return 300 * time.Millisecond
	}
	return time.Second
}

// timeLeft returns how long permit id of sem has before its deadline, by
// the server's clock.
func timeLeft(t *testing.T, b *redistest.Backend, sem, id string) time.Duration {
	t.Helper()
	ctx := t.Context()
	score, err := b.Client.ZScore(ctx, key(b, sem, "holders"), id).Result()
	if errors.Is(err, redis.Nil) {
		return 0
	}
	require.NoError(t, err)
	now, err := b.Client.Time(ctx).Result()
	require.NoError(t, err)
	return time.Duration(int64(score)-now.UnixMilli()) * time.Millisecond
}

// expire moves permit id's deadline into the past, as if its holder had
// stalled past its timeout.
func expire(t *testing.T, b *redistest.Backend, sem, id string) {
	t.Helper()
	n, err := b.Client.ZAddXX(t.Context(), key(b, sem, "holders"), redis.Z{Score: 1, Member: id}).Result()
	require.NoError(t, err)
	require.Zero(t, n, "ZADD XX only updates")
}

// KeepAlive keeps a permit past several timeouts, one refresh (one round
// trip) every third of the timeout, and Release cancels its context.
func TestPermit_KeepAlive(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		timeout := shortLease(b)
		rdb, count := b.NewClient() // the holder's own client: its round trips are the refreshes
		s := newSem(t, b, rdb, "sem", 1, timeout)
		other := newSem(t, b, b.Client, "sem", 1, timeout)
		p, err := s.TryAcquire(ctx)
		require.NoError(t, err)
		require.NoError(t, p.Refresh(ctx)) // load the script: one round trip per refresh from now on

		start := time.Now()
		rt0, cmds0 := count.RoundTrips(), count.Commands()
		held := p.KeepAlive(ctx)
		// Let four timeouts pass; after each step, wait until the
		// keep-alive has refreshed the permit again.
		for range 8 {
			b.FastForward(timeout / 2)
			require.Eventually(t, func() bool {
				return timeLeft(t, b, "sem", p.ID()) > timeout*3/4
			}, 5*time.Second, time.Millisecond)
		}
		refreshes, cmds := count.RoundTrips()-rt0, count.Commands()-cmds0
		elapsed := time.Since(start)
		require.NoError(t, held.Err())
		_, err = other.TryAcquire(ctx)
		assert.ErrorIs(t, err, semaphore.ErrNoPermit, "still held thanks to KeepAlive")

		assert.GreaterOrEqual(t, refreshes, int64(8), "a refresh after each step")
		assert.Equal(t, refreshes, cmds, "one command per round trip")
		period := timeout / 3
		assert.LessOrEqual(t, refreshes, int64(elapsed/period), "at most one refresh per %v", period)
		t.Logf("KeepAlive: %d refreshes in %v (period %v)", refreshes, elapsed.Round(time.Millisecond), period)

		done := p.KeepAliveDoneForTest()
		require.NoError(t, p.Release(ctx))
		assert.ErrorIs(t, held.Err(), context.Canceled, "Release cancels the holder's context")
		assert.NotErrorIs(t, context.Cause(held), semaphore.ErrNotHeld)
		<-done
		again := p.KeepAlive(ctx)
		assert.ErrorIs(t, again.Err(), context.Canceled, "KeepAlive after Release")
		assert.NotErrorIs(t, context.Cause(again), semaphore.ErrNotHeld)
		n, err := s.Holders(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
	})
}

// A permit that timed out and was cleaned up by another process's
// acquisition: the refresh finds it gone and cancels the context with a
// cause that wraps ErrNotHeld; the other holder's permit is untouched.
func TestPermit_KeepAlive_lost(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const timeout = 300 * time.Millisecond
		s := newSem(t, b, b.Client, "sem", 1, timeout)
		rdb, _ := b.NewClient()
		other := newSem(t, b, rdb, "sem", 1, timeout)
		p, err := s.TryAcquire(ctx)
		require.NoError(t, err)
		held := p.KeepAlive(ctx)

		expire(t, b, "sem", p.ID())
		q, err := other.TryAcquire(ctx)
		require.NoError(t, err, "the expired permit was cleaned up")
		select {
		case <-held.Done():
			cause := context.Cause(held)
			assert.ErrorIs(t, cause, semaphore.ErrNotHeld)
			assert.ErrorContains(t, cause, "lost")
		case <-time.After(5 * time.Second):
			t.Fatal("holder's context not cancelled after the permit was lost")
		}
		assert.ErrorIs(t, context.Cause(p.KeepAlive(ctx)), semaphore.ErrNotHeld, "KeepAlive after loss")
		assert.ErrorIs(t, p.Release(ctx), semaphore.ErrNotHeld)
		assert.Equal(t, []string{q.ID()}, holding(t, b, "sem"), "the other permit untouched")
		require.NoError(t, q.Release(ctx))
	})
}

// KeepAlive stops refreshing when the ctx passed to it ends: the permit
// then lapses at its deadline. Two contexts share one loop, which runs
// until both have ended.
func TestPermit_KeepAlive_ctx(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		timeout := shortLease(b)
		s := newSem(t, b, b.Client, "sem", 1, timeout)
		p, err := s.TryAcquire(t.Context())
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		held := p.KeepAlive(ctx)
		done := p.KeepAliveDoneForTest()
		require.NotNil(t, done)
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the refresh loop still runs after its ctx ended")
		}
		assert.ErrorIs(t, held.Err(), context.Canceled)
		assert.NotErrorIs(t, context.Cause(held), semaphore.ErrNotHeld)
		b.FastForward(timeout + 100*time.Millisecond)
		q, err := s.TryAcquire(t.Context())
		require.NoError(t, err, "not refreshed after ctx ended: the permit lapsed")
		assert.ErrorIs(t, p.Release(t.Context()), semaphore.ErrNotHeld)
		require.NoError(t, q.Release(t.Context()))

		p, err = s.TryAcquire(t.Context())
		require.NoError(t, err)
		ctx1, cancel1 := context.WithCancel(t.Context())
		ctx2, cancel2 := context.WithCancel(t.Context())
		defer cancel2()
		held1 := p.KeepAlive(ctx1)
		held2 := p.KeepAlive(ctx2)
		done = p.KeepAliveDoneForTest()
		cancel1()
		<-held1.Done()
		for range 3 { // it keeps refreshing for ctx2
			b.FastForward(timeout / 2)
			require.Eventually(t, func() bool {
				return timeLeft(t, b, "sem", p.ID()) > timeout*3/4
			}, 5*time.Second, time.Millisecond)
		}
		select {
		case <-done:
			t.Fatal("the loop stopped while a context was alive")
		default:
		}
		assert.NoError(t, held2.Err())
		cancel2()
		<-done
		require.NoError(t, p.Release(t.Context()))
	})
}

// restartableSem returns semaphore "sem" on a redis-server of the test's
// own, on a client that fails fast while the server is down.
func restartableSem(t *testing.T, timeout time.Duration) (*redistest.Server, *semaphore.Semaphore) {
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := semaphore.New(rdb, "sem", 1, timeout)
	require.NoError(t, err)
	return srv, s
}

// Redis goes away: the refreshes fail and are retried until the permit's
// deadline has passed, and then the context is cancelled.
func TestPermit_KeepAlive_redisDown(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv, s := restartableSem(t, timeout)
	ctx := t.Context()
	p, err := s.TryAcquire(ctx)
	require.NoError(t, err)
	held := p.KeepAlive(ctx)
	killed := time.Now()
	srv.Kill()
	select {
	case <-held.Done():
		cause := context.Cause(held)
		assert.ErrorIs(t, cause, semaphore.ErrNotHeld)
		assert.ErrorContains(t, cause, "timeout ran out")
		assert.Less(t, time.Since(killed), timeout+2*time.Second, "cancelled about when the deadline passed")
		t.Logf("cancelled %v after the kill: %v", time.Since(killed).Round(time.Millisecond), cause)
	case <-time.After(10 * time.Second):
		t.Fatal("holder's context not cancelled while Redis was down")
	}
}

func TestSemaphore_Do(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		rdb, count := b.NewClient()
		other := newSem(t, b, rdb, "sem", 1, time.Minute)
		holders := func() int64 {
			n, err := s.Holders(ctx)
			require.NoError(t, err)
			return n
		}

		ran := false
		err := s.Do(ctx, func(ctx context.Context, p *semaphore.Permit) error {
			ran = true
			assert.NoError(t, ctx.Err())
			assert.Equal(t, []string{p.ID()}, holding(t, b, "sem"), "fn holds the permit")
			_, err := other.TryAcquire(ctx)
			assert.ErrorIs(t, err, semaphore.ErrNoPermit, "held during fn")
			return nil
		})
		require.NoError(t, err)
		assert.True(t, ran)
		assert.Zero(t, holders(), "released after fn")

		boom := errors.New("boom")
		err = s.Do(ctx, func(context.Context, *semaphore.Permit) error { return boom })
		assert.ErrorIs(t, err, boom)
		assert.NotErrorIs(t, err, semaphore.ErrNotHeld)
		assert.Zero(t, holders(), "released after an error")

		var inside int64
		assert.PanicsWithValue(t, "fn", func() {
			_ = s.Do(ctx, func(context.Context, *semaphore.Permit) error {
				inside = holders()
				panic("fn")
			})
		})
		assert.Equal(t, int64(1), inside)
		assert.Zero(t, holders(), "released after a panic, which went on")

		// The acquisition fails: fn does not run.
		q, err := other.TryAcquire(ctx)
		require.NoError(t, err)
		err = s.Do(ctx, func(context.Context, *semaphore.Permit) error {
			t.Error("fn ran without a permit")
			return nil
		}, semaphore.WithWait(0))
		assert.ErrorIs(t, err, semaphore.ErrNoPermit)
		require.NoError(t, q.Release(ctx))

		// Round trips: the acquisition and the release (no refresh falls
		// within a quick fn); a nil fn reaches nothing.
		other.SetHotForTest(false) // its TryAcquire above found it full
		rt, cmds := count.Delta(func() {
			require.NoError(t, other.Do(ctx, func(context.Context, *semaphore.Permit) error { return nil }))
		})
		assert.Equal(t, int64(2), rt, "Do round trips")
		assert.Equal(t, int64(2), cmds, "Do commands")
		rt, _ = count.Delta(func() {
			assert.ErrorContains(t, other.Do(ctx, nil), "nil fn")
		})
		assert.Zero(t, rt, "Do with a nil fn")
		assert.Zero(t, holders())
	})
}

// The permit is lost while fn runs: fn's ctx is cancelled, and Do reports
// ErrNotHeld (once) whatever fn returns, and releases nothing: the permit
// of the process that took its place is untouched.
func TestSemaphore_Do_lost(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const timeout = 300 * time.Millisecond
		s := newSem(t, b, b.Client, "sem", 1, timeout)
		rdb, _ := b.NewClient()
		other := newSem(t, b, rdb, "sem", 1, timeout)
		for _, ret := range []func(held context.Context) error{
			func(held context.Context) error { return context.Cause(held) },
			func(held context.Context) error { return held.Err() },
			func(context.Context) error { return nil },
		} {
			var q *semaphore.Permit
			err := s.Do(ctx, func(held context.Context, p *semaphore.Permit) error {
				expire(t, b, "sem", p.ID())
				var err error
				q, err = other.TryAcquire(ctx)
				require.NoError(t, err, "the expired permit was cleaned up")
				<-held.Done()
				return ret(held)
			})
			assert.ErrorIs(t, err, semaphore.ErrNotHeld)
			assert.ErrorContains(t, err, "lost")
			assert.Equal(t, 1, strings.Count(err.Error(), semaphore.ErrNotHeld.Error()), "said once: %v", err)
			assert.Equal(t, []string{q.ID()}, holding(t, b, "sem"), "the other permit untouched")
			require.NoError(t, q.Release(ctx))
		}
	})
}

// Do reports a permit lost through a Redis outage longer than its timeout,
// and does not try to release a permit it knows lost.
func TestSemaphore_Do_outage(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv, s := restartableSem(t, timeout)
	ctx := t.Context()
	var returned time.Time
	start := time.Now()
	err := s.Do(ctx, func(held context.Context, _ *semaphore.Permit) error {
		srv.Kill()
		<-held.Done()
		assert.ErrorIs(t, context.Cause(held), semaphore.ErrNotHeld, "fn's ctx says why")
		returned = time.Now()
		return held.Err()
	})
	doneAt := time.Now()
	assert.ErrorIs(t, err, semaphore.ErrNotHeld)
	assert.ErrorIs(t, err, context.Canceled, "fn's error is kept")
	assert.Equal(t, 1, strings.Count(err.Error(), "context canceled"), "said once: %v", err)
	assert.Less(t, returned.Sub(start), timeout+3*time.Second, "fn's ctx cancelled about when the timeout ran out")
	assert.Less(t, doneAt.Sub(returned), 500*time.Millisecond, "no release tried for a permit known lost")
	t.Logf("Do: fn's ctx cancelled after %v, Do returned %v later: %v",
		returned.Sub(start).Round(time.Millisecond), doneAt.Sub(returned).Round(time.Millisecond), err)
}
