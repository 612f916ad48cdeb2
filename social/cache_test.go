package social_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/social"
)

// cacheWait bounds the "eventually" waits (they only bound a hang).
const cacheWait = 20 * time.Second

// cachedNet returns a Network of rdb with a status cache, closed at the
// end of the test, once its cache is ready.
func cachedNet(t *testing.T, b *redistest.Backend, rdb redis.UniversalClient, size int, maxStale time.Duration, opts ...social.Option) (*social.Network, *queue.Group) {
	t.Helper()
	n, g := newNet(t, b, rdb, append([]social.Option{social.WithStatusCache(size, maxStale)}, opts...)...)
	t.Cleanup(func() { require.NoError(t, n.Close()) })
	require.Eventually(t, n.StatusCacheReady, cacheWait, time.Millisecond, "status cache subscribed")
	return n, g
}

func TestWithStatusCache_badOptions(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	g, err := queue.New(rdb, "social")
	require.NoError(t, err)
	for _, tc := range []struct {
		size  int
		stale time.Duration
		want  string
	}{
		{0, time.Second, "social: new: status cache size 0: must be between 1 and 16777216"},
		{-1, time.Second, "status cache size -1"},
		{social.MaxStatusCache + 1, time.Second, "status cache size 16777217"},
		{10, 0, "social: new: status cache max staleness 0s: must be between 1ms and 24h0m0s"},
		{10, time.Microsecond, "max staleness 1µs"},
		{10, social.MaxStatusCacheStale + 1, "max staleness 24h0m0.000000001s"},
	} {
		n, err := social.New(rdb, g, social.WithStatusCache(tc.size, tc.stale))
		require.Error(t, err, "%d %v", tc.size, tc.stale)
		assert.Nil(t, n)
		assert.Contains(t, err.Error(), tc.want)
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer ring.Close()
	n, err := social.New(ring, g, social.WithStatusCache(10, time.Second))
	require.ErrorContains(t, err, "social: new: status cache: a *redis.Ring is not supported")
	assert.Nil(t, n)
	// Without the option: no cache, Close does nothing.
	n, err = social.New(rdb, g)
	require.NoError(t, err)
	assert.False(t, n.StatusCacheReady())
	require.NoError(t, n.Close())
	require.NoError(t, n.Close())
}

func TestStatusCache_codec(t *testing.T) {
	for _, st := range []social.Status{
		{ID: "a:1", UID: "a", Login: "A", Message: "hello", Posted: time.UnixMilli(1234567)},
		{ID: "a:2", UID: "a", Login: "A", Message: "", Posted: time.UnixMilli(-5), Location: &social.Point{Lat: -1.5, Lon: 179.25}},
		{ID: "a:3", UID: "a", Login: "A", Message: string(make([]byte, 300)) + "\x00\x01é", Posted: time.UnixMilli(0)},
	} {
		p := social.EncodeStatus(st)
		got, ok := social.DecodeStatus(st.ID, p)
		require.True(t, ok)
		assert.Equal(t, st, got)
		for i := range len(p) { // every truncation is refused, never a panic
			_, ok := social.DecodeStatus(st.ID, p[:i])
			assert.False(t, ok, "truncated at %d", i)
		}
		_, ok = social.DecodeStatus(st.ID, p+"x")
		assert.False(t, ok)
	}
}

// A warm page is one round trip (the ZREVRANGE); a cold one reads as
// without the cache; pages are the same as an uncached Network's.
func TestStatusCache_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := cachedNet(t, b, b.Client, 1000, time.Hour)
		plain, _ := newNet(t, b, b.Client)
		nodes := int64(1)
		if b.Kind == redistest.Cluster {
			nodes = 3
		}
		reader := mustUser(t, n, "reader")
		require.NoError(t, n.CreateList(ctx, reader, "l"))
		for i := range 12 { // authors in slots of every node
			a := mustUser(t, n, fmt.Sprint("a", i))
			mustFollow(t, n, reader, a)
			_, err := n.AddToList(ctx, reader, "l", a)
			require.NoError(t, err)
			if i%2 == 0 {
				_, err = n.Post(ctx, a, fmt.Sprint("m", i), social.At(1.5, -2.25))
			} else {
				_, err = n.Post(ctx, a, fmt.Sprint("m", i))
			}
			require.NoError(t, err)
		}
		drain(t, n, g)
		want, _, err := plain.Page(ctx, reader, social.Home, 0, 20)
		require.NoError(t, err)
		require.Len(t, want, 12)

		rt, _ := b.Count.Delta(func() {
			got, _, err := n.Page(ctx, reader, social.Home, 0, 20)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
		assert.GreaterOrEqual(t, rt, int64(2), "cold page")
		assert.LessOrEqual(t, rt, 1+nodes, "cold page")
		for range 3 {
			rt, _ = b.Count.Delta(func() {
				got, _, err := n.Page(ctx, reader, social.Home, 0, 20)
				require.NoError(t, err)
				assert.Equal(t, want, got)
			})
			assert.Equal(t, int64(1), rt, "warm page")
		}
		rt, _ = b.Count.Delta(func() {
			got, _, err := n.ListPage(ctx, reader, "l", 0, 20)
			require.NoError(t, err)
			assert.ElementsMatch(t, want, got)
		})
		assert.Equal(t, int64(1), rt, "warm list page (statuses cached by the home page)")
		rt, _ = b.Count.Delta(func() {
			got, err := n.Status(ctx, want[0].ID)
			require.NoError(t, err)
			assert.Equal(t, want[0], got)
		})
		assert.Zero(t, rt, "a cached status")
		// A page partly cached reads only the missing statuses.
		warm := mustPost(t, n, "a0", "warm") // (loads delete's and the queue's scripts)
		require.NoError(t, n.Delete(ctx, "a0", warm.ID))
		drain(t, n, g)
		st := mustPost(t, n, "a0", "new")
		drain(t, n, g)
		rt, _ = b.Count.Delta(func() { require.Contains(t, page(t, n, reader, social.Home, 20), st.ID) })
		assert.Equal(t, int64(2), rt, "one new status: ZREVRANGE + 1 HGETALL")
		// Delete costs what it costs without the cache (the PUBLISH is in its script).
		rt, _ = b.Count.Delta(func() { require.NoError(t, n.Delete(ctx, "a0", st.ID)) })
		assert.Equal(t, int64(3), rt, "Delete, followers")
		assert.NotContains(t, page(t, n, reader, social.Home, 20), st.ID, "own delete: dropped at once")
		drain(t, n, g)
	})
}

// A status deleted by process A stops showing in process B's pages once B
// has heard the invalidation, round after round.
func TestStatusCache_deleteInOtherProcess(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		other, _ := b.NewClient()
		a, ga := cachedNet(t, b, b.Client, 1000, time.Hour)
		bn, _ := cachedNet(t, b, other, 1000, time.Hour)
		reader := mustUser(t, a, "reader")
		authors := make([]string, 6)
		for i := range authors {
			authors[i] = mustUser(t, a, fmt.Sprint("au", i))
			mustFollow(t, a, reader, authors[i])
		}
		bc := social.StatusCache(bn)
		for round := range 30 {
			author := authors[round%len(authors)]
			st := mustPost(t, a, author, fmt.Sprint("r", round))
			require.Contains(t, page(t, bn, reader, social.Home, 10), st.ID, "round %d", round)
			page(t, a, reader, social.Home, 10) // cached in A too
			_, ok := bc.Lookup(st.ID)
			require.True(t, ok, "round %d: cached in B", round)
			heard := bc.Stats().Invalidations
			require.NoError(t, a.Delete(ctx, author, st.ID))
			assert.NotContains(t, page(t, a, reader, social.Home, 10), st.ID, "round %d: A", round)
			require.Eventually(t, func() bool { return bc.Stats().Invalidations > heard }, cacheWait, time.Millisecond, "round %d", round)
			assert.NotContains(t, page(t, bn, reader, social.Home, 10), st.ID, "round %d: B after the invalidation", round)
		}
		assert.Equal(t, int64(0), social.StatusCache(a).Stats().Invalidations, "A skips its own messages")
		drain(t, a, ga)
	})
}

// A process without a status cache publishes its Deletes too: B's cache
// hears them.
func TestStatusCache_deleteByUncachedProcess(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		other, _ := b.NewClient()
		plain, _ := newNet(t, b, b.Client)
		bn, _ := cachedNet(t, b, other, 100, time.Hour)
		bc := social.StatusCache(bn)
		mustUser(t, plain, "au")
		for round := range 5 {
			st := mustPost(t, plain, "au", fmt.Sprint("r", round))
			require.Contains(t, page(t, bn, "au", social.Profile, 10), st.ID)
			_, ok := bc.Lookup(st.ID)
			require.True(t, ok, "round %d: cached in B", round)
			heard := bc.Stats().Invalidations
			require.NoError(t, plain.Delete(ctx, "au", st.ID))
			require.Eventually(t, func() bool { return bc.Stats().Invalidations > heard }, cacheWait, time.Millisecond, "round %d", round)
			assert.NotContains(t, page(t, bn, "au", social.Profile, 10), st.ID, "round %d: B after the invalidation", round)
		}
	})
}

// An invalidation heard while B's read of the status is in flight wins:
// what B read before the delete is not cached.
func TestStatusCache_deleteDuringFill(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		other, _ := b.NewClient()
		a, _ := cachedNet(t, b, b.Client, 100, time.Hour)
		bn, _ := newNet(t, b, other, social.WithStatusCache(100, time.Hour))
		bc := social.StatusCache(bn)
		var once sync.Once
		var target string
		bc.SetBeforeFill(func(id string) {
			if id != target {
				return
			}
			once.Do(func() {
				heard := bc.Stats().Invalidations
				require.NoError(t, a.Delete(ctx, "au", id))
				require.Eventually(t, func() bool { return bc.Stats().Invalidations > heard }, cacheWait, time.Millisecond)
			})
		})
		t.Cleanup(func() { require.NoError(t, bn.Close()) })
		require.Eventually(t, bn.StatusCacheReady, cacheWait, time.Millisecond)
		mustUser(t, a, "au")
		target = mustPost(t, a, "au", "x").ID
		got := page(t, bn, "au", social.Profile, 10)
		assert.Equal(t, []string{target}, got, "read before the delete")
		_, ok := bc.Lookup(target)
		assert.False(t, ok, "not cached: the invalidation came during the fill")
		assert.Empty(t, page(t, bn, "au", social.Profile, 10))
	})
}

// A status deleted without an invalidation B hears (here: by hand) is
// shown by B no later than maxStale after B read it.
func TestStatusCache_maxStale(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client, social.WithStatusCache(100, time.Minute))
		c := social.StatusCache(n)
		var mu sync.Mutex
		now := time.Unix(1e9, 0)
		c.SetNow(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
		t.Cleanup(func() { require.NoError(t, n.Close()) })
		require.Eventually(t, n.StatusCacheReady, cacheWait, time.Millisecond)
		mustUser(t, n, "au")
		st := mustPost(t, n, "au", "x")
		require.Equal(t, []string{st.ID}, page(t, n, "au", social.Profile, 10))
		require.NoError(t, b.Client.Del(ctx, key(b, "au", "status:1")).Err())
		mu.Lock()
		now = now.Add(time.Minute - time.Millisecond)
		mu.Unlock()
		assert.Equal(t, []string{st.ID}, page(t, n, "au", social.Profile, 10), "stale, within maxStale")
		mu.Lock()
		now = now.Add(time.Millisecond)
		mu.Unlock()
		assert.Empty(t, page(t, n, "au", social.Profile, 10), "never past maxStale")
	})
}

// A cut subscription flushes the cache: what was deleted meanwhile (its
// invalidation missed) is not shown, and pages read Redis until the new
// subscription is confirmed.
func TestStatusCache_cutFlushes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, cnt, f := b.FaultyClient()
		n, _ := cachedNet(t, b, rdb, 100, time.Hour)
		c := social.StatusCache(n)
		mustUser(t, n, "au")
		for round := range 3 {
			st := mustPost(t, n, "au", fmt.Sprint("x", round))
			require.Equal(t, []string{st.ID}, page(t, n, "au", social.Profile, 10))
			_, ok := c.Lookup(st.ID)
			require.True(t, ok)
			flushes := c.Stats().Flushes
			f.Cut()
			require.Eventually(t, func() bool { return c.Stats().Flushes >= flushes+2 && n.StatusCacheReady() }, cacheWait, time.Millisecond, "round %d", round)
			assert.Equal(t, 0, c.Stats().Len, "round %d: flushed", round)
			require.NoError(t, b.Client.Del(ctx, key(b, "au", fmt.Sprint("status:", round+1))).Err())
			rt, _ := cnt.Delta(func() { assert.Empty(t, page(t, n, "au", social.Profile, 10), "round %d", round) })
			assert.Equal(t, int64(2), rt, "round %d: read from Redis", round)
			require.NoError(t, b.Client.ZRem(ctx, key(b, "au", "profile"), st.ID).Err())
		}
	})
}

// The cache holds at most size statuses; pages stay right when it is
// smaller than they are.
func TestStatusCache_bounded(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		n, _ := cachedNet(t, b, b.Client, 3, time.Hour)
		mustUser(t, n, "au")
		plain, _ := newNet(t, b, b.Client)
		for i := range 10 {
			mustPost(t, n, "au", fmt.Sprint("x", i))
		}
		want := page(t, plain, "au", social.Profile, 10) // (ties in ms sort by ID)
		require.Len(t, want, 10)
		for range 5 {
			require.Equal(t, want, page(t, n, "au", social.Profile, 10))
			require.LessOrEqual(t, social.StatusCache(n).Stats().Len, 3)
		}
		assert.Positive(t, social.StatusCache(n).Stats().Evictions)
	})
}

// A Delete whose reply was lost (go-redis re-sends it, answered from the
// reply record) still invalidates the other process's cache once, and
// neither process shows the status afterwards.
func TestStatusCache_fault_lostDeleteReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		wrdb, _, f := b.FaultyClient()
		other, _ := b.NewClient()
		w, _ := cachedNet(t, b, wrdb, 100, time.Hour)
		r, _ := cachedNet(t, b, other, 100, time.Hour)
		rc := social.StatusCache(r)
		h := redistest.NewHarness(t, f, "social status cache Delete")
		mustUser(t, w, "au")
		warm := mustPost(t, w, "au", "warm") // (loads delete's script)
		heard := rc.Stats().Invalidations
		require.NoError(t, w.Delete(ctx, "au", warm.ID))
		require.Eventually(t, func() bool { return rc.Stats().Invalidations > heard }, cacheWait, time.Millisecond)
		for i := range 5 {
			st := mustPost(t, w, "au", fmt.Sprint("x", i))
			require.Contains(t, page(t, r, "au", social.Profile, 10), st.ID)
			require.Contains(t, page(t, w, "au", social.Profile, 10), st.ID)
			heard := rc.Stats().Invalidations
			var err error
			h.Call(1, redistest.Scripts, func() { err = w.Delete(ctx, "au", st.ID) })
			h.Check(err == nil, "call %d: %v", i, err)
			require.Eventually(t, func() bool { return rc.Stats().Invalidations > heard }, cacheWait, time.Millisecond)
			h.Check(!slices.Contains(page(t, r, "au", social.Profile, 10), st.ID), "call %d: other process still shows it", i)
			h.Check(!slices.Contains(page(t, w, "au", social.Profile, 10), st.ID), "call %d: own process still shows it", i)
		}
	})
}
