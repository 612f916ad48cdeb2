package redistest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/roundtrip"
	"github.com/ria-go/ria/shard"
)

// Sharded is the backend of three independent standalone redis-servers
// behind a shard.Router (book ch. 10): each key lives on the server its
// hash tag maps to, and a down server's keys fail instead of moving. Its
// Client is the Router's *redis.ClusterClient; Count counts on the
// servers' clients, one round trip per server a pipeline reaches, as on a
// Cluster.
//
// The backend is opt-in: [Kinds] does not list it, so [Run] does not use it.
// Get it with [NewSharded]. [New] and [Backend.NewClient] (hence
// [Backend.FaultyClient]) do not know it yet: for more clients of it, use
// the client of a shard.Router over [Backend.Addrs], with the Dialer of a
// [Faults] for a faulty one.
const Sharded Kind = "sharded"

// ShardedServers is a set of independent standalone servers behind a
// shard.Router.
type ShardedServers struct {
	servers []*Server
	router  *shard.Router
}

// Addrs returns the servers' addresses, in the Router's order.
func (s *ShardedServers) Addrs() []string { return s.router.Addrs() }

// Servers returns the servers, in the Router's order.
func (s *ShardedServers) Servers() []*Server { return s.servers }

// Router returns the Router over the servers.
func (s *ShardedServers) Router() *shard.Router { return s.router }

// Stop stops every server.
func (s *ShardedServers) Stop() {
	for _, srv := range s.servers {
		srv.Stop()
	}
}

func startSharded(bin string, n int, args ...string) (*ShardedServers, error) {
	s := &ShardedServers{}
	addrs := make([]string, 0, n)
	for i := range n {
		srv, err := startServer(bin, args...)
		if err != nil {
			s.Stop()
			return nil, fmt.Errorf("redistest: sharded server %d: %w", i, err)
		}
		s.servers = append(s.servers, srv)
		addrs = append(addrs, srv.Addr())
	}
	r, err := shard.NewRouter(addrs...)
	if err != nil {
		s.Stop()
		return nil, err
	}
	s.router = r
	return s, nil
}

// StartSharded starts n standalone servers of t's own behind a Router,
// stopped when t ends. Use it for tests that stop or restart a server;
// others share the [Sharded] backend's servers.
func StartSharded(t testing.TB, n int, args ...string) *ShardedServers {
	t.Helper()
	s, err := startSharded(bin(t), n, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

var (
	shardedMu  sync.Mutex
	shardedSet *ShardedServers
	shardedErr error
)

// sharedSharded returns the [Sharded] backend's servers, started once per
// test binary.
func sharedSharded(t testing.TB) *ShardedServers {
	t.Helper()
	b := bin(t)
	shardedMu.Lock()
	defer shardedMu.Unlock()
	if shardedSet == nil && shardedErr == nil {
		shardedSet, shardedErr = startSharded(b, 3)
	}
	if shardedErr != nil {
		t.Fatal(shardedErr)
	}
	return shardedSet
}

// stopSharded stops the [Sharded] backend's servers; [Main] calls it.
func stopSharded() {
	shardedMu.Lock()
	defer shardedMu.Unlock()
	if shardedSet != nil {
		shardedSet.Stop()
	}
}

// NewSharded prepares the [Sharded] backend for t: the three servers are
// shared by the tests of the binary (each test has its own key prefix).
func NewSharded(t testing.TB) *Backend {
	t.Helper()
	return New(t, Sharded)
}

// shardedClient returns a Router client of the [Sharded] backend with
// options o ([Backend.NewClient] calls it for that backend), closed when
// the test ends.
func (b *Backend) shardedClient(o *redis.UniversalOptions) (redis.UniversalClient, *roundtrip.Counter) {
	r, err := shard.NewRouter(b.addrs...)
	if err != nil {
		b.t.Fatalf("redistest: %v", err)
	}
	c := r.NewClient(o.Cluster())
	cnt := &roundtrip.Counter{}
	// As on a Cluster: count on the servers' clients, which see every
	// request, a WATCH transaction's and each server's part of a pipeline.
	c.OnNewNode(func(n *redis.Client) { n.AddHook(cnt) })
	b.t.Cleanup(func() { _ = c.Close() })
	return c, cnt
}
