package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/roundtrip"
)

// PoolSize is the connection pool size of every [Env] client: above the
// goroutines one client serves, since a waiter (ria's BLPOP or BLMOVE)
// holds a connection while it blocks.
const PoolSize = 64

// Env is what a benchmark program runs on: the server, an admin client for
// the harness's own commands (INFO, CONFIG, SCAN, UNLINK; not counted), the
// clients the libraries use, each carrying a round-trip counter, and the
// prefix of every key the program writes.
type Env struct {
	Name    string // the program's, for messages
	Server  *Server
	Version string // the server's redis_version
	Admin   *redis.Client
	Clients []*redis.Client
	ID      string // random hex, unique to this process
	Prefix  string // Name + ":" + ID + ":"
	// Patterns are the SCAN patterns of the keys [Env.Cleanup] deletes:
	// Prefix+"*", to which a program adds those of keys a library writes
	// outside the prefix it is given.
	Patterns []string

	hooks   []*roundtrip.Counter
	blocked int64 // clients blocked on the server before we started
}

// Open starts the server (see [Start]) and connects the admin client and n
// clients with round-trip counters to it. Close it with [Env.Close].
func Open(ctx context.Context, name string, n int) (*Env, error) {
	srv, err := Start(ctx)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	e := &Env{
		Name:   name,
		Server: srv,
		Admin:  redis.NewClient(&redis.Options{Addr: srv.Addr()}),
		ID:     hex.EncodeToString(b[:]),
	}
	e.Prefix = name + ":" + e.ID + ":"
	e.Patterns = []string{e.Prefix + "*"}
	for range n {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: PoolSize})
		h := &roundtrip.Counter{}
		c.AddHook(h)
		e.Clients, e.hooks = append(e.Clients, c), append(e.hooks, h)
	}
	if e.Version, err = Version(ctx, e.Admin); err == nil {
		e.blocked, err = BlockedClients(ctx, e.Admin)
	}
	if err != nil {
		return nil, errors.Join(err, e.Close())
	}
	return e, nil
}

// Close deletes the program's keys ([Env.Cleanup]), closes the clients and
// stops the server ([Server.Stop]).
func (e *Env) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := e.Cleanup(ctx)
	for _, c := range e.Clients {
		_ = c.Close()
	}
	_ = e.Admin.Close()
	return errors.Join(err, e.Server.Stop())
}

// Origin says where the server came from, for the output's header.
func (e *Env) Origin() string {
	if e.Server.External() {
		return "from REDIS_ADDR"
	}
	return "started by " + e.Name + ` with --save "" --appendonly no`
}

// RoundTrips returns the round trips counted so far, over all clients.
func (e *Env) RoundTrips() int64 {
	var n int64
	for _, h := range e.hooks {
		n += h.RoundTrips()
	}
	return n
}

// Cleanup deletes every key that matches one of [Env.Patterns].
func (e *Env) Cleanup(ctx context.Context) error {
	var keys []string
	for _, pattern := range e.Patterns {
		iter := e.Admin.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := e.Admin.Unlink(ctx, keys[:n]...).Err(); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
		keys = keys[n:]
	}
	return nil
}

// Settle waits until no more clients are blocked on the server than before
// Open (at most 15s, then it warns and goes on), so that a previous run's
// BLPOP cannot land in the next run's counts.
func (e *Env) Settle(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		n, err := BlockedClients(ctx, e.Admin)
		if err != nil {
			return err
		}
		if n <= e.blocked {
			return nil
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "%s: warning: %d clients still blocked after 15s; going on\n", e.Name, n-e.blocked)
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Window is what the harness measured over one run: its length, the round
// trips of all clients, and the server's command calls (see [CommandCalls]).
type Window struct {
	Elapsed    time.Duration
	RoundTrips int64
	Calls      Calls
}

// Mark is the start of a measured window; [Mark.End] closes it.
type Mark struct {
	e   *Env
	t0  time.Time
	rt0 int64
}

// Begin opens a measured window: it resets the server's statistics
// ([ResetStats]), collects garbage, and notes the time and the round trips
// so far.
func (e *Env) Begin(ctx context.Context) (Mark, error) {
	if err := ResetStats(ctx, e.Admin); err != nil {
		return Mark{}, err
	}
	runtime.GC()
	return Mark{e: e, t0: time.Now(), rt0: e.RoundTrips()}, nil
}

// Elapsed returns the time since Begin.
func (m Mark) Elapsed() time.Duration { return time.Since(m.t0) }

// End closes the window that Begin opened and returns it; ctx is the one
// INFO commandstats is read with.
func (m Mark) End(ctx context.Context) (Window, error) {
	w := Window{Elapsed: time.Since(m.t0), RoundTrips: m.e.RoundTrips() - m.rt0}
	var err error
	w.Calls, err = CommandCalls(ctx, m.e.Admin)
	return w, err
}

// Timed measures a window of length d, or less if ctx is done first. Once
// it is open, release lets the workers go; when it closes, halt tells them
// to stop and reads the program's own counters, before the round trips and
// command calls are read. The workers may still be finishing what they were
// doing: the caller waits for them. If the window cannot be opened, Timed
// calls halt and then release, and returns the error.
func (e *Env) Timed(ctx context.Context, d time.Duration, release, halt func()) (Window, error) {
	m, err := e.Begin(ctx)
	if err != nil {
		halt()
		release()
		return Window{}, err
	}
	release()
	timer := time.NewTimer(d)
	select {
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
	}
	halt()
	return m.End(context.WithoutCancel(ctx))
}

// Finish ends a run: it deletes the keys ([Env.Cleanup]) and returns err
// joined with the cleanup's error, or, if there is neither, ctx's.
func (e *Env) Finish(ctx context.Context, err error) error {
	if cerr := e.Cleanup(context.WithoutCancel(ctx)); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}
