package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/roundtrip"
	"github.com/ria-go/ria/shard"
)

func TestNewRouter_badInput(t *testing.T) {
	_, err := shard.NewRouter()
	assert.ErrorContains(t, err, "no server")
	_, err = shard.NewRouter("127.0.0.1")
	assert.ErrorContains(t, err, "want host:port")
	_, err = shard.NewRouter("127.0.0.1:1", "127.0.0.1:1")
	assert.ErrorContains(t, err, "listed twice")
}

// The mapping is the key's Cluster slot mod the number of servers, so keys
// that share a hash tag share a server, and it spreads keys evenly.
func TestRouter_Server(t *testing.T) {
	r := must(shard.NewRouter("10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"))
	assert.Equal(t, []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"}, r.Addrs())
	count := make([]int, 3)
	for i := range 3000 {
		k := fmt.Sprintf("user:%d", i)
		s := r.Server(k)
		assert.Equal(t, shard.Slot(k)%3, s)
		assert.Equal(t, s, r.Server("other:{"+k+"}:x"), "a hash tag picks the server")
		count[s]++
	}
	for _, n := range count {
		assert.InDelta(t, 1000, n, 150, "keys spread over the servers: %v", count)
	}
}

// routerClient returns a client of the Router over s whose servers'
// requests are counted.
func routerClient(t *testing.T, s *redistest.ShardedServers, opt *redis.ClusterOptions) (*redis.ClusterClient, *roundtrip.Counter) {
	c := s.Router().NewClient(opt)
	cnt := &roundtrip.Counter{}
	c.OnNewNode(func(n *redis.Client) { n.AddHook(cnt) })
	t.Cleanup(func() { _ = c.Close() })
	return c, cnt
}

// serverClients returns a plain client of each server.
func serverClients(t *testing.T, s *redistest.ShardedServers) []*redis.Client {
	var out []*redis.Client
	for _, srv := range s.Servers() {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		out = append(out, c)
	}
	return out
}

// keysOn returns, for each server, the keys that server holds.
func keysOn(t *testing.T, servers []*redis.Client) [][]string {
	out := make([][]string, len(servers))
	for i, c := range servers {
		ks, err := c.Keys(context.Background(), "*").Result()
		require.NoError(t, err)
		out[i] = ks
	}
	return out
}

// Every key lands on its own server only; a pipeline over all servers is
// one round trip per server, sent in parallel.
func TestRouter_routing(t *testing.T) {
	s := redistest.StartSharded(t, 3)
	f := redistest.NewFaults(t)
	c, cnt := routerClient(t, s, &redis.ClusterOptions{Dialer: f.Dialer})
	ctx := t.Context()
	r := s.Router()

	const n = 300
	rt, cmds := cnt.Delta(func() {
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range n {
				p.Set(ctx, fmt.Sprintf("k%d", i), i, 0)
			}
			return nil
		})
		require.NoError(t, err)
	})
	assert.Equal(t, int64(3), rt, "one round trip per server")
	assert.Equal(t, int64(n), cmds)
	for i, ks := range keysOn(t, serverClients(t, s)) {
		assert.NotEmpty(t, ks)
		for _, k := range ks {
			assert.Equal(t, i, r.Server(k), "key %s on server %d", k, i)
		}
	}

	// Parallel: with every reply held back 300 ms, a pipeline of one
	// command per server takes about 300 ms, not 900.
	var one [3]string
	for i := 0; one[0] == "" || one[1] == "" || one[2] == ""; i++ {
		k := fmt.Sprintf("k%d", i)
		one[r.Server(k)] = k
	}
	f.Delay(300 * time.Millisecond)
	start := time.Now()
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range one {
			p.Get(ctx, k)
		}
		return nil
	})
	took := time.Since(start)
	f.Delay(0)
	require.NoError(t, err)
	assert.Less(t, took, 750*time.Millisecond, "the servers' parts are sent in parallel")

	// Scripts go to their keys' server; SCRIPT LOAD to every server.
	sha, err := c.ScriptLoad(ctx, "return redis.call('incr', KEYS[1])").Result()
	require.NoError(t, err)
	for i := range 10 {
		k := fmt.Sprintf("{tag%d}:n", i)
		assert.Equal(t, int64(1), c.EvalSha(ctx, sha, []string{k}).Val())
		got, err := serverClients(t, s)[r.Server(k)].Get(ctx, k).Result()
		require.NoError(t, err)
		assert.Equal(t, "1", got)
	}

	// Blocking pops go to the list's server.
	require.NoError(t, c.RPush(ctx, "{q}:list", "x").Err())
	v, err := c.BLPop(ctx, time.Second, "{q}:list").Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"{q}:list", "x"}, v)
}

// A command, script or transaction whose keys live on different servers
// is refused, and nothing of it runs.
func TestRouter_crossServer(t *testing.T) {
	s := redistest.StartSharded(t, 3)
	c, _ := routerClient(t, s, nil)
	ctx := t.Context()
	r := s.Router()
	// Two keys on different servers, and one on the first key's server.
	a, b, same := "a", "", ""
	for i := 0; b == "" || same == ""; i++ {
		k := fmt.Sprintf("b%d", i)
		if r.Server(k) != r.Server(a) && b == "" {
			b = k
		}
		if r.Server(k) == r.Server(a) && shard.Slot(k) != shard.Slot(a) && same == "" {
			same = k
		}
	}
	servers := serverClients(t, s)
	require.NoError(t, servers[r.Server(a)].Set(ctx, a, "1", 0).Err())
	require.NoError(t, servers[r.Server(b)].Set(ctx, b, "1", 0).Err())

	assert.ErrorIs(t, c.Del(ctx, a, b).Err(), shard.ErrCrossServer)
	assert.ErrorIs(t, c.MGet(ctx, a, b).Err(), shard.ErrCrossServer)
	assert.ErrorIs(t, c.Eval(ctx, "redis.call('set', KEYS[1], 'x'); redis.call('set', KEYS[2], 'x')", []string{a, b}).Err(),
		shard.ErrCrossServer)
	err := c.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, a, "2", 0)
			p.Set(ctx, b, "2", 0) // would run on a's server
			return nil
		})
		return err
	}, a)
	assert.ErrorIs(t, err, shard.ErrCrossServer)
	assert.ErrorContains(t, err, "must share a hash tag")
	for _, k := range []string{a, b} {
		got, err := servers[r.Server(k)].Get(ctx, k).Result()
		require.NoError(t, err)
		assert.Equal(t, "1", got, "%s unchanged", k)
	}
	assert.Equal(t, []string{a}, keysOn(t, servers)[r.Server(a)], "nothing written to a's server")
	// Keys of different slots on one server work, as on a standalone server.
	assert.NoError(t, c.Del(ctx, a, same).Err())
}

// While one server is down (2 s) its keys fail, the others' work, and
// nothing is written anywhere else; when it is back its keys work again.
func TestRouter_serverDown(t *testing.T) {
	s := redistest.StartSharded(t, 3)
	c, _ := routerClient(t, s, &redis.ClusterOptions{DialTimeout: 200 * time.Millisecond, DialerRetries: 1, MaxRedirects: 1})
	ctx := t.Context()
	r := s.Router()
	const n = 60
	key := func(i int) string { return fmt.Sprintf("k%d", i) }
	for i := range n {
		require.NoError(t, c.Set(ctx, key(i), "before", 0).Err())
	}
	const down = 1
	s.Servers()[down].Kill()
	start := time.Now()
	var failed, worked int
	for round := 0; round == 0 || time.Since(start) < 2*time.Second; round++ {
		for i := range n {
			err := c.Set(ctx, key(i), "during", 0).Err()
			if r.Server(key(i)) == down {
				assert.Error(t, err, "a key of the down server")
				assert.NotErrorIs(t, err, shard.ErrCrossServer)
				failed++
			} else {
				assert.NoError(t, err, "a key of a server that is up")
				worked++
			}
		}
		// A pipeline: the down server's part fails, the others' run.
		cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range n {
				p.Get(ctx, key(i))
			}
			return nil
		})
		assert.Error(t, err)
		for i, cmd := range cmds {
			if r.Server(key(i)) == down {
				assert.Error(t, cmd.Err())
			} else if assert.NoError(t, cmd.Err()) {
				assert.Equal(t, "during", cmd.(*redis.StringCmd).Val())
			}
		}
	}
	t.Logf("down server %d: %d writes failed, %d to the other servers worked", down, failed, worked)
	require.Positive(t, failed)
	require.Positive(t, worked)

	s.Servers()[down].Restart(t) // back, with an empty dataset (no persistence)
	servers := serverClients(t, s)
	for i, ks := range keysOn(t, servers) {
		for _, k := range ks {
			assert.Equal(t, i, r.Server(k), "key %s on server %d: nothing moved", k, i)
		}
	}
	var probe string // a key of the server that was down
	for i := 0; probe == ""; i++ {
		if k := fmt.Sprint("probe", i); r.Server(k) == down {
			probe = k
		}
	}
	// go-redis waits for its background dialer to reach the server again
	// (about a second) before it lends connections to it.
	require.Eventually(t, func() bool { return c.Set(ctx, probe, 1, 0).Err() == nil }, 10*time.Second, 10*time.Millisecond)
	for i := range n {
		assert.NoError(t, c.Set(ctx, key(i), "after", 0).Err(), "every key works again")
	}
}

// The contrast the package doc draws: go-redis's Ring writes a down shard's
// keys to another shard.
func TestRing_movesKeysOfADownShard(t *testing.T) {
	s := redistest.StartSharded(t, 3)
	shards := map[string]string{}
	for i, srv := range s.Servers() {
		shards[fmt.Sprint("s", i)] = srv.Addr()
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: shards, HeartbeatFrequency: 50 * time.Millisecond,
		DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = ring.Close() })
	ctx := t.Context()
	servers := serverClients(t, s)
	var mu sync.Mutex
	home := map[string]int{}
	for i := range 30 {
		k := fmt.Sprintf("k%d", i)
		require.NoError(t, ring.Set(ctx, k, "v", 0).Err())
		for j, c := range servers {
			if c.Exists(ctx, k).Val() == 1 {
				mu.Lock()
				home[k] = j
				mu.Unlock()
			}
		}
	}
	var victim string
	for k, j := range home {
		if j == 0 {
			victim = k
		}
	}
	require.NotEmpty(t, victim)
	s.Servers()[0].Kill()
	require.Eventually(t, func() bool { return ring.Set(ctx, victim, "moved", 0).Err() == nil }, 10*time.Second, 20*time.Millisecond,
		"the Ring drops the down shard")
	moved := servers[1].Exists(ctx, victim).Val() + servers[2].Exists(ctx, victim).Val()
	assert.Equal(t, int64(1), moved, "the key of the down shard was written to another shard")
}
