package session_test

import (
	"context"
	"errors"
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
	"github.com/ria-go/ria/session"
)

// The fault harness: every state-changing call of the package, through a
// proxy that lets the call's command run on the server and then swallows
// its reply and cuts the connection, so that go-redis (default retries)
// re-sends it. After each call the test compares the caller's answer with
// the server's state; an answer that disagrees with it counts as a
// disagreement. Each test logs one line of counts.

// viewsOf returns the view count of item in the ranking.
func viewsOf(t *testing.T, b *redistest.Backend, item string) int64 {
	t.Helper()
	score, err := b.Client.ZScore(t.Context(), key(b, "views"), item).Result()
	if err == redis.Nil {
		return 0
	}
	require.NoError(t, err)
	return int64(-score)
}

// UpdateToken whose reply is lost: a view counts once, the session is
// recorded once, and a call with no reply at all says its outcome is
// unknown.
func TestFaults_UpdateToken(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb)
		// The scripts cached on the server.
		require.NoError(t, s.UpdateToken(ctx, "warm", "u", "warm"))
		require.NoError(t, s.UpdateToken(ctx, "warm", "u", ""))
		h := redistest.NewHarness(t, f, "session UpdateToken")
		want := int64(0)
		for i := range 12 {
			tok := "tok-" + strconv.Itoa(i%3)
			item := "item"
			if i%4 == 3 {
				item = "" // a request without a view
			} else {
				want++
			}
			var err error
			h.Call(1+i%3, redistest.Scripts, func() { err = s.UpdateToken(ctx, tok, "user-"+tok, item) })
			require.NoError(t, err)
			h.Check(viewsOf(t, b, "item") == want, "request %d: %d views, want %d", i, viewsOf(t, b, "item"), want)
			user, ok, err := s.CheckToken(ctx, tok)
			require.NoError(t, err)
			h.Check(ok && user == "user-"+tok, "request %d: token %s maps to %q %v", i, tok, user, ok)
			viewed, err := s.Viewed(ctx, tok)
			require.NoError(t, err)
			h.Check(len(viewed) <= 1, "request %d: viewed %v: one item, once", i, viewed)
		}
		n, err := s.Sessions(ctx)
		require.NoError(t, err)
		h.Check(n == 4, "%d sessions, want 4", n)

		for _, item := range []string{"late", ""} {
			h.Call(4, redistest.Scripts, func() { err = s.UpdateToken(ctx, "tok-late", "u", item) })
			h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "no reply at all: %v", err)
		}
		h.Check(viewsOf(t, b, "late") == 1, "the unanswered view ran once: %d", viewsOf(t, b, "late"))
	})
}

// AddToCart and CacheRequest's page store (a SET) whose replies are lost:
// AddToCart's re-send is answered from the record of its first run, and
// the page store is naturally idempotent.
func TestFaults_AddToCart_CacheRequest(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb)
		require.NoError(t, s.AddToCart(ctx, "warm", "x", 1)) // the script cached
		h := redistest.NewHarness(t, f, "session AddToCart/CacheRequest")
		want := map[string]int{}
		for i := range 10 {
			item := "item-" + strconv.Itoa(i%3)
			count := i % 4
			if count == 0 {
				delete(want, item)
			} else {
				want[item] = count
			}
			var err error
			h.Call(1+i%2, redistest.Scripts, func() { err = s.AddToCart(ctx, "tok", item, count) })
			require.NoError(t, err)
			cart, err := s.Cart(ctx, "tok")
			require.NoError(t, err)
			h.Check(len(cart) == len(want), "after %d: cart %v, want %v", i, cart, want)
			for k, v := range want {
				h.Check(cart[k] == v, "after %d: cart %v, want %v", i, cart, want)
			}
		}
		var err error
		h.Call(4, redistest.Scripts, func() { err = s.AddToCart(ctx, "tok", "late", 5) })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "no reply at all: %v", err)

		// Page stores: the first request of a top item renders and stores.
		require.NoError(t, s.UpdateToken(ctx, "tok", "u", "7"))
		renders := 0
		render := func(_ context.Context, req string) (string, error) {
			renders++
			return "page " + strconv.Itoa(renders), nil
		}
		for i, req := range []string{"/?item=7", "/?item=7&page=2"} {
			var page string
			h.Call(1+i, redistest.Commands("set"), func() { page, err = s.CacheRequest(ctx, req, render) })
			require.NoError(t, err)
			stored, err := b.Client.Get(ctx, key(b, "page:"+sha256hex(req))).Result()
			require.NoError(t, err)
			h.Check(stored == page, "%s: answered %q, stored %q", req, page, stored)
			again, err := s.CacheRequest(ctx, req, render)
			require.NoError(t, err)
			h.Check(again == page && renders == i+1, "%s: served %q after %d renders", req, again, renders)
		}
		var page string
		h.Call(4, redistest.Commands("set"), func() { page, err = s.CacheRequest(ctx, "/?item=7&page=3", render) })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown) && page == "page 3", "no reply at all: %q %v", page, err)
	})
}

// ScheduleRowCache and the RowCacher's stores and drops whose replies are
// lost: the counts CacheDue answers are exact, and a row is written once
// per due time.
func TestFaults_rows(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb)
		clock := newFakeClock()
		inv := &inventory{}
		rc, err := s.RowCacher(inv.load, session.WithClock(clock.Now))
		require.NoError(t, err)
		// The scripts cached on the server.
		require.NoError(t, s.ScheduleRowCache(ctx, "warm", time.Second))
		_, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		require.NoError(t, b.Client.ZRem(ctx, key(b, "delay"), "warm").Err())
		clock.Add(time.Second)
		_, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "session ScheduleRowCache/CacheDue")
		// The row scripts that store or drop a row: EVALSHA sha numkeys
		// ..., with 6 keys (schedule, delay, row, generations, generation
		// counter, record) or 5 (a drop: no counter); the due read has 3.
		stores := func(cmd []string) bool {
			return redistest.Scripts(cmd) && len(cmd) > 2 && (cmd[2] == "6" || cmd[2] == "5")
		}

		for i, id := range []string{"a", "b", "c"} {
			h.Call(1+i, redistest.Scripts, func() { err = s.ScheduleRowCache(ctx, id, time.Second) })
			require.NoError(t, err)
			h.Check(b.Client.ZScore(ctx, key(b, "schedule"), id).Val() < 0, "%s due at once", id)
			h.Check(b.Client.ZScore(ctx, key(b, "delay"), id).Val() == 1000, "%s every second", id)
		}
		// One pass: the due read, then a store per row; each store loses
		// its reply once.
		loads := inv.loads.Load()
		var n int
		h.Call(3, stores, func() { n, err = rc.CacheDue(ctx) })
		require.NoError(t, err)
		h.Check(n == 3, "CacheDue answered %d, want 3", n)
		h.Check(inv.loads.Load() == loads+3, "loaded %d times, want 3", inv.loads.Load()-loads)
		for _, id := range []string{"a", "b", "c"} {
			h.Check(rowVersion(t, s, id) > 0, "%s cached", id)
			due := b.Client.ZScore(ctx, key(b, "schedule"), id).Val()
			h.Check(due == float64(clock.Now().Add(time.Second).UnixMilli()), "%s next due %v", id, due)
		}

		// Unscheduling through lost replies; then a drop of a row left
		// without a delay, through a lost reply.
		h.Call(2, redistest.Scripts, func() { err = s.ScheduleRowCache(ctx, "a", -1) })
		require.NoError(t, err)
		h.Check(rowVersion(t, s, "a") == 0 && b.Client.ZScore(ctx, key(b, "schedule"), "a").Err() == redis.Nil, "a unscheduled")
		require.NoError(t, b.Client.ZRem(ctx, key(b, "delay"), "b").Err())
		clock.Add(time.Second)
		h.Call(2, stores, func() { n, err = rc.CacheDue(ctx) })
		require.NoError(t, err)
		h.Check(n == 2, "CacheDue answered %d, want 2 (b dropped, c stored)", n)
		h.Check(rowVersion(t, s, "b") == 0, "b dropped")
		h.Check(rowVersion(t, s, "c") == int(inv.loads.Load()), "c stored")

		h.Call(4, redistest.Scripts, func() { err = s.ScheduleRowCache(ctx, "d", time.Second) })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "no reply at all: %v", err)
	})
}

// Clean and Rescale whose replies are lost: the counts deleted are exact,
// never below the limit, and the ranking is halved once.
func TestFaults_Clean_Rescale(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb)
		c, err := s.Cleaner(5, session.WithBatch(2))
		require.NoError(t, err)
		r, err := s.Rescaler()
		require.NoError(t, err)
		// The scripts cached on the server.
		_, err = c.Clean(ctx)
		require.NoError(t, err)
		require.NoError(t, r.Rescale(ctx))
		for i := range 12 {
			b.FastForward(time.Millisecond)
			require.NoError(t, s.UpdateToken(ctx, "tok-"+strconv.Itoa(10+i), "u", "item"))
		}
		h := redistest.NewHarness(t, f, "session Clean/Rescale")
		var n int
		// Four batches (2, 2, 2, 1), each losing the reply of its first
		// attempt: every other script command loses its reply.
		var seen atomic.Int64
		everyOther := func(cmd []string) bool { return redistest.Scripts(cmd) && seen.Add(1)%2 == 1 }
		h.Call(4, everyOther, func() { n, err = c.Clean(ctx) })
		require.NoError(t, err)
		left, err := s.Sessions(ctx)
		require.NoError(t, err)
		h.Check(n == 7 && left == 5, "Clean answered %d deleted, %d left; want 7 and 5", n, left)
		for i := range 12 {
			_, ok, err := s.CheckToken(ctx, "tok-"+strconv.Itoa(10+i))
			require.NoError(t, err)
			h.Check(ok == (i >= 7), "tok-%d: logged in %v", 10+i, ok)
		}

		require.NoError(t, b.Client.ZAdd(ctx, key(b, "views"), redis.Z{Member: "item", Score: -64}).Err())
		want := -64.0
		for i := range 3 {
			h.Call(1+i, redistest.Scripts, func() { err = r.Rescale(ctx) })
			require.NoError(t, err)
			want /= 2
			got := b.Client.ZScore(ctx, key(b, "views"), "item").Val()
			h.Check(got == want, "rescale %d: %v, want %v (halved once)", i, got, want)
		}
		h.Call(4, redistest.Scripts, func() { err = r.Rescale(ctx) })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "no reply at all: %v", err)
		h.Check(b.Client.ZScore(ctx, key(b, "views"), "item").Val() == want/2, "the unanswered rescale ran once")
	})
}

// UpdateToken and AddToCart from four goroutines through replies held back
// longer than the read timeout (2ms): go-redis re-sends, and the view
// counts are exact. A call that got no reply says its outcome is unknown;
// whether it ran shows in the server's state (each call has a session of
// its own).
func TestFaults_delays(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const (
			calls      = 300
			goroutines = 4
		)
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = 2*time.Millisecond, time.Second, time.Minute
		})
		s := newStore(t, b, rdb)
		reader := newStore(t, b, b.Client) // reads the outcome without faults
		// The scripts cached on the server (through the reader: the 2ms
		// read timeout may be too short for anything on a loaded machine).
		require.NoError(t, reader.UpdateToken(ctx, "warm", "u", "warm"))
		require.NoError(t, reader.AddToCart(ctx, "warm", "x", 1))

		var (
			mu      sync.Mutex
			unknown = map[string]bool{} // by token: false answered ok
			next    atomic.Int64
			wg      sync.WaitGroup
			failure = make(chan error, calls)
		)
		stop := f.Stall()
		for range goroutines {
			wg.Go(func() {
				for i := next.Add(1); i <= calls; i = next.Add(1) {
					tok := "tok-" + strconv.FormatInt(i, 10)
					var err error
					if i%3 == 0 {
						err = s.AddToCart(ctx, tok, "item", 2)
					} else {
						err = s.UpdateToken(ctx, tok, "u", "item")
					}
					if err != nil && !errors.Is(err, ria.ErrOutcomeUnknown) {
						failure <- err
						continue
					}
					mu.Lock()
					unknown[tok] = err != nil
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		stop()
		close(failure)
		for err := range failure {
			t.Errorf("a call failed: %v", err)
		}

		disagree, nUnknown, views := 0, 0, int64(0)
		for i := int64(1); i <= calls; i++ {
			tok := "tok-" + strconv.FormatInt(i, 10)
			unk := unknown[tok]
			if unk {
				nUnknown++
			}
			var ran bool
			if i%3 == 0 {
				cart, err := reader.Cart(ctx, tok)
				require.NoError(t, err)
				ran = cart["item"] == 2
			} else {
				_, ok, err := reader.CheckToken(ctx, tok)
				require.NoError(t, err)
				ran = ok
				viewed, err := reader.Viewed(ctx, tok)
				require.NoError(t, err)
				if ran != (len(viewed) == 1) {
					disagree++ // half a request
				}
				if ran {
					views++
				}
			}
			if !ran && !unk {
				disagree++ // answered ok, did not happen
			}
		}
		if got := viewsOf(t, b, "item"); got != views {
			disagree++
			t.Errorf("the ranking counts %d views of item, %d requests viewed it", got, views)
		}
		n, err := reader.Sessions(ctx)
		require.NoError(t, err)
		t.Logf("fault harness: session UpdateToken+AddToCart under 0-3ms stalls, ReadTimeout 2ms, %d goroutines: calls=%d unknown=%d sessions=%d views=%d disagreements=%d",
			goroutines, calls, nUnknown, n-1, views, disagree)
		assert.Zero(t, disagree)
		assert.Len(t, unknown, calls)
	})
}

// Logout and ClearCart whose replies are lost: a session that existed is
// reported so once (the re-send is answered from the record of the first
// run, which deleted it), and a cleared cart stays empty.
func TestFaults_Logout_ClearCart(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb)
		// The scripts cached on the server.
		_, err := s.Logout(ctx, "warm")
		require.NoError(t, err)
		require.NoError(t, s.ClearCart(ctx, "warm"))
		for i := range 5 {
			tok := "tok-" + strconv.Itoa(i)
			require.NoError(t, s.UpdateToken(ctx, tok, "user-"+tok, "item"))
			require.NoError(t, s.AddToCart(ctx, tok, "item", 2))
		}
		h := redistest.NewHarness(t, f, "session Logout/ClearCart")
		gone := func(tok string) bool {
			_, ok, err := s.CheckToken(ctx, tok)
			require.NoError(t, err)
			cart, err := s.Cart(ctx, tok)
			require.NoError(t, err)
			viewed, err := s.Viewed(ctx, tok)
			require.NoError(t, err)
			return !ok && len(cart) == 0 && len(viewed) == 0
		}

		for i := range 3 {
			tok := "tok-" + strconv.Itoa(i)
			var existed bool
			h.Call(1+i, redistest.Scripts, func() { existed, err = s.Logout(ctx, tok) })
			require.NoError(t, err)
			h.Check(existed, "Logout %s answered false after %d lost replies", tok, 1+i)
			h.Check(gone(tok), "%s still has a login, a cart or views", tok)
		}
		var existed bool
		h.Call(2, redistest.Scripts, func() { existed, err = s.Logout(ctx, "tok-0") })
		require.NoError(t, err)
		h.Check(!existed, "a second Logout answered true")
		n, err := s.Sessions(ctx)
		require.NoError(t, err)
		h.Check(n == 2, "%d sessions left, want 2", n)

		h.Call(2, redistest.Scripts, func() { err = s.ClearCart(ctx, "tok-3") })
		require.NoError(t, err)
		cart, err := s.Cart(ctx, "tok-3")
		require.NoError(t, err)
		h.Check(len(cart) == 0, "cart after ClearCart: %v", cart)
		_, ok, err := s.CheckToken(ctx, "tok-3")
		require.NoError(t, err)
		h.Check(ok, "ClearCart logged tok-3 out")

		// No reply at all: the outcome is unknown; the call ran once.
		h.Call(4, redistest.Scripts, func() { existed, err = s.Logout(ctx, "tok-4") })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown) && !existed, "no reply at all: %v %v", existed, err)
		h.Check(gone("tok-4"), "the unanswered Logout did not run")
		require.NoError(t, s.AddToCart(ctx, "tok-3", "item", 1))
		h.Call(4, redistest.Scripts, func() { err = s.ClearCart(ctx, "tok-3") })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "no reply at all: %v", err)
		cart, err = s.Cart(ctx, "tok-3")
		require.NoError(t, err)
		h.Check(len(cart) == 0, "the unanswered ClearCart did not run: %v", cart)
	})
}
