package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server process on a loopback port.
type Server struct {
	bin  string
	dir  string
	port int
	args []string
	env  []string // added to the process's environment

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// StartServer starts a redis-server of t's own, stopped when t ends. Use it
// for tests that restart or stop the server; others share [Run]'s servers.
func StartServer(t testing.TB, args ...string) *Server {
	t.Helper()
	s, err := startServer(bin(t), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// StartCollatingServer starts a redis-server of t's own, as [StartServer]
// does, under the glibc language locale en_US.UTF-8, compiled for it by
// localedef into a temporary LOCPATH: Lua's string comparison in its
// scripts (strcoll) then follows that language's collation (case and
// punctuation ignored first), not byte order, as on a server whose
// environment sets LANG=en_US.UTF-8. It needs localedef and Debian's
// locales package (make redis installs them).
func StartCollatingServer(t testing.TB, args ...string) *Server {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("localedef", "-i", "en_US", "-f", "UTF-8", filepath.Join(dir, "en_US.UTF-8")).CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("redistest: localedef en_US.UTF-8 (%v: %s): COLLATING-SERVER TESTS NOT RUN; "+
			"install Debian's locales package or run make test", err, out)
		if os.Getenv("RIA_REQUIRE_REDIS") == "1" {
			t.Fatal(msg + " (RIA_REQUIRE_REDIS=1)")
		}
		t.Skip(msg)
	}
	s, err := startServerEnv(bin(t), []string{"LOCPATH=" + dir, "LC_ALL=en_US.UTF-8"}, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func startServer(bin string, args ...string) (*Server, error) {
	return startServerEnv(bin, nil, args...)
}

func startServerEnv(bin string, env []string, args ...string) (*Server, error) {
	dir, err := os.MkdirTemp("", "ria-redis-")
	if err != nil {
		return nil, err
	}
	var last error
	for range 5 { // a free port can be taken by someone else before we bind it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{bin: bin, dir: dir, port: port, args: args, env: env}
		if last = s.start(); last == nil {
			return s, nil
		}
	}
	_ = os.RemoveAll(dir)
	return nil, last
}

// Addr returns the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *Server) start() error {
	args := append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir,
		"--logfile", filepath.Join(s.dir, "redis.log"), "--loglevel", "warning",
	}, s.args...)
	cmd := exec.Command(s.bin, args...)
	if len(s.env) > 0 {
		cmd.Env = append(os.Environ(), s.env...)
	}
	// Die with the test binary even if it is killed before Main stops us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	go func() { err := cmd.Wait(); close(done); exited <- err }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if err := ping(ctx, s.Addr()); err == nil {
			break
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			return fmt.Errorf("redistest: redis-server on port %d exited (%v): %s", s.port, err, lastLines(string(log), 5))
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			return fmt.Errorf("redistest: redis-server on port %d did not answer PING within 10s", s.port)
		case <-time.After(20 * time.Millisecond): // readiness probe of a starting process
		}
	}
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	return nil
}

// Kill stops the server at once (SIGKILL), as a crash would.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		<-done
	}
}

// Restart kills the server and starts it again on the same port, with an
// empty dataset.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	var err error
	for range 50 { // the port may linger a moment after the kill
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal(err)
}

// Stop kills the server and removes its directory.
func (s *Server) Stop() {
	s.Kill()
	_ = os.RemoveAll(s.dir)
}

// ClusterServers is a Redis Cluster of three masters, no replicas.
type ClusterServers struct{ nodes []*Server }

// Addrs returns the masters' addresses.
func (c *ClusterServers) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.Addr()
	}
	return out
}

// Stop stops every node.
func (c *ClusterServers) Stop() {
	for _, n := range c.nodes {
		n.Stop()
	}
}

func startCluster(bin string) (*ClusterServers, error) {
	c := &ClusterServers{}
	for i := range 3 {
		// nodes.conf is relative to the node's own --dir.
		n, err := startServer(bin, "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("redistest: cluster node %d: %w", i, err)
		}
		c.nodes = append(c.nodes, n)
	}
	if err := c.form(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// form assigns a third of the slots to each node, introduces them and waits
// until every node reports cluster_state:ok.
func (c *ClusterServers) form() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clients := make([]*redis.Client, len(c.nodes))
	for i, n := range c.nodes {
		clients[i] = redis.NewClient(&redis.Options{Addr: n.Addr()})
		defer clients[i].Close()
	}
	per := 16384 / len(c.nodes)
	for i, cl := range clients {
		lo, hi := i*per, (i+1)*per-1
		if i == len(clients)-1 {
			hi = 16383
		}
		if err := cl.ClusterAddSlotsRange(ctx, lo, hi).Err(); err != nil {
			return fmt.Errorf("redistest: cluster addslots: %w", err)
		}
	}
	for _, n := range c.nodes[1:] {
		if err := clients[0].ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(n.port)).Err(); err != nil {
			return fmt.Errorf("redistest: cluster meet: %w", err)
		}
	}
	for _, cl := range clients {
		for {
			info, err := cl.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:3") {
				break
			}
			select {
			case <-ctx.Done():
				return errors.Join(errors.New("redistest: cluster did not reach cluster_state:ok"), err)
			case <-time.After(50 * time.Millisecond): // gossip convergence probe
			}
		}
	}
	return nil
}

var (
	sharedMu   sync.Mutex
	standalone *Server
	cluster    *ClusterServers
	sharedErr  = map[Kind]error{}
)

func sharedStandalone(t testing.TB) *Server {
	t.Helper()
	b := bin(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if standalone == nil && sharedErr[Standalone] == nil {
		standalone, sharedErr[Standalone] = startServer(b)
	}
	if err := sharedErr[Standalone]; err != nil {
		t.Fatal(err)
	}
	return standalone
}

func sharedCluster(t testing.TB) *ClusterServers {
	t.Helper()
	b := bin(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if cluster == nil && sharedErr[Cluster] == nil {
		cluster, sharedErr[Cluster] = startCluster(b)
	}
	if err := sharedErr[Cluster]; err != nil {
		t.Fatal(err)
	}
	return cluster
}

func stopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if standalone != nil {
		standalone.Stop()
	}
	if cluster != nil {
		cluster.Stop()
	}
}

// freePort returns a loopback port that is free, as is port+10000 (the
// cluster bus port).
func freePort() (int, error) {
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if port+10000 > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		if err != nil {
			continue
		}
		_ = bus.Close()
		return port, nil
	}
	return 0, errors.New("redistest: no free port pair found")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Port returns the server's port.
func (s *Server) Port() int { return s.port }

// StartReplicated starts a primary and a replica of it (--replicaof) of
// t's own, both stopped when t ends, and waits until the replica has synced
// (master_link_status:up). Use Replica.Kill and Replica.Restart to test
// replication outages; a restarted replica syncs again.
func StartReplicated(t testing.TB, args ...string) (primary, replica *Server) {
	t.Helper()
	// No 5 s wait for more replicas before the first full sync.
	primary = StartServer(t, append([]string{"--repl-diskless-sync-delay", "0"}, args...)...)
	replica = StartServer(t, append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(primary.port)}, args...)...)
	WaitReplicaUp(t, replica)
	return primary, replica
}

// WaitReplicaUp waits (up to 30 s) until replica reports its link to the
// primary up.
func WaitReplicaUp(t testing.TB, replica *Server) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: replica.Addr(), MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		info, err := c.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("redistest: replica %s did not sync: %v", replica.Addr(), err)
		case <-time.After(20 * time.Millisecond): // sync progress probe
		}
	}
}
