package session_test

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// app is the app name every test uses.
const app = "shop"

// newStore returns the Store of app on rdb under the test's prefix.
func newStore(t *testing.T, b *redistest.Backend, rdb session.Client, opts ...session.Option) *session.Store {
	t.Helper()
	s, err := session.New(rdb, app, append([]session.Option{session.WithPrefix(b.Prefix)}, opts...)...)
	require.NoError(t, err)
	return s
}

// key returns the name of one of the app's keys (see doc.go).
func key(b *redistest.Backend, part string) string { return b.Prefix + "{" + app + "}:" + part }

// dataKeys returns the app's keys under the test's prefix, but for the
// reply records of once-scripts (<prefix>{app}:once:<nonce>, see doc.go).
func dataKeys(b *redistest.Backend) []string {
	var out []string
	for _, k := range b.Keys("") {
		if !strings.Contains(k, "}:once:") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// expire makes keys, which expire within ttl, expire: on miniredis by
// moving its clock past ttl, on a real server (whose clock cannot be
// moved) by cutting their TTL to a millisecond; then it waits until they
// are gone.
func expire(t *testing.T, b *redistest.Backend, ttl time.Duration, keys ...string) {
	t.Helper()
	ctx := t.Context()
	for _, k := range keys {
		left, err := b.Client.PTTL(ctx, k).Result()
		require.NoError(t, err)
		require.Greater(t, left, time.Duration(0), "%s expires", k)
		require.LessOrEqual(t, left, ttl, "%s expires within the TTL", k)
	}
	if b.Mini != nil {
		b.FastForward(ttl)
	} else {
		for _, k := range keys {
			require.NoError(t, b.Client.PExpire(ctx, k, time.Millisecond).Err())
		}
	}
	require.Eventually(t, func() bool { return b.Client.Exists(ctx, keys...).Val() == 0 },
		10*time.Second, time.Millisecond, "the keys expired")
}

// fakeClock is a clock for WithClock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// runAsync runs fn (a loop's Run) in a goroutine and delivers its result.
func runAsync(ctx context.Context, fn func(context.Context) error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- fn(ctx) }()
	return ch
}

// returned waits for a Run started by runAsync to return.
func returned(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of ctx ending")
		return nil
	}
}
