package wait_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/wait"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// srvErr is a server error reply that miniredis cannot produce.
type srvErr string

func (e srvErr) Error() string { return string(e) }
func (srvErr) RedisError()     {}

const (
	loading = srvErr("LOADING Redis is loading the dataset in memory")
	busy    = srvErr("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.")
)

// serverErrors returns real error replies from a miniredis server.
func serverErrors(t *testing.T) (wrongType, busyGroup, busyKey, unknown error) {
	srv := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()
	require.NoError(t, c.Set(ctx, "str", "x", 0).Err())
	wrongType = c.LPush(ctx, "str", "y").Err()
	require.ErrorContains(t, wrongType, "WRONGTYPE")
	require.NoError(t, c.XGroupCreateMkStream(ctx, "stream", "g", "$").Err())
	busyGroup = c.XGroupCreateMkStream(ctx, "stream", "g", "$").Err()
	require.ErrorContains(t, busyGroup, "BUSYGROUP")
	busyKey = c.Restore(ctx, "str", 0, "x").Err()
	require.ErrorContains(t, busyKey, "BUSYKEY")
	unknown = c.Do(ctx, "nosuchcommand").Err()
	require.Error(t, unknown)
	return wrongType, busyGroup, busyKey, unknown
}

// networkErrors returns the errors of a client whose server is gone: a dial
// error and the error of a connection the server closed.
func networkErrors(t *testing.T) (dial, dropped error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, DialerRetries: 1})
	defer c.Close()
	dial = c.Ping(t.Context()).Err()
	var opErr *net.OpError
	require.ErrorAs(t, dial, &opErr)

	srv := miniredis.RunT(t)
	c2 := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialerRetries: 1})
	defer c2.Close()
	require.NoError(t, c2.Ping(t.Context()).Err())
	srv.Close()
	dropped = c2.Ping(t.Context()).Err()
	require.Error(t, dropped)
	return dial, dropped
}

func TestTransient(t *testing.T) {
	wrongType, busyGroup, busyKey, unknown := serverErrors(t)
	dial, dropped := networkErrors(t)
	closed := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	require.NoError(t, closed.Close())
	errClosed := closed.Ping(t.Context()).Err()
	require.ErrorIs(t, errClosed, redis.ErrClosed)

	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"canceled", context.Canceled, false},
		{"deadline", context.DeadlineExceeded, false},
		{"wrapped canceled", fmt.Errorf("op: %w", context.Canceled), false},
		{"wrapped deadline", fmt.Errorf("op: %w", context.DeadlineExceeded), false},
		{"joined canceled", errors.Join(loading, context.Canceled), false},
		{"closed client", errClosed, false},
		{"ErrClosed", redis.ErrClosed, false},
		{"redis.Nil", redis.Nil, false},
		{"TxFailedErr", redis.TxFailedErr, false},
		{"WRONGTYPE", wrongType, false},
		{"wrapped WRONGTYPE", fmt.Errorf("op: %w", wrongType), false},
		{"unknown command", unknown, false},
		{"NOSCRIPT", srvErr("NOSCRIPT No matching script. Please use EVAL."), false},
		// Permanent replies whose code merely starts with "BUSY": retrying
		// XGROUP CREATE or RESTORE never succeeds.
		{"BUSYGROUP", busyGroup, false},
		{"BUSYKEY", busyKey, false},
		{"LOADING", loading, true},
		{"wrapped LOADING", fmt.Errorf("op: %w", loading), true},
		{"BUSY", srvErr("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT."), true},
		{"TRYAGAIN", srvErr("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{"CLUSTERDOWN", srvErr("CLUSTERDOWN The cluster is down"), true},
		{"MASTERDOWN", srvErr("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."), true},
		{"READONLY", srvErr("READONLY You can't write against a read only replica."), true},
		{"dial", dial, true},
		{"dropped connection", dropped, true},
		{"net.OpError", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, true},
		{"io.EOF", io.EOF, true},
		{"wrapped io.EOF", fmt.Errorf("op: %w", io.EOF), true},
		{"pool timeout", redis.ErrPoolTimeout, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, wait.Transient(tt.err), "Transient(%v)", tt.err)
		})
	}
}

func TestJitter(t *testing.T) {
	for _, d := range []time.Duration{2, 3, 10, time.Millisecond, 50 * time.Millisecond, time.Second} {
		t.Run(d.String(), func(t *testing.T) {
			lo, hi := d, time.Duration(0)
			for range 2000 {
				j := wait.Jitter(d)
				lo, hi = min(lo, j), max(hi, j)
			}
			assert.GreaterOrEqual(t, lo, d/2)
			assert.LessOrEqual(t, hi, d)
			assert.Less(t, lo, hi, "the draws vary")
		})
	}
	for _, d := range []time.Duration{0, 1} {
		assert.Equal(t, d, wait.Jitter(d))
	}
}

func TestSpread(t *testing.T) {
	for _, tt := range []struct{ d, lo, hi time.Duration }{
		{0, time.Millisecond, time.Millisecond},
		{-time.Second, time.Millisecond, time.Millisecond},
		{10 * time.Millisecond, 1500 * time.Microsecond, 2 * time.Millisecond}, // a tenth of d
		{time.Second, 11 * time.Millisecond, 21 * time.Millisecond},            // at most 20ms
		{time.Minute, 11 * time.Millisecond, 21 * time.Millisecond},
	} {
		t.Run(tt.d.String(), func(t *testing.T) {
			lo, hi := time.Hour, time.Duration(0)
			for range 2000 {
				s := wait.Spread(tt.d)
				lo, hi = min(lo, s), max(hi, s)
			}
			assert.GreaterOrEqual(t, lo, tt.lo)
			assert.LessOrEqual(t, hi, tt.hi)
		})
	}
}

func TestSleep(t *testing.T) {
	start := time.Now()
	require.NoError(t, wait.Sleep(t.Context(), 20*time.Millisecond))
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	start = time.Now()
	assert.ErrorIs(t, wait.Sleep(ctx, time.Hour), context.Canceled)
	assert.Less(t, time.Since(start), time.Minute)
}

var blockerSeq atomic.Int64

// blocker is a client of b whose BLPOP (or the command in cmd) the test can
// see blocked on the server: on a real server through CLIENT LIST (it has a
// name of its own), on miniredis through the server's command count.
type blocker struct {
	redis.UniversalClient
	b    *redistest.Backend
	name string
	cmd  string // the blocking command: "blpop" unless set
	mark int    // miniredis command count when armed
}

func newBlocker(t *testing.T, b *redistest.Backend) *blocker {
	name := fmt.Sprintf("blocker-%d", blockerSeq.Add(1))
	var c redis.UniversalClient
	if b.Kind == redistest.Cluster {
		c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: b.Addrs(), ClientName: name})
	} else {
		c = redis.NewClient(&redis.Options{Addr: b.Addrs()[0], ClientName: name})
	}
	t.Cleanup(func() { _ = c.Close() })
	return &blocker{UniversalClient: c, b: b, name: name, cmd: "blpop"}
}

// arm connects the blocker and b.Client to key's server, so that from now
// on the blocker's next command is the BLPOP. Call it right before starting
// the wait, and send nothing else to a miniredis backend until waitBlocked.
func (k *blocker) arm(t *testing.T, key string) {
	require.NoError(t, k.Exists(t.Context(), key).Err())
	require.NoError(t, k.b.Client.Exists(t.Context(), key).Err())
	if k.b.Mini != nil {
		k.mark = k.b.Mini.CommandCount()
	}
}

// blocked reports whether a connection of the blocker is blocked in BLPOP.
func (k *blocker) blocked(t *testing.T) bool {
	if k.b.Mini != nil {
		return k.b.Mini.CommandCount() > k.mark // the BLPOP has been received
	}
	var found atomic.Bool
	list := func(ctx context.Context, c *redis.Client) error {
		s, err := c.ClientList(ctx).Result()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(s, "\n") {
			f := map[string]string{}
			for _, kv := range strings.Fields(line) {
				name, v, _ := strings.Cut(kv, "=")
				f[name] = v
			}
			if f["name"] == k.name && f["cmd"] == k.cmd && strings.Contains(f["flags"], "b") {
				found.Store(true)
			}
		}
		return nil
	}
	var err error
	switch c := k.b.Client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(t.Context(), list)
	case *redis.Client:
		err = list(t.Context(), c)
	default:
		t.Fatalf("unexpected client %T", c)
	}
	require.NoError(t, err)
	return found.Load()
}

// waitBlocked waits until the blocker's BLPOP has reached the server.
func (k *blocker) waitBlocked(t *testing.T) {
	require.Eventually(t, func() bool { return k.blocked(t) }, 10*time.Second, 5*time.Millisecond, k.cmd+" never blocked")
}

// bounded returns a ctx that ends well after any wait in these tests, so
// that a wait that never ends fails the test instead of hanging it.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// async runs fn in a goroutine and returns a channel with its result.
func async[T any](fn func() T) <-chan T {
	ch := make(chan T, 1)
	go func() { ch <- fn() }()
	return ch
}

// within returns what ch delivers, failing t if that takes longer than d.
func within[T any](t *testing.T, ch <-chan T, d time.Duration) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		require.FailNow(t, "no result within "+d.String())
		var zero T
		return zero
	}
}

type popped struct {
	val string
	ok  bool
	err error
}

func pop(ctx context.Context, c wait.Client, key string, d time.Duration) popped {
	val, ok, err := wait.Pop(ctx, c, key, d)
	return popped{val, ok, err}
}

func TestPop_valuePresent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		key := b.Prefix + "{k}:grant"
		require.NoError(t, b.Client.RPush(ctx, key, "a", "b").Err())
		for _, d := range []time.Duration{5 * time.Second, 500 * time.Millisecond} {
			start := time.Now()
			assert.Equal(t, popped{"a", true, nil}, pop(bounded(t), b.Client, key, d))
			assert.Less(t, time.Since(start), d/2, "a waiting value is taken at once")
		}
		got, err := b.Client.LRange(ctx, key, 0, -1).Result()
		require.NoError(t, err)
		assert.Equal(t, []string{"a", "b"}, got, "the value stays, for a re-sent BLMOVE")
	})
}

func TestPop_valueArrives(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:grant"
		for _, d := range []time.Duration{10 * time.Second, 900 * time.Millisecond} {
			t.Run(d.String(), func(t *testing.T) {
				require.NoError(t, b.Client.Del(t.Context(), key).Err())
				k := newBlocker(t, b)
				k.cmd = "blmove"
				k.arm(t, key)
				start := time.Now()
				done := async(func() popped { return pop(bounded(t), k, key, d) })
				k.waitBlocked(t)
				require.NoError(t, b.Client.LPush(t.Context(), key, "v").Err())
				assert.Equal(t, popped{"v", true, nil}, within(t, done, d))
				if d >= time.Second {
					assert.Less(t, time.Since(start), d/2, "woken well before d")
				}
			})
		}
	})
}

func TestPop_timeout(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:grant"
		for _, d := range []time.Duration{200 * time.Millisecond, 700 * time.Millisecond, time.Second} {
			t.Run(d.String(), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), d+5*time.Second) // fail, not hang, if the BLPOP never times out
				defer cancel()
				start := time.Now()
				assert.Equal(t, popped{"", false, nil}, pop(ctx, b.Client, key, d), "a timeout is not an error")
				elapsed := time.Since(start)
				assert.GreaterOrEqual(t, elapsed, d-10*time.Millisecond)
				assert.Less(t, elapsed, d+3*time.Second)
			})
		}
	})
}

func TestPop_wrongType(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:grant"
		require.NoError(t, b.Client.Set(t.Context(), key, "x", 0).Err())
		for _, d := range []time.Duration{time.Second, 100 * time.Millisecond} {
			r := pop(bounded(t), b.Client, key, d)
			assert.False(t, r.ok)
			assert.ErrorContains(t, r.err, "WRONGTYPE")
		}
	})
}

func TestPop_cancelled(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:grant"
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		var r popped
		rt, _ := b.Count.Delta(func() { r = pop(ctx, b.Client, key, time.Second) })
		assert.ErrorIs(t, r.err, context.Canceled)
		assert.False(t, r.ok)
		assert.Equal(t, int64(0), rt, "no BLPOP for a cancelled ctx")

		for _, d := range []time.Duration{10 * time.Second, 900 * time.Millisecond} {
			t.Run(d.String(), func(t *testing.T) {
				require.NoError(t, b.Client.Del(t.Context(), key).Err())
				k := newBlocker(t, b)
				k.cmd = "blmove"
				k.arm(t, key)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				done := async(func() popped { return pop(ctx, k, key, d) })
				k.waitBlocked(t)
				start := time.Now()
				cancel()
				r := within(t, done, 5*time.Second)
				assert.ErrorIs(t, r.err, context.Canceled)
				assert.False(t, r.ok)
				if d >= time.Second {
					assert.Less(t, time.Since(start), d/2, "returned at the cancel, not at d")
				}
			})
		}
	})
}

// A cancelled Pop wakes its BLMOVE with an empty value, so that the
// connection is not held until the timeout, and the key it pushed to
// expires by itself.
func TestPop_cancelledFreesConnection(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:grant"
		k := newBlocker(t, b)
		k.cmd = "blmove"
		k.arm(t, key)
		ctx, cancel := context.WithCancel(t.Context())
		done := async(func() popped { return pop(ctx, k, key, 10*time.Second) })
		k.waitBlocked(t)
		cancel()
		require.ErrorIs(t, within(t, done, 5*time.Second).err, context.Canceled)

		if b.Real() { // miniredis does not show blocked clients
			require.Eventually(t, func() bool { return !k.blocked(t) }, 5*time.Second, 5*time.Millisecond,
				"the abandoned BLMOVE still blocks")
		}
		ttl, err := b.Client.PTTL(t.Context(), key).Result()
		require.NoError(t, err)
		assert.LessOrEqual(t, ttl, wait.MaxBlock, "whatever is left at key expires")
	})
}

// A sub-second wait must not be cut short by the client's ReadTimeout: the
// whole-second path (BLPop) extends the read deadline by the BLPOP timeout,
// but the fractional path (Do) does not, so a client whose ReadTimeout is
// below d gets an i/o timeout instead of a normal return after d. Nor may
// it last the whole second go-redis's BLMove rounds it up to.
func TestPop_subSecondWithShortReadTimeout(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const readTimeout = 100 * time.Millisecond
		var c redis.UniversalClient
		if b.Kind == redistest.Cluster {
			c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: b.Addrs(), ReadTimeout: readTimeout})
		} else {
			c = redis.NewClient(&redis.Options{Addr: b.Addrs()[0], ReadTimeout: readTimeout})
		}
		t.Cleanup(func() { _ = c.Close() })
		for _, d := range []time.Duration{time.Second, 500 * time.Millisecond, 50 * time.Millisecond} {
			t.Run(d.String(), func(t *testing.T) {
				key := b.Prefix + "{" + d.String() + "}:grant"
				start := time.Now()
				r := pop(bounded(t), c, key, d)
				if assert.NoError(t, r.err, "Pop(%v) with ReadTimeout %v", d, readTimeout) {
					assert.False(t, r.ok, "nothing was pushed")
					took := time.Since(start)
					assert.GreaterOrEqual(t, took, d-10*time.Millisecond, "waited the whole d")
					if d < 500*time.Millisecond {
						// The BLMOVE waits a whole second (no room for a
						// fractional timeout); Pop ends it at d.
						assert.Less(t, took, 900*time.Millisecond, "ended at d, not at the second the BLMOVE was rounded to")
						n, err := c.LLen(t.Context(), key).Result()
						require.NoError(t, err)
						assert.Zero(t, n, "the value that ended the wait is gone: it would end the next wait at once")
					}
				}
			})
		}
	})
}

type moved struct {
	val string
	ok  bool
	err error
}

func blmove(ctx context.Context, c wait.Mover, d time.Duration, src, dst string) moved {
	val, ok, err := wait.BLMove(ctx, c, d, src, dst, "RIGHT", "LEFT")
	return moved{val, ok, err}
}

// BLMove moves a waiting element at once, waits for one to arrive, times
// out without an error, rotates a list onto itself, and waits a sub-second
// d whole on a client whose read timeout is shorter than d.
func TestBLMove(t *testing.T) {
	t.Parallel() // mostly waits out timeouts
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		t.Parallel() // the backends too: each has keys of its own
		ctx := t.Context()
		src, dst := b.Prefix+"{k}:src", b.Prefix+"{k}:dst"
		require.NoError(t, b.Client.RPush(ctx, src, "a", "b", "c").Err())
		for _, tt := range []struct {
			d    time.Duration
			want string
		}{{5 * time.Second, "c"}, {500 * time.Millisecond, "b"}} {
			start := time.Now()
			assert.Equal(t, moved{tt.want, true, nil}, blmove(bounded(t), b.Client, tt.d, src, dst))
			assert.Less(t, time.Since(start), tt.d/2, "a waiting element is taken at once")
		}
		got, err := b.Client.LRange(ctx, dst, 0, -1).Result()
		require.NoError(t, err)
		assert.Equal(t, []string{"b", "c"}, got, "moved to dst's left")
		for range 2 {
			assert.Equal(t, moved{"a", true, nil}, blmove(bounded(t), b.Client, 300*time.Millisecond, src, src))
		}
		got, err = b.Client.LRange(ctx, src, 0, -1).Result()
		require.NoError(t, err)
		assert.Equal(t, []string{"a"}, got, "rotated onto itself: still there")

		empty := b.Prefix + "{k}:empty"
		for _, d := range []time.Duration{10 * time.Second, 900 * time.Millisecond} {
			t.Run("arrives/"+d.String(), func(t *testing.T) {
				k := newBlocker(t, b)
				k.cmd = "blmove"
				k.arm(t, empty)
				start := time.Now()
				done := async(func() moved { return blmove(bounded(t), k, d, empty, empty) })
				k.waitBlocked(t)
				require.NoError(t, b.Client.LPush(t.Context(), empty, "v").Err())
				assert.Equal(t, moved{"v", true, nil}, within(t, done, d))
				if d >= time.Second {
					assert.Less(t, time.Since(start), d/2, "woken well before d")
				}
				require.NoError(t, b.Client.Del(t.Context(), empty).Err())
			})
		}

		const readTimeout = 100 * time.Millisecond
		var short redis.UniversalClient
		if b.Kind == redistest.Cluster {
			short = redis.NewClusterClient(&redis.ClusterOptions{Addrs: b.Addrs(), ReadTimeout: readTimeout})
		} else {
			short = redis.NewClient(&redis.Options{Addr: b.Addrs()[0], ReadTimeout: readTimeout})
		}
		t.Cleanup(func() { _ = short.Close() })
		for _, tt := range []struct {
			name string
			c    wait.Mover
			d    time.Duration
		}{{"timeout/300ms", b.Client, 300 * time.Millisecond}, {"timeout/1s", b.Client, time.Second},
			{"shortReadTimeout/300ms", short, 300 * time.Millisecond}} {
			t.Run(tt.name, func(t *testing.T) {
				start := time.Now()
				assert.Equal(t, moved{"", false, nil}, blmove(bounded(t), tt.c, tt.d, empty, empty), "a timeout is not an error")
				elapsed := time.Since(start)
				assert.GreaterOrEqual(t, elapsed, tt.d-10*time.Millisecond, "waited the whole d")
				assert.Less(t, elapsed, tt.d+3*time.Second)
			})
		}

		require.NoError(t, b.Client.Set(ctx, empty, "x", 0).Err())
		for _, d := range []time.Duration{time.Second, 100 * time.Millisecond} {
			r := blmove(bounded(t), b.Client, d, empty, empty)
			assert.False(t, r.ok)
			assert.ErrorContains(t, r.err, "WRONGTYPE")
		}
	})
}

// turn builds a [wait.Turn] on grantKey around attempt (n counts the calls
// from 1) and records what Queue does with it. A pipelined attempt runs
// attempt when it is queued; when that takes the resource (or fails with a
// server error) it also queues the wake push a real acquire script makes.
// Read the fields once Queue has returned.
type turn struct {
	grantKey string
	attempt  func(ctx context.Context, n int) (bool, time.Duration, error)
	granted  func(val string) error // nil: accept
	hot      bool                   // the contention hint Queue starts with
	lease    time.Duration
	leaveErr error // what Leave returns

	hint   *atomic.Bool // the hint as Queue left it
	mu     sync.Mutex
	events []string // Turn.Event's, in order

	calls     []call
	grants    []string
	since     []time.Time
	leaves    atomic.Int64
	giveBacks atomic.Int64
}

type call struct {
	at        time.Time
	left      time.Duration
	pipelined bool
}

// hint returns a contention hint set to hot.
func hint(hot bool) *atomic.Bool {
	h := new(atomic.Bool)
	h.Store(hot)
	return h
}

func (r *turn) Turn() wait.Turn {
	r.hint = hint(r.hot)
	return wait.Turn{
		GrantKey:  r.grantKey,
		GrantRole: "test grant",
		Lease:     r.lease,
		Hint:      r.hint,
		Event: func(e string) {
			r.mu.Lock()
			r.events = append(r.events, e)
			r.mu.Unlock()
		},
		Attempt: func(ctx context.Context, left time.Duration) (bool, time.Duration, error) {
			r.calls = append(r.calls, call{time.Now(), left, false})
			return r.attempt(ctx, len(r.calls))
		},
		AttemptIn: func(ctx context.Context, p redis.Pipeliner, left time.Duration) func() (bool, time.Duration, error) {
			r.calls = append(r.calls, call{time.Now(), left, true})
			ok, retry, err := r.attempt(ctx, len(r.calls))
			var rerr redis.Error
			switch {
			case ok:
				p.RPush(ctx, r.grantKey, "woken")
			case errors.As(err, &rerr) && !strings.HasPrefix(err.Error(), "NOSCRIPT"):
				p.RPush(ctx, r.grantKey, "")
			default:
				p.Exists(ctx, r.grantKey) // the script's command
			}
			return func() (bool, time.Duration, error) { return ok, retry, err }
		},
		Granted: func(val string, since time.Time, _ bool) error {
			r.grants = append(r.grants, val)
			r.since = append(r.since, since)
			if r.granted != nil {
				return r.granted(val)
			}
			return nil
		},
		Leave: func(ctx context.Context) error {
			r.leaves.Add(1)
			return r.leaveErr
		},
		GiveBack: func() { r.giveBacks.Add(1) },
	}
}

func (r *turn) pipelined() []bool {
	var q []bool
	for _, c := range r.calls {
		q = append(q, c.pipelined)
	}
	return q
}

type queued struct {
	ok  bool
	err error
}

func queue(ctx context.Context, c wait.Client, deadline time.Time, r *turn) queued {
	ok, err := wait.Queue(ctx, c, deadline, r.Turn())
	return queued{ok, err}
}

func TestQueue_firstTry(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ok := func(context.Context, int) (bool, time.Duration, error) { return true, 0, nil }
		t.Run("cold", func(t *testing.T) {
			r := &turn{grantKey: b.Prefix + "{k}:grant", attempt: ok}
			var q queued
			rt, _ := b.Count.Delta(func() { q = queue(bounded(t), b.Client, time.Time{}, r) })
			assert.Equal(t, queued{true, nil}, q)
			require.Len(t, r.calls, 1)
			assert.Equal(t, wait.MaxBlock, r.calls[0].left, "no deadline: left is MaxBlock")
			assert.False(t, r.calls[0].pipelined, "not hot: a plain attempt")
			assert.Empty(t, r.grants)
			assert.Equal(t, int64(0), r.leaves.Load())
			assert.Equal(t, int64(0), rt, "no wait, no round trip")
			assert.Equal(t, []string{"attempt"}, r.events)
			assert.False(t, r.hint.Load(), "not hot: the attempt found it free")
		})
		t.Run("hot", func(t *testing.T) {
			r := &turn{grantKey: b.Prefix + "{k}:grant", attempt: ok, hot: true, lease: time.Minute}
			var q queued
			start := time.Now()
			rt, cmds := b.Count.Delta(func() { q = queue(bounded(t), b.Client, time.Time{}, r) })
			assert.Equal(t, queued{true, nil}, q)
			assert.Equal(t, []bool{true}, r.pipelined(), "hot: the attempt is pipelined with the pop")
			assert.Empty(t, r.grants, "the attempt took it: its wake is not a grant")
			assert.Equal(t, int64(1), rt, "attempt and pop in one round trip")
			assert.Equal(t, int64(2), cmds)
			assert.Less(t, time.Since(start), time.Second, "the wake push ended the pop at once")
			n, err := b.Client.Exists(t.Context(), r.grantKey).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "the pop took the wake")
			assert.Equal(t, []string{"attempt"}, r.events)
			assert.False(t, r.hint.Load(), "no longer hot: the pipelined attempt found it free")
		})
	})
}

func TestQueue_retryIn(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const retryIn = 50 * time.Millisecond
		r := &turn{grantKey: b.Prefix + "{k}:grant", lease: 4 * retryIn, attempt: func(_ context.Context, n int) (bool, time.Duration, error) {
			return n == 3, retryIn, nil
		}}
		q := queue(bounded(t), b.Client, time.Now().Add(10*time.Second), r)
		assert.Equal(t, queued{true, nil}, q)
		require.Len(t, r.calls, 3)
		assert.Equal(t, []bool{false, true, true}, r.pipelined(), "after an attempt found it taken, attempts are pipelined")
		assert.LessOrEqual(t, r.calls[0].left, 10*time.Second, "left is bounded by the deadline")
		for i := 1; i < len(r.calls); i++ {
			gap := r.calls[i].at.Sub(r.calls[i-1].at)
			assert.GreaterOrEqual(t, gap, retryIn-5*time.Millisecond, "waited for retryIn before attempt %d", i+1)
			assert.Less(t, gap, retryIn+3*time.Second, "retried soon after retryIn (attempt %d)", i+1)
		}
		assert.Empty(t, r.grants)
		assert.Equal(t, int64(0), r.leaves.Load(), "acquired: nothing to leave")
	})
}

// A pipelined round's wait is chosen before its attempt's reply: it is
// bounded by half the lease and BlindCap, and the retryIn the attempt
// reports then bounds a plain wait with no new attempt.
func TestQueue_blindRound(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const lease = 6 * time.Second
		const retryIn = 2 * time.Second // the holder's lease, seen by the attempt
		r := &turn{grantKey: b.Prefix + "{k}:grant", hot: true, lease: lease, attempt: func(_ context.Context, n int) (bool, time.Duration, error) {
			return n == 2, retryIn, nil
		}}
		start := time.Now()
		rt, _ := b.Count.Delta(func() {
			assert.Equal(t, queued{true, nil}, queue(bounded(t), b.Client, time.Now().Add(10*time.Second), r))
		})
		require.Len(t, r.calls, 2)
		assert.Equal(t, []bool{true, true}, r.pipelined())
		gap := r.calls[1].at.Sub(r.calls[0].at)
		assert.GreaterOrEqual(t, gap, retryIn-5*time.Millisecond, "waited until the holder's lease ended")
		assert.Less(t, time.Since(start), retryIn+3*time.Second)
		assert.Equal(t, int64(3), rt, "pipelined round, plain wait for the rest of retryIn, pipelined round")
	})
}

// A caller whose lease is shorter than the holder's waits at most half its
// lease after each attempt, then attempts again: a grant is dated from its
// last attempt, and one that came later than its lease after it would be
// an expired estimate of a lease the server holds for it.
func TestQueue_halfLease(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const lease = 300 * time.Millisecond
		const retryIn = 5 * time.Second // the holder's lease, seen by the attempt
		r := &turn{grantKey: b.Prefix + "{k}:grant", lease: lease, attempt: func(_ context.Context, n int) (bool, time.Duration, error) {
			return n == 4, retryIn, nil
		}}
		assert.Equal(t, queued{true, nil}, queue(bounded(t), b.Client, time.Now().Add(10*time.Second), r))
		require.Len(t, r.calls, 4)
		for i := 1; i < len(r.calls); i++ {
			gap := r.calls[i].at.Sub(r.calls[i-1].at)
			assert.GreaterOrEqual(t, gap, lease/2-5*time.Millisecond, "attempt %d", i+1)
			assert.Less(t, gap, retryIn, "attempt %d came before the holder's lease ended", i+1)
		}
	})
}

func TestQueue_deadline(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:grant"
		fail := func(context.Context, int) (bool, time.Duration, error) { return false, 0, nil }
		for _, hot := range []bool{false, true} {
			t.Run(fmt.Sprintf("passed/hot=%v", hot), func(t *testing.T) {
				r := &turn{grantKey: key, attempt: fail, hot: hot}
				assert.Equal(t, queued{false, nil}, queue(bounded(t), b.Client, time.Now().Add(-time.Second), r))
				require.Len(t, r.calls, 1, "one attempt, then give up")
				assert.Equal(t, time.Millisecond, r.calls[0].left, "the minimum left")
				assert.Equal(t, int64(1), r.leaves.Load(), "gave up after an attempt: left the queue")
				if hot {
					assert.Equal(t, []string{"attempt", "leave"}, r.events, "a pipelined attempt is not reported queued")
				} else {
					assert.Equal(t, []string{"attempt", "queued", "leave"}, r.events)
				}
				assert.True(t, r.hint.Load(), "the attempt found it taken: hot")
			})
			t.Run(fmt.Sprintf("passes while waiting/hot=%v", hot), func(t *testing.T) {
				const d = 300 * time.Millisecond
				r := &turn{grantKey: key, attempt: fail, hot: hot}
				start := time.Now()
				q := queue(bounded(t), b.Client, start.Add(d), r)
				elapsed := time.Since(start)
				assert.Equal(t, queued{false, nil}, q)
				assert.GreaterOrEqual(t, elapsed, d)
				assert.Less(t, elapsed, d+3*time.Second)
				require.NotEmpty(t, r.calls)
				assert.LessOrEqual(t, r.calls[0].left, d, "left is bounded by the deadline")
				assert.Equal(t, int64(1), r.leaves.Load())
			})
		}
	})
}

func TestQueue_permanentError(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		str := b.Prefix + "{k}:string"
		require.NoError(t, b.Client.Set(t.Context(), str, "x", 0).Err())
		for _, hot := range []bool{false, true} {
			t.Run(fmt.Sprintf("hot=%v", hot), func(t *testing.T) {
				r := &turn{grantKey: b.Prefix + "{k}:grant", hot: hot, attempt: func(ctx context.Context, _ int) (bool, time.Duration, error) {
					return false, 0, b.Client.LPush(ctx, str, "v").Err()
				}}
				start := time.Now()
				q := queue(bounded(t), b.Client, time.Time{}, r)
				assert.False(t, q.ok)
				assert.ErrorContains(t, q.err, "WRONGTYPE")
				assert.Len(t, r.calls, 1, "not retried")
				assert.Equal(t, int64(0), r.leaves.Load(), "the server refused the attempt: nothing to leave")
				assert.Less(t, time.Since(start), time.Second, "a pipelined attempt that fails wakes its pop")
			})
		}
	})
}

// An error after an attempt that queued the caller: it leaves.
func TestQueue_permanentErrorAfterQueueing(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		str := b.Prefix + "{k}:string"
		require.NoError(t, b.Client.Set(t.Context(), str, "x", 0).Err())
		r := &turn{grantKey: b.Prefix + "{k}:grant", attempt: func(ctx context.Context, n int) (bool, time.Duration, error) {
			if n == 1 {
				return false, 10 * time.Millisecond, nil
			}
			return false, 0, b.Client.LPush(ctx, str, "v").Err()
		}}
		q := queue(bounded(t), b.Client, time.Time{}, r)
		assert.False(t, q.ok)
		assert.ErrorContains(t, q.err, "WRONGTYPE")
		assert.Len(t, r.calls, 2)
		assert.Equal(t, int64(1), r.leaves.Load(), "the first attempt queued us")
	})
}

func TestQueue_grantKeyWrongType(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:grant"
		require.NoError(t, b.Client.Set(t.Context(), key, "x", 0).Err())
		for _, hot := range []bool{false, true} {
			t.Run(fmt.Sprintf("hot=%v", hot), func(t *testing.T) {
				r := &turn{grantKey: key, hot: hot, attempt: func(context.Context, int) (bool, time.Duration, error) {
					return false, 50 * time.Millisecond, nil
				}}
				q := queue(bounded(t), b.Client, time.Time{}, r)
				assert.False(t, q.ok)
				var kerr *ria.KeyError
				if assert.ErrorAs(t, q.err, &kerr, "the pop's WRONGTYPE, as a key error") {
					assert.Equal(t, "test grant", kerr.Role)
					assert.Equal(t, key, kerr.Key)
					assert.Equal(t, "a string", kerr.Got)
					assert.Equal(t, "a list", kerr.Want)
					assert.ErrorIs(t, q.err, ria.ErrWrongType)
				}
				assert.Len(t, r.calls, 1)
				assert.Equal(t, int64(1), r.leaves.Load())
			})
		}
	})
}

func TestQueue_transientError(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:grant"
		t.Run("retried", func(t *testing.T) {
			r := &turn{grantKey: key, attempt: func(_ context.Context, n int) (bool, time.Duration, error) {
				if n <= 2 {
					return false, 0, loading
				}
				return true, 0, nil
			}}
			assert.Equal(t, queued{true, nil}, queue(bounded(t), b.Client, time.Now().Add(10*time.Second), r))
			assert.Len(t, r.calls, 3)
			assert.Equal(t, int64(0), r.leaves.Load())
		})
		// A refusal that may answer the re-send of an attempt that ran and
		// queued the caller (LOADING, re-sent on by go-redis; BUSY, after an
		// attempt that timed out behind a long script): leave.
		for _, c := range []struct {
			refusal srvErr
			leaves  int64
		}{{busy, 1}, {loading, 1}} {
			t.Run("until deadline "+strings.Fields(string(c.refusal))[0], func(t *testing.T) {
				r := &turn{grantKey: key, attempt: func(_ context.Context, n int) (bool, time.Duration, error) {
					return false, 0, fmt.Errorf("attempt %d: %w", n, c.refusal)
				}}
				start := time.Now()
				q := queue(bounded(t), b.Client, start.Add(200*time.Millisecond), r)
				assert.False(t, q.ok)
				assert.ErrorIs(t, q.err, c.refusal, "the last transient error is returned")
				assert.Greater(t, len(r.calls), 1)
				assert.Equal(t, c.leaves, r.leaves.Load())
				assert.Less(t, time.Since(start), 5*time.Second)
			})
		}
	})
}

func TestQueue_cancelled(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:grant"
		for _, hot := range []bool{false, true} {
			t.Run(fmt.Sprintf("while blocked/hot=%v", hot), func(t *testing.T) {
				k := newBlocker(t, b)
				if !hot {
					k.cmd = "blmove"
				}
				k.arm(t, key)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				r := &turn{grantKey: key, hot: hot, lease: time.Minute, attempt: func(context.Context, int) (bool, time.Duration, error) {
					return false, 0, nil // no deadline, no retryIn: would block for long
				}}
				done := async(func() queued { return queue(ctx, k, time.Time{}, r) })
				k.waitBlocked(t)
				cancel()
				q := within(t, done, 5*time.Second)
				assert.False(t, q.ok)
				assert.ErrorIs(t, q.err, context.Canceled)
				assert.NotErrorIs(t, q.err, ria.ErrOutcomeUnknown)
				assert.Equal(t, 1, strings.Count(q.err.Error(), context.Canceled.Error()), "said once: %v", q.err)
				assert.Len(t, r.calls, 1)
				assert.Equal(t, int64(1), r.leaves.Load())
				assert.Equal(t, int64(0), r.giveBacks.Load())
				require.NoError(t, b.Client.Del(t.Context(), key).Err())
			})
		}
		// A refusal that may answer the re-send of an attempt that ran and
		// queued the caller (LOADING, re-sent on by go-redis; BUSY, after an
		// attempt that timed out behind a long script): leave.
		for _, c := range []struct {
			refusal srvErr
			leaves  int64
		}{{busy, 1}, {loading, 1}} {
			t.Run("during backoff "+strings.Fields(string(c.refusal))[0], func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				r := &turn{grantKey: key, attempt: func(_ context.Context, n int) (bool, time.Duration, error) {
					if n == 2 {
						cancel()
					}
					return false, 0, c.refusal
				}}
				q := queue(ctx, b.Client, time.Time{}, r)
				assert.False(t, q.ok)
				assert.ErrorIs(t, q.err, context.Canceled)
				assert.ErrorIs(t, q.err, c.refusal, "joined with the last error")
				assert.Len(t, r.calls, 2)
				assert.Equal(t, c.leaves, r.leaves.Load())
			})
		}
	})
}

func TestQueue_granted(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const retryIn = 10 * time.Second
		key := b.Prefix + "{k}:grant"
		for _, hot := range []bool{false, true} {
			t.Run(fmt.Sprintf("while blocked/hot=%v", hot), func(t *testing.T) {
				k := newBlocker(t, b)
				if !hot {
					k.cmd = "blmove"
				}
				k.arm(t, key)
				r := &turn{grantKey: key, hot: hot, lease: time.Minute, attempt: func(context.Context, int) (bool, time.Duration, error) {
					return false, retryIn, nil
				}}
				start := time.Now()
				done := async(func() queued { return queue(bounded(t), k, time.Time{}, r) })
				k.waitBlocked(t)
				pushed := time.Now()
				require.NoError(t, b.Client.LPush(t.Context(), key, "fence-7").Err())
				assert.Equal(t, queued{true, nil}, within(t, done, retryIn))
				assert.Less(t, time.Since(start), retryIn/2, "the grant woke the waiter well before retryIn")
				assert.Len(t, r.calls, 1, "handed over: no second attempt")
				assert.Equal(t, []string{"fence-7"}, r.grants)
				require.Len(t, r.since, 1)
				assert.False(t, r.since[0].After(pushed), "since is before the grant")
				assert.False(t, r.since[0].Before(r.calls[0].at.Add(-time.Millisecond)), "since is about the attempt")
				assert.Equal(t, int64(0), r.leaves.Load())
				require.NoError(t, b.Client.Del(t.Context(), key).Err())
			})
		}
		t.Run("before the wait", func(t *testing.T) {
			r := &turn{grantKey: key, attempt: func(ctx context.Context, n int) (bool, time.Duration, error) {
				// The holder releases between our attempt and our wait.
				require.NoError(t, b.Client.LPush(ctx, key, "fence-8").Err())
				return false, retryIn, nil
			}}
			start := time.Now()
			assert.Equal(t, queued{true, nil}, queue(bounded(t), b.Client, time.Time{}, r))
			assert.Less(t, time.Since(start), retryIn/2)
			assert.Len(t, r.calls, 1)
			assert.Equal(t, []string{"fence-8"}, r.grants)
			got, err := b.Client.LRange(t.Context(), key, 0, -1).Result()
			require.NoError(t, err)
			assert.Equal(t, []string{"fence-8"}, got, "the grant stays for a re-sent wait; the caller deletes it")
			require.NoError(t, b.Client.Del(t.Context(), key).Err())
		})
		t.Run("rejected", func(t *testing.T) {
			errBad := errors.New("malformed grant")
			r := &turn{
				grantKey: key,
				attempt: func(ctx context.Context, n int) (bool, time.Duration, error) {
					require.NoError(t, b.Client.LPush(ctx, key, "garbage").Err())
					return false, retryIn, nil
				},
				granted: func(string) error { return errBad },
			}
			q := queue(bounded(t), b.Client, time.Time{}, r)
			assert.False(t, q.ok)
			assert.ErrorIs(t, q.err, errBad)
			assert.Equal(t, []string{"garbage"}, r.grants)
			assert.Equal(t, int64(1), r.leaves.Load(), "left the queue, giving back the grant")
			require.NoError(t, b.Client.Del(t.Context(), key).Err())
		})
	})
}

// An empty value on the grant list is a wake, not a grant: the waiter
// attempts again at once.
func TestQueue_woken(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const retryIn = 10 * time.Second
		key := b.Prefix + "{k}:grant"
		k := newBlocker(t, b)
		k.cmd = "blmove"
		k.arm(t, key)
		r := &turn{grantKey: key, attempt: func(_ context.Context, n int) (bool, time.Duration, error) {
			return n == 2, retryIn, nil
		}}
		start := time.Now()
		done := async(func() queued { return queue(bounded(t), k, time.Time{}, r) })
		k.waitBlocked(t)
		require.NoError(t, b.Client.RPush(t.Context(), key, "").Err())
		assert.Equal(t, queued{true, nil}, within(t, done, retryIn))
		assert.Less(t, time.Since(start), retryIn/2, "woken, not waiting out retryIn")
		assert.Len(t, r.calls, 2)
		assert.Empty(t, r.grants, "a wake is not a grant")
	})
}

// A Leave that fails is handed to GiveBack, and the error says the outcome
// is unknown (never a plain "not acquired").
func TestQueue_leaveFails(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		errDown := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
		r := &turn{grantKey: b.Prefix + "{k}:grant", leaveErr: errDown, attempt: func(context.Context, int) (bool, time.Duration, error) {
			return false, 0, nil
		}}
		q := queue(bounded(t), b.Client, time.Now().Add(50*time.Millisecond), r)
		assert.False(t, q.ok)
		assert.ErrorIs(t, q.err, ria.ErrOutcomeUnknown)
		assert.ErrorIs(t, q.err, errDown)
		assert.Equal(t, int64(1), r.leaves.Load())
		assert.Equal(t, int64(1), r.giveBacks.Load())
	})
}

// A pipelined attempt the server does not know the script of (NOSCRIPT)
// makes the next round a plain attempt, which loads it.
func TestQueue_noScript(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "{k}:grant"
		noscript := srvErr("NOSCRIPT No matching script. Please use EVAL.")
		r := &turn{grantKey: key, hot: true, lease: 100 * time.Millisecond, attempt: func(_ context.Context, n int) (bool, time.Duration, error) {
			if n == 1 {
				return false, 0, noscript
			}
			return true, 0, nil
		}}
		assert.Equal(t, queued{true, nil}, queue(bounded(t), b.Client, time.Time{}, r))
		assert.Equal(t, []bool{true, false}, r.pipelined())
	})
}

// ScriptIn queues a script call on a pipeline and hands its reply back
// through the same call, NOSCRIPT included.
func TestScriptIn(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		key := b.Prefix + "{k}:n"
		s := redis.NewScript(`return redis.call('incrby', KEYS[1], ARGV[1])`)
		run := func(ctx context.Context, c redis.Scripter) (any, error) {
			return s.Run(ctx, c, []string{key}, 5).Result()
		}
		require.NoError(t, s.Load(ctx, b.Client).Err()) // on every node of a cluster
		var read func() (any, error)
		rt, cmds := b.Count.Delta(func() {
			_, err := b.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
				read = wait.ScriptIn(ctx, p, run)
				p.Get(ctx, key)
				return nil
			})
			require.NoError(t, err)
		})
		assert.Equal(t, int64(1), rt)
		assert.Equal(t, int64(2), cmds)
		v, err := read()
		require.NoError(t, err)
		assert.Equal(t, int64(5), v)

		unknown := redis.NewScript(`return 'never loaded ` + b.Prefix + `'`)
		_, _ = b.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
			read = wait.ScriptIn(ctx, p, func(ctx context.Context, c redis.Scripter) (any, error) {
				return unknown.Run(ctx, c, []string{key}).Result()
			})
			return nil
		})
		_, err = read()
		assert.ErrorContains(t, err, "NOSCRIPT")
	})
}

// A waiter whose lease is shorter than the holder's attempts again every
// half of its lease (Turn.Lease, lock/doc.go: "an attempt again every half
// of the waiter's own TTL"). Each such attempt should cost one round trip
// (the pipelined round: attempt + BLPOP bounded by half the lease). (After
// a pipelined round that blocked for half the lease, a plain wait bounded
// by the half lease left, none, was sent: a 1 ms BLPOP that could only time
// out, before every pipelined attempt.)
func TestQueue_halfLeaseRoundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const lease = 200 * time.Millisecond
		const retryIn = 10 * time.Second // the holder's lease, seen by every attempt
		const attempts = 6
		r := &turn{grantKey: b.Prefix + "{k}:grant", lease: lease, attempt: func(_ context.Context, n int) (bool, time.Duration, error) {
			return n == attempts, retryIn, nil
		}}
		var q queued
		rt, _ := b.Count.Delta(func() { q = queue(bounded(t), b.Client, time.Now().Add(20*time.Second), r) })
		require.Equal(t, queued{true, nil}, q)
		require.Len(t, r.calls, attempts)
		// attempt 1 is plain (no round trip in this fake), then one plain
		// wait of half the lease, then attempts 2..6 pipelined: one round
		// trip each.
		assert.Equal(t, int64(1+attempts-1), rt,
			"one round trip per half-lease attempt; got %d for %d attempts", rt, attempts)
	})
}
