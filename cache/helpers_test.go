package cache_test

import (
	"context"
	"strconv"
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
