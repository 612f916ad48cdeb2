package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// moduleFile is where Debian's redis-redisearch package puts RediSearch.
const moduleFile = "/usr/lib/redis/modules/redisearch.so"

// moduleServer is a redis-server with RediSearch loaded, on its own free
// loopback port, persistence off, killed with this process.
type moduleServer struct {
	addr string
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
}

func startModule(ctx context.Context) (*moduleServer, error) {
	if _, err := os.Stat(moduleFile); err != nil {
		return nil, fmt.Errorf("RediSearch is not installed (make benchdata, or apt-get install redis-redisearch): %w", err)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ria-searchbench-")
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	s := &moduleServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"), "--loglevel", "warning", "--loadmodule", moduleFile)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // Pdeathsig follows the forking thread
		if err := s.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = s.cmd.Wait()
		close(s.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer rdb.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if rdb.Ping(ctx).Err() == nil {
			return s, nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			return nil, fmt.Errorf("redis-server with RediSearch exited: %s", log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("redis-server with RediSearch did not answer PING in 10s")
		}
	}
}

func (s *moduleServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	_ = os.RemoveAll(s.dir)
}
