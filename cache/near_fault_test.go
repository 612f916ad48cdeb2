package cache_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
)

// A write whose reply was lost (go-redis re-sends it) still invalidates
// the near caches of other processes and its own, and they then read what
// Redis holds: Set, Delete, and a loader's store.
func TestNear_fault_lostReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		wrdb, _, f := b.FaultyClient()
		w := newNear(t, b, wrdb, 100, time.Hour)
		r := newProcess(t, b, 100, time.Hour).c
		h := redistest.NewHarness(t, f, "cache near invalidation")
		// Load the scripts on every node through w, so that the lost
		// replies are those of the calls below; then wait until r has
		// heard the 20 invalidations they published (on a Cluster from
		// several nodes), so that none lands after a fill below.
		heard := r.NearInvalidationsForTest()
		for i := range 10 {
			require.NoError(t, w.Set(ctx, fmt.Sprint("warm", i), "x"))
			require.NoError(t, w.Delete(ctx, fmt.Sprint("warm", i)))
		}
		require.Eventually(t, func() bool { return r.NearInvalidationsForTest() >= heard+20 }, nearWait, time.Millisecond,
			"r heard the warm-up's invalidations")

		for i := range 5 {
			k := fmt.Sprint("k", i)
			setHeard(t, w, r, k, "old")
			// r caches k: a fill is dropped when an invalidation of k lands
			// during it (on a Cluster and a loaded machine the Set's own
			// can come after another one setHeard counted), so read until
			// it is cached.
			require.Eventually(t, func() bool {
				if _, err := r.Get(ctx, k, noLoad(t)); err != nil {
					return false
				}
				_, ok := r.NearHasForTest(k)
				return ok
			}, nearWait, time.Millisecond, "r caches %s", k)
			if i%3 != 2 { // (w's own near cache would not hear the DEL by hand below)
				_, err := w.Get(ctx, k, noLoad(t))
				require.NoError(t, err)
			}
			var ok bool

			var serr error
			switch i % 3 {
			case 0:
				h.Call(1, redistest.Scripts, func() { serr = w.Set(ctx, k, "new") })
			case 1:
				h.Call(1, redistest.Scripts, func() { serr = w.Delete(ctx, k) })
			case 2: // the entry vanished (DEL by hand, not heard); w loads and stores
				require.NoError(t, b.Client.Del(ctx, key(b, "jobs", k, "val")).Err())
				h.Call(1, redistest.Scripts, func() { _, serr = w.Get(ctx, k, constLoad("new")) })
			}
			h.Check(serr == nil, "call %d: %v", i, serr)
			if i%3 != 2 {
				_, ok = w.NearHasForTest(k)
				h.Check(!ok, "call %d: own near entry dropped", i)
			}
			waitGone(t, r, k)
			want := "new"
			if i%3 == 1 {
				want = "reloaded"
			}
			got, err := r.Get(ctx, k, constLoad("reloaded"))
			require.NoError(t, err)
			h.Check(got == want, "call %d: read %q, want %q", i, got, want)
		}
	})
}

// A Set whose every attempt times out (the server stalls past the read
// timeout) reports an unknown outcome; it ran, and its invalidation
// reaches the other process; its own near entry is dropped all the same.
func TestNear_fault_delay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		wrdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 100 * time.Millisecond })
		w := newNear(t, b, wrdb, 100, time.Hour)
		r := newProcess(t, b, 100, time.Hour).c
		h := redistest.NewHarness(t, f, "cache near Set delayed")
		setHeard(t, w, r, "k", "old")
		_, err := r.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		_, err = w.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)

		f.Delay(300 * time.Millisecond)
		err = w.Set(ctx, "k", "new")
		f.Delay(0)
		h.Counted()
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "Set: %v, want an unknown outcome", err)
		_, ok := w.NearHasForTest("k")
		h.Check(!ok, "own near entry dropped")
		waitGone(t, r, "k")
		got, err := r.Get(ctx, "k", noLoad(t))
		require.NoError(t, err)
		h.Check(got == "new", "read %q after the Set ran", got)
	})
}
