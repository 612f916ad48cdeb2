package cache_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
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
	c, err := cache.New[T](rdb, "jobs", append([]cache.Option{cache.WithPrefix(b.Prefix)}, opts...)...)
	require.NoError(t, err)
	return c
}

// waitForWaits blocks until the lease of entry name:k (part "lease" or
// "count.lease") has counted at least n waits.
func waitForWaits(t *testing.T, b *redistest.Backend, name, k, part string, n int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		w, err := b.Client.HGet(context.Background(), key(b, name, k, part), "w").Result()
		if err != nil {
			return false
		}
		got, err := strconv.ParseInt(w, 10, 64)
		return err == nil && got >= n
	}, 10*time.Second, time.Millisecond)
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

// expireAfterRead is a redis.Hook that deletes (through del) the entry a
// Get's GET+PTTL pipeline has just read, as if it expired between that read
// and the next step.
type expireAfterRead struct{ del redis.Cmdable }

func (h expireAfterRead) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h expireAfterRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h expireAfterRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if len(cmds) == 2 && cmds[0].Name() == "get" && cmds[1].Name() == "pttl" {
			h.del.Del(context.Background(), cmds[0].Args()[1].(string))
		}
		return err
	}
}
