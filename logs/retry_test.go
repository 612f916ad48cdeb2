package logs_test

import (
	"context"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/logs"
)

// pipeHook fails the client's pipelines (the Handler's writes) from
// outside go-redis's retries: while down is set, as a refused connection
// would, without reaching the server; once lose is armed, after the
// pipeline ran, as a reply lost for good would.
type pipeHook struct{ down, lose atomic.Bool }

func (h *pipeHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *pipeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *pipeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		fail := func(err error) error {
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		if h.down.Load() {
			return fail(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
		}
		err := next(ctx, cmds)
		if err == nil && h.lose.CompareAndSwap(true, false) {
			return fail(redistest.ErrReplyLost)
		}
		return err
	}
}

// messages is a slog.Handler that passes on the messages logged to it.
type messages chan string

func (m messages) Enabled(context.Context, slog.Level) bool { return true }
func (m messages) Handle(_ context.Context, r slog.Record) error {
	select {
	case m <- r.Message:
	default:
	}
	return nil
}
func (m messages) WithAttrs([]slog.Attr) slog.Handler { return m }
func (m messages) WithGroup(string) slog.Handler      { return m }

// next returns the next message, failing t if none comes.
func (m messages) next(t *testing.T) string {
	t.Helper()
	select {
	case msg := <-m:
		return msg
	case <-time.After(30 * time.Second):
		t.Fatal("no message logged")
		return ""
	}
}

// Records that keep coming while Run backs off (each a full batch, which
// wakes Run) do not postpone its next try: once Redis is back, Run writes
// while the logging goes on.
func TestHandler_Run_retriesWhileLogging(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _ := b.NewClient()
		hook := &pipeHook{}
		rdb.AddHook(hook)
		l := newLogs(t, b, rdb)
		require.NoError(t, l.LogCommon(ctx, "app", logs.Entry{Severity: "notice", Message: "warm"}))
		events := make(messages, 16)
		h, err := l.Handler("app", logs.WithBatch(1), logs.WithBuffer(1_000_000),
			logs.WithInterval(time.Millisecond), logs.WithLogger(slog.New(events)))
		require.NoError(t, err)
		hook.down.Store(true)
		runCtx, stop := context.WithCancel(ctx)
		defer stop()
		done := make(chan error, 1)
		go func() { done <- h.Run(runCtx) }()

		// A steady stream of records, about one a millisecond: far more
		// often than the backoff between tries.
		quit, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			log := slog.New(h)
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-quit:
					return
				case <-tick.C:
					log.Info("tick")
				}
			}
		}()
		halt := sync.OnceFunc(func() { close(quit); <-stopped })
		defer halt()

		assert.Equal(t, "logs: handler: cannot write, buffering", events.next(t))
		hook.down.Store(false)
		// Run backs off at most 1 s between tries; the bound is for a loaded machine.
		require.Eventually(t, func() bool { return h.Stats().Written > 0 }, 15*time.Second, time.Millisecond,
			"Run wrote while records kept coming")
		assert.Equal(t, "logs: handler: writing again", events.next(t))
		halt()
		stop()
		require.NoError(t, <-done)
		st := h.Stats()
		assert.Zero(t, st.Dropped)
		assert.Zero(t, st.Unknown)
	})
}

// Every snapshot of Stats counts every record once, while a Flush writes
// them batch by batch.
func TestHandler_Stats_duringFlush(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		require.NoError(t, l.LogCommon(ctx, "app", logs.Entry{Severity: "notice", Message: "warm"}))
		h, err := l.Handler("app", logs.WithBatch(1), logs.WithInterval(time.Hour))
		require.NoError(t, err)
		const n = 1000
		log := slog.New(h)
		for i := range n {
			log.Info("m", "i", i)
		}
		var (
			polls, bad atomic.Int64
			firstBad   atomic.Pointer[logs.HandlerStats]
			quit       = make(chan struct{})
			started    = make(chan struct{})
			polled     = make(chan struct{})
		)
		go func() {
			defer close(polled)
			close(started)
			for {
				select {
				case <-quit:
					return
				default:
				}
				st := h.Stats()
				runtime.Gosched() // lets the server (miniredis runs in the test) have the core
				polls.Add(1)
				if st.Written+st.Dropped+st.Unknown+st.Buffered != n {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, &st)
				}
			}
		}()
		<-started
		require.NoError(t, h.Flush(ctx))
		close(quit)
		<-polled
		t.Logf("%d snapshots, %d wrong (first %+v)", polls.Load(), bad.Load(), firstBad.Load())
		assert.Zero(t, bad.Load(), "snapshots whose counts do not add up to the records handled")
		assert.Equal(t, logs.HandlerStats{Written: n}, h.Stats())
	})
}

// A batch whose reply was lost is sent again, with its reply record, only
// while any retry go-redis may make of that re-send (for the client's
// retry window) still finds the record, which lives for the retry window
// plus 5 min: for 5 min after the first try. Then its records are
// counted as unknown.
func TestHandler_Flush_lostReplyDeadline(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, count := b.NewClient() // go-redis's retries: a window of more than a second
		hook := &pipeHook{}
		rdb.AddHook(hook)
		l := newLogs(t, b, rdb)
		require.NoError(t, l.LogCommon(ctx, "app", logs.Entry{Severity: "notice", Message: "warm"}))
		h, err := l.Handler("app", logs.WithInterval(time.Hour))
		require.NoError(t, err)
		now := time.Now()
		logs.SetHandlerClock(h, func() time.Time { return now })
		log := slog.New(h)

		// Sent again just within the 5 min: written once.
		log.Info("a")
		hook.lose.Store(true)
		assert.ErrorIs(t, h.Flush(ctx), ria.ErrOutcomeUnknown)
		now = now.Add(5*time.Minute - 2*time.Second)
		require.NoError(t, h.Flush(ctx))
		assert.Equal(t, logs.HandlerStats{Written: 1}, h.Stats())

		// Not sent again after them.
		log.Info("b")
		hook.lose.Store(true)
		assert.ErrorIs(t, h.Flush(ctx), ria.ErrOutcomeUnknown)
		now = now.Add(5 * time.Minute)
		rt, _ := count.Delta(func() { err = h.Flush(ctx) })
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		assert.Zero(t, rt, "not sent again")
		assert.Equal(t, logs.HandlerStats{Written: 1, Unknown: 1}, h.Stats())

		recent, err := newLogs(t, b, b.Client).Recent(ctx, "app", logs.Info)
		require.NoError(t, err)
		assert.Len(t, recent, 2, "both written once")
	})
}
