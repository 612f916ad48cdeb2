package redistest

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// RefusingServer starts a fake server on loopback that answers every
// command with the error reply reply (without its "-"), as a restarted
// redis-server loading its dataset ("LOADING ...") or a demoted primary
// ("READONLY ...") does, and returns its address and a function that
// stops it and closes its connections (also run when the test ends).
// Point a client's Dialer at it to have go-redis's re-sends refused.
func RefusingServer(t testing.TB, reply string) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: refusing server: %v", err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		once  sync.Once
	)
	stop = func() {
		once.Do(func() {
			_ = ln.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range conns {
				_ = c.Close()
			}
		})
	}
	t.Cleanup(stop)
	go func() {
		for {
			cn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, cn)
			mu.Unlock()
			go refuse(cn, "-"+reply+"\r\n")
		}
	}()
	return ln.Addr().String(), stop
}

// refuse reads RESP arrays of bulk strings from cn and answers each with
// reply, until cn fails.
func refuse(cn net.Conn, reply string) {
	r := bufio.NewReader(cn)
	for {
		line, err := r.ReadString('\n')
		if err != nil || len(line) < 3 || line[0] != '*' {
			return
		}
		n, _ := strconv.Atoi(line[1 : len(line)-2])
		for range n {
			hdr, err := r.ReadString('\n')
			if err != nil || len(hdr) < 3 {
				return
			}
			l, _ := strconv.Atoi(hdr[1 : len(hdr)-2])
			if _, err := io.CopyN(io.Discard, r, int64(l+2)); err != nil {
				return
			}
		}
		if _, err := io.WriteString(cn, reply); err != nil {
			return
		}
	}
}
