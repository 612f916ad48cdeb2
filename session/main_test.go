package session_test

import (
	"context"
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
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s of ctx ending")
		return nil
	}
}
