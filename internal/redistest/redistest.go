// Package redistest runs one test body on every backend ria supports:
// miniredis, a real standalone redis-server and a real 3-master Redis Cluster.
//
// The real servers are started from the redis-server binary on free loopback
// ports, once per test binary, the first time a test asks for them; [Main]
// stops them when the tests end. Each test gets its own key prefix
// ("test:<t.Name()>:<n>:") and its own clients, so tests may run in parallel
// on the shared servers.
//
// When redis-server is not on PATH the real backends are skipped with a loud
// message, unless RIA_REQUIRE_REDIS=1 (set by make test and CI), where a
// missing server fails the test.
package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/roundtrip"
)

// Kind names a backend.
type Kind string

// The backends, in the order [Run] uses them.
const (
	Mini       Kind = "miniredis"
	Standalone Kind = "redis"
	Cluster    Kind = "cluster"
)

// Kinds lists every backend.
var Kinds = []Kind{Mini, Standalone, Cluster}

// Backend is one backend prepared for one test.
type Backend struct {
	Kind Kind
	// Client is a client of the backend, closed when the test ends. Count
	// counts its round trips.
	Client redis.UniversalClient
	Count  *roundtrip.Counter
	// Prefix is a key prefix unique to the test.
	Prefix string
	// Mini is the test's own miniredis server (nil on real backends).
	Mini *miniredis.Miniredis

	t       testing.TB
	addrs   []string
	miniNow time.Time // miniredis's frozen TIME
}

// Main runs the package's tests and then stops the servers the harness
// started. Call it from TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	stopShared()
	stopSharded()
	os.Exit(code)
}

// Run runs fn as a subtest on each backend, named after its [Kind].
func Run(t *testing.T, fn func(t *testing.T, b *Backend)) {
	t.Helper()
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			fn(t, New(t, k))
		})
	}
}

// RunAll runs fn as [Run] does, and then on the [Sharded] backend (three
// standalone servers behind a shard.Router): for the tests that show a
// package works on a sharded client.
func RunAll(t *testing.T, fn func(t *testing.T, b *Backend)) {
	t.Helper()
	Run(t, fn)
	t.Run(string(Sharded), func(t *testing.T) { fn(t, New(t, Sharded)) })
}

// New prepares backend k for t, skipping or failing t when a real server is
// unavailable (see the package doc).
func New(t testing.TB, k Kind) *Backend {
	t.Helper()
	// The sequence number keeps -count=N runs and benchmark reruns of one
	// test binary from meeting each other's keys on the shared servers.
	b := &Backend{Kind: k, Prefix: fmt.Sprintf("test:%s:%d:", t.Name(), prefixSeq.Add(1)), t: t}
	switch k {
	case Mini:
		b.Mini = miniredis.RunT(t)
		// miniredis moves keys' TTLs only by FastForward; freeze TIME too so
		// that both clocks move together (see FastForward).
		b.miniNow = time.Now()
		b.Mini.SetTime(b.miniNow)
		b.addrs = []string{b.Mini.Addr()}
	case Standalone:
		b.addrs = []string{sharedStandalone(t).Addr()}
	case Cluster:
		b.addrs = sharedCluster(t).Addrs()
	case Sharded:
		b.addrs = sharedSharded(t).Addrs()
	default:
		t.Fatalf("redistest: unknown backend %q", k)
	}
	b.Client, b.Count = b.NewClient()
	return b
}

// Real reports whether b is a real redis-server.
func (b *Backend) Real() bool { return b.Kind != Mini }

// Addrs returns the addresses of the backend's servers.
func (b *Backend) Addrs() []string { return b.addrs }

// NewClient returns another client of the backend, with its own connection
// pool and counting hook, closed when the test ends. Use several to test
// several processes. Options may change the client's options (timeouts,
// retries, a Dialer) before it is built. The read timeout is 10 s, not
// go-redis's 3 s: under -race on a loaded 2-core machine a healthy reply
// can take longer than 3 s, and a test that wants timeouts sets its own.
func (b *Backend) NewClient(opts ...func(*redis.UniversalOptions)) (redis.UniversalClient, *roundtrip.Counter) {
	o := &redis.UniversalOptions{Addrs: b.addrs, PoolSize: 64, ReadTimeout: 10 * time.Second}
	for _, opt := range opts {
		opt(o)
	}
	if b.Kind == Sharded {
		return b.shardedClient(o)
	}
	var c redis.UniversalClient
	cnt := &roundtrip.Counter{}
	if b.Kind == Cluster {
		cc := redis.NewClusterClient(o.Cluster())
		// Count on the node clients, which see every request the cluster
		// client sends: WATCH transactions bypass the cluster's own hooks,
		// and a pipeline split over nodes is one round trip per node.
		// Nodes are created on first use, after this.
		cc.OnNewNode(func(n *redis.Client) { n.AddHook(cnt) })
		c = cc
	} else {
		c = redis.NewClient(o.Simple())
		c.AddHook(cnt)
	}
	b.t.Cleanup(func() { _ = c.Close() })
	return c, cnt
}

// FaultyClient returns another client of the backend (as [Backend.NewClient]
// does) whose connections go through the proxies of a new [Faults], with
// go-redis's default retries unless opts say otherwise.
func (b *Backend) FaultyClient(opts ...func(*redis.UniversalOptions)) (redis.UniversalClient, *roundtrip.Counter, *Faults) {
	f := NewFaults(b.t)
	c, cnt := b.NewClient(append([]func(*redis.UniversalOptions){func(o *redis.UniversalOptions) { o.Dialer = f.Dialer }}, opts...)...)
	return c, cnt, f
}

// FastForward lets d pass for the keys' TTLs and for the server's TIME: on
// miniredis it moves both clocks at once; on a real server it waits d of
// real time, since waiting out a TTL is what is being tested.
func (b *Backend) FastForward(d time.Duration) {
	if b.Mini != nil {
		b.miniNow = b.miniNow.Add(d)
		b.Mini.SetTime(b.miniNow)
		b.Mini.FastForward(d)
		return
	}
	time.Sleep(d)
}

var prefixSeq atomic.Int64

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// bin returns the redis-server binary or skips/fails t.
func bin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() { binPath, binErr = exec.LookPath("redis-server") })
	if binErr != nil {
		msg := fmt.Sprintf("redistest: redis-server not found (%v): REAL-REDIS TESTS NOT RUN; "+
			"install it (apt-get install redis-server) or run make test", binErr)
		if os.Getenv("RIA_REQUIRE_REDIS") == "1" {
			t.Fatal(msg + " (RIA_REQUIRE_REDIS=1)")
		}
		t.Skip(msg)
	}
	return binPath
}

func ping(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	return c.Ping(ctx).Err()
}

// Keys returns the keys matching pattern on every master (KEYS; test data
// is small). An empty pattern means every key under b.Prefix.
func (b *Backend) Keys(pattern string) []string {
	b.t.Helper()
	if pattern == "" {
		pattern = b.Prefix + "*"
	}
	var (
		mu  sync.Mutex
		out []string
	)
	scan := func(ctx context.Context, c *redis.Client) error {
		ks, err := c.Keys(ctx, pattern).Result()
		mu.Lock()
		out = append(out, ks...)
		mu.Unlock()
		return err
	}
	ctx := context.Background()
	var err error
	switch c := b.Client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	}
	if err != nil {
		b.t.Fatalf("redistest: KEYS %s: %v", pattern, err)
	}
	return out
}
