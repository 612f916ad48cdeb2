package cache_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// key returns the name of one of the package's keys: part of entity
// name:key.
func key(b *redistest.Backend, name, k, part string) string {
	return b.Prefix + "{" + name + ":" + k + "}:" + part
}

func newCache[T any](t *testing.T, rdb cache.Client, b *redistest.Backend, opts ...cache.Option) *cache.Cache[T] {
	t.Helper()
	// A lease of a minute unless the test says otherwise: no lease ends
	// while a test holds a load back, however slow the machine.
	c, err := cache.New[T](rdb, "jobs", append([]cache.Option{cache.WithPrefix(b.Prefix), cache.WithLease(time.Minute)}, opts...)...)
	require.NoError(t, err)
	return c
}

// waitForWaits blocks until the lease of counter name:k has counted at
// least n waiters registered on the server (waiters of other processes
// than the restorer's).
func waitForWaits(t *testing.T, b *redistest.Backend, name, k string, n int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		w, err := b.Client.HGet(context.Background(), key(b, name, k, "count.lease"), "w").Result()
		if err != nil {
			return false
		}
		got, err := strconv.ParseInt(w, 10, 64)
		return err == nil && got >= n
	}, 20*time.Second, time.Millisecond)
}

// waitForWaiters blocks until the Caches cs (one per "process") count n
// Gets in all registered as waiters of another caller's lease, about to
// block or blocked on its wake list: from then on, whoever ends the lease
// wakes them.
func waitForWaiters[T any](t *testing.T, n int64, cs ...*cache.Cache[T]) {
	t.Helper()
	require.Eventually(t, func() bool {
		var got int64
		for _, c := range cs {
			got += c.WaitingForTest()
		}
		return got == n
	}, 20*time.Second, time.Millisecond, "%d waiters", n)
}

// dataKeys returns the keys under the test's prefix but the reply records
// of once-scripts (<prefix>{entity}:once:<nonce>), which live for the
// client's retry window whatever the call did.
func dataKeys(b *redistest.Backend, pattern string) []string {
	var out []string
	for _, k := range b.Keys(pattern) {
		if !strings.Contains(k, "}:once:") {
			out = append(out, k)
		}
	}
	return out
}

// gatedLoader counts its calls; the calls numbered in gated block until
// gate is closed (or the test ends). Call i returns "v<i>".
type gatedLoader struct {
	calls atomic.Int64
	gate  chan struct{}
	gated map[int64]bool
	err   map[int64]error
}

func newGatedLoader(t *testing.T, gated ...int64) *gatedLoader {
	l := &gatedLoader{gate: make(chan struct{}), gated: map[int64]bool{}, err: map[int64]error{}}
	for _, g := range gated {
		l.gated[g] = true
	}
	t.Cleanup(l.open)
	return l
}

func (l *gatedLoader) open() {
	select {
	case <-l.gate:
	default:
		close(l.gate)
	}
}

func (l *gatedLoader) load(ctx context.Context) (string, error) {
	n := l.calls.Add(1)
	if l.gated[n] {
		select {
		case <-l.gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if err := l.err[n]; err != nil {
		return "", err
	}
	return "v" + strconv.FormatInt(n, 10), nil
}

// raw returns the raw value of a STRING key ("" if missing).
func raw(t *testing.T, b *redistest.Backend, k string) string {
	t.Helper()
	v, err := b.Client.Get(context.Background(), k).Result()
	if err == redis.Nil {
		return ""
	}
	require.NoError(t, err)
	return v
}

// recv returns what ch delivers, failing t if that takes longer than d;
// then it calls late (if not nil) and waits for ch anyway, so that the
// test can show what came.
func recv[T any](t *testing.T, ch <-chan T, d time.Duration, late func()) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Errorf("no result within %v", d)
		if late == nil {
			t.FailNow()
		}
		late()
		return <-ch
	}
}

// logBuffer collects what a logger writes; safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// failNextScript is a redis.Hook that, once armed, fails the next script
// call (EVALSHA, EVAL) without sending it.
type failNextScript struct{ armed atomic.Bool }

var errInjected = errors.New("injected failure")

func (h *failNextScript) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *failNextScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *failNextScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); (n == "evalsha" || n == "eval") && h.armed.CompareAndSwap(true, false) {
			cmd.SetErr(errInjected)
			return errInjected
		}
		return next(ctx, cmd)
	}
}

// afterRead is a redis.Hook that, right after a Get's first round trip (SET
// NX GET and PTTL) has read an entry, deletes it (through c) as if it
// expired before the Get's next step, or with with set puts that there
// instead (for a minute).
type afterRead struct {
	c    redis.Cmdable
	with string
}

func (h afterRead) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h afterRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h afterRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if len(cmds) == 2 && cmds[0].Name() == "set" && cmds[1].Name() == "pttl" {
			k := cmds[0].Args()[1].(string)
			if h.with == "" {
				h.c.Del(context.Background(), k)
			} else {
				h.c.Set(context.Background(), k, h.with, time.Minute)
			}
		}
		return err
	}
}
