package config_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/config"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

func TestMain(m *testing.M) { redistest.Main(m) }

type limits struct {
	Rate  int      `json:"rate"`
	Hosts []string `json:"hosts"`
}

func newStore(t *testing.T, b *redistest.Backend, c config.Client, opts ...config.Option) *config.Store {
	t.Helper()
	s, err := config.New(c, append([]config.Option{config.WithPrefix(b.Prefix)}, opts...)...)
	require.NoError(t, err)
	return s
}

func TestStore_setGetDelete(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := newStore(t, b, b.Client)
		var got limits
		require.ErrorIs(t, s.Get(ctx, "limits", "api", &got), config.ErrNotFound)
		require.NoError(t, s.Set(ctx, "limits", "api", 0)) // loads the scripts on the key's node
		require.NoError(t, s.Delete(ctx, "limits", "api"))
		want := limits{Rate: 10, Hosts: []string{"a", "b"}}
		rt, _ := b.Count.Delta(func() { require.NoError(t, s.Set(ctx, "limits", "api", want)) })
		assert.EqualValues(t, 1, rt, "Set round trips")
		require.NoError(t, s.Get(ctx, "limits", "api", &got))
		assert.Equal(t, want, got)
		raw, err := b.Client.Get(ctx, s.Key("limits", "api")).Result()
		require.NoError(t, err)
		assert.JSONEq(t, `{"rate":10,"hosts":["a","b"]}`, raw)

		// Cached: no round trip.
		rt, _ = b.Count.Delta(func() { require.NoError(t, s.Get(ctx, "limits", "api", &got)) })
		assert.EqualValues(t, 0, rt, "cached Get round trips")

		require.NoError(t, s.Delete(ctx, "limits", "api"))
		require.ErrorIs(t, s.Get(ctx, "limits", "api", &got), config.ErrNotFound)
		require.NoError(t, s.Delete(ctx, "limits", "api"), "deleting a missing value")
		// No value is left; what remains is the reply record of each of the
		// five Set and Delete calls, in the value's slot, for the client's
		// retry window (see doc.go, Lost replies).
		records := b.Keys(b.Prefix + "*")
		assert.Len(t, records, 5, "one reply record per Set or Delete call")
		for _, k := range records {
			assert.True(t, strings.HasPrefix(k, b.Prefix+"{limits:api}:once:"), "a reply record: %s", k)
			assert.Equal(t, "string", b.Client.Type(ctx, k).Val(), k)
			assert.Positive(t, b.Client.PTTL(ctx, k).Val(), "%s lives for the retry window", k)
		}
	})
}

// Without notifications, a value read is served from memory for the max
// age, then read again (one round trip): the book's once-a-second check.
func TestStore_maxAge(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		var now atomic.Int64
		now.Store(time.Now().UnixNano())
		reader := newStore(t, b, b.Client, config.WithMaxAge(time.Second))
		reader.SetClock(func() time.Time { return time.Unix(0, now.Load()) })
		writer := newStore(t, b, b.Client)

		require.NoError(t, writer.SetMaintenance(ctx, true))
		on, err := reader.UnderMaintenance(ctx)
		require.NoError(t, err)
		assert.True(t, on)
		require.NoError(t, writer.SetMaintenance(ctx, false))
		rt, _ := b.Count.Delta(func() { on, err = reader.UnderMaintenance(ctx) })
		require.NoError(t, err)
		assert.True(t, on, "still cached: the reader runs no Run loop")
		assert.EqualValues(t, 0, rt)

		now.Add(int64(time.Second))
		rt, _ = b.Count.Delta(func() { on, err = reader.UnderMaintenance(ctx) })
		require.NoError(t, err)
		assert.False(t, on, "re-read after the max age")
		assert.EqualValues(t, 1, rt)

		// Max age 0: every read asks Redis.
		direct := newStore(t, b, b.Client, config.WithMaxAge(0))
		for range 3 {
			rt, _ = b.Count.Delta(func() { _, err = direct.UnderMaintenance(ctx) })
			require.NoError(t, err)
			assert.EqualValues(t, 1, rt)
		}
	})
}

// changes runs s.Run with a change function feeding the returned channel,
// and waits for the first subscription.
func runStore(t *testing.T, b *redistest.Backend, c config.Client, opts ...config.Option) (*config.Store, <-chan string) {
	t.Helper()
	ch := make(chan string, 1024)
	s := newStore(t, b, c, append(opts, config.WithOnChange(func(typ, component string) { ch <- typ + "/" + component }))...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	waitFor(t, ch, "/") // subscribed
	return s, ch
}

func waitFor(t *testing.T, ch <-chan string, want string) time.Time {
	t.Helper()
	return waitForWithin(t, ch, want, 30*time.Second)
}

// waitForWithin is waitFor failing after d (a fail-safe: it bounds a hang
// only).
func waitForWithin(t *testing.T, ch <-chan string, want string, d time.Duration) time.Time {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case got := <-ch:
			if got == want {
				return time.Now()
			}
		case <-timeout:
			t.Fatalf("no change %q notified", want)
		}
	}
}

// A change made through another client reaches a running Store's cache by
// notification (the max age is an hour here): median latency < 100 ms.
func TestStore_notification(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		other, _ := b.NewClient()
		writer := newStore(t, b, other)
		reader, ch := runStore(t, b, b.Client, config.WithMaxAge(time.Hour))

		var lat []time.Duration
		for i := range 20 {
			start := time.Now()
			require.NoError(t, writer.Set(ctx, "limits", "api", limits{Rate: i}))
			lat = append(lat, waitFor(t, ch, "limits/api").Sub(start))
			var got limits
			require.NoError(t, reader.Get(ctx, "limits", "api", &got))
			require.Equal(t, i, got.Rate, "the reader sees the change after its notification")
			rt, _ := b.Count.Delta(func() { require.NoError(t, reader.Get(ctx, "limits", "api", &got)) })
			require.EqualValues(t, 0, rt, "cached again")
		}
		require.NoError(t, writer.Delete(ctx, "limits", "api"))
		waitFor(t, ch, "limits/api")
		var got limits
		require.ErrorIs(t, reader.Get(ctx, "limits", "api", &got), config.ErrNotFound)

		slices.Sort(lat)
		t.Logf("notification latency: median %v, max %v", lat[len(lat)/2], lat[len(lat)-1])
		assert.Less(t, lat[len(lat)/2], 100*time.Millisecond, "median notification latency")
	})
}

// On a Router's client (independent servers) and on a Ring, a Set's
// PUBLISH runs on the server of the value's key, which passes it on to no
// other: Run subscribes on every server, so a subscribed Store hears the
// changes of values on each of them (the max age is an hour here).
func TestStore_Run_everyServer(t *testing.T) {
	b := redistest.New(t, redistest.Sharded)
	addrs := map[string]string{}
	for i, a := range b.Addrs() {
		addrs[fmt.Sprint("s", i)] = a
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: addrs})
	t.Cleanup(func() { _ = ring.Close() })
	r, err := shard.NewRouter(b.Addrs()...)
	require.NoError(t, err)
	for name, c := range map[string]config.Client{"router": b.Client, "ring": ring} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			reader, ch := runStore(t, b, c, config.WithMaxAge(time.Hour))
			writer := newStore(t, b, c)
			servers := map[int]bool{}
			for i := range 12 {
				comp := fmt.Sprint("c", i)
				servers[r.Server(reader.Key("limits", comp))] = true
				require.NoError(t, writer.Set(ctx, "limits", comp, 1))
				waitForWithin(t, ch, "limits/"+comp, 10*time.Second)
				var v int
				require.NoError(t, reader.Get(ctx, "limits", comp, &v)) // cached for an hour
				require.NoError(t, writer.Set(ctx, "limits", comp, 2))
				waitForWithin(t, ch, "limits/"+comp, 10*time.Second)
				require.NoError(t, reader.Get(ctx, "limits", comp, &v))
				assert.Equal(t, 2, v, "component %s: the change is seen", comp)
			}
			require.Len(t, servers, len(b.Addrs()), "values on every server")
		})
	}
}

// A cut subscription is re-made: the Store drops its cache (changes may
// have been missed) and gets later notifications; on a Router, one
// subscription per server.
func TestStore_resubscribes(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		c, _, f := b.FaultyClient()
		reader, ch := runStore(t, b, c, config.WithMaxAge(time.Hour))
		writer := newStore(t, b, b.Client)
		require.NoError(t, writer.Set(ctx, "limits", "api", limits{Rate: 1}))
		waitFor(t, ch, "limits/api")
		var got limits
		require.NoError(t, reader.Get(ctx, "limits", "api", &got))

		f.Cut()
		waitFor(t, ch, "/") // resubscribed, cache dropped
		require.NoError(t, writer.Set(ctx, "limits", "api", limits{Rate: 2}))
		waitFor(t, ch, "limits/api")
		require.NoError(t, reader.Get(ctx, "limits", "api", &got))
		assert.Equal(t, 2, got.Rate)
	})
}

func TestStore_wrongType(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := newStore(t, b, b.Client, config.WithMaxAge(0))
		key := s.Key("limits", "api")
		setup := func() { require.NoError(t, s.Set(ctx, "limits", "other", limits{Rate: 1})) }
		b.CheckWrongTypes(t, setup, func() error { return s.Set(ctx, "limits", "api", limits{Rate: 2}) },
			redistest.KeyRole{Key: key, Type: "string", Role: "config value"})
		b.CheckWrongTypes(t, setup, func() error { return s.Delete(ctx, "limits", "api") },
			redistest.KeyRole{Key: key, Type: "string", Role: "config value"})
		b.CheckWrongTypes(t, setup, func() error { var l limits; return s.Get(ctx, "limits", "api", &l) },
			redistest.KeyRole{Key: key, Type: "string", Role: "config value"})
	})
}

// go-redis re-sends Set and Delete after a lost reply: the answer is
// success and the state is the one asked for.
func TestStore_lostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		c, _, f := b.FaultyClient()
		s := newStore(t, b, c, config.WithMaxAge(0))
		const calls = 10
		disagreements := 0
		for i := range calls {
			f.LoseReply(1, redistest.Scripts)
			err := s.Set(ctx, "limits", "api", limits{Rate: i})
			var got limits
			if err != nil || s.Get(ctx, "limits", "api", &got) != nil || got.Rate != i {
				disagreements++
				t.Logf("Set %d: %v, then %+v", i, err, got)
			}
			f.LoseReply(1, redistest.Scripts)
			err = s.Delete(ctx, "limits", "api")
			if err != nil || !errors.Is(s.Get(ctx, "limits", "api", &got), config.ErrNotFound) {
				disagreements++
				t.Logf("Delete %d: %v", i, err)
			}
		}
		require.EqualValues(t, 2*calls, f.Lost())
		t.Logf("fault harness: config Set/Delete: calls=%d lost=%d disagreements=%d", 2*calls, f.Lost(), disagreements)
		assert.Zero(t, disagreements)
	})
}

// Conns builds a client per component from its configuration, rebuilds it
// when the configuration changes, and closes the old one once released.
func TestConns(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s, ch := runStore(t, b, b.Client, config.WithMaxAge(time.Hour))
		conns := s.Conns()
		defer conns.Close()
		_, _, err := conns.Get(ctx, "db")
		require.ErrorIs(t, err, config.ErrNotFound)

		cfg := config.ConnConfig{Addrs: b.Addrs()[:1], PoolSize: 2, Cluster: b.Kind == redistest.Cluster}
		require.NoError(t, conns.Set(ctx, "db", cfg))
		waitFor(t, ch, "redis/db")
		c1, release1, err := conns.Get(ctx, "db")
		require.NoError(t, err)
		require.NoError(t, c1.Ping(ctx).Err())
		if b.Kind == redistest.Cluster {
			assert.IsType(t, &redis.ClusterClient{}, c1)
		}
		rt, _ := b.Count.Delta(func() {
			c, release, err := conns.Get(ctx, "db")
			require.NoError(t, err)
			assert.Same(t, c1, c, "same configuration, same client")
			release()
		})
		assert.EqualValues(t, 0, rt, "a cached Get costs no round trip")

		cfg.PoolSize = 3
		require.NoError(t, conns.Set(ctx, "db", cfg))
		waitFor(t, ch, "redis/db")
		c2, release2, err := conns.Get(ctx, "db")
		require.NoError(t, err)
		assert.NotSame(t, c1, c2, "changed configuration, new client")
		require.NoError(t, c1.Ping(ctx).Err(), "the old client stays open while in use")
		release1()
		release1() // a second release is a no-op
		require.ErrorIs(t, c1.Ping(ctx).Err(), redis.ErrClosed, "closed once released")
		require.NoError(t, c2.Ping(ctx).Err())
		release2()
		require.NoError(t, conns.Close())
		require.ErrorIs(t, c2.Ping(ctx).Err(), redis.ErrClosed)
		_, _, err = conns.Get(ctx, "db")
		require.Error(t, err)
	})
}

// Many goroutines getting and releasing while the configuration changes:
// every client handed out works until released, and every retired one is
// closed at the end.
func TestConns_concurrentChanges(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := newStore(t, b, b.Client, config.WithMaxAge(0))
		conns := s.Conns()
		cfg := config.ConnConfig{Addrs: b.Addrs()[:1], Cluster: b.Kind == redistest.Cluster, PoolSize: 1}
		require.NoError(t, conns.Set(ctx, "db", cfg))
		var mu sync.Mutex
		seen := map[redis.UniversalClient]bool{}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 20 {
					if g == 0 && i%4 == 0 {
						cfg := cfg
						cfg.PoolSize = 1 + i
						assert.NoError(t, conns.Set(ctx, "db", cfg))
					}
					c, release, err := conns.Get(ctx, "db")
					if !assert.NoError(t, err) {
						return
					}
					assert.NoError(t, c.Ping(ctx).Err(), "a client in use is open")
					mu.Lock()
					seen[c] = true
					mu.Unlock()
					release()
				}
			}()
		}
		wg.Wait()
		require.NoError(t, conns.Close())
		assert.Greater(t, len(seen), 1)
		for c := range seen {
			assert.ErrorIs(t, c.Ping(ctx).Err(), redis.ErrClosed)
		}
	})
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	b := redistest.New(t, redistest.Mini)
	s := newStore(t, b, b.Client)
	for name, err := range map[string]error{
		"empty type":      s.Set(ctx, "", "api", 1),
		"empty component": s.Set(ctx, "limits", "", 1),
		"brace":           s.Set(ctx, "lim{its", "api", 1),
		"NUL":             s.Set(ctx, "limits", "a\x00b", 1),
		"unencodable":     s.Set(ctx, "limits", "api", make(chan int)),
		"too big":         s.Set(ctx, "limits", "api", strings.Repeat("x", config.MaxValueSize)),
		"get brace":       s.Get(ctx, "limits", "a}", new(int)),
		"delete empty":    s.Delete(ctx, "", "api"),
		"conn no addrs":   s.Conns().Set(ctx, "db", config.ConnConfig{}),
		"conn two addrs":  s.Conns().Set(ctx, "db", config.ConnConfig{Addrs: []string{"a:1", "b:1"}}),
		"conn cluster db": s.Conns().Set(ctx, "db", config.ConnConfig{Addrs: []string{"a:1"}, Cluster: true, DB: 2}),
	} {
		require.Error(t, err, name)
		assert.True(t, strings.HasPrefix(err.Error(), "config: "), "%s: %v", name, err)
	}
	assert.Empty(t, b.Keys("*"), "nothing written")
	for name, opt := range map[string]config.Option{
		"negative max age": config.WithMaxAge(-1),
		"nil logger":       config.WithLogger(nil),
		"nil on change":    config.WithOnChange(nil),
		"brace prefix":     config.WithPrefix("a{"),
	} {
		_, err := config.New(b.Client, opt)
		require.Error(t, err, name)
	}
	_, err := config.New(nil)
	require.Error(t, err)

	// A stored value that does not decode into dst: a clear error.
	require.NoError(t, s.Set(ctx, "limits", "api", "text"))
	var l limits
	err = s.Get(ctx, "limits", "api", &l)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `config: get limits "api"`)
	var kerr *ria.KeyError
	assert.False(t, errors.As(err, &kerr))
	_ = fmt.Sprint
}

// A Get that read the old configuration (from the cache) but takes the
// registry's lock after a Get that read the new one and built its client
// returns that newer client: Conns never goes back to an older
// configuration, nor closes the newer client for it.
func TestConns_neverGoesBack(t *testing.T) {
	ctx := context.Background()
	b := redistest.New(t, redistest.Mini)
	st, err := config.New(b.Client, config.WithPrefix(b.Prefix))
	require.NoError(t, err)
	now := time.Now()
	st.SetClock(func() time.Time { return now }) // cached reads stay fresh
	conns := st.Conns()
	t.Cleanup(func() { _ = conns.Close() })
	oldCfg := config.ConnConfig{Addrs: []string{"127.0.0.1:1"}}
	newCfg := config.ConnConfig{Addrs: []string{"127.0.0.1:2"}}
	require.NoError(t, conns.Set(ctx, "db", oldCfg))
	c0, release, err := conns.Get(ctx, "db")
	require.NoError(t, err)
	release()

	var calls atomic.Int64
	read, cont := make(chan struct{}), make(chan struct{})
	conns.OnRead(func() {
		if calls.Add(1) == 1 { // the first Get: read, then held before the lock
			close(read)
			<-cont
		}
	})
	type got struct {
		c   redis.UniversalClient
		err error
	}
	slow := make(chan got, 1)
	go func() {
		c, release, err := conns.Get(ctx, "db")
		if err == nil {
			release()
		}
		slow <- got{c, err}
	}()
	<-read // it read the old configuration from the cache
	require.NoError(t, conns.Set(ctx, "db", newCfg))
	c2, release2, err := conns.Get(ctx, "db")
	require.NoError(t, err)
	defer release2()
	assert.NotSame(t, c0, c2)
	assert.Equal(t, "127.0.0.1:2", c2.(*redis.Client).Options().Addr)
	close(cont)
	g := <-slow
	require.NoError(t, g.err)
	assert.Same(t, c2, g.c, "the Get that read the old configuration gets the newer client")
	c3, release3, err := conns.Get(ctx, "db")
	require.NoError(t, err)
	release3()
	assert.Same(t, c2, c3)
}
