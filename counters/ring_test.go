package counters_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// signalHandler is a slog.Handler that closes ch at the first record whose
// message contains want.
type signalHandler struct {
	want string
	once *sync.Once
	ch   chan struct{}
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.want) {
		h.once.Do(func() { close(h.ch) })
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }

// A Ring shard that the heartbeat marked down is a transient outage: the
// cleaner's Run must ride it out (log, back off, retry) as it does for a
// server it cannot reach, not stop for good with an error "that retrying
// cannot mend".
func TestCleaner_Run_ringShardDown(t *testing.T) {
	redistest.New(t, redistest.Standalone) // skips/fails as the harness does
	s1 := redistest.StartServer(t)
	s2 := redistest.StartServer(t)
	ring := redis.NewRing(&redis.RingOptions{
		Addrs:              map[string]string{"a": s1.Addr(), "b": s2.Addr()},
		HeartbeatFrequency: 10 * time.Millisecond,
		MaxRetries:         -1,
	})
	t.Cleanup(func() { _ = ring.Close() })
	c, err := counters.New(ring, counters.WithPrefix("review:"))
	require.NoError(t, err)
	ctx := t.Context()
	for i := range 20 {
		require.NoError(t, c.Update(ctx, "hits"+strings.Repeat("x", i), 1))
	}

	s2.Kill()
	deadline := time.Now().Add(20 * time.Second)
	for ring.Len() != 1 { // the heartbeat marks shard b down
		require.True(t, time.Now().Before(deadline), "ring never marked the dead shard down")
		time.Sleep(5 * time.Millisecond) // polling a state change of the heartbeat
	}

	retried := make(chan struct{})
	log := slog.New(signalHandler{want: "will retry", once: &sync.Once{}, ch: retried})
	cl, err := c.Cleaner(counters.WithInterval(10*time.Millisecond), counters.WithLogger(log))
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cl.Run(runCtx) }()
	select {
	case err := <-done:
		t.Fatalf("Cleaner.Run stopped for good while a Ring shard was down: %v", err)
	case <-retried:
	}
	cancel()
	require.NoError(t, <-done)
}
