package semaphore_test

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

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/semaphore"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// run is redistest.Run (each run gets a fresh key prefix).
func run(t *testing.T, fn func(t *testing.T, b *redistest.Backend)) {
	t.Helper()
	redistest.Run(t, fn)
}

// newSem returns the semaphore name on rdb under the test's prefix.
func newSem(t *testing.T, b *redistest.Backend, rdb semaphore.Client, name string, limit int, timeout time.Duration) *semaphore.Semaphore {
	t.Helper()
	s, err := semaphore.New(rdb, name, limit, timeout, semaphore.WithPrefix(b.Prefix))
	require.NoError(t, err)
	return s
}

// key returns the name of one of the semaphore's keys (see doc.go).
func key(b *redistest.Backend, name, part string) string {
	return b.Prefix + "{" + name + "}:" + part
}

// waitUntilWaiting returns once an Acquire is queued on name, so that the
// test acts while the waiter waits.
func waitUntilWaiting(t *testing.T, b *redistest.Backend, name string) {
	t.Helper()
	waitForQueue(t, b, name, 1)
}

// waitForQueue returns once n Acquires are queued on name.
func waitForQueue(t *testing.T, b *redistest.Backend, name string, n int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		got, err := b.Client.LLen(t.Context(), key(b, name, "queue")).Result()
		return err == nil && got == n
	}, 5*time.Second, time.Millisecond, "Acquires did not queue")
}

type result struct {
	p       *semaphore.Permit
	err     error
	elapsed time.Duration
}

// acquireAsync runs s.Acquire in a goroutine and delivers its result.
func acquireAsync(ctx context.Context, s *semaphore.Semaphore, opts ...semaphore.AcquireOption) <-chan result {
	ch := make(chan result, 1)
	go func() {
		start := time.Now()
		p, err := s.Acquire(ctx, opts...)
		ch <- result{p, err, time.Since(start)}
	}()
	return ch
}

func receive(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(15 * time.Second):
		t.Fatal("Acquire did not return within 15s")
		return result{}
	}
}

// The book's scenario: limit 3, a fourth is refused, time frees the places.
func TestSemaphore_TryAcquire_limit(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 3, 300*time.Millisecond)

		var held []*semaphore.Permit
		for range 3 {
			p, err := s.TryAcquire(ctx)
			require.NoError(t, err)
			held = append(held, p)
		}
		n, err := s.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(3), n)

		_, err = s.TryAcquire(ctx)
		assert.ErrorIs(t, err, semaphore.ErrNoPermit)
		assert.ErrorContains(t, err, `semaphore: acquire "sem"`)

		b.FastForward(400 * time.Millisecond)
		n, err = s.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(0), n, "every permit timed out")

		p, err := s.TryAcquire(ctx)
		require.NoError(t, err, "a timed-out semaphore admits again")
		assert.ErrorIs(t, held[0].Refresh(ctx), semaphore.ErrNotHeld)
		assert.ErrorIs(t, held[1].Release(ctx), semaphore.ErrNotHeld)

		n, err = s.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "an expired permit's Refresh or Release touches no one else")
		assert.NoError(t, p.Release(ctx))
	})
}

func TestPermit_Release(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)

		p, err := s.TryAcquire(ctx)
		require.NoError(t, err)
		_, err = s.TryAcquire(ctx)
		require.ErrorIs(t, err, semaphore.ErrNoPermit)

		assert.NoError(t, p.Release(ctx))
		n, err := s.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(0), n)
		err = p.Release(ctx)
		assert.ErrorIs(t, err, semaphore.ErrNotHeld, "second release")
		assert.ErrorContains(t, err, `semaphore: release "sem"`)
		assert.ErrorIs(t, p.Refresh(ctx), semaphore.ErrNotHeld, "refresh after release")

		q, err := s.TryAcquire(ctx)
		require.NoError(t, err, "release frees the place")
		assert.NotEqual(t, p.ID(), q.ID())
		assert.NoError(t, q.Release(ctx))
	})
}

func TestPermit_Seq_increasing(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 2, time.Minute)
		var last int64
		ids := map[string]bool{}
		for i := range 20 {
			p, err := s.TryAcquire(ctx)
			require.NoError(t, err)
			assert.Greater(t, p.Seq(), last, "acquisition %d", i)
			assert.False(t, ids[p.ID()], "IDs are unique")
			last, ids[p.ID()] = p.Seq(), true
			require.NoError(t, p.Release(ctx))
		}
	})
}

func TestPermit_Refresh_extends(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, 500*time.Millisecond)
		p, err := s.TryAcquire(ctx)
		require.NoError(t, err)

		b.FastForward(300 * time.Millisecond)
		require.NoError(t, p.Refresh(ctx))
		b.FastForward(300 * time.Millisecond) // 600ms after acquiring, 300ms after refreshing
		_, err = s.TryAcquire(ctx)
		assert.ErrorIs(t, err, semaphore.ErrNoPermit, "the refreshed permit still holds")

		b.FastForward(300 * time.Millisecond) // 600ms after refreshing
		assert.ErrorIs(t, p.Refresh(ctx), semaphore.ErrNotHeld)
		n, err := b.Client.ZCard(ctx, key(b, "sem", "holders")).Result()
		require.NoError(t, err)
		assert.Equal(t, int64(0), n, "a failed refresh removes the expired permit")
	})
}

// The keys and their types and TTLs are those doc.go documents.
func TestSemaphore_keys(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		p, err := s.TryAcquire(ctx)
		require.NoError(t, err)

		assert.Equal(t, "zset", b.Client.Type(ctx, key(b, "sem", "holders")).Val())
		ttl := b.Client.PTTL(ctx, key(b, "sem", "holders")).Val()
		assert.InDelta(t, float64(time.Minute), float64(ttl), float64(time.Second))
		assert.Equal(t, strconv.FormatInt(p.Seq(), 10), b.Client.Get(ctx, key(b, "sem", "seq")).Val())
		assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, key(b, "sem", "seq")).Val(), "seq has no TTL")

		// A blocked Acquire holds a place in the queue for about its wait.
		ch := acquireAsync(ctx, s, semaphore.WithWait(5*time.Second))
		waitUntilWaiting(t, b, "sem")
		assert.Equal(t, "list", b.Client.Type(ctx, key(b, "sem", "queue")).Val())
		assert.Equal(t, "hash", b.Client.Type(ctx, key(b, "sem", "waiters")).Val())
		ttl = b.Client.PTTL(ctx, key(b, "sem", "waiters")).Val()
		assert.Greater(t, ttl, time.Duration(0), "waiters has a TTL")
		assert.LessOrEqual(t, ttl, 7*time.Second, "the wait plus 2s slack")

		require.NoError(t, p.Release(ctx))
		r := receive(t, ch)
		require.NoError(t, r.err)
		assert.Greater(t, r.p.Seq(), p.Seq())
		assert.Zero(t, b.Client.Exists(ctx, key(b, "sem", "queue"), key(b, "sem", "waiters")).Val(), "queue and place consumed")
		require.NoError(t, r.p.Release(ctx))
		assert.Zero(t, b.Client.Exists(ctx, key(b, "sem", "grant:"+r.p.ID())).Val(), "the grant deleted by the release")

		// A release leaves a record of the call, for the client's retry
		// window, so that a re-send after a lost reply answers "released".
		for _, id := range []string{p.ID(), r.p.ID()} {
			rec := key(b, "sem", "released:"+id)
			assert.Equal(t, "string", b.Client.Type(ctx, rec).Val())
			ttl := b.Client.PTTL(ctx, rec).Val()
			assert.Greater(t, ttl, time.Duration(0))
			assert.LessOrEqual(t, ttl, script.ReplayWindow(b.Client))
		}
	})
}

// Waiters get permits in the order they started waiting, each handed over
// by a release, and a newcomer cannot cut in meanwhile.
func TestSemaphore_Acquire_fifo(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 2, time.Minute)
		var held []*semaphore.Permit
		for range 2 {
			p, err := s.TryAcquire(ctx)
			require.NoError(t, err)
			held = append(held, p)
		}
		const n = 4
		chs := make([]<-chan result, n)
		for i := range n {
			chs[i] = acquireAsync(ctx, s, semaphore.WithWait(20*time.Second))
			waitForQueue(t, b, "sem", int64(i+1))
		}
		for i := range n {
			require.NoError(t, held[0].Release(ctx))
			_, err := s.TryAcquire(ctx)
			assert.ErrorIs(t, err, semaphore.ErrNoPermit, "handed over, not freed")
			r := receive(t, chs[i])
			require.NoError(t, r.err, "waiter %d", i)
			for j := i + 1; j < n; j++ {
				select {
				case r := <-chs[j]:
					t.Fatalf("waiter %d served before waiter %d: %v", j, i, r.err)
				default:
				}
			}
			held = append(held[1:], r.p)
		}
		n2, err := s.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n2)
	})
}

func TestSemaphore_Acquire_wokenByRelease(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		p, err := s.TryAcquire(ctx)
		require.NoError(t, err)

		ch := acquireAsync(ctx, s, semaphore.WithWait(5*time.Second))
		waitUntilWaiting(t, b, "sem")
		released := time.Now()
		require.NoError(t, p.Release(ctx))
		r := receive(t, ch)
		woken := time.Since(released)

		require.NoError(t, r.err)
		assert.Greater(t, r.p.Seq(), p.Seq())
		// Without the wake-up it would wait the full 5s (the holder's
		// deadline is a minute away).
		assert.Less(t, woken, time.Second, "woken by the release")
		assert.NoError(t, r.p.Release(ctx))
	})
}

func TestSemaphore_Acquire_waitRunsOut(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		_, err := s.TryAcquire(ctx)
		require.NoError(t, err)

		start := time.Now()
		_, err = s.Acquire(ctx, semaphore.WithWait(200*time.Millisecond))
		elapsed := time.Since(start)
		assert.ErrorIs(t, err, semaphore.ErrNoPermit)
		assert.NotErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, context.DeadlineExceeded)
		assert.GreaterOrEqual(t, elapsed, 200*time.Millisecond)
		assert.Less(t, elapsed, 2*time.Second)

		var rt int64
		rt, _ = b.Count.Delta(func() { _, err = s.Acquire(ctx, semaphore.WithWait(0)) })
		assert.ErrorIs(t, err, semaphore.ErrNoPermit, "WithWait(0) tries once")
		assert.Equal(t, int64(1), rt, "one attempt")
		assert.Zero(t, b.Client.Exists(ctx, key(b, "sem", "queue")).Val(), "not queued")

		_, err = s.Acquire(ctx, semaphore.WithWait(-time.Second))
		assert.EqualError(t, err, `semaphore: acquire "sem": wait -1s: must not be negative`)
	})
}

func TestSemaphore_Acquire_cancelled(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		_, err := s.TryAcquire(t.Context())
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err = s.Acquire(ctx)
		assert.ErrorIs(t, err, semaphore.ErrNoPermit)
		assert.ErrorIs(t, err, context.Canceled)

		// Cancelled while blocked.
		ctx, cancel = context.WithCancel(t.Context())
		defer cancel()
		ch := acquireAsync(ctx, s)
		waitUntilWaiting(t, b, "sem")
		cancel()
		r := receive(t, ch)
		assert.ErrorIs(t, r.err, semaphore.ErrNoPermit)
		assert.ErrorIs(t, r.err, context.Canceled)

		n, err := s.Holders(t.Context())
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)

		// A ctx deadline ends the wait too.
		ctx, cancel = context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err = s.Acquire(ctx)
		assert.ErrorIs(t, err, semaphore.ErrNoPermit)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// A holder that never releases: the waiter gets in once its timeout passes.
// On miniredis FastForward moves the server clock while the waiter blocks
// until the holder's deadline (by the real clock); on real servers it waits.
func TestSemaphore_Acquire_holderTimesOut(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, 300*time.Millisecond)
		p, err := s.TryAcquire(ctx)
		require.NoError(t, err)

		ch := acquireAsync(ctx, s, semaphore.WithWait(5*time.Second))
		waitUntilWaiting(t, b, "sem")
		ttl := b.Client.PTTL(ctx, key(b, "sem", "waiters")).Val()
		assert.LessOrEqual(t, ttl, 2500*time.Millisecond, "the place lasts until the holder's deadline plus slack, not the 5s wait")
		select {
		case r := <-ch:
			t.Fatalf("Acquire returned while the holder was live: %v", r.err)
		default:
		}
		b.FastForward(400 * time.Millisecond)
		r := receive(t, ch)
		require.NoError(t, r.err)
		assert.Less(t, r.elapsed, 2*time.Second, "bounded by the holder's deadline, not the 5s wait")
		assert.Greater(t, r.p.Seq(), p.Seq())
		assert.ErrorIs(t, p.Release(ctx), semaphore.ErrNotHeld)
		assert.NoError(t, r.p.Release(ctx))
	})
}

// Many goroutines on two clients never hold more than limit permits.
func TestSemaphore_contention(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		const (
			limit      = 3
			goroutines = 16
		)
		ctx := t.Context()
		other, otherCount := b.NewClient()
		rounds := 250 // 4000 acquisitions
		if b.Mini != nil {
			rounds = 100 // 1600: miniredis runs Lua several times slower
		}
		rt0 := b.Count.RoundTrips() + otherCount.RoundTrips()
		sems := []*semaphore.Semaphore{
			newSem(t, b, b.Client, "sem", limit, 10*time.Second),
			newSem(t, b, other, "sem", limit, 10*time.Second),
		}

		var inUse, maxInUse, done atomic.Int64
		errs := make(chan error, goroutines)
		var wg sync.WaitGroup
		start := time.Now()
		for g := range goroutines {
			wg.Go(func() {
				s := sems[g%len(sems)]
				for range rounds {
					p, err := s.Acquire(ctx, semaphore.WithWait(10*time.Second))
					if err != nil {
						errs <- err
						return
					}
					n := inUse.Add(1)
					for m := maxInUse.Load(); n > m && !maxInUse.CompareAndSwap(m, n); m = maxInUse.Load() {
					}
					// Hold the permit for a round trip, checking the
					// server's count too.
					h, err := s.Holders(ctx)
					if err == nil && (h < 1 || h > limit) {
						err = fmt.Errorf("%d holders with a permit held", h)
					}
					inUse.Add(-1)
					if err != nil {
						errs <- err
						return
					}
					if err := p.Release(ctx); err != nil {
						errs <- err
						return
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		rt := b.Count.RoundTrips() + otherCount.RoundTrips() - rt0
		t.Logf("%d acquisitions by %d goroutines on 2 clients in %v; max concurrent holders %d; %.1f round trips per acquisition (Holders and Release included)",
			done.Load(), goroutines, time.Since(start).Round(time.Millisecond), maxInUse.Load(), float64(rt)/float64(done.Load()))
		assert.Equal(t, int64(goroutines*rounds), done.Load())
		assert.LessOrEqual(t, maxInUse.Load(), int64(limit))
		assert.Greater(t, maxInUse.Load(), int64(1), "the test produced contention")
		n, err := sems[0].Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(0), n)
	})
}

// Admission depends on the server alone: the scripts read Redis TIME and the
// package never scores with the client's clock (no time.Now in deadlines),
// so two clients are admitted in the order the server sees them, whatever
// their clocks say.
func TestSemaphore_clientClocks(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		other, _ := b.NewClient()
		sems := []*semaphore.Semaphore{
			newSem(t, b, b.Client, "sem", 2, time.Minute),
			newSem(t, b, other, "sem", 2, time.Minute),
		}
		var held []*semaphore.Permit
		var last int64
		for i := range 12 {
			s := sems[i%2]
			p, err := s.TryAcquire(ctx)
			if len(held) == 2 {
				require.ErrorIs(t, err, semaphore.ErrNoPermit, "attempt %d: limit 2", i)
				require.NoError(t, held[0].Release(ctx))
				held = held[1:]
				p, err = s.TryAcquire(ctx)
			}
			require.NoError(t, err, "attempt %d", i)
			assert.Greater(t, p.Seq(), last, "attempt %d: Seq follows the order of arrival", i)
			last = p.Seq()
			held = append(held, p)
		}

		if b.Mini == nil {
			return // a real server's clock cannot be skewed from here
		}
		// Put the server's clock an hour behind the client's. A deadline
		// scored with the client's clock would be an hour away by the
		// server's, and the permit would not lapse after its 300ms.
		srvNow := time.Now().Add(-time.Hour)
		b.Mini.SetTime(srvNow)
		s := newSem(t, b, b.Client, "skewed", 1, 300*time.Millisecond)
		_, err := s.TryAcquire(ctx)
		require.NoError(t, err)
		b.Mini.SetTime(srvNow.Add(400 * time.Millisecond))
		b.Mini.FastForward(400 * time.Millisecond)
		_, err = s.TryAcquire(ctx)
		assert.NoError(t, err, "the permit lapsed by the server's clock")
	})
}

// A holder that stalls past its timeout loses its place to others and
// learns so from Refresh and Release; neither disturbs the new holder.
func TestPermit_stalledHolder(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, 300*time.Millisecond)
		stalled, err := s.TryAcquire(ctx)
		require.NoError(t, err)

		b.FastForward(400 * time.Millisecond)
		p, err := s.TryAcquire(ctx)
		require.NoError(t, err, "another gets in after the timeout")

		assert.ErrorIs(t, stalled.Refresh(ctx), semaphore.ErrNotHeld)
		assert.ErrorIs(t, stalled.Release(ctx), semaphore.ErrNotHeld)
		_, err = s.TryAcquire(ctx)
		assert.ErrorIs(t, err, semaphore.ErrNoPermit, "the new holder still holds")
		assert.NoError(t, p.Refresh(ctx))
		assert.NoError(t, p.Release(ctx))
	})
}

func TestSemaphore_lostReply(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _ := b.NewClient() // our own client: we may add a hook
		h := &redistest.ReplyLoser{}
		rdb.AddHook(h)
		s := newSem(t, b, rdb, "sem", 2, time.Minute)
		n, err := s.Holders(ctx) // the setup works
		require.NoError(t, err)
		require.Equal(t, int64(0), n)

		// TryAcquire says the outcome is unknown and gives back the permit
		// the server granted, in the background.
		h.Arm()
		_, err = s.TryAcquire(ctx)
		assert.ErrorIs(t, err, redistest.ErrReplyLost)
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		assert.NotErrorIs(t, err, semaphore.ErrNoPermit)
		s.WaitGiveBacksForTest()
		n, err = s.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(0), n, "the ungranted permit was released")

		// Acquire retries with the same ID and keeps the permit it got.
		h.Arm()
		p, err := s.Acquire(ctx, semaphore.WithWait(5*time.Second))
		require.NoError(t, err)
		n, err = s.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "one permit, not two")
		assert.NoError(t, p.Release(ctx))
		n, err = s.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(0), n)
	})
}

func TestSemaphore_roundTrips(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		// Warm up: the first call of each script may take two round trips
		// (EVALSHA answered by NOSCRIPT, then EVAL).
		p, err := s.TryAcquire(ctx)
		require.NoError(t, err)
		require.NoError(t, p.Refresh(ctx))
		require.NoError(t, p.Release(ctx))
		_, err = s.Holders(ctx)
		require.NoError(t, err)

		for _, c := range []struct {
			op string
			fn func()
		}{
			{"TryAcquire", func() { p, err = s.TryAcquire(ctx); require.NoError(t, err) }},
			{"TryAcquire full", func() { _, err = s.TryAcquire(ctx); require.ErrorIs(t, err, semaphore.ErrNoPermit) }},
			{"Refresh", func() { require.NoError(t, p.Refresh(ctx)) }},
			{"Holders", func() { _, err = s.Holders(ctx); require.NoError(t, err) }},
			{"Release", func() { require.NoError(t, p.Release(ctx)) }},
			{"Acquire free", func() { s.SetHotForTest(false); p, err = s.Acquire(ctx); require.NoError(t, err) }},
			{"Release after Acquire", func() { require.NoError(t, p.Release(ctx)) }},
		} {
			rt, cmds := b.Count.Delta(c.fn)
			assert.Equal(t, int64(1), rt, c.op+" round trips")
			assert.Equal(t, int64(1), cmds, c.op+" commands")
		}
	})
}

// A contended acquisition: one round trip for "queue and block" once the
// Semaphore has seen it full; a cold Semaphore pays a plain attempt and a
// plain wait. The hand-over is the holder's release.
func TestSemaphore_roundTrips_contended(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		holderSem := newSem(t, b, b.Client, "sem", 1, time.Minute)
		c2, count := b.NewClient()
		s := newSem(t, b, c2, "sem", 1, time.Minute)
		warm, err := s.TryAcquire(ctx) // load the scripts
		require.NoError(t, err)
		require.NoError(t, warm.Release(ctx))
		for _, hot := range []bool{true, false} {
			held, err := holderSem.TryAcquire(ctx)
			require.NoError(t, err)
			s.SetHotForTest(hot)
			type res struct {
				p        *semaphore.Permit
				err      error
				rt, cmds int64
			}
			done := make(chan res, 1)
			go func() {
				var r res
				r.rt, r.cmds = count.Delta(func() { r.p, r.err = s.Acquire(ctx, semaphore.WithWait(20*time.Second)) })
				done <- r
			}()
			waitUntilWaiting(t, b, "sem")
			require.NoError(t, held.Release(ctx))
			r := <-done
			require.NoError(t, r.err)
			if hot {
				assert.Equal(t, int64(1), r.rt, "queue and block in one round trip")
				assert.Equal(t, int64(2), r.cmds, "EVALSHA and BLPOP")
			} else {
				assert.Equal(t, int64(2), r.rt, "a plain attempt, then a plain wait")
				assert.True(t, s.HotForTest(), "it has seen the semaphore full")
			}
			rt, _ := count.Delta(func() { require.NoError(t, r.p.Release(ctx)) })
			assert.Equal(t, int64(1), rt, "release")
		}
	})
}

func TestNew_badInput(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		for _, c := range []struct {
			name    string
			limit   int
			timeout time.Duration
			prefix  string
			want    string
		}{
			{"", 1, time.Second, b.Prefix, "semaphore name"},
			{"}x", 1, time.Second, b.Prefix, "semaphore name"},
			{"sem", 0, time.Second, b.Prefix, "limit 0"},
			{"sem", -1, time.Second, b.Prefix, "limit -1"},
			{"sem", 1, 0, b.Prefix, "timeout 0s"},
			{"sem", 1, -time.Second, b.Prefix, "timeout -1s"},
			{"sem", 1, 500 * time.Microsecond, b.Prefix, "timeout 500µs"},
			{"sem", 1, time.Second, b.Prefix + "{x}", "prefix"},
		} {
			rt, _ := b.Count.Delta(func() {
				s, err := semaphore.New(b.Client, c.name, c.limit, c.timeout, semaphore.WithPrefix(c.prefix))
				assert.Nil(t, s)
				assert.ErrorContains(t, err, c.want)
			})
			assert.Zero(t, rt, "New reaches Redis")
		}
		assert.Empty(t, b.Keys(""), "New wrote nothing")
		assert.Panics(t, func() { _, _ = semaphore.New(nil, "sem", 1, time.Second) })
	})
}

// The server dies and comes back: calls fail with errors in between, a
// blocked Acquire rides it out, and work resumes.
func TestSemaphore_redisRestart(t *testing.T) {
	srv := redistest.StartServer(t)
	// One dial attempt per try, so that calls fail fast while it is down.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	s, err := semaphore.New(rdb, "sem", 1, time.Minute)
	require.NoError(t, err)

	p, err := s.TryAcquire(ctx)
	require.NoError(t, err)
	waiter := acquireAsync(ctx, s, semaphore.WithWait(20*time.Second))
	require.Eventually(t, func() bool { return rdb.LLen(ctx, "semaphore:{sem}:queue").Val() == 1 },
		5*time.Second, 5*time.Millisecond)

	srv.Kill()
	_, err = s.TryAcquire(ctx)
	assert.Error(t, err)
	assert.NotErrorIs(t, err, semaphore.ErrNoPermit)
	err = p.Release(ctx)
	assert.Error(t, err)
	assert.NotErrorIs(t, err, semaphore.ErrNotHeld)
	_, err = s.Holders(ctx)
	assert.Error(t, err)

	srv.Restart(t) // with an empty dataset: every permit is gone
	r := receive(t, waiter)
	require.NoError(t, r.err, "the blocked Acquire retried through the outage")
	require.Eventually(t, func() bool {
		_, err := s.TryAcquire(ctx)
		return errors.Is(err, semaphore.ErrNoPermit)
	}, 5*time.Second, 10*time.Millisecond, "the waiter holds the only permit")
	assert.NoError(t, r.p.Release(ctx))
	q, err := s.TryAcquire(ctx)
	require.NoError(t, err)
	assert.NoError(t, q.Release(ctx))
	assert.ErrorIs(t, p.Release(ctx), semaphore.ErrNotHeld, "the restart lost the old permit")
}

// TryAcquire and Release whose script ran, lost its reply, and whose
// re-sends were refused with LOADING (a restarting server): the outcome
// is unknown, and TryAcquire gives the permit back (it was answered as a
// plain refusal, and the permit stayed taken until its timeout).
func TestSemaphore_lostReplyThenLoading(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _ := b.NewClient()
		h := &redistest.ReplyLoser{Err: redistest.ErrLoading}
		rdb.AddHook(h)
		s := newSem(t, b, rdb, "sem", 1, time.Minute)

		h.Arm()
		_, err := s.TryAcquire(ctx)
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		assert.ErrorIs(t, err, redistest.ErrLoading)
		s.WaitGiveBacksForTest()
		n, err := s.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(0), n, "the permit granted before the reply was lost was given back")

		p, err := s.TryAcquire(ctx)
		require.NoError(t, err)
		h.Arm()
		assert.ErrorIs(t, p.Release(ctx), ria.ErrOutcomeUnknown, "the release ran; its answer was lost")
		s.WaitGiveBacksForTest()
		n, err = s.Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(0), n, "released")
	})
}
