package cache_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

type job struct {
	ID    int      `json:"id"`
	Title string   `json:"title"`
	Tags  []string `json:"tags"`
}

// A miss calls load once and stores the value; a hit does not call it.
// Round trips: hit 1, miss 2 (read and lease, store).
func TestCache_Get_hitMiss(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[job](t, b.Client, b)
		var loads atomic.Int64
		load := func(context.Context) (job, error) {
			loads.Add(1)
			return job{ID: 42, Title: "Gopher", Tags: []string{"go"}}, nil
		}
		// Cache the scripts on the server (on Cluster: on the node of "42").
		_, err := c.Get(ctx, "42", load)
		require.NoError(t, err)
		require.NoError(t, c.Delete(ctx, "42"))
		loads.Store(0)

		var got job
		rt, cmds := b.Count.Delta(func() { got, err = c.Get(ctx, "42", load) })
		require.NoError(t, err)
		assert.Equal(t, job{ID: 42, Title: "Gopher", Tags: []string{"go"}}, got)
		assert.Equal(t, int64(1), loads.Load())
		assert.Equal(t, int64(2), rt, "miss: read and take the lease (SET NX GET), store")
		assert.Equal(t, int64(2), cmds, "SET NX GET, then the store's EVALSHA")
		assert.JSONEq(t, `{"id":42,"title":"Gopher","tags":["go"]}`, raw(t, b, key(b, "jobs", "42", "val")))
		assert.Equal(t, []string{key(b, "jobs", "42", "val")}, b.Keys(""),
			"nobody waited: no wake list, no refresh lease, no record")

		rt, cmds = b.Count.Delta(func() { got, err = c.Get(ctx, "42", load) })
		require.NoError(t, err)
		assert.Equal(t, 42, got.ID)
		assert.Equal(t, int64(1), loads.Load(), "served from the cache")
		assert.Equal(t, int64(1), rt, "hit")
		assert.Equal(t, int64(1), cmds, "one command: SET NX GET, which answers a hit as a GET does")

		// With refresh ahead, a hit reads the TTL in the same round trip.
		r := newCache[job](t, b.Client, b, cache.WithRefreshAhead(time.Second))
		rt, cmds = b.Count.Delta(func() { got, err = r.Get(ctx, "42", load) })
		require.NoError(t, err)
		assert.Equal(t, 42, got.ID)
		assert.Equal(t, int64(1), rt, "hit with refresh ahead")
		assert.Equal(t, int64(2), cmds, "SET NX GET and PTTL")
		assert.Empty(t, b.Keys(key(b, "jobs", "42", "lease")), "no refresh lease left")
		assert.Equal(t, []string{key(b, "jobs", "42", "val")}, b.Keys(""), "the entry only: no marker, no wake list")
	})
}

func TestCache_Get_ttlExpiry(t *testing.T) {
	t.Parallel() // waits out TTLs on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b, cache.WithTTL(300*time.Millisecond))
		l := newGatedLoader(t)
		start := time.Now()
		v, err := c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "v1", v)
		pttl, err := b.Client.PTTL(ctx, key(b, "jobs", "k", "val")).Result()
		require.NoError(t, err)
		// Stored with PX 300 during the Get: what is left is 300ms less
		// the time since (however slow the machine is).
		assert.LessOrEqual(t, pttl, 300*time.Millisecond)
		if b.Real() {
			assert.GreaterOrEqual(t, pttl, 300*time.Millisecond-time.Since(start)-time.Millisecond)
		} else {
			assert.Equal(t, 300*time.Millisecond, pttl, "miniredis's clock stands still")
		}

		b.FastForward(400 * time.Millisecond)
		v, err = c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "v2", v, "reloaded after the TTL")
		assert.Equal(t, int64(2), l.calls.Load())
	})
}

// 100 callers over two clients miss the same key at once, each through a
// Cache of its own (as if in 100 processes): exactly one load; the others
// register, block until it stores and receive its value.
func TestCache_Get_stampede(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		const callers = 100
		ctx := t.Context()
		var counts []interface{ RoundTrips() int64 }
		caches := make([]*cache.Cache[string], callers)
		for i := range 2 {
			rdb, cnt := b.NewClient()
			counts = append(counts, cnt)
			for j := i; j < callers; j += 2 {
				caches[j] = newCache[string](t, rdb, b)
			}
			// Cache the scripts on the server (on Cluster: on the node of "hot").
			_, err := caches[i].Get(ctx, "hot", func(context.Context) (string, error) { return "w", nil })
			require.NoError(t, err)
			require.NoError(t, caches[i].Delete(ctx, "hot"))
			require.NoError(t, caches[i].WarmWaitForTest(ctx, "hot"))
		}
		rt0 := counts[0].RoundTrips() + counts[1].RoundTrips()
		l := newGatedLoader(t, 1)
		type result struct {
			v   string
			err error
		}
		results := make(chan result, callers)
		for i := range callers {
			go func() {
				v, err := caches[i].Get(ctx, "hot", l.load)
				results <- result{v, err}
			}()
		}
		waitForWaiters(t, callers-1, caches...)
		l.open()
		for range callers {
			r := <-results
			require.NoError(t, r.err)
			assert.Equal(t, "v1", r.v)
		}
		assert.Equal(t, int64(1), l.calls.Load(), "exactly one load")
		rt := counts[0].RoundTrips() + counts[1].RoundTrips() - rt0
		assert.Equal(t, int64(2+3*(callers-1)), rt, "the loader 2 round trips: read and lease, store; each waiter 3: read, register, wait")
	})
}

// Concurrent Gets of one key on one Cache share one look and one load.
func TestCache_Get_coalesced(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		const callers = 50
		ctx := t.Context()
		c := newCache[job](t, b.Client, b)
		gate := make(chan struct{})
		var loads atomic.Int64
		load := func(context.Context) (job, error) {
			loads.Add(1)
			<-gate
			return job{ID: 1, Tags: []string{"a"}}, nil
		}
		type result struct {
			v   job
			err error
		}
		results := make(chan result, callers)
		rt0 := b.Count.RoundTrips()
		for range callers {
			go func() {
				v, err := c.Get(ctx, "k", load)
				results <- result{v, err}
			}()
		}
		require.Eventually(t, func() bool { return loads.Load() == 1 }, 20*time.Second, time.Millisecond)
		close(gate)
		var first job
		for i := range callers {
			r := <-results
			require.NoError(t, r.err)
			assert.Equal(t, 1, r.v.ID)
			if i == 0 {
				first = r.v
			} else {
				assert.NotSame(t, &first.Tags[0], &r.v.Tags[0], "each caller its own copy")
			}
		}
		assert.Equal(t, int64(1), loads.Load())
		rt := b.Count.RoundTrips() - rt0
		// Callers that join the first Get cost nothing; one that starts
		// after it ended makes a hit (1). The first EVALSHAs cost 2 more.
		assert.LessOrEqual(t, rt, int64(3+2+callers))
		t.Logf("%d callers, %d round trips", callers, rt)
	})
}

// A value larger than what travels in the wake list: waiters are woken and
// read it from the entry.
func TestCache_Get_stampede_largeValue(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		big := strings.Repeat("x", 100<<10)
		var loads atomic.Int64
		gate := make(chan struct{})
		load := func(context.Context) (string, error) {
			loads.Add(1)
			<-gate
			return big, nil
		}
		errs := make(chan error, 4)
		var caches []*cache.Cache[string]
		for range 4 {
			c := newCache[string](t, b.Client, b) // one per "process": no coalescing
			caches = append(caches, c)
			go func() {
				v, err := c.Get(ctx, "big", load)
				if err == nil && v != big {
					err = errors.New("wrong value")
				}
				errs <- err
			}()
		}
		waitForWaiters(t, 3, caches...)
		close(gate)
		for range 4 {
			assert.NoError(t, <-errs)
		}
		assert.Equal(t, int64(1), loads.Load())
	})
}

// A failed load returns its error, stores nothing, and lets the next caller
// load at once; a waiter takes over without waiting for the lease.
func TestCache_Get_loaderError(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b, cache.WithLease(time.Minute))
		boom := errors.New("boom")
		l := newGatedLoader(t)
		l.err[1] = boom
		_, err := c.Get(ctx, "k", l.load)
		assert.ErrorIs(t, err, boom)
		assert.ErrorContains(t, err, `cache: get "k": load: boom`)
		assert.Empty(t, b.Keys(""), "nothing stored, lease given back")

		v, err := c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "v2", v, "the next call loads again")

		// A waiter takes over at once when the loader fails.
		require.NoError(t, c.Delete(ctx, "k"))
		l2 := newGatedLoader(t, 1)
		l2.err[1] = boom
		first := make(chan error, 1)
		go func() {
			_, err := c.Get(ctx, "k", l2.load)
			first <- err
		}()
		require.Eventually(t, func() bool { return l2.calls.Load() == 1 }, 20*time.Second, time.Millisecond)
		second := make(chan string, 1)
		other := newCache[string](t, b.Client, b, cache.WithLease(time.Minute)) // another process
		go func() {
			v, err := other.Get(ctx, "k", l2.load)
			if err != nil {
				v = err.Error()
			}
			second <- v
		}()
		waitForWaiters(t, 1, other)
		start := time.Now()
		l2.open()
		assert.ErrorIs(t, <-first, boom)
		assert.Equal(t, "v2", <-second, "the waiter loaded in place of the failed loader")
		assert.Less(t, time.Since(start), 10*time.Second, "not after the 1 minute lease")
	})
}

// A loader that hangs (or whose process died) holds the lease until it
// ends; then a waiter takes over. The hung load's late value is not stored.
func TestCache_Get_loaderHangs(t *testing.T) {
	t.Parallel() // waits out TTLs on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const lease = time.Second
		c := newCache[string](t, b.Client, b, cache.WithLease(lease))
		l := newGatedLoader(t, 1)
		hung := make(chan string, 1)
		go func() {
			v, _ := c.Get(ctx, "k", l.load)
			hung <- v
		}()
		require.Eventually(t, func() bool { return l.calls.Load() == 1 }, 20*time.Second, time.Millisecond)

		rdb2, _ := b.NewClient()
		const waiters = 5
		got := make(chan string, waiters)
		var others []*cache.Cache[string]
		var finished atomic.Int64
		for range waiters {
			c2 := newCache[string](t, rdb2, b, cache.WithLease(lease)) // one per process
			others = append(others, c2)
			go func() {
				v, err := c2.Get(ctx, "k", l.load)
				if err != nil {
					v = err.Error()
				}
				finished.Add(1)
				got <- v
			}()
		}
		// Every waiter waits for the hung loader. (On a real server the
		// lease runs out in real time: one so slow to start that it comes
		// after the takeover finds the value instead.)
		require.Eventually(t, func() bool {
			n := finished.Load()
			for _, o := range others {
				n += o.WaitingForTest()
			}
			return n == waiters
		}, 20*time.Second, time.Millisecond)
		b.FastForward(lease + 100*time.Millisecond) // the lease ends
		for range waiters {
			assert.Equal(t, "v2", <-got)
		}
		assert.Equal(t, int64(2), l.calls.Load(), "one takeover")

		l.open() // the hung loader finally returns
		assert.Equal(t, "v1", <-hung, "its caller gets its own value")
		assert.Equal(t, `"v2"`, raw(t, b, key(b, "jobs", "k", "val")), "but it is not stored")
	})
}

// Within the refresh window a Get returns the current value at once and one
// caller reloads it in the background.
func TestCache_Get_refreshAhead(t *testing.T) {
	t.Parallel() // waits out TTLs on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b, cache.WithTTL(3*time.Second), cache.WithRefreshAhead(2500*time.Millisecond))
		l := newGatedLoader(t, 2)
		v, err := c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		require.Equal(t, "v1", v)
		v, err = c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "v1", v)
		assert.Equal(t, int64(1), l.calls.Load(), "fresh: no refresh")

		b.FastForward(time.Second) // 2s left: within the window
		for range 10 {
			v, err = c.Get(ctx, "k", l.load)
			require.NoError(t, err)
			assert.Equal(t, "v1", v, "the current value, at once")
		}
		require.Eventually(t, func() bool { return l.calls.Load() == 2 }, 20*time.Second, time.Millisecond)
		assert.Equal(t, int64(2), l.calls.Load(), "one background refresh")
		opened := time.Now()
		l.open()
		c.Wait()
		assert.Equal(t, `"v2"`, raw(t, b, key(b, "jobs", "k", "val")))
		pttl, err := b.Client.PTTL(ctx, key(b, "jobs", "k", "val")).Result()
		require.NoError(t, err)
		// A fresh TTL: stored with PX 3000 after opened (the old one had
		// at most 2s left).
		assert.LessOrEqual(t, pttl, 3*time.Second)
		assert.GreaterOrEqual(t, pttl, 3*time.Second-time.Since(opened)-time.Millisecond, "a fresh TTL")
		v, err = c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "v2", v)
		assert.Equal(t, int64(2), l.calls.Load())
	})
}

// Past its TTL, within the grace, an entry is served stale while one caller
// reloads it in the background.
func TestCache_Get_staleWhileRevalidate(t *testing.T) {
	t.Parallel() // waits out TTLs on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b, cache.WithTTL(300*time.Millisecond), cache.WithStaleGrace(3*time.Second))
		l := newGatedLoader(t, 2)
		_, err := c.Get(ctx, "k", l.load)
		require.NoError(t, err)

		b.FastForward(time.Second) // stale, within the grace
		rdb2, _ := b.NewClient()
		c2 := newCache[string](t, rdb2, b, cache.WithTTL(300*time.Millisecond), cache.WithStaleGrace(3*time.Second))
		for i := range 10 {
			v, err := []*cache.Cache[string]{c, c2}[i%2].Get(ctx, "k", l.load)
			require.NoError(t, err)
			assert.Equal(t, "v1", v, "stale value, at once")
		}
		require.Eventually(t, func() bool { return l.calls.Load() == 2 }, 20*time.Second, time.Millisecond)
		l.open()
		c.Wait()
		c2.Wait()
		assert.Equal(t, int64(2), l.calls.Load(), "refreshed once")
		v, err := c2.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "v2", v)
	})
}

// A failing background refresh leaves the old value in place and is not
// retried on every Get.
func TestCache_Get_refreshFails(t *testing.T) {
	t.Parallel() // waits out TTLs on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b, cache.WithTTL(300*time.Millisecond), cache.WithStaleGrace(5*time.Second))
		l := newGatedLoader(t)
		l.err[2] = errors.New("db down")
		_, err := c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		b.FastForward(400 * time.Millisecond)
		v, err := c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "v1", v)
		c.Wait()
		require.Equal(t, int64(2), l.calls.Load())
		for range 5 {
			v, err = c.Get(ctx, "k", l.load)
			require.NoError(t, err)
			assert.Equal(t, "v1", v)
		}
		c.Wait()
		assert.Equal(t, int64(2), l.calls.Load(), "no retry while the failed refresh holds the lease")
		b.FastForward(1100 * time.Millisecond)
		_, err = c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		c.Wait()
		assert.Equal(t, int64(3), l.calls.Load(), "retried after a second")
		assert.Equal(t, `"v3"`, raw(t, b, key(b, "jobs", "k", "val")))
	})
}

func TestCache_SetDelete(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b)
		l := newGatedLoader(t)
		// Cache the scripts on the server (on Cluster: on the node of "k").
		require.NoError(t, c.Set(ctx, "k", "warm-up"))
		require.NoError(t, c.Delete(ctx, "k"))

		var err error
		rt, _ := b.Count.Delta(func() { err = c.Set(ctx, "k", "set") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "Set")
		v, err := c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "set", v)
		assert.Zero(t, l.calls.Load())

		rt, _ = b.Count.Delta(func() { err = c.Delete(ctx, "k") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "Delete")
		assert.Empty(t, b.Keys(""))
		v, err = c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "v1", v)
		require.NoError(t, c.Delete(ctx, "missing"), "deleting nothing is fine")
	})
}

// A Set during a load wins: the waiters receive the Set value, and the
// loader's value (maybe read before the change) is not stored.
func TestCache_Set_duringLoad(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b)
		l := newGatedLoader(t, 1)
		loaded := make(chan string, 1)
		go func() {
			v, _ := c.Get(ctx, "k", l.load)
			loaded <- v
		}()
		require.Eventually(t, func() bool { return l.calls.Load() == 1 }, 20*time.Second, time.Millisecond)
		waiter := make(chan string, 1)
		other := newCache[string](t, b.Client, b) // another process
		go func() {
			v, _ := other.Get(ctx, "k", l.load)
			waiter <- v
		}()
		waitForWaiters(t, 1, other)
		require.NoError(t, c.Set(ctx, "k", "set"))
		assert.Equal(t, "set", <-waiter)
		l.open()
		assert.Equal(t, "v1", <-loaded)
		assert.Equal(t, `"set"`, raw(t, b, key(b, "jobs", "k", "val")))
		assert.Equal(t, int64(1), l.calls.Load())
	})
}

// A Delete during a load: waiters look again and one loads; the first
// loader's value is not stored.
func TestCache_Delete_duringLoad(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b)
		l := newGatedLoader(t, 1)
		loaded := make(chan string, 1)
		go func() {
			v, _ := c.Get(ctx, "k", l.load)
			loaded <- v
		}()
		require.Eventually(t, func() bool { return l.calls.Load() == 1 }, 20*time.Second, time.Millisecond)
		waiter := make(chan string, 1)
		other := newCache[string](t, b.Client, b) // another process
		go func() {
			v, _ := other.Get(ctx, "k", l.load)
			waiter <- v
		}()
		waitForWaiters(t, 1, other)
		require.NoError(t, c.Delete(ctx, "k"))
		assert.Equal(t, "v2", <-waiter, "the waiter loaded after the Delete")
		l.open()
		assert.Equal(t, "v1", <-loaded)
		assert.Equal(t, `"v2"`, raw(t, b, key(b, "jobs", "k", "val")))
	})
}

// A waiter whose ctx ends returns at once with the ctx error.
func TestCache_Get_waiterCtx(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		c := newCache[string](t, b.Client, b)
		l := newGatedLoader(t, 1)
		go func() { _, _ = c.Get(t.Context(), "k", l.load) }()
		require.Eventually(t, func() bool { return l.calls.Load() == 1 }, 20*time.Second, time.Millisecond)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		other := newCache[string](t, b.Client, b) // another process
		go func() {
			_, err := other.Get(ctx, "k", l.load)
			done <- err
		}()
		waitForWaiters(t, 1, other)
		cancel()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("waiter did not return after its ctx ended")
		}
		l.open()
	})
}

// An entry that does not decode into T is a miss for Get: it is reloaded
// and overwritten. Batch reads without a loader report ErrDecode.
func TestCache_Get_undecodable(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[job](t, b.Client, b)
		k := key(b, "jobs", "7", "val")
		require.NoError(t, b.Client.Set(ctx, k, "not json", time.Minute).Err())

		bt := cache.NewBatch(b.Client)
		r := c.Read(bt, "7", nil)
		require.ErrorIs(t, bt.Exec(ctx), cache.ErrDecode)
		_, ok, err := r.Value()
		assert.False(t, ok)
		assert.ErrorIs(t, err, cache.ErrDecode)
		assert.ErrorContains(t, err, `cache: read "7" (cache jobs)`)

		var loads atomic.Int64
		got, err := c.Get(ctx, "7", func(context.Context) (job, error) {
			loads.Add(1)
			return job{ID: 7}, nil
		})
		require.NoError(t, err)
		assert.Equal(t, 7, got.ID)
		assert.Equal(t, int64(1), loads.Load())
		assert.JSONEq(t, `{"id":7,"title":"","tags":null}`, raw(t, b, k), "overwritten")
	})
}

// A panicking loader gives its lease back: the panic reaches the caller,
// and the next caller loads without waiting for the lease.
func TestCache_Get_loaderPanics(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b, cache.WithLease(time.Minute))
		assert.Panics(t, func() {
			_, _ = c.Get(ctx, "k", func(context.Context) (string, error) { panic("loader bug") })
		})
		assert.Empty(t, b.Keys(""), "lease given back")
		v, err := c.Get(ctx, "k", func(context.Context) (string, error) { return "ok", nil })
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
	})
}

// Encoding errors are returned and nothing is stored.
func TestCache_encodeError(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[func()](t, b.Client, b)
		_, err := c.Get(ctx, "k", func(context.Context) (func(), error) { return func() {}, nil })
		assert.ErrorContains(t, err, "encode")
		assert.ErrorContains(t, c.Set(ctx, "k", func() {}), "encode")
		assert.Empty(t, b.Keys(""))
	})
}

func TestCache_concurrentKeys(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[int](t, b.Client, b)
		var loads sync.Map
		var wg sync.WaitGroup
		errs := make(chan error, 200)
		for i := range 200 {
			wg.Go(func() {
				k := string(rune('a' + i%10))
				v, err := c.Get(ctx, k, func(context.Context) (int, error) {
					n, _ := loads.LoadOrStore(k, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
					return i % 10, nil
				})
				if err == nil && v != i%10 {
					err = errors.New("wrong value for " + k)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		loads.Range(func(k, n any) bool {
			assert.Equal(t, int64(1), n.(*atomic.Int64).Load(), "loads of %v", k)
			return true
		})
	})
}

// A Set or Delete during a load reaches the Gets of the loader's own
// process too: those that joined its Get look again at once (and receive
// the Set value, or load again after a Delete), and a Get that starts after
// the Set or Delete returned does not join it. The loader's own caller still
// gets its value, which is not stored.
func TestCache_SetDelete_duringLoad_sameProcess(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		for _, op := range []string{"set", "delete"} {
			t.Run(op, func(t *testing.T) {
				ctx := t.Context()
				c := newCache[string](t, b.Client, b)
				l := newGatedLoader(t, 1)
				get := func() <-chan string { return getAsync(ctx, c, op, l.load) }
				loader := get()
				require.Eventually(t, func() bool { return l.calls.Load() == 1 }, 20*time.Second, time.Millisecond)
				joined := get()
				require.Eventually(t, func() bool { return c.FollowingForTest() == 1 }, 20*time.Second, time.Millisecond)

				want := "set"
				if op == "set" {
					require.NoError(t, c.Set(ctx, op, "set"))
				} else {
					require.NoError(t, c.Delete(ctx, op))
					want = "v2" // loaded again, not the load in flight
				}
				later := get()
				assert.Equal(t, want, recv(t, joined, 10*time.Second, l.open), "a Get that had joined the load")
				assert.Equal(t, want, recv(t, later, 10*time.Second, l.open), "a Get started after the %s", op)
				l.open()
				assert.Equal(t, "v1", <-loader, "the loader's caller gets its value")
				assert.Equal(t, `"`+want+`"`, raw(t, b, key(b, "jobs", op, "val")), "which is not stored")
				v, err := c.Get(ctx, op, l.load)
				require.NoError(t, err)
				assert.Equal(t, want, v)
			})
		}
	})
}

// getAsync runs c.Get(ctx, key, load) in a goroutine; the channel gives its
// value, or its error's text.
func getAsync(ctx context.Context, c *cache.Cache[string], key string, load func(context.Context) (string, error)) <-chan string {
	ch := make(chan string, 1)
	go func() {
		v, err := c.Get(ctx, key, load)
		if err != nil {
			v = err.Error()
		}
		ch <- v
	}()
	return ch
}

// A Set or Delete by another process during a load of this one ends its
// lease: the load's value is not stored, and the Gets of this process that
// joined that load, before or after the Set or Delete returned, look again
// once it returns (the Set value, or a load after the Delete). The
// loader's own caller still gets its value.
func TestCache_SetDelete_duringLoad_otherProcess(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		for _, op := range []string{"set", "delete"} {
			t.Run(op, func(t *testing.T) {
				ctx := t.Context()
				c := newCache[string](t, b.Client, b)
				rdb, _ := b.NewClient()
				other := newCache[string](t, rdb, b) // another process
				l := newGatedLoader(t, 1)
				get := func() <-chan string { return getAsync(ctx, c, op, l.load) }
				loader := get()
				require.Eventually(t, func() bool { return l.calls.Load() == 1 }, 20*time.Second, time.Millisecond)
				before := get()
				require.Eventually(t, func() bool { return c.FollowingForTest() == 1 }, 20*time.Second, time.Millisecond)

				want, loads := "set", int64(1)
				if op == "set" {
					require.NoError(t, other.Set(ctx, op, "set"))
				} else {
					require.NoError(t, other.Delete(ctx, op))
					want, loads = "v2", 2 // loaded again, not the load in flight
				}
				after := get()
				require.Eventually(t, func() bool { return c.FollowingForTest() == 2 }, 20*time.Second, time.Millisecond,
					"a Get started after the %s joins the load (this process cannot know of it)", op)
				l.open()
				assert.Equal(t, "v1", recv(t, loader, 10*time.Second, nil), "the loader's caller gets its value")
				assert.Equal(t, want, recv(t, before, 10*time.Second, nil), "a Get that joined the load before the %s", op)
				assert.Equal(t, want, recv(t, after, 10*time.Second, nil), "a Get started after the %s", op)
				assert.Equal(t, loads, l.calls.Load())
				assert.Equal(t, `"`+want+`"`, raw(t, b, key(b, "jobs", op, "val")), "the load's value is not stored")
			})
		}
	})
}

// A load that returns as its caller's ctx ends is still stored, and its
// waiters receive it at once; if the store fails, the lease is given back
// and a waiter loads at once. Neither leaves the waiters to sit out the
// lease.
func TestCache_Get_storeAfterCtxEnds(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		for _, storeFails := range []bool{false, true} {
			name := map[bool]string{false: "stored", true: "storeFails"}[storeFails]
			t.Run(name, func(t *testing.T) {
				ctx := t.Context()
				rdb, _ := b.NewClient()
				hook := &failNextScript{}
				rdb.AddHook(hook)
				c := newCache[string](t, rdb, b, cache.WithLease(time.Minute))
				other := newCache[string](t, b.Client, b, cache.WithLease(time.Minute)) // another process
				lctx, cancel := context.WithCancel(ctx)
				defer cancel()
				l := newGatedLoader(t, 1)
				loaded := make(chan error, 1)
				go func() {
					v, err := c.Get(lctx, name, func(ctx context.Context) (string, error) {
						v, err := l.load(ctx)
						cancel() // the request ends as the system of record answers
						hook.armed.Store(storeFails)
						return v, err
					})
					if err == nil && v != "v1" {
						err = errors.New("got " + v)
					}
					loaded <- err
				}()
				require.Eventually(t, func() bool { return l.calls.Load() == 1 }, 20*time.Second, time.Millisecond)
				waiter := make(chan string, 1)
				go func() {
					v, err := other.Get(ctx, name, l.load)
					if err != nil {
						v = err.Error()
					}
					waiter <- v
				}()
				waitForWaiters(t, 1, other)
				l.open()
				assert.NoError(t, <-loaded, "the loader's caller gets its value")
				want := "v1"
				if storeFails {
					want = "v2" // the waiter took over
				}
				assert.Equal(t, want, recv(t, waiter, 10*time.Second, nil), "not after the 1 minute lease")
				assert.Equal(t, `"`+want+`"`, raw(t, b, key(b, "jobs", name, "val")))
				assert.Empty(t, b.Keys(key(b, "jobs", name, "lease")), "no lease left") // and val holds the value, not a marker
				for _, k := range b.Keys(key(b, "jobs", name, "wake:*")) {
					pttl, err := b.Client.PTTL(ctx, k).Result()
					require.NoError(t, err)
					assert.Greater(t, pttl, time.Duration(0), "a wake list lives for the lease at most")
				}
			})
		}
	})
}

// An entry that expires between a Get's read and its background check is
// loaded in the background; a loader that fails or panics there is logged,
// gives the lease back, and does not crash the process.
func TestCache_Get_backgroundLoadFails(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _ := b.NewClient()
		rdb.AddHook(afterRead{b.Client, ""})
		var logs logBuffer
		c := newCache[string](t, rdb, b, cache.WithTTL(time.Minute), cache.WithRefreshAhead(30*time.Second),
			cache.WithLease(time.Minute), cache.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		for _, tt := range []struct {
			key, want string
			load      func(context.Context) (string, error)
		}{
			{"fails", "db down", func(context.Context) (string, error) { return "", errors.New("db down") }},
			{"panics", "load panicked: loader bug", func(context.Context) (string, error) { panic("loader bug") }},
		} {
			// Due for refresh: 10s left of its TTL.
			require.NoError(t, b.Client.Set(ctx, key(b, "jobs", tt.key, "val"), `"v1"`, 10*time.Second).Err())
			v, err := c.Get(ctx, tt.key, tt.load)
			require.NoError(t, err)
			assert.Equal(t, "v1", v, "the value read")
			c.Wait()
			assert.Contains(t, logs.String(), "cache: background load failed")
			assert.Contains(t, logs.String(), tt.want)
			assert.Empty(t, b.Keys(key(b, "jobs", tt.key, "*")), "lease given back, nothing stored")
		}
	})
}

// The background check of an entry due for refresh that finds it expired
// meanwhile neither loads it nor waits when another caller refreshes it (its
// value will come) or loads it: it is not a waiter, so nothing is pushed
// for it.
func TestCache_Get_backgroundCheckDoesNotWait(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		opts := []cache.Option{cache.WithTTL(time.Minute), cache.WithRefreshAhead(30 * time.Second), cache.WithLease(time.Minute)}
		val := key(b, "jobs", "k", "val")

		// Another process refreshes the entry (and holds the refresh lease).
		refresher := newCache[string](t, b.Client, b, opts...)
		rdb, _ := b.NewClient()
		rdb.AddHook(afterRead{b.Client, ""})
		c := newCache[string](t, rdb, b, opts...)
		require.NoError(t, b.Client.Set(ctx, val, `"v0"`, 10*time.Second).Err()) // due
		l := newGatedLoader(t, 1)
		v, err := refresher.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "v0", v)
		require.Eventually(t, func() bool { return l.calls.Load() == 1 }, 20*time.Second, time.Millisecond)

		// c reads v0, due; it expires before c's background check, which
		// finds the refresh lease held.
		v, err = c.Get(ctx, "k", l.load)
		require.NoError(t, err)
		assert.Equal(t, "v0", v)
		c.Wait()
		assert.Equal(t, []string{key(b, "jobs", "k", "lease")}, b.Keys(""), "no lease taken, no marker, no wake list")
		l.open()
		refresher.Wait()
		assert.Equal(t, int64(1), l.calls.Load())
		assert.Equal(t, `"v1"`, raw(t, b, val))
		assert.Equal(t, []string{val}, b.Keys(""), "no copy pushed for nobody")

		// Another process loads the entry (its marker replaced the value).
		b.Flush()
		marker := cache.MarkerForTest("loader", false)
		rdb2, _ := b.NewClient()
		rdb2.AddHook(afterRead{b.Client, marker})
		c2 := newCache[string](t, rdb2, b, opts...)
		require.NoError(t, b.Client.Set(ctx, val, `"v0"`, 10*time.Second).Err()) // due
		l2 := newGatedLoader(t)
		v, err = c2.Get(ctx, "k", l2.load)
		require.NoError(t, err)
		assert.Equal(t, "v0", v)
		c2.Wait()
		assert.Zero(t, l2.calls.Load(), "the loader in the other process loads it")
		assert.Equal(t, marker, raw(t, b, val), "not registered as a waiter")
		assert.Equal(t, []string{val}, b.Keys(""))
	})
}
