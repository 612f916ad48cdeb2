package logs_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/logs"
)

// The handler formats records (attributes, groups), maps levels to the
// book's severities, counts messages without their attributes in the
// common log, and Close writes what is buffered.
func TestHandler(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		h, err := l.Handler("app", logs.WithLevel(slog.LevelDebug), logs.WithInterval(time.Hour))
		require.NoError(t, err)
		// Caches the write script on the node of "app" (a severity the test
		// does not read), so that Close's write is one round trip.
		require.NoError(t, l.LogCommon(ctx, "app", logs.Entry{Severity: "notice", Message: "warm"}))
		log := slog.New(h).With("svc", "cart")
		log.Debug("start")
		log.Info("order placed", "id", 42, slog.Group("user", "name", "Ann Lee"))
		log.WithGroup("req").Info("order placed", "id", 43)
		log.Warn("slow")
		log.Error("failed", "err", "a=b")
		log.Log(ctx, slog.LevelError+4, "down")
		var rt int64
		rt, _ = b.Count.Delta(func() { err = h.Close(ctx) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "one write")
		assert.Equal(t, logs.HandlerStats{Written: 6}, h.Stats())

		info, err := l.Recent(ctx, "app", logs.Info)
		require.NoError(t, err)
		require.Len(t, info, 2)
		assert.Equal(t, "order placed svc=cart req.id=43", info[0].Text)
		assert.Equal(t, `order placed svc=cart id=42 user.name="Ann Lee"`, info[1].Text)
		for sev, want := range map[string]string{logs.Debug: "start svc=cart", logs.Warning: "slow svc=cart",
			logs.Error: `failed svc=cart err="a=b"`, logs.Critical: "down svc=cart"} {
			got, err := l.Recent(ctx, "app", sev)
			require.NoError(t, err)
			if assert.Len(t, got, 1, sev) {
				assert.Equal(t, want, got[0].Text)
			}
		}
		cur, _, err := l.Common(ctx, "app", logs.Info, 10)
		require.NoError(t, err)
		assert.Equal(t, []logs.Count{{"order placed", 2}}, cur.Counts)

		log.Info("after close")
		assert.Equal(t, int64(1), h.Stats().Dropped)
		assert.False(t, h.Enabled(ctx, slog.LevelDebug-1))
	})
}

// 100,000 records from 8 goroutines while the server is stopped for part
// of the run: Handle never waits for Redis, every record is written or
// counted as dropped, and writing resumes when the server is back.
func TestHandler_serverDown(t *testing.T) {
	// A server of the test's own that keeps its data across a restart.
	srv := redistest.StartServer(t, "--appendonly", "yes", "--appendfsync", "always")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	l, err := logs.New(rdb)
	require.NoError(t, err)
	h, err := l.Handler("app", logs.WithInterval(5*time.Millisecond),
		logs.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()

	var slowest atomic.Int64 // the longest Handle, in ns
	logger := slog.New(h)
	produce := func(n int) {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range n {
					level := slog.LevelInfo
					if i%2 == 1 {
						level = slog.LevelWarn
					}
					start := time.Now()
					logger.Log(ctx, level, "req", "g", g, "i", i)
					if d := int64(time.Since(start)); d > slowest.Load() {
						slowest.Store(d) // racy max: good enough for a bound
					}
				}
			}()
		}
		wg.Wait()
	}
	drained := func() bool { return h.Stats().Buffered == 0 }

	produce(4000) // 32,000 with the server up
	require.Eventually(t, drained, 30*time.Second, time.Millisecond)
	srv.Kill()
	produce(4000) // 32,000 with the server down: the buffer (10,000) fills, the rest is dropped
	downStats := h.Stats()
	srv.Restart(t)
	require.Eventually(t, drained, 30*time.Second, time.Millisecond, "writing resumed")
	upStats := h.Stats()
	produce(4500) // 36,000 more
	require.NoError(t, h.Close(ctx))
	stop()
	require.NoError(t, <-done)

	st := h.Stats()
	t.Logf("handler: %+v; while down: %+v; after the restart: %+v; slowest Handle %v", st, downStats, upStats, time.Duration(slowest.Load()))
	assert.Equal(t, int64(100_000), st.Written+st.Dropped+st.Unknown+st.Buffered, "every record accounted for")
	assert.Zero(t, st.Unknown)
	assert.Zero(t, st.Buffered)
	assert.GreaterOrEqual(t, st.Dropped, int64(32_000-logs.DefaultBuffer), "the overflow while down was dropped")
	// Nothing is written while the server is down, and every record
	// buffered then is written once it is back.
	assert.Equal(t, downStats.Written+downStats.Buffered, upStats.Written, "the buffer was written after the restart")
	assert.Equal(t, downStats.Dropped, upStats.Dropped)
	assert.Greater(t, st.Written, upStats.Written, "later records are written too")
	assert.Less(t, time.Duration(slowest.Load()), time.Second, "Handle does not wait for Redis")

	// The server holds exactly the records written: the common log counts them.
	var written int64
	for _, sev := range []string{logs.Info, logs.Warning} {
		cur, prev, err := l.Common(ctx, "app", sev, 10)
		require.NoError(t, err)
		written += total(cur) + total(prev)
	}
	assert.Equal(t, st.Written, written)
}
