package near_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/near"
	"github.com/ria-go/ria/internal/redistest"
)

// wait bounds the "eventually" waits (they only bound a hang).
const wait = 20 * time.Second

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// ready returns a cache that serves without a subscription (Reset(true)),
// on a settable clock.
func ready(t *testing.T, size int, maxStale time.Duration) (*near.Cache, *clock) {
	t.Helper()
	c, err := near.New(near.Config{Size: size, MaxStale: maxStale, Channel: "ch", Name: "test"})
	require.NoError(t, err)
	clk := &clock{t: time.Unix(1000, 0)}
	c.SetNow(clk.now)
	c.Reset(true)
	return c, clk
}

func fill(c *near.Cache, key, payload string) {
	c.Finish(key, c.Begin(key), payload, near.Forever, true)
}

func TestNew_badConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  near.Config
		want string
	}{
		{near.Config{Size: 0, MaxStale: time.Second, Channel: "c", Name: "x"}, "x: near cache size 0: must be between 1 and"},
		{near.Config{Size: near.MaxSize + 1, MaxStale: time.Second, Channel: "c"}, "near: near cache size"},
		{near.Config{Size: 1, MaxStale: 0, Channel: "c"}, "max stale 0s: must be > 0"},
		{near.Config{Size: 1, MaxStale: -time.Second, Channel: "c"}, "max stale -1s"},
		{near.Config{Size: 1, MaxStale: time.Second}, "channel: empty name"},
	} {
		c, err := near.New(tc.cfg)
		require.Error(t, err)
		assert.Nil(t, c)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestCache_notReadyServesNothing(t *testing.T) {
	c, err := near.New(near.Config{Size: 4, MaxStale: time.Hour, Channel: "ch"})
	require.NoError(t, err)
	assert.False(t, c.Ready())
	fill(c, "k", "v")
	_, ok := c.Lookup("k")
	assert.False(t, ok, "not subscribed: no fill, no hit")
	assert.Equal(t, 0, c.Stats().Len)
	c.Stop() // without Start: empties, idempotent
	c.Stop()
}

func TestCache_lookupAndDeadlines(t *testing.T) {
	c, clk := ready(t, 4, time.Minute)
	fill(c, "k", "v")
	got, ok := c.Lookup("k")
	require.True(t, ok)
	assert.Equal(t, "v", got)
	until, ok := c.Until("k")
	require.True(t, ok)
	assert.Equal(t, clk.now().Add(time.Minute), until, "Forever: MaxStale")

	clk.add(time.Minute - time.Nanosecond)
	_, ok = c.Lookup("k")
	assert.True(t, ok)
	clk.add(time.Nanosecond)
	_, ok = c.Lookup("k")
	assert.False(t, ok, "never served past maxStale")

	// An earlier fresh time wins; a zero one or a passed one is not cached.
	c.Finish("f", c.Begin("f"), "v", clk.now().Add(time.Second), true)
	until, _ = c.Until("f")
	assert.Equal(t, clk.now().Add(time.Second), until)
	c.Finish("z", c.Begin("z"), "v", time.Time{}, true)
	c.Finish("p", c.Begin("p"), "v", clk.now(), true)
	c.Finish("e", c.Begin("e"), "v", near.Forever, false)
	for _, k := range []string{"z", "p", "e"} {
		_, ok = c.Until(k)
		assert.False(t, ok, k)
	}
	// A fill whose read took longer than maxStale is not cached.
	tk := c.Begin("slow")
	clk.add(time.Minute)
	c.Finish("slow", tk, "v", near.Forever, true)
	_, ok = c.Until("slow")
	assert.False(t, ok)
}

// An invalidation (Drop) or a flush (Reset) heard while a fill's read is in
// flight wins: the payload read before it is not cached.
func TestCache_ticketsLoseToInvalidations(t *testing.T) {
	c, _ := ready(t, 4, time.Hour)
	t1 := c.Begin("k")
	t2 := c.Begin("k")
	c.Drop("k")
	t3 := c.Begin("k") // began after the drop: may fill
	c.Finish("k", t1, "old", near.Forever, true)
	_, ok := c.Lookup("k")
	assert.False(t, ok, "fill begun before the drop")
	c.Finish("k", t3, "new", near.Forever, true)
	got, ok := c.Lookup("k")
	require.True(t, ok)
	assert.Equal(t, "new", got)
	c.Finish("k", t2, "old", near.Forever, true)
	got, _ = c.Lookup("k")
	assert.Equal(t, "new", got, "a stale fill never overwrites")

	t4 := c.Begin("j")
	c.Reset(true)
	c.Finish("j", t4, "old", near.Forever, true)
	_, ok = c.Lookup("j")
	assert.False(t, ok, "fill begun before the flush")
	_, ok = c.Lookup("k")
	assert.False(t, ok, "flushed")
}

// Memory is bounded at Size; CLOCK gives a referenced entry a second
// chance.
func TestCache_boundedClock(t *testing.T) {
	c, _ := ready(t, 3, time.Hour)
	for i := range 3 {
		fill(c, fmt.Sprint("k", i), "v")
	}
	_, ok := c.Lookup("k0") // referenced: survives the next sweep
	require.True(t, ok)
	fill(c, "k3", "v")
	assert.Equal(t, 3, c.Stats().Len)
	assert.Equal(t, int64(1), c.Stats().Evictions)
	_, ok = c.Lookup("k0")
	assert.True(t, ok, "second chance")
	_, ok = c.Lookup("k1")
	assert.False(t, ok, "first unreferenced entry evicted")
	for i := range 1000 {
		fill(c, fmt.Sprint("x", i), "v")
		require.LessOrEqual(t, c.Stats().Len, 3)
	}
	// A dropped entry frees its slot.
	c.Drop("x999")
	assert.Equal(t, 2, c.Stats().Len)
}

func TestSubscriberOf(t *testing.T) {
	_, err := near.SubscriberOf(redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}}))
	require.ErrorContains(t, err, "*redis.Ring is not supported")
	_, err = near.SubscriberOf(42)
	require.ErrorContains(t, err, "client int has no Subscribe method")
	sub, err := near.SubscriberOf(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}))
	require.NoError(t, err)
	require.NotNil(t, sub)
}

// started returns a cache of rdb subscribed to channel ch, stopped at the
// end of the test, once it is ready.
func started(t *testing.T, rdb any, ch string, size int) *near.Cache {
	t.Helper()
	c, err := near.New(near.Config{Size: size, MaxStale: time.Hour, Channel: ch, Name: "test"})
	require.NoError(t, err)
	sub, err := near.SubscriberOf(rdb)
	require.NoError(t, err)
	c.Start(sub)
	t.Cleanup(c.Stop)
	require.Eventually(t, c.Ready, wait, time.Millisecond, "subscribed")
	return c
}

// Two processes: a message of one drops the key in the other, not in
// itself; on a Cluster a PUBLISH from a script reaches every node's
// subscribers (keys in many slots).
func TestCache_invalidation(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ch := b.Prefix + "near"
		other, _ := b.NewClient()
		a := started(t, b.Client, ch, 100)
		c := started(t, other, ch, 100)
		pub := redis.NewScript(`redis.call('set', KEYS[1], 'x'); return redis.call('publish', ARGV[1], ARGV[2])`)
		for i := range 20 {
			k := fmt.Sprint("k", i)
			fill(a, k, "v")
			fill(c, k, "v")
			heard := c.Stats().Invalidations
			require.NoError(t, pub.Run(ctx, b.Client, []string{b.Prefix + "{" + k + "}"}, ch, a.Message(k)).Err())
			a.Drop(k) // the writer drops its own key
			require.Eventually(t, func() bool { return c.Stats().Invalidations > heard }, wait, time.Millisecond)
			_, ok := c.Lookup(k)
			assert.False(t, ok, "%s dropped in the other process", k)
		}
		// a never counts its own messages.
		assert.Equal(t, int64(0), a.Stats().Invalidations)
		// Messages that are not invalidations (too short) are ignored.
		require.NoError(t, b.Client.Publish(ctx, ch, "short").Err())
		fill(c, "k", "v")
		heard := c.Stats().Invalidations
		require.NoError(t, b.Client.Publish(ctx, ch, a.Message("k")).Err())
		require.Eventually(t, func() bool { return c.Stats().Invalidations == heard+1 }, wait, time.Millisecond)
		_, ok := c.Lookup("k")
		assert.False(t, ok)
	})
}

// A cut subscription flushes the cache, which is unused until the new
// subscription is confirmed; then it fills again. Stop empties it for good.
func TestCache_cutFlushes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		rdb, _, f := b.FaultyClient()
		c := started(t, rdb, b.Prefix+"near", 10)
		fill(c, "k", "v")
		_, ok := c.Lookup("k")
		require.True(t, ok)
		for round := range 3 {
			flushes := c.Stats().Flushes
			f.Cut()
			// Flushed on the break (not ready), then again once resubscribed (ready).
			require.Eventually(t, func() bool { return c.Stats().Flushes >= flushes+2 && c.Ready() }, wait, time.Millisecond, "round %d", round)
			_, ok = c.Lookup("k")
			require.False(t, ok, "round %d: flushed", round)
			fill(c, "k", "v")
			_, ok = c.Lookup("k")
			require.True(t, ok, "round %d: fills again", round)
		}
		c.Stop()
		assert.False(t, c.Ready())
		_, ok = c.Lookup("k")
		assert.False(t, ok)
		c.Stop()
	})
}

// A silent connection is pinged; the cache stays ready while pongs come.
func TestCache_ping(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		c, err := near.New(near.Config{Size: 10, MaxStale: time.Hour, Channel: b.Prefix + "near"})
		require.NoError(t, err)
		c.SetPing(20 * time.Millisecond)
		c.Start(b.Client)
		t.Cleanup(c.Stop)
		require.Eventually(t, c.Ready, wait, time.Millisecond)
		flushes := c.Stats().Flushes
		fill(c, "k", "v")
		// Several ping periods pass (waiting for the real clock is the event here).
		// (Not a synchronisation: the test checks that nothing happens
		// while time passes.)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for range 40 {
			<-tick.C
			_, ok := c.Lookup("k")
			require.True(t, ok)
		}
		assert.Equal(t, flushes, c.Stats().Flushes, "no reconnect while pongs come")
	})
}
