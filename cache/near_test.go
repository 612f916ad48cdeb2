package cache_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/roundtrip"
)

// nearWait bounds the waits for an invalidation or a subscription: only a
// hang reaches it.
const nearWait = 20 * time.Second

// newNear returns a Cache[string] named "jobs" with a near cache of size
// entries and staleness bound maxStale on its own client (one "process"),
// subscribed, closed when the test ends.
func newNear(t *testing.T, b *redistest.Backend, rdb redis.UniversalClient, size int, maxStale time.Duration, opts ...cache.Option) *cache.Cache[string] {
	t.Helper()
	c, err := cache.New[string](rdb, "jobs", append([]cache.Option{cache.WithPrefix(b.Prefix),
		cache.WithLease(time.Minute), cache.WithNear(size, maxStale)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	waitNearReady(t, c)
	return c
}

func waitNearReady(t *testing.T, cs ...*cache.Cache[string]) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, c := range cs {
			if !c.NearReadyForTest() {
				return false
			}
		}
		return true
	}, nearWait, time.Millisecond, "near cache subscribed")
}

// process is one "process": its own client, counter and near cache.
type process struct {
	c   *cache.Cache[string]
	cnt *roundtrip.Counter
}

func newProcess(t *testing.T, b *redistest.Backend, size int, maxStale time.Duration, opts ...cache.Option) process {
	t.Helper()
	rdb, cnt := b.NewClient()
	return process{c: newNear(t, b, rdb, size, maxStale, opts...), cnt: cnt}
}

func constLoad(v string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return v, nil }
}

func noLoad(t *testing.T) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		t.Error("load called")
		return "", errors.New("unexpected load")
	}
}

// setHeard sets key to v through w and waits until r has heard the
// invalidation: a fill of r that begins later is not dropped by it.
func setHeard(t *testing.T, w, r *cache.Cache[string], key, v string) {
	t.Helper()
	heard := r.NearInvalidationsForTest()
	require.NoError(t, w.Set(t.Context(), key, v))
	require.Eventually(t, func() bool { return r.NearInvalidationsForTest() > heard }, nearWait, time.Millisecond)
}

// waitGone waits until c's near cache no longer serves key: an
// invalidation was heard.
func waitGone(t *testing.T, c *cache.Cache[string], key string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, ok := c.NearHasForTest(key)
		return !ok
	}, nearWait, time.Millisecond, "near entry %q invalidated", key)
}

// A hit in the near cache costs no round trip; a miss costs the Get's
// usual round trip (the entry and its PTTL in one), then fills it.
func TestNear_hitNoRoundTrip(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := newProcess(t, b, 100, time.Minute)
		require.NoError(t, p.c.Set(ctx, "k", "v1"))

		var got string
		rt, cmds := p.cnt.Delta(func() {
			var err error
			got, err = p.c.Get(ctx, "k", noLoad(t))
			require.NoError(t, err)
		})
		assert.Equal(t, "v1", got)
		assert.Equal(t, int64(1), rt, "near miss, Redis hit: one round trip")
		assert.Equal(t, int64(2), cmds, "SET NX PX GET and PTTL")

		for range 10 {
			rt, _ := p.cnt.Delta(func() {
				var err error
				got, err = p.c.Get(ctx, "k", noLoad(t))
				require.NoError(t, err)
			})
			assert.Equal(t, "v1", got)
			assert.Equal(t, int64(0), rt, "near hit")
		}

		// A miss that loads fills the near cache too.
		got, err := p.c.Get(ctx, "new", constLoad("loaded"))
		require.NoError(t, err)
		require.Equal(t, "loaded", got)
		rt, _ = p.cnt.Delta(func() {
			got, _ = p.c.Get(ctx, "new", noLoad(t))
		})
		assert.Equal(t, "loaded", got)
		assert.Equal(t, int64(0), rt)
	})
}

// A Set, a Delete and a loader's store in one process invalidate the near
// entry of another, round after round: once the invalidation has been
// heard, the other process never returns the old value.
func TestNear_invalidatesOtherProcess(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		a := newProcess(t, b, 100, time.Hour)
		o := newProcess(t, b, 100, time.Hour)

		setHeard(t, a.c, o.c, "k", "v0")
		got, err := o.c.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		require.Equal(t, "v0", got)
		for i := 1; i <= 30; i++ {
			_, ok := o.c.NearHasForTest("k")
			require.True(t, ok, "round %d: filled", i)
			want := fmt.Sprintf("v%d", i)
			heard := o.c.NearInvalidationsForTest()
			require.NoError(t, a.c.Set(ctx, "k", want))
			require.Eventually(t, func() bool { return o.c.NearInvalidationsForTest() > heard }, nearWait, time.Millisecond)
			_, ok = o.c.NearHasForTest("k")
			require.False(t, ok, "round %d: invalidated", i)
			rt, _ := o.cnt.Delta(func() {
				got, err = o.c.Get(ctx, "k", noLoad(t))
			})
			require.NoError(t, err)
			require.Equal(t, want, got, "round %d", i)
			assert.Equal(t, int64(1), rt, "round %d: read again from Redis", i)
		}

		// Delete.
		require.NoError(t, a.c.Delete(ctx, "k"))
		waitGone(t, o.c, "k")
		got, err = o.c.Get(ctx, "k", constLoad("reloaded"))
		require.NoError(t, err)
		assert.Equal(t, "reloaded", got)

		// A loader's store: the entry vanished from Redis behind the near
		// cache's back (eviction, a DEL by hand) and a new value is loaded.
		require.NoError(t, b.Client.Del(ctx, key(b, "jobs", "k", "val")).Err())
		_, ok := o.c.NearHasForTest("k")
		require.True(t, ok, "a DEL outside the package is not heard")
		got, err = a.c.Get(ctx, "k", constLoad("fresh"))
		require.NoError(t, err)
		require.Equal(t, "fresh", got)
		waitGone(t, o.c, "k")
		got, err = o.c.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		assert.Equal(t, "fresh", got)
	})
}

// A process's own Set and Delete drop its near entry before they return.
func TestNear_ownWrites(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := newProcess(t, b, 100, time.Hour)
		got, err := p.c.Get(ctx, "k", constLoad("v1"))
		require.NoError(t, err)
		require.Equal(t, "v1", got)
		_, ok := p.c.NearHasForTest("k")
		require.True(t, ok)

		require.NoError(t, p.c.Set(ctx, "k", "v2"))
		_, ok = p.c.NearHasForTest("k")
		assert.False(t, ok, "dropped by Set")
		got, err = p.c.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		assert.Equal(t, "v2", got)

		require.NoError(t, p.c.Delete(ctx, "k"))
		_, ok = p.c.NearHasForTest("k")
		assert.False(t, ok, "dropped by Delete")
		got, err = p.c.Get(ctx, "k", constLoad("v3"))
		require.NoError(t, err)
		assert.Equal(t, "v3", got)
		// Its own invalidations are not counted as heard.
		assert.Equal(t, int64(0), p.c.NearInvalidationsForTest())
	})
}

// The near cache holds at most size entries; CLOCK eviction gives a
// recently read entry a second chance.
func TestNear_sizeBound(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := newProcess(t, b, 4, time.Hour)
		for i := range 4 {
			_, err := p.c.Get(ctx, fmt.Sprint("k", i), constLoad(fmt.Sprint("v", i)))
			require.NoError(t, err)
		}
		assert.Equal(t, 4, p.c.NearLenForTest())
		rt, _ := p.cnt.Delta(func() {
			_, err := p.c.Get(ctx, "k0", noLoad(t)) // k0 referenced
			require.NoError(t, err)
		})
		require.Equal(t, int64(0), rt)
		_, err := p.c.Get(ctx, "k4", constLoad("v4"))
		require.NoError(t, err)
		assert.Equal(t, 4, p.c.NearLenForTest())
		assert.Equal(t, int64(1), p.c.NearEvictionsForTest())
		_, ok := p.c.NearHasForTest("k0")
		assert.True(t, ok, "k0 was read: second chance")
		_, ok = p.c.NearHasForTest("k1")
		assert.False(t, ok, "k1 evicted")
		_, ok = p.c.NearHasForTest("k4")
		assert.True(t, ok)

		for i := range 100 {
			_, err := p.c.Get(ctx, fmt.Sprint("m", i), constLoad("x"))
			require.NoError(t, err)
			require.LessOrEqual(t, p.c.NearLenForTest(), 4)
		}
		assert.Equal(t, int64(101), p.c.NearEvictionsForTest())
	})
}

// A near entry is served for at most maxStale after its read, and never
// past its fresh time in Redis as known then (TTL less the refresh window
// and grace), nor past a TTL set by hand.
func TestNear_ttlBound(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, cnt := b.NewClient()
		c, err := cache.New[string](rdb, "jobs", cache.WithPrefix(b.Prefix), cache.WithTTL(10*time.Second),
			cache.WithRefreshAhead(3*time.Second), cache.WithStaleGrace(time.Second), cache.WithNear(10, time.Minute))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		var mu sync.Mutex
		now := time.Now()
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		c.NearClockForTest(clock)
		waitNearReady(t, c)

		// Loaded: fresh for ttl - refresh = 7s from the Get's start.
		t0 := clock()
		_, err = c.Get(ctx, "loaded", constLoad("v"))
		require.NoError(t, err)
		until, ok := c.NearUntilForTest("loaded")
		require.True(t, ok)
		assert.Equal(t, t0.Add(7*time.Second), until)

		// Read from Redis: start + PTTL - refresh - grace (PTTL <= 11s).
		require.NoError(t, c.Set(ctx, "set", "v"))
		t1 := clock()
		_, err = c.Get(ctx, "set", noLoad(t))
		require.NoError(t, err)
		until, ok = c.NearUntilForTest("set")
		require.True(t, ok)
		assert.True(t, !until.After(t1.Add(7*time.Second)) && until.After(t1.Add(5*time.Second)), "until %v", until.Sub(t1))

		// A TTL set by hand (2.5s, as PX) bounds it too: 2.5s - 4s < 0, not cached.
		require.NoError(t, b.Client.Set(ctx, key(b, "jobs", "hand", "val"), `"h"`, 2500*time.Millisecond).Err())
		got, err := c.Get(ctx, "hand", constLoad("h2"))
		require.NoError(t, err)
		assert.Equal(t, "h", got)
		c.Wait() // its background refresh
		_, ok = c.NearUntilForTest("hand")
		assert.False(t, ok, "due for refresh: not cached")
		// No TTL at all (SET by hand): maxStale.
		require.NoError(t, b.Client.Set(ctx, key(b, "jobs", "forever", "val"), `"f"`, 0).Err())
		t2 := clock()
		_, err = c.Get(ctx, "forever", noLoad(t))
		require.NoError(t, err)
		until, ok = c.NearUntilForTest("forever")
		require.True(t, ok)
		assert.Equal(t, t2.Add(time.Minute), until)

		// Past its deadline an entry is read from Redis again.
		advance(7 * time.Second)
		rt, _ := cnt.Delta(func() {
			_, err = c.Get(ctx, "loaded", noLoad(t))
		})
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "expired in the near cache: read Redis")
	})
}

// Writes outside the package are not heard: the near cache serves the old
// value until maxStale after its read, then reads Redis.
func TestNear_maxStale(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, cnt := b.NewClient()
		c, err := cache.New[string](rdb, "jobs", cache.WithPrefix(b.Prefix), cache.WithNear(10, 2*time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		var mu sync.Mutex
		now := time.Now()
		c.NearClockForTest(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
		waitNearReady(t, c)

		require.NoError(t, c.Set(ctx, "k", "old"))
		_, err = c.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		require.NoError(t, b.Client.Set(ctx, key(b, "jobs", "k", "val"), `"new"`, time.Hour).Err())
		mu.Lock()
		now = now.Add(2*time.Second - time.Millisecond)
		mu.Unlock()
		got, err := c.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		assert.Equal(t, "old", got, "within maxStale: a write outside the package is not seen")
		mu.Lock()
		now = now.Add(time.Millisecond)
		mu.Unlock()
		rt, _ := cnt.Delta(func() { got, err = c.Get(ctx, "k", noLoad(t)) })
		require.NoError(t, err)
		assert.Equal(t, "new", got, "at maxStale: read again")
		assert.Equal(t, int64(1), rt)
	})
}

// A fill whose read came before an invalidation (heard from another
// process, or this process's own write) is dropped, even when it lands
// after the invalidation.
func TestNear_staleFillRace(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		a := newProcess(t, b, 100, time.Hour)
		rdb, _ := b.NewClient()
		c, err := cache.New[string](rdb, "jobs", cache.WithPrefix(b.Prefix), cache.WithNear(100, time.Hour))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		var hold atomic.Pointer[string]
		reached, release := make(chan struct{}), make(chan struct{})
		c.NearBeforeFillForTest(func(key string) {
			if h := hold.Load(); h != nil && *h == key {
				hold.Store(nil)
				reached <- struct{}{}
				<-release
			}
		})
		waitNearReady(t, c)

		for _, own := range []bool{false, true} {
			k := fmt.Sprint("race-", own)
			before := c.NearInvalidationsForTest()
			require.NoError(t, a.c.Set(ctx, k, "v1"))
			// Heard: a late one would drop the final fill below.
			require.Eventually(t, func() bool { return c.NearInvalidationsForTest() > before }, nearWait, time.Millisecond)
			heard := c.NearInvalidationsForTest()
			hold.Store(&k)
			reached, release = make(chan struct{}), make(chan struct{})
			type res struct {
				v   string
				err error
			}
			done := make(chan res, 1)
			go func() {
				v, err := c.Get(ctx, k, noLoad(t))
				done <- res{v, err}
			}()
			<-reached // read v1, not filled yet
			if own {
				require.NoError(t, c.Set(ctx, k, "v2"))
			} else {
				require.NoError(t, a.c.Set(ctx, k, "v2"))
				require.Eventually(t, func() bool { return c.NearInvalidationsForTest() > heard }, nearWait, time.Millisecond)
			}
			close(release)
			r := <-done
			require.NoError(t, r.err)
			assert.Equal(t, "v1", r.v, "the Get read before the Set")
			_, ok := c.NearHasForTest(k)
			assert.False(t, ok, "own=%v: the stale fill is dropped", own)
			got, err := c.Get(ctx, k, noLoad(t))
			require.NoError(t, err)
			assert.Equal(t, "v2", got, "own=%v", own)
			_, ok = c.NearHasForTest(k)
			assert.True(t, ok, "own=%v: a fill after the write lands", own)
		}
	})
}

// When the subscription breaks, the near cache is emptied (invalidations
// may have been missed) and unused until it is subscribed again; then
// invalidations work again.
func TestNear_subscriptionDropFlushes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		a := newProcess(t, b, 100, time.Hour)
		rdb, _, f := b.FaultyClient()
		c := newNear(t, b, rdb, 100, time.Hour)

		setHeard(t, a.c, c, "k", "v1")
		_, err := c.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		_, ok := c.NearHasForTest("k")
		require.True(t, ok)

		flushes := c.NearFlushesForTest()
		f.Cut()
		require.Eventually(t, func() bool { return c.NearFlushesForTest() > flushes }, nearWait, time.Millisecond, "flushed")
		_, ok = c.NearHasForTest("k")
		assert.False(t, ok, "emptied when the subscription broke")
		waitNearReady(t, c)

		got, err := c.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		assert.Equal(t, "v1", got)
		_, ok = c.NearHasForTest("k")
		require.True(t, ok, "filled again once subscribed")
		require.NoError(t, a.c.Set(ctx, "k", "v2"))
		waitGone(t, c, "k")
		got, err = c.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		assert.Equal(t, "v2", got)
	})
}

// A subscription whose connection stalls (the pong does not come back in
// time) is given up: the near cache is emptied, and used again once a new
// subscription is confirmed.
func TestNear_pingTimeoutFlushes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		c := newNear(t, b, rdb, 100, time.Hour)
		_, err := c.Get(ctx, "k", constLoad("v"))
		require.NoError(t, err)
		_, ok := c.NearHasForTest("k")
		require.True(t, ok)

		flushes := c.NearFlushesForTest()
		c.NearPingForTest(50 * time.Millisecond)
		f.Delay(time.Second) // replies and messages held back: the pong comes too late
		require.Eventually(t, func() bool { return c.NearFlushesForTest() > flushes }, nearWait, time.Millisecond, "flushed")
		_, ok = c.NearHasForTest("k")
		assert.False(t, ok, "emptied when the ping went unanswered")
		f.Delay(0) // (pings every 50ms from now on are answered in time)
		waitNearReady(t, c)
		got, err := c.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		assert.Equal(t, "v", got)
		_, ok = c.NearHasForTest("k")
		assert.True(t, ok, "used again once subscribed")
	})
}

// Many goroutines in three processes read and write a few keys at once;
// once the writers stop and the invalidations are delivered, every near
// cache agrees with Redis (maxStale is far longer than the wait, so only
// invalidations can make them agree).
func TestNear_concurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const keys, goroutines, ops = 8, 6, 150
		ps := []process{newProcess(t, b, 4, time.Hour), newProcess(t, b, 100, time.Hour), newProcess(t, b, 100, time.Hour)}
		var wg sync.WaitGroup
		errs := make(chan error, len(ps)*goroutines)
		var seq atomic.Int64
		for pi, p := range ps {
			for g := range goroutines {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(pi), uint64(g)))
					for range ops {
						k := fmt.Sprint("k", r.IntN(keys))
						var err error
						switch n := r.IntN(10); {
						case n < 6:
							_, err = p.c.Get(ctx, k, constLoad(fmt.Sprint("load-", seq.Add(1))))
						case n < 9:
							err = p.c.Set(ctx, k, fmt.Sprint("set-", seq.Add(1)))
						default:
							err = p.c.Delete(ctx, k)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		agree := func() error {
			for pi, p := range ps {
				for i := range keys {
					k := fmt.Sprint("k", i)
					near, ok := p.c.NearHasForTest(k)
					if !ok {
						continue
					}
					raw, err := b.Client.Get(ctx, key(b, "jobs", k, "val")).Result()
					if err != nil {
						return fmt.Errorf("process %d key %s: near %s, redis: %w", pi, k, near, err)
					}
					if raw != near {
						return fmt.Errorf("process %d key %s: near %s, redis %s", pi, k, near, raw)
					}
				}
			}
			return nil
		}
		var last error
		require.Eventually(t, func() bool { last = agree(); return last == nil }, nearWait, 5*time.Millisecond, "near caches agree with Redis: %v", &last)
		// And every Get now returns what Redis holds.
		for _, p := range ps {
			for i := range keys {
				k := fmt.Sprint("k", i)
				got, err := p.c.Get(ctx, k, constLoad("late"))
				require.NoError(t, err)
				raw, err := b.Client.Get(ctx, key(b, "jobs", k, "val")).Result()
				require.NoError(t, err)
				assert.Equal(t, raw, `"`+got+`"`)
			}
			assert.LessOrEqual(t, p.c.NearLenForTest(), 100)
		}
		assert.LessOrEqual(t, ps[0].c.NearLenForTest(), 4)
	})
}

// Close stops the subscriber goroutine (no goroutine left), empties the
// near cache and leaves a Cache that works without it; it is idempotent.
func TestNear_Close(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := newProcess(t, b, 10, time.Hour)
		_, err := p.c.Get(ctx, "k", constLoad("v"))
		require.NoError(t, err)
		require.Equal(t, 1, p.c.NearLenForTest())
		require.Positive(t, nearGoroutines(), "the subscriber runs")

		require.NoError(t, p.c.Close())
		// Close has waited for the subscriber to finish; the goroutine
		// leaves its frame just after.
		require.Eventually(t, func() bool { return nearGoroutines() == 0 }, nearWait, time.Millisecond, "no subscriber goroutine after Close")
		assert.Equal(t, 0, p.c.NearLenForTest())
		require.NoError(t, p.c.Close())

		rt, _ := p.cnt.Delta(func() {
			got, err := p.c.Get(ctx, "k", noLoad(t))
			require.NoError(t, err)
			assert.Equal(t, "v", got)
		})
		assert.Equal(t, int64(1), rt, "no near cache after Close")
		assert.Equal(t, 0, p.c.NearLenForTest(), "not filled after Close")

		plain, err := cache.New[string](b.Client, "plain", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		assert.NoError(t, plain.Close())
	})
}

// nearGoroutines counts the goroutines running a near cache's subscriber
// of this test: tests of this package that use near caches do not run in
// parallel, so it is 0 once every such Cache of the test is closed.
func nearGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Count(string(buf), "near.(*Cache).Run(")
}

// WithNear's bad input is refused by New, naming what is wrong.
func TestNear_badInput(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for _, tc := range []struct {
		opt  cache.Option
		want string
	}{
		{cache.WithNear(0, time.Second), "near cache size 0: must be 1 to"},
		{cache.WithNear(-1, time.Second), "near cache size -1"},
		{cache.WithNear(cache.MaxN+1, time.Second), "must be 1 to 1048576"},
		{cache.WithNear(10, 0), "near cache max staleness 0s: must be at least 1ms"},
		{cache.WithNear(10, -time.Second), "must be at least 1ms"},
		{cache.WithNear(10, cache.MaxDuration+1), "must be at most"},
	} {
		c, err := cache.New[string](rdb, "jobs", tc.opt)
		assert.Nil(t, c)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer ring.Close()
	_, err := cache.New[string](ring, "jobs", cache.WithNear(10, time.Second))
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "*redis.Ring is not supported")
	}
	_, err = cache.New[string](noSubscribe{rdb}, "jobs", cache.WithNear(10, time.Second))
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "has no Subscribe method")
	}
	_, err = cache.NewCounter(rdb, "views", nil, cache.WithNear(10, time.Second))
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "option WithNear does not apply")
	}
	require.Eventually(t, func() bool { return nearGoroutines() == 0 }, nearWait, time.Millisecond, "a refused New starts nothing")
}

// noSubscribe is a Client without Subscribe.
type noSubscribe struct{ cache.Client }

// Round after round, once a Set in process A has returned, process B
// returns the old value only within the documented bound (maxStale after
// the Set returned), and then the new one.
func TestNear_staleBound_rounds(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const maxStale = 2 * time.Second
		a := newProcess(t, b, 100, maxStale)
		o := newProcess(t, b, 100, maxStale)
		require.NoError(t, a.c.Set(ctx, "k", "v0"))
		var oldReads, nearHits int
		var lat []time.Duration // Set returned -> B reads the new value
		for i := 1; i <= 50; i++ {
			old, want := fmt.Sprintf("v%d", i-1), fmt.Sprintf("v%d", i)
			// B holds the old value (read from Redis or its near cache).
			for {
				got, err := o.c.Get(ctx, "k", noLoad(t))
				require.NoError(t, err)
				if got == old {
					break
				}
				require.Equal(t, fmt.Sprintf("v%d", i-2), got, "round %d: an older value, within the bound", i)
			}
			if _, ok := o.c.NearHasForTest("k"); ok {
				nearHits++
			}
			require.NoError(t, a.c.Set(ctx, "k", want))
			setEnd := time.Now()
			for {
				before := time.Now()
				got, err := o.c.Get(ctx, "k", noLoad(t))
				require.NoError(t, err)
				if got == want {
					lat = append(lat, time.Since(setEnd))
					break
				}
				require.Equal(t, old, got, "round %d", i)
				require.Less(t, before.Sub(setEnd), maxStale, "round %d: old value served past maxStale", i)
				oldReads++
				runtime.Gosched()
			}
		}
		slices.Sort(lat)
		t.Logf("50 rounds: B held the old value in its near cache %d times; %d reads of the old value after the Set returned, each within the bound; "+
			"Set returned -> B reads the new value: median %v, max %v", nearHits, oldReads, lat[len(lat)/2], lat[len(lat)-1])
		assert.Positive(t, nearHits, "the near cache was in use")
	})
}

// With a near cache, the writes and Get still meet a key of the wrong type
// with a *ria.KeyError and change nothing: no invalidation is published
// either.
func TestNear_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newProcess(t, b, 100, time.Hour, cache.WithStaleGrace(time.Minute)).c
		o := newProcess(t, b, 100, time.Hour).c
		val, lease := key(b, "jobs", "k", "val"), key(b, "jobs", "k", "lease")
		entry := redistest.KeyRole{Key: val, Type: "string", Role: "cache entry"}
		refreshLease := redistest.KeyRole{Key: lease, Type: "string", Role: "cache refresh lease"}
		wakeList := redistest.KeyRole{Key: key(b, "jobs", "k", "wake:other"), Type: "list", Role: "cache wake list"}
		holding := func() {
			require.NoError(t, b.Client.Set(ctx, val, cache.MarkerForTest("other", true), time.Minute).Err())
		}
		heard := o.NearInvalidationsForTest()
		b.CheckWrongTypes(t, holding, func() error { return c.Set(ctx, "k", "v") }, entry, refreshLease, wakeList)
		b.CheckWrongTypes(t, holding, func() error { return c.Delete(ctx, "k") }, entry, refreshLease, wakeList)
		b.CheckWrongTypes(t, func() {}, func() error { _, err := c.Get(ctx, "k", constLoad("v")); return err }, entry)
		// A Set that does publish, after those: o hears it, and nothing
		// before it.
		require.NoError(t, c.Set(ctx, "fence", "v"))
		require.Eventually(t, func() bool { return o.NearInvalidationsForTest() > heard }, nearWait, time.Millisecond)
		assert.Equal(t, heard+1, o.NearInvalidationsForTest(), "the refused writes published nothing")
		assert.Equal(t, 0, c.NearLenForTest(), "nothing cached from a refused call")
	})
}

// A loader that panics ends its near-cache fill: nothing stays counted as
// filling (the key's bookkeeping stayed in the near cache for good), and the
// next Get fills the near cache as usual.
func TestNear_loaderPanics(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newNear(t, b, b.Client, 10, time.Minute)
		assert.Panics(t, func() {
			_, _ = c.Get(ctx, "k", func(context.Context) (string, error) { panic("loader bug") })
		})
		assert.Zero(t, c.NearFillingForTest(), "fills in progress after the panic")
		v, err := c.Get(ctx, "k", func(context.Context) (string, error) { return "ok", nil })
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
		assert.Zero(t, c.NearFillingForTest())
		got, ok := c.NearHasForTest("k")
		assert.True(t, ok)
		assert.Equal(t, `"ok"`, got)
	})
}
