package cache_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// db stands in for the system of record: the views of each job. Restore
// calls are numbered from 1; those in gated wait for gate, those in fail
// fail.
type db struct {
	mu       sync.Mutex
	views    map[string]int64
	restores atomic.Int64
	gate     chan struct{}
	gated    map[int64]bool
	fail     map[int64]error
}

func newDB(t *testing.T, views map[string]int64) *db {
	d := &db{views: views, gate: make(chan struct{}), gated: map[int64]bool{}, fail: map[int64]error{}}
	t.Cleanup(d.open)
	return d
}

func (d *db) open() {
	select {
	case <-d.gate:
	default:
		close(d.gate)
	}
}

func (d *db) restore(ctx context.Context, key string) (int64, error) {
	n := d.restores.Add(1)
	if d.gated[n] {
		select {
		case <-d.gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if err := d.fail[n]; err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.views[key], nil
}

func newCounter(t *testing.T, rdb cache.Client, b *redistest.Backend, restore cache.RestoreFunc, opts ...cache.Option) *cache.Counter {
	t.Helper()
	// A lease of a minute unless the test says otherwise: no lease ends
	// while a test holds a restore back, however slow the machine.
	c, err := cache.NewCounter(rdb, "views", restore, append([]cache.Option{cache.WithPrefix(b.Prefix), cache.WithLease(time.Minute)}, opts...)...)
	require.NoError(t, err)
	return c
}

// The blog's job-views counter: a missing counter is restored from the
// system of record and incremented; an expired one again.
func TestCounter_Incr_restore(t *testing.T) {
	t.Parallel() // waits out TTLs on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		d := newDB(t, map[string]int64{"job1": 10})
		c := newCounter(t, b.Client, b, d.restore, cache.WithTTL(300*time.Millisecond))
		// Cache the scripts on the server (on Cluster: on the node of job1).
		_, err := c.Incr(ctx, "job1", 1)
		require.NoError(t, err)
		require.NoError(t, b.Client.Del(ctx, key(b, "views", "job1", "count")).Err())
		d.restores.Store(0)

		var n int64
		rt, _ := b.Count.Delta(func() { n, err = c.Incr(ctx, "job1", 1) })
		require.NoError(t, err)
		assert.Equal(t, int64(11), n, "restored 10, plus 1")
		assert.Equal(t, int64(2), rt, "missing: look (takes the lease), set")
		rt, _ = b.Count.Delta(func() { n, err = c.Incr(ctx, "job1", 2) })
		require.NoError(t, err)
		assert.Equal(t, int64(13), n)
		assert.Equal(t, int64(1), rt, "existing counter")
		n, err = c.Get(ctx, "job1")
		require.NoError(t, err)
		assert.Equal(t, int64(13), n)
		assert.Equal(t, int64(1), d.restores.Load())

		// The counter expires; meanwhile the system of record moved on.
		d.mu.Lock()
		d.views["job1"] = 20
		d.mu.Unlock()
		b.FastForward(400 * time.Millisecond)
		n, err = c.Incr(ctx, "job1", 1)
		require.NoError(t, err)
		assert.Equal(t, int64(21), n)
		assert.Equal(t, int64(2), d.restores.Load())

		n, err = c.Get(ctx, "job2") // never seen: restored as 0
		require.NoError(t, err)
		assert.Zero(t, n)
	})
}

// 50 callers over two clients increment a missing counter: one restore, no
// increment lost, every caller sees a distinct value. The test opens the
// restore once every other caller waits for it, wherever it waits: in Redis
// (registered on the restorer's lease, the first caller of a process to
// find it missing) or in memory (behind a caller of its own process that
// restores or waits); which of the two a caller does depends on how the
// goroutines are scheduled, so the test counts both.
func TestCounter_Incr_concurrentRestore(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		const callers = 50
		ctx := t.Context()
		d := newDB(t, map[string]int64{"job1": 100})
		d.gated[1] = true
		var counters []*cache.Counter
		for range 2 {
			rdb, _ := b.NewClient()
			counters = append(counters, newCounter(t, rdb, b, d.restore))
		}
		type result struct {
			n   int64
			err error
		}
		results := make(chan result, callers)
		for i := range callers {
			go func() {
				n, err := counters[i%2].Incr(ctx, "job1", 1)
				results <- result{n, err}
			}()
		}
		require.Eventually(t, func() bool {
			return d.restores.Load() == 1 && counters[0].WaitingForTest()+counters[1].WaitingForTest() == callers-1
		}, 20*time.Second, time.Millisecond, "every caller but the restorer waits")
		d.open()
		var got []int64
		for range callers {
			r := <-results
			require.NoError(t, r.err)
			got = append(got, r.n)
		}
		assert.Equal(t, int64(1), d.restores.Load(), "restored once")
		slices.Sort(got)
		want := make([]int64, callers)
		for i := range want {
			want[i] = 100 + int64(i) + 1
		}
		assert.Equal(t, want, got, "distinct values, none lost")
		n, err := counters[0].Get(ctx, "job1")
		require.NoError(t, err)
		assert.Equal(t, int64(100+callers), n)
	})
}

// A failed restore returns its error and does not count; the next caller
// restores. A waiter takes over at once when the restorer fails, in another
// process or in the restorer's own.
func TestCounter_Incr_restoreFails(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		down := errors.New("db down")
		d := newDB(t, map[string]int64{"job1": 5})
		d.fail[1] = down
		c := newCounter(t, b.Client, b, d.restore, cache.WithLease(time.Minute))
		_, err := c.Incr(ctx, "job1", 1)
		assert.ErrorIs(t, err, down)
		assert.ErrorContains(t, err, `cache: counter views incr "job1": restore: db down`)
		assert.Empty(t, dataKeys(b, ""), "nothing counted, lease given back")
		n, err := c.Incr(ctx, "job1", 1)
		require.NoError(t, err)
		assert.Equal(t, int64(6), n)

		for _, sameProcess := range []bool{false, true} {
			d = newDB(t, map[string]int64{"job1": 5})
			d.gated[1], d.fail[1] = true, down
			c = newCounter(t, b.Client, b, d.restore, cache.WithLease(time.Minute))
			waiter := newCounter(t, b.Client, b, d.restore, cache.WithLease(time.Minute)) // another process
			if sameProcess {
				waiter = c // waits for the restorer in memory
			}
			first := make(chan error, 1)
			go func() {
				_, err := c.Incr(ctx, "job2", 1)
				first <- err
			}()
			require.Eventually(t, func() bool { return d.restores.Load() == 1 }, 20*time.Second, time.Millisecond)
			second := make(chan error, 1)
			go func() {
				_, err := waiter.Incr(ctx, "job2", 1)
				second <- err
			}()
			if sameProcess {
				require.Eventually(t, func() bool { return c.WaitingForTest() == 1 }, 20*time.Second, time.Millisecond)
			} else {
				waitForWaits(t, b, "views", "job2", 1)
			}
			start := time.Now()
			d.open()
			assert.ErrorIs(t, <-first, down)
			assert.NoError(t, <-second)
			assert.Less(t, time.Since(start), 10*time.Second, "not after the 1 minute lease")
			assert.Equal(t, int64(2), d.restores.Load())
			n, err = c.Get(ctx, "job2")
			require.NoError(t, err)
			assert.Equal(t, int64(1), n, "only the waiter's increment counted")
			require.NoError(t, b.Client.Del(ctx, key(b, "views", "job2", "count")).Err())
		}
	})
}

// A restorer that hangs: a waiter takes over when its lease ends, in
// another process or in the restorer's own. The late restore adds its
// increment but not its restored value.
func TestCounter_Incr_restorerHangs(t *testing.T) {
	t.Parallel() // waits out TTLs on the real servers
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const lease = time.Second
		d := newDB(t, map[string]int64{"job1": 10})
		d.gated[1] = true
		c := newCounter(t, b.Client, b, d.restore, cache.WithLease(lease))
		hung := make(chan int64, 1)
		go func() {
			n, _ := c.Incr(ctx, "job1", 1)
			hung <- n
		}()
		require.Eventually(t, func() bool { return d.restores.Load() == 1 }, 20*time.Second, time.Millisecond)
		other := newCounter(t, b.Client, b, d.restore, cache.WithLease(lease)) // another process
		waiters := make(chan int64, 2)
		var finished atomic.Int64
		incr := func(c *cache.Counter) {
			n, err := c.Incr(ctx, "job1", 1)
			if err != nil {
				n = -1
			}
			finished.Add(1)
			waiters <- n
		}
		// Each waits for the hung restorer: other in Redis, c in memory.
		// (On a real server the lease runs out in real time: one so slow
		// to start that it comes after the takeover just adds its 1.)
		go incr(other)
		require.Eventually(t, func() bool { return other.WaitingForTest()+finished.Load() == 1 }, 20*time.Second, time.Millisecond)
		go incr(c)
		require.Eventually(t, func() bool {
			return other.WaitingForTest()+c.WaitingForTest()+finished.Load() == 2
		}, 20*time.Second, time.Millisecond)
		b.FastForward(lease + 100*time.Millisecond)
		got := []int64{<-waiters, <-waiters}
		slices.Sort(got)
		assert.Equal(t, []int64{11, 12}, got, "restored by one waiter, then the other's 1")
		assert.Equal(t, int64(2), d.restores.Load(), "one takeover")
		d.open()
		assert.Equal(t, int64(13), <-hung, "the late restorer only adds its 1")
	})
}

// Without a restore function a missing counter starts from 0.
func TestCounter_noRestore(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCounter(t, b.Client, b, nil)
		n, err := c.Incr(ctx, "job1", 3)
		require.NoError(t, err)
		assert.Equal(t, int64(3), n)
		n, err = c.Incr(ctx, "job1", -1)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)
		pttl, err := b.Client.PTTL(ctx, key(b, "views", "job1", "count")).Result()
		require.NoError(t, err)
		assert.Greater(t, pttl, 23*time.Hour, "default TTL 24h")
	})
}

// 40 callers of one process increment a missing counter through a client
// with a pool of 4 connections: they wait for the restore in memory, not
// each in a blocking BLMOVE holding a connection, so the restorer still
// gets one to store its value. One restore, no error, no increment lost.
func TestCounter_Incr_coalesced(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		const callers, pool = 40, 4
		ctx := t.Context()
		var rdb redis.UniversalClient
		if b.Kind == redistest.Cluster {
			rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: b.Addrs(), PoolSize: pool})
		} else {
			rdb = redis.NewClient(&redis.Options{Addr: b.Addrs()[0], PoolSize: pool})
		}
		t.Cleanup(func() { _ = rdb.Close() })
		d := newDB(t, map[string]int64{"job1": 100})
		d.gated[1] = true
		c := newCounter(t, rdb, b, d.restore, cache.WithLease(time.Minute))
		type result struct {
			n   int64
			err error
		}
		results := make(chan result, callers)
		var finished atomic.Int64
		for range callers {
			go func() {
				n, err := c.Incr(ctx, "job1", 1)
				finished.Add(1)
				results <- result{n, err}
			}()
		}
		require.Eventually(t, func() bool {
			return d.restores.Load() == 1 && c.WaitingForTest()+finished.Load() == callers-1
		}, 20*time.Second, time.Millisecond, "every caller but the restorer waits")
		d.open()
		var got []int64
		deadline := time.After(20 * time.Second)
		for range callers {
			select {
			case r := <-results:
				if assert.NoError(t, r.err) {
					got = append(got, r.n)
				}
			case <-deadline:
				t.Fatal("callers still waiting after 20s")
			}
		}
		assert.Equal(t, int64(1), d.restores.Load(), "restored once")
		slices.Sort(got)
		want := make([]int64, callers)
		for i := range want {
			want[i] = 100 + int64(i) + 1
		}
		assert.Equal(t, want, got, "distinct values, none lost")
	})
}
