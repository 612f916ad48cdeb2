// Package server gives the side-by-side benchmarks their Redis: a throwaway
// redis-server on a free loopback port (or the server at $REDIS_ADDR), the
// server-side command counts of INFO commandstats, and the [Env] a program
// runs on: its clients, which count round trips (the main module's
// internal/roundtrip), its keys, and the measured windows of its runs.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is the Redis the benchmarks run on.
type Server struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited; nil for an external server
}

// Start returns the server at $REDIS_ADDR when it is set, else starts
// redis-server (from PATH) on a free loopback port with persistence off
// (--save "" --appendonly no) in a temporary directory. Stop it with
// [Server.Stop]; if this process dies first, the kernel kills it
// (Pdeathsig SIGKILL).
func Start(ctx context.Context) (*Server, error) {
	if addr := os.Getenv("REDIS_ADDR"); addr != "" {
		return &Server{addr: addr}, nil
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("server: redis-server not found on PATH (install the redis-server package or set REDIS_ADDR): %w", err)
	}
	dir, err := os.MkdirTemp("", "ria-bench-redis-")
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	var last error
	for range 5 { // a free port can be taken by someone else before redis binds it
		port, err := freePort()
		if err != nil {
			last = err
			continue
		}
		s := &Server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir}
		if last = s.start(ctx, bin, port); last == nil {
			return s, nil
		}
	}
	_ = os.RemoveAll(dir)
	return nil, last
}

// Addr returns the server's host:port.
func (s *Server) Addr() string { return s.addr }

// External reports whether the server came from $REDIS_ADDR (and so is not
// ours to stop).
func (s *Server) External() bool { return s.done == nil }

func (s *Server) start(ctx context.Context, bin string, port int) error {
	logfile := filepath.Join(s.dir, "redis.log")
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir,
		"--logfile", logfile, "--loglevel", "warning")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}

	// Pdeathsig fires when the OS thread that forked the child exits, not the
	// process, and the Go runtime may retire threads. So fork from a goroutine
	// locked to its thread, and keep it there until the server has exited.
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("server: start redis-server: %w", err)
	}
	s.cmd, s.done = cmd, done

	rdb := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		if rdb.Ping(ctx).Err() == nil {
			return nil
		}
		select {
		case <-done:
			log, _ := os.ReadFile(logfile)
			return fmt.Errorf("server: redis-server on port %d exited: %s", port, lastLines(string(log), 3))
		case <-deadline.C:
			s.kill()
			return fmt.Errorf("server: redis-server on port %d did not answer PING within 10s", port)
		case <-ctx.Done():
			s.kill()
			return ctx.Err()
		case <-time.After(20 * time.Millisecond): // readiness probe
		}
	}
}

// Stop stops a server that Start started (SIGTERM, then SIGKILL after 5s)
// and removes its directory. It does nothing to an external server.
func (s *Server) Stop() error {
	if s.External() {
		return nil
	}
	var err error
	if e := s.cmd.Process.Signal(syscall.SIGTERM); e != nil && !errors.Is(e, os.ErrProcessDone) {
		err = fmt.Errorf("server: stop: %w", e)
	}
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.kill()
	}
	if e := os.RemoveAll(s.dir); e != nil {
		err = errors.Join(err, fmt.Errorf("server: stop: %w", e))
	}
	return err
}

func (s *Server) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("server: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
