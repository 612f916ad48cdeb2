package cache_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// The fault harness: every state-changing call of the package, through a
// proxy that lets the call's command run on the server and then swallows
// its reply and cuts the connection, so that go-redis (default retries)
// re-sends it. After each call the test compares the caller's answer with
// the server's state; a call whose answer disagrees with it counts as a
// disagreement. Each test logs one line of counts.

func TestFaults_Counter_Incr(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		c := newCounter(t, rdb, b, nil)
		_, err := c.Incr(ctx, "k", 1) // the script cached on the server
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "cache Counter.Incr")
		want := int64(1)
		for i := range 30 {
			by := int64(i%5) - 1
			var n int64
			h.Call(1, redistest.Scripts, func() { n, err = c.Incr(ctx, "k", by) })
			require.NoError(t, err)
			want += by
			h.Check(n == want, "Incr answered %d, want %d", n, want)
			h.Check(counterValue(t, b, "views", "k") == want, "the counter holds %d, want %d", counterValue(t, b, "views", "k"), want)
		}
		// Two lost replies in a row: the second re-send is answered too.
		h.Call(2, redistest.Scripts, func() { _, err = c.Incr(ctx, "k", 1) })
		require.NoError(t, err)
		want++
		h.Check(counterValue(t, b, "views", "k") == want, "after two lost replies: %d, want %d", counterValue(t, b, "views", "k"), want)
	})
}

// counterValue reads the counter name:k (0 if missing).
func counterValue(t *testing.T, b *redistest.Backend, name, k string) int64 {
	t.Helper()
	n, err := b.Client.Get(context.Background(), key(b, name, k, "count")).Int64()
	if err == redis.Nil {
		return 0
	}
	require.NoError(t, err)
	return n
}

// The restore path: the look that takes the lease, the restore's set, and
// the waiter's look and wait, each losing a reply.
func TestFaults_Counter_restore(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		d := newDB(t, map[string]int64{"job1": 100})
		rdb, _, f := b.FaultyClient()
		c := newCounter(t, rdb, b, d.restore)
		warm, err := c.Incr(ctx, "job0", 1) // the scripts cached on the server
		require.NoError(t, err)
		require.Equal(t, int64(1), warm)
		h := redistest.NewHarness(t, f, "cache Counter.Incr/Get restore")
		count := key(b, "views", "job1", "count")
		for i, lose := range []int{1, 2} { // the look's reply; the look's and the set's
			require.NoError(t, b.Client.Del(ctx, count).Err())
			restores := d.restores.Load()
			var n int64
			h.Call(lose, redistest.Scripts, func() { n, err = c.Incr(ctx, "job1", 3) })
			require.NoError(t, err)
			h.Check(n == 103, "Incr %d answered %d, want 103", i, n)
			h.Check(counterValue(t, b, "views", "job1") == 103, "the counter holds %d", counterValue(t, b, "views", "job1"))
			h.Check(d.restores.Load() == restores+1, "restored %d times", d.restores.Load()-restores)
			h.Check(len(b.Keys(key(b, "views", "job1", "count.lease"))) == 0, "a lease is left")
		}
		require.NoError(t, b.Client.Del(ctx, count).Err())
		var n int64
		h.Call(2, redistest.Scripts, func() { n, err = c.Get(ctx, "job1") })
		require.NoError(t, err)
		h.Check(n == 100 && counterValue(t, b, "views", "job1") == 100, "Get answered %d, the counter holds %d", n, counterValue(t, b, "views", "job1"))

		// A waiter in another process: its look (which registers it) and
		// its BLMOVE each lose a reply.
		require.NoError(t, b.Client.Del(ctx, count).Err())
		d.gated[d.restores.Load()+1] = true
		restorer := newCounter(t, b.Client, b, d.restore)
		first := make(chan int64, 1)
		go func() {
			n, _ := restorer.Incr(ctx, "job1", 1)
			first <- n
		}()
		require.Eventually(t, func() bool { return len(b.Keys(key(b, "views", "job1", "count.lease"))) == 1 }, 20*time.Second, time.Millisecond)
		h.Call(2, redistest.Commands("evalsha", "blmove"), func() {
			got := make(chan int64, 1)
			go func() {
				n, err := c.Incr(ctx, "job1", 1)
				if err != nil {
					n = -1
				}
				got <- n
			}()
			waitForWaits(t, b, "views", "job1", 1)
			require.Eventually(t, func() bool { return f.Armed() == 1 }, 20*time.Second, time.Millisecond, "the look lost its reply")
			d.open()
			n = recv(t, got, 20*time.Second, nil)
		})
		h.Check(n == 102, "the waiter answered %d, want 102", n)
		h.Check(<-first == 101, "the restorer")
		h.Check(counterValue(t, b, "views", "job1") == 102, "the counter holds %d", counterValue(t, b, "views", "job1"))
	})
}

// Incr through a client whose replies are held back part of the time for
// longer than its 1ms read timeout (a stalled server or network): go-redis
// re-sends; the counter ends exactly at the number of calls that counted,
// once each. A call that never got a reply says its outcome is unknown;
// whether it counted is read from the records the calls left (the record
// window is long here: a minute's pool timeout). The replies lost are the
// reads that timed out.
func TestFaults_Counter_Incr_delays(t *testing.T) {
	for _, goroutines := range []int{1, 8} {
		t.Run(strconv.Itoa(goroutines), func(t *testing.T) {
			redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
				const calls = 3000
				ctx := t.Context()
				var timeouts atomic.Int64
				rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
					o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = time.Millisecond, time.Second, time.Minute
					o.Dialer = countTimeouts(o.Dialer, &timeouts)
				})
				c := newCounter(t, rdb, b, nil)
				stop := f.Stall()
				var (
					ok, unknown atomic.Int64
					mu          sync.Mutex
					answers     []int64
					wg          sync.WaitGroup
					next        atomic.Int64
					other       = make(chan error, calls)
				)
				for range goroutines {
					wg.Go(func() {
						for next.Add(1) <= calls {
							n, err := c.Incr(ctx, "k", 1)
							switch {
							case err == nil:
								ok.Add(1)
								mu.Lock()
								answers = append(answers, n)
								mu.Unlock()
							case errors.Is(err, ria.ErrOutcomeUnknown):
								unknown.Add(1)
							default:
								other <- err
							}
						}
					})
				}
				wg.Wait()
				stop()
				close(other)
				for err := range other {
					t.Errorf("a call failed: %v", err)
				}
				ran := int64(len(b.Keys(key(b, "views", "k", "once:*"))))
				final := counterValue(t, b, "views", "k")
				slices.Sort(answers)
				dup := 0
				for i := 1; i < len(answers); i++ {
					if answers[i] == answers[i-1] {
						dup++
					}
				}
				disagree := dup
				if final != ran {
					disagree += int(max(final-ran, ran-final))
				}
				if ran < ok.Load() || ran > ok.Load()+unknown.Load() {
					disagree++
				}
				if len(answers) > 0 && answers[len(answers)-1] > final {
					disagree++
				}
				t.Logf("fault harness: cache Counter.Incr under 0-3ms stalls, ReadTimeout 1ms, %d goroutine(s): calls=%d lost=%d disagreements=%d (ok=%d unknown=%d counted=%d)",
					goroutines, calls, timeouts.Load(), disagree, ok.Load(), unknown.Load(), final)
				assert.Positive(t, timeouts.Load(), "replies were lost: the fault happened")
				assert.Zero(t, disagree)
				assert.Equal(t, ran, final, "the counter counts each call that ran once")
				assert.Zero(t, dup, "no two calls got the same value")
			})
		})
	}
}

// countTimeouts wraps dial so that the reads of its connections that time
// out (replies lost to the read timeout) are counted in n.
func countTimeouts(dial func(ctx context.Context, network, addr string) (net.Conn, error), n *atomic.Int64) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return timeoutConn{conn, n}, nil
	}
}

// timeoutConn counts its reads that time out in n.
type timeoutConn struct {
	net.Conn
	n *atomic.Int64
}

func (c timeoutConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		c.n.Add(1)
	}
	return n, err
}

func TestFaults_Guard_Allow(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		g, err := cache.NewGuard(rdb, "reset", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "cache Guard.Allow")
		for i := range 20 {
			user := "u" + strconv.Itoa(i)
			var ok bool
			h.Call(1, redistest.Commands("set"), func() { ok, err = g.Allow(ctx, user, time.Minute) })
			require.NoError(t, err)
			h.Check(ok, "the first call for %s was refused", user)
			h.Check(len(b.Keys(key(b, "reset", user, "guard"))) == 1, "no guard key for %s", user)
			h.Call(1, redistest.Commands("set"), func() { ok, err = g.Allow(ctx, user, time.Minute) })
			require.NoError(t, err)
			h.Check(!ok, "the second call for %s was let through", user)
		}
	})
}

func TestFaults_Latest_Push(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		l, err := cache.NewLatest[int](rdb, "views", 50, cache.WithPrefix(b.Prefix), cache.WithTTL(time.Hour))
		require.NoError(t, err)
		require.NoError(t, l.Push(ctx, "warm", 0)) // the script cached on the server
		h := redistest.NewHarness(t, f, "cache Latest.Push")
		var want []int
		for i := range 20 {
			h.Call(1, redistest.Scripts, func() { err = l.Push(ctx, "site", i, i+100) })
			require.NoError(t, err)
			want = append([]int{i + 100, i}, want...)
			got, err := l.List(ctx, "site")
			require.NoError(t, err)
			h.Check(slices.Equal(want, got), "after push %d the list holds %v, want %v", i, got, want)
		}
	})
}

func TestFaults_Top(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		top, err := cache.NewTop[string](rdb, "jobs", cache.WithPrefix(b.Prefix), cache.WithTTL(time.Hour))
		require.NoError(t, err)
		// The scripts cached on the server.
		require.NoError(t, top.Add(ctx, "warm", "x", 1))
		_, err = top.Incr(ctx, "warm", "x", 1)
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "cache Top.Incr/Add")
		score := func(m string) float64 {
			s, err := b.Client.ZScore(ctx, key(b, "jobs", "site", "top"), `"`+m+`"`).Result()
			require.NoError(t, err)
			return s
		}
		want := 0.0
		for i := range 20 {
			var got float64
			h.Call(1, redistest.Scripts, func() { got, err = top.Incr(ctx, "site", "go", 1.5) })
			require.NoError(t, err)
			want += 1.5
			h.Check(got == want && score("go") == want, "Incr %d answered %v, the ranking holds %v, want %v", i, got, want, score("go"))
			h.Call(1, redistest.Scripts, func() { err = top.Add(ctx, "site", "rust", float64(i)) })
			require.NoError(t, err)
			h.Check(score("rust") == float64(i), "Add %d: the ranking holds %v", i, score("rust"))
		}
	})
}

func TestFaults_Cache_SetDelete(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		c := newCache[string](t, rdb, b)
		require.NoError(t, c.Set(ctx, "k", "warm")) // the scripts cached on the server
		require.NoError(t, c.Delete(ctx, "k"))
		h := redistest.NewHarness(t, f, "cache Cache.Set/Delete")
		val := key(b, "jobs", "k", "val")
		for i := range 20 {
			v := "v" + strconv.Itoa(i)
			var err error
			h.Call(1, redistest.Scripts, func() { err = c.Set(ctx, "k", v) })
			require.NoError(t, err)
			h.Check(raw(t, b, val) == `"`+v+`"`, "after Set(%s) the entry holds %q", v, raw(t, b, val))
			h.Call(1, redistest.Scripts, func() { err = c.Delete(ctx, "k") })
			require.NoError(t, err)
			h.Check(len(b.Keys("")) == 0, "after Delete: %v", b.Keys(""))
		}
	})
}

// Get's miss: the read that takes the lease and the store each lose a
// reply; a waiter's registration and its BLMOVE too. Every caller gets the
// value stored, loaded once, and no lease is left.
func TestFaults_Cache_Get(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		var logs logBuffer
		c := newCache[string](t, rdb, b, cache.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		l := newGatedLoader(t)
		_, err := c.Get(ctx, "warm", l.load) // the scripts cached on the server
		require.NoError(t, err)
		require.NoError(t, c.Delete(ctx, "warm"))
		other := newCache[string](t, b.Client, b)
		require.NoError(t, other.WarmWaitForTest(ctx, "warm"))
		h := redistest.NewHarness(t, f, "cache Cache.Get")
		checkStored := func(k, v string) {
			t.Helper()
			h.Check(raw(t, b, key(b, "jobs", k, "val")) == `"`+v+`"`, "Get(%s) answered %s; the entry holds %q", k, v, raw(t, b, key(b, "jobs", k, "val")))
		}
		for i, tc := range []struct {
			lose  int
			match func([]string) bool
		}{
			{1, redistest.Commands("set")}, // the read that takes the lease
			{1, redistest.Scripts},         // the store
			{2, redistest.AnyWrite},        // both
			{1, redistest.Commands("set")}, // a hit
		} {
			k := "k" + strconv.Itoa(i)
			if i == 3 {
				k = "k0"
			}
			calls := l.calls.Load()
			var v string
			h.Call(tc.lose, tc.match, func() { v, err = c.Get(ctx, k, l.load) })
			require.NoError(t, err)
			checkStored(k, v)
			if i < 3 {
				h.Check(l.calls.Load() == calls+1, "loads: %d", l.calls.Load()-calls)
			} else {
				h.Check(l.calls.Load() == calls, "a hit loaded")
			}
		}
		h.Check(!strings.Contains(logs.String(), "not stored"), "a store was reported lost: %s", logs.String())

		// A waiter (c) of another process's load: its registration and
		// its BLMOVE lose their replies.
		gated := newGatedLoader(t, 1)
		loaded := make(chan string, 1)
		go func() {
			v, _ := other.Get(ctx, "w", gated.load)
			loaded <- v
		}()
		require.Eventually(t, func() bool { return gated.calls.Load() == 1 }, 20*time.Second, time.Millisecond)
		var v string
		h.Call(2, redistest.Commands("evalsha", "blmove"), func() {
			got := make(chan string, 1)
			go func() {
				v, err := c.Get(ctx, "w", gated.load)
				if err != nil {
					v = err.Error()
				}
				got <- v
			}()
			waitForWaiters(t, 1, c)
			gated.open()
			v = recv(t, got, 20*time.Second, nil)
		})
		h.Check(v == "v1" && <-loaded == "v1", "the waiter got %q", v)
		checkStored("w", "v1")
		h.Check(gated.calls.Load() == 1, "loads: %d", gated.calls.Load())
		for _, k := range b.Keys(key(b, "jobs", "*", "val")) {
			h.Check(!strings.Contains(raw(t, b, k), cache.MarkerForTest("", false)), "a lease is left at %s", k)
		}
	})
}

// A background refresh whose check and store lose their replies: the entry
// is refreshed once and no refresh lease is left.
func TestFaults_Cache_refresh(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		c := newCache[string](t, rdb, b, cache.WithTTL(time.Minute), cache.WithRefreshAhead(50*time.Second))
		l := newGatedLoader(t)
		h := redistest.NewHarness(t, f, "cache Cache.Get refresh")
		val := key(b, "jobs", "k", "val")
		for i := range 2 { // the first one also caches the scripts
			require.NoError(t, b.Client.Set(ctx, val, `"old"`, 30*time.Second).Err()) // due
			calls := l.calls.Load()
			var v string
			var err error
			lose := 0
			if i > 0 {
				lose = 2
			}
			h.Call(lose, redistest.Scripts, func() {
				v, err = c.Get(ctx, "k", l.load)
				c.Wait()
			})
			require.NoError(t, err)
			h.Check(v == "old", "the Get answered %q", v)
			h.Check(l.calls.Load() == calls+1, "refreshes: %d", l.calls.Load()-calls)
			h.Check(raw(t, b, val) == `"v`+strconv.FormatInt(calls+1, 10)+`"`, "the entry holds %q", raw(t, b, val))
			h.Check(len(b.Keys(key(b, "jobs", "k", "lease"))) == 0, "a refresh lease is left")
		}
	})
}

// The background check that found the entry expired took its lease (2:
// load); a waiter then registered on that lease (the marker gains ':w').
// A re-send of the check must answer 2 again, or nobody loads and releases
// the lease and the waiters sit it out.
func TestCache_refreshCheck_resentAfterWaiter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c := newCache[string](t, b.Client, b, cache.WithRefreshAhead(time.Second))
		n, err := c.RefreshCheckForTest(ctx, "k", "tokA")
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "the entry is missing: the check takes its lease")
		require.NoError(t, c.RegisterForTest(ctx, "k", "tokA"))
		require.Equal(t, cache.MarkerForTest("tokA", true), raw(t, b, key(b, "jobs", "k", "val")))
		n, err = c.RefreshCheckForTest(ctx, "k", "tokA") // the re-send
		require.NoError(t, err)
		assert.Equal(t, int64(2), n, "a re-sent check holds its lease")
		n, err = c.RefreshCheckForTest(ctx, "k", "tokB") // someone else
		require.NoError(t, err)
		assert.Equal(t, int64(0), n, "another caller's check")
	})
}
