package cache_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// pause is a BeforeBlockForTest hook that holds the first caller that
// reaches it (registered as a waiter, not yet blocking) until resume is
// closed; later callers go on.
type pause struct {
	once       sync.Once
	registered chan struct{}
	resume     chan struct{}
}

func newPause(t *testing.T) *pause {
	p := &pause{registered: make(chan struct{}), resume: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-p.resume:
		default:
			close(p.resume)
		}
	})
	return p
}

func (p *pause) hook() {
	first := false
	p.once.Do(func() { first = true })
	if first {
		close(p.registered)
		<-p.resume
	}
}

// A waiter registered on a lease, but delayed before its blocking wait
// while that lease ends (a Delete) and a new lease is taken and stored,
// still sees its wake-up: it returns within a few round trips of the store,
// not when its lease (a minute) would have ended.
func TestCache_Get_wakeUpNotMissed(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		opt := cache.WithLease(time.Minute)
		loader := newCache[string](t, b.Client, b, opt) // process A
		rdbW, cntW := b.NewClient()
		waiter := newCache[string](t, rdbW, b, opt) // process B
		p := newPause(t)
		waiter.BeforeBlockForTest(p.hook)
		l := newGatedLoader(t, 1)

		loaded := make(chan string, 1)
		go func() {
			v, _ := loader.Get(ctx, "k", l.load)
			loaded <- v
		}()
		require.Eventually(t, func() bool { return l.calls.Load() == 1 }, 20*time.Second, time.Millisecond)
		got := make(chan string, 1)
		go func() {
			v, err := waiter.Get(ctx, "k", l.load)
			if err != nil {
				v = err.Error()
			}
			got <- v
		}()
		recv(t, p.registered, 20*time.Second, nil)

		// Meanwhile the lease ends, and another process takes the next
		// lease, loads and stores.
		require.NoError(t, loader.Delete(ctx, "k"))
		other := newCache[string](t, b.Client, b, opt) // process C
		v, err := other.Get(ctx, "k", l.load)
		require.NoError(t, err)
		require.Equal(t, "v2", v)

		rt0 := cntW.RoundTrips()
		close(p.resume) // the waiter starts its BLMOVE
		assert.Equal(t, "v2", recv(t, got, 10*time.Second, l.open), "woken by the Delete; then a hit")
		assert.LessOrEqual(t, cntW.RoundTrips()-rt0, int64(2), "the BLMOVE (returns at once), a read")
		l.open()
		assert.Equal(t, "v1", <-loaded)
	})
}

// The same for a counter: a waiter registered on a restore lease but
// delayed before its blocking wait, while that restore ends and the counter
// is lost and restored again under a new lease, still sees its wake-up.
func TestCounter_Incr_wakeUpNotMissed(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		opt := cache.WithLease(time.Minute)
		d := newDB(t, map[string]int64{"job1": 10})
		d.gated[1] = true
		restorer := newCounter(t, b.Client, b, d.restore, opt) // process A
		rdbW, cntW := b.NewClient()
		waiter := newCounter(t, rdbW, b, d.restore, opt) // process B
		p := newPause(t)
		waiter.BeforeBlockForTest(p.hook)

		first := make(chan int64, 1)
		go func() {
			n, _ := restorer.Incr(ctx, "job1", 1)
			first <- n
		}()
		require.Eventually(t, func() bool { return d.restores.Load() == 1 }, 20*time.Second, time.Millisecond)
		got := make(chan int64, 1)
		go func() {
			n, err := waiter.Incr(ctx, "job1", 1)
			if err != nil {
				n = -1
			}
			got <- n
		}()
		recv(t, p.registered, 20*time.Second, nil)

		// The restore ends (and wakes the waiter's list); the counter is
		// lost again and another process restores it under a new lease.
		d.open()
		assert.Equal(t, int64(11), <-first)
		require.NoError(t, b.Client.Del(ctx, key(b, "views", "job1", "count")).Err())
		other := newCounter(t, b.Client, b, d.restore, opt) // process C
		n, err := other.Incr(ctx, "job1", 1)
		require.NoError(t, err)
		require.Equal(t, int64(11), n)

		rt0 := cntW.RoundTrips()
		close(p.resume) // the waiter starts its BLMOVE
		assert.Equal(t, int64(12), recv(t, got, 10*time.Second, nil), "woken by the first restore; then adds its 1")
		assert.LessOrEqual(t, cntW.RoundTrips()-rt0, int64(2), "the BLMOVE (returns at once), the increment")
		assert.Equal(t, int64(2), d.restores.Load())
	})
}
