package redistest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Faults puts a TCP proxy on loopback in front of each server a client
// connects to (through [Faults.Dialer]) and injects faults into the traffic:
// a reply swallowed and the connection cut after the server has run the
// command ([Faults.LoseReply]), replies delayed ([Faults.Delay]), every
// connection cut ([Faults.Cut]), new connections refused
// ([Faults.RefuseDials]). go-redis re-sends a command whose reply
// was lost, so these faults make it run a command twice, as a flaky network
// does. The proxies parse the RESP traffic to match replies with the
// commands they answer. Safe for concurrent use; the proxies stop when the
// test ends.
type Faults struct {
	t testing.TB

	mu      sync.Mutex
	proxies map[string]*proxy // by upstream address
	lose    []loseRule
	delay   time.Duration
	refuse  func(ctx context.Context, network string) (net.Conn, error) // set: new connections go here

	lost atomic.Int64
}

type loseRule struct {
	match func(cmd []string) bool
	left  int
}

// NewFaults returns a Faults with no fault armed.
func NewFaults(t testing.TB) *Faults {
	f := &Faults{t: t, proxies: map[string]*proxy{}}
	t.Cleanup(f.stop)
	return f
}

// Dialer connects to addr through its proxy (started on first use); set it
// as the client's Dialer.
func (f *Faults) Dialer(ctx context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	refuse := f.refuse
	f.mu.Unlock()
	if refuse != nil {
		return refuse(ctx, network)
	}
	p, err := f.proxyFor(addr)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, network, p.ln.Addr().String())
}

// RefuseDials makes every connection the client makes from now on, until
// stop is called, fail as go-redis's re-sends do when the server is
// restarting: with reply "" the dial itself fails (connection refused: a
// server down), else the connection reaches a [RefusingServer] answering
// reply to every command ("LOADING ...": a server loading its data).
// Connections made before stay as they are; stop also closes those to
// the refusing server.
func (f *Faults) RefuseDials(reply string) (stop func()) {
	refuse := func(context.Context, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	stopServer := func() {}
	if reply != "" {
		var addr string
		addr, stopServer = RefusingServer(f.t, reply)
		refuse = func(ctx context.Context, network string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	}
	f.mu.Lock()
	f.refuse = refuse
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.refuse = nil
		f.mu.Unlock()
		stopServer()
	}
}

// LoseReply makes the next n commands that match (on any connection) reach
// the server, and then swallows their replies and cuts their connections,
// so that the client sees the connection drop without an answer.
func (f *Faults) LoseReply(n int, match func(cmd []string) bool) {
	f.mu.Lock()
	f.lose = append(f.lose, loseRule{match: match, left: n})
	f.mu.Unlock()
}

// LoseReplyThen swallows the reply of the next command that matches (as
// LoseReply(1, match)) and, when the next matching command, go-redis's
// re-send of it, reaches the proxy, runs between before passing it on:
// another client acting between a call's first run and its re-send.
// between runs on the proxy's goroutine with its rules locked: it must not
// send through this Faults' proxies (use another client, such as
// Backend.Client), nor call t.FailNow (record errors; check them after the
// call). Its second rule never fires: Armed counts it until Disarm.
func (f *Faults) LoseReplyThen(match func(cmd []string) bool, between func()) {
	var once sync.Once
	f.LoseReply(1, match)
	f.LoseReply(1, func(cmd []string) bool {
		if match(cmd) {
			once.Do(between)
		}
		return false
	})
}

// Lost returns how many replies have been swallowed so far.
func (f *Faults) Lost() int64 { return f.lost.Load() }

// Armed returns how many replies the LoseReply calls have yet to swallow.
func (f *Faults) Armed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.lose {
		n += r.left
	}
	return n
}

// Disarm drops the LoseReply rules that have not fired.
func (f *Faults) Disarm() {
	f.mu.Lock()
	f.lose = nil
	f.mu.Unlock()
}

// Delay holds every reply back until d after it arrived from the server
// (0: no delay), as a stalled server or network would. With a client ReadTimeout below d,
// each command runs on the server and then times out on the client.
func (f *Faults) Delay(d time.Duration) {
	f.mu.Lock()
	f.delay = d
	f.mu.Unlock()
}

// Cut closes every connection through the proxies now. Later connections
// work.
func (f *Faults) Cut() {
	f.mu.Lock()
	ps := make([]*proxy, 0, len(f.proxies))
	for _, p := range f.proxies {
		ps = append(ps, p)
	}
	f.mu.Unlock()
	for _, p := range ps {
		p.cutAll()
	}
}

// Scripts matches the commands that run a script (EVAL, EVALSHA and their
// read-only forms).
func Scripts(cmd []string) bool {
	return len(cmd) > 0 && strings.HasPrefix(strings.ToLower(cmd[0]), "eval")
}

// Commands returns a matcher of the commands named (case-insensitive).
func Commands(names ...string) func(cmd []string) bool {
	return func(cmd []string) bool {
		if len(cmd) == 0 {
			return false
		}
		for _, n := range names {
			if strings.EqualFold(cmd[0], n) {
				return true
			}
		}
		return false
	}
}

// AnyWrite matches the commands a package sends to change state: scripts,
// MULTI/EXEC bodies' EXEC, and plain writes.
func AnyWrite(cmd []string) bool {
	return Scripts(cmd) || Commands("exec", "set", "setnx", "lpush", "rpush", "zadd", "zincrby",
		"hset", "hincrby", "incrby", "incr", "del", "sadd", "srem", "zrem")(cmd)
}

// take returns the rule by which cmd must lose its reply, consuming one
// of its firings, or nil.
func (f *Faults) take(cmd []string) *loseRule {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.lose {
		r := &f.lose[i]
		if r.left > 0 && r.match(cmd) {
			r.left--
			return r
		}
	}
	return nil
}

// giveBack returns a firing to r, taken for a command that never reached
// the server.
func (f *Faults) giveBack(r *loseRule) {
	f.mu.Lock()
	r.left++
	f.mu.Unlock()
}

func (f *Faults) currentDelay() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.delay
}

func (f *Faults) proxyFor(addr string) (*proxy, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.proxies[addr]; ok {
		return p, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("redistest: proxy for %s: %w", addr, err)
	}
	p := &proxy{f: f, upstream: addr, ln: ln, conns: map[*proxyConn]struct{}{}}
	f.proxies[addr] = p
	go p.serve()
	return p, nil
}

func (f *Faults) stop() {
	f.mu.Lock()
	ps := f.proxies
	f.proxies = map[string]*proxy{}
	f.mu.Unlock()
	for _, p := range ps {
		_ = p.ln.Close()
		p.cutAll()
		p.wg.Wait()
	}
}

// proxy forwards the connections of one listener to one upstream server.
type proxy struct {
	f        *Faults
	upstream string
	ln       net.Listener
	wg       sync.WaitGroup

	mu    sync.Mutex
	conns map[*proxyConn]struct{}
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
		if err != nil {
			_ = c.Close()
			continue
		}
		pc := &proxyConn{p: p, client: c, server: u}
		p.mu.Lock()
		p.conns[pc] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go pc.requests()
		go pc.replies()
	}
}

func (p *proxy) cutAll() {
	p.mu.Lock()
	cs := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	for _, c := range cs {
		c.cut()
	}
}

// proxyConn is one client connection and its upstream connection.
type proxyConn struct {
	p              *proxy
	client, server net.Conn

	mu      sync.Mutex
	pending []bool // per command sent and not answered: lose its reply
	cond    *sync.Cond
	closed  bool
}

// cut closes both sides. The replies still awaited of commands marked to
// lose theirs are lost too (a connection cut after the first of two such
// commands it carries, or closed by the client when it gave up waiting):
// they count.
func (c *proxyConn) cut() {
	c.mu.Lock()
	if !c.closed {
		for _, lose := range c.pending {
			if lose {
				c.p.f.lost.Add(1)
			}
		}
		c.pending = nil
	}
	c.closed = true
	if c.cond != nil {
		c.cond.Broadcast()
	}
	c.mu.Unlock()
	_ = c.client.Close()
	_ = c.server.Close()
	c.p.mu.Lock()
	delete(c.p.conns, c)
	c.p.mu.Unlock()
}

// requests forwards the client's commands, noting for each whether its
// reply is to be lost.
func (c *proxyConn) requests() {
	defer c.p.wg.Done()
	defer c.cut()
	r := bufio.NewReader(c.client)
	var buf bytes.Buffer
	for {
		buf.Reset()
		cmd, err := readRESP(r, &buf, true)
		if err != nil {
			return
		}
		rule := c.p.f.take(cmd)
		if _, err := c.server.Write(buf.Bytes()); err != nil {
			if rule != nil { // the command did not run: no reply lost
				c.p.f.giveBack(rule)
			}
			return
		}
		// Noted once sent: replies() waits for the note of each reply.
		c.mu.Lock()
		if c.closed {
			if rule != nil { // sent, and its reply can no longer come
				c.p.f.lost.Add(1)
			}
			c.mu.Unlock()
			return
		}
		c.pending = append(c.pending, rule != nil)
		if c.cond != nil {
			c.cond.Broadcast()
		}
		c.mu.Unlock()
	}
}

// replies forwards the server's replies, swallowing those to be lost (and
// then cutting the connection) and delaying them as asked.
func (c *proxyConn) replies() {
	defer c.p.wg.Done()
	defer c.cut()
	r := bufio.NewReader(c.server)
	var buf bytes.Buffer
	var arrived time.Time // when the reply being forwarded came in
	for {
		buf.Reset()
		// A reply already buffered came in with the read of the one before
		// (a pipeline's replies arrive together): it keeps that time.
		buffered := r.Buffered() > 0
		if _, err := readRESP(r, &buf, false); err != nil {
			return
		}
		if !buffered {
			arrived = time.Now()
		}
		if buf.Len() > 0 && buf.Bytes()[0] == '>' { // a push message answers no command
			if _, err := c.client.Write(buf.Bytes()); err != nil {
				return
			}
			continue
		}
		c.mu.Lock()
		// A reply may arrive before requests() has noted its command (it
		// notes it once forwarded): wait for the note.
		if c.cond == nil {
			c.cond = sync.NewCond(&c.mu)
		}
		for len(c.pending) == 0 && !c.closed {
			c.cond.Wait()
		}
		if c.closed {
			c.mu.Unlock()
			return
		}
		lose := c.pending[0]
		c.pending = c.pending[1:]
		c.mu.Unlock()
		if lose {
			c.p.f.lost.Add(1)
			return // the deferred cut closes both sides
		}
		if d := c.p.f.currentDelay(); d > 0 {
			// The fault being injected: a stalled reply, forwarded d after it
			// arrived, as a slow network would (the replies of a pipeline,
			// arriving together, are held d in all, not d each).
			time.Sleep(time.Until(arrived.Add(d)))
		}
		if _, err := c.client.Write(buf.Bytes()); err != nil {
			return
		}
	}
}

// readRESP reads one RESP2/RESP3 value from r into raw. With command set it
// must be an array of bulk strings (a command), which it returns.
func readRESP(r *bufio.Reader, raw *bytes.Buffer, command bool) ([]string, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	raw.Write(line)
	if len(line) < 3 {
		return nil, errors.New("redistest: proxy: short RESP line")
	}
	kind, body := line[0], string(line[1:len(line)-2])
	switch kind {
	case '+', '-', ':', ',', '#', '_', '(':
		return nil, nil
	case '$', '!', '=':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		raw.Write(b)
		if command {
			return []string{string(b[:n])}, nil
		}
		return nil, nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if kind == '%' || kind == '|' {
			n *= 2
		}
		var cmd []string
		for range max(n, 0) {
			el, err := readRESP(r, raw, command)
			if err != nil {
				return nil, err
			}
			cmd = append(cmd, el...)
		}
		if kind == '|' { // attributes precede the value they describe
			return readRESP(r, raw, command)
		}
		return cmd, nil
	}
	return nil, fmt.Errorf("redistest: proxy: unknown RESP type %q", kind)
}

// Stall holds replies back 3 ms now and then (a goroutine turns the delay
// on for 0-2 ms, then off for 0-6 ms), until the returned function is
// called: the fault injected by the "stalls" tests, with a read timeout
// shorter than the stall. Not a synchronisation.
func (f *Faults) Stall() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTimer(0)
		defer t.Stop()
		on := false
		for {
			select {
			case <-done:
				f.Delay(0)
				return
			case <-t.C:
			}
			on = !on
			if on {
				f.Delay(3 * time.Millisecond)
				t.Reset(time.Duration(rand.IntN(2000)) * time.Microsecond)
			} else {
				f.Delay(0)
				t.Reset(time.Duration(rand.IntN(6000)) * time.Microsecond)
			}
		}
	}()
	return func() { close(done); <-finished }
}
