package session_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// Cleaner.Run keeps cleaning as sessions come, and returns when ctx ends.
func TestCleaner_Run(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		for i := range 5 {
			require.NoError(t, s.UpdateToken(t.Context(), fmt.Sprintf("a-%d", i), "u", "item"))
		}
		c, err := s.Cleaner(2, session.WithInterval(time.Millisecond), session.WithBatch(1))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, c.Run)

		sessions := func(want int64) func() bool {
			return func() bool {
				n, err := s.Sessions(t.Context())
				return err == nil && n == want
			}
		}
		require.Eventually(t, sessions(2), 20*time.Second, time.Millisecond)
		for i := range 4 {
			require.NoError(t, s.AddToCart(t.Context(), fmt.Sprintf("b-%d", i), "item", 1))
		}
		require.Eventually(t, sessions(2), 20*time.Second, time.Millisecond, "still cleaning")

		cancel()
		assert.NoError(t, returned(t, done))
	})
}

// RowCacher.Run caches rows again and again, finishes the row in flight
// when ctx ends, and returns.
func TestRowCacher_Run(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		var loads atomic.Int64
		inFlight := make(chan struct{})
		var block atomic.Bool
		rc, err := s.RowCacher(func(ctx context.Context, id string) (any, error) {
			n := loads.Add(1)
			if block.Load() && id == "slow" {
				close(inFlight)
				<-ctx.Done() // Run's ctx ended; this load finishes anyway
				return "last", nil
			}
			return n, nil
		}, session.WithInterval(time.Millisecond))
		require.NoError(t, err)
		require.NoError(t, s.ScheduleRowCache(t.Context(), "fast", 5*time.Millisecond))

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, rc.Run)
		require.Eventually(t, func() bool { return loads.Load() >= 3 }, 20*time.Second, time.Millisecond,
			"reloaded every 5ms")
		require.NoError(t, s.ScheduleRowCache(t.Context(), "fast", -1))

		block.Store(true)
		require.NoError(t, s.ScheduleRowCache(t.Context(), "slow", time.Hour))
		select {
		case <-inFlight:
		case <-time.After(20 * time.Second):
			t.Fatal("the slow row was not loaded")
		}
		cancel()
		assert.NoError(t, returned(t, done))
		data, ok, err := s.Row(t.Context(), "slow")
		require.NoError(t, err)
		assert.True(t, ok, "the row in flight was stored")
		assert.Equal(t, `"last"`, string(data))
	})
}

// Rescaler.Run rescales at once, then sleeps its interval; ending ctx
// wakes it.
func TestRescaler_Run(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		require.NoError(t, b.Client.ZAdd(t.Context(), key(b, "views"), redisZ("i", -8)).Err())
		r, err := s.Rescaler(session.WithInterval(time.Hour))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, r.Run)
		require.Eventually(t, func() bool {
			return b.Client.ZScore(t.Context(), key(b, "views"), "i").Val() == -4
		}, 20*time.Second, time.Millisecond)
		cancel()
		assert.NoError(t, returned(t, done))
		assert.Equal(t, -4.0, b.Client.ZScore(t.Context(), key(b, "views"), "i").Val(), "once in an hour")
	})
}

// An error that retrying cannot mend ends Run with that error.
func TestCleaner_Run_wrongType(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		require.NoError(t, b.Client.Set(t.Context(), key(b, "recent"), "not a zset", 0).Err())
		c, err := s.Cleaner(1, session.WithInterval(time.Millisecond))
		require.NoError(t, err)
		err = returned(t, runAsync(t.Context(), c.Run))
		assert.ErrorContains(t, err, "session: cleaner:")
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.ErrorIs(t, err, ria.ErrWrongType)
		assert.Equal(t, "session recent", kerr.Role)
		assert.Equal(t, key(b, "recent"), kerr.Key)
	})
}

// Run on a context that has already ended returns at once.
func TestRun_cancelled(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		c, err := s.Cleaner(1)
		require.NoError(t, err)
		rc, err := s.RowCacher(func(context.Context, string) (any, error) { return 1, nil })
		require.NoError(t, err)
		r, err := s.Rescaler()
		require.NoError(t, err)
		rt, _ := b.Count.Delta(func() {
			assert.NoError(t, c.Run(ctx))
			assert.NoError(t, rc.Run(ctx))
			assert.NoError(t, r.Run(ctx))
		})
		assert.Zero(t, rt)
	})
}

// logRecorder is a slog.Handler that keeps the messages logged (with their
// error attribute) and tells waiters about each new one.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
	news chan struct{} // closed and replaced on each message
}

func newLogRecorder() *logRecorder { return &logRecorder{news: make(chan struct{})} }

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	msg := rec.Level.String() + " " + rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		msg += " " + a.Key + "=" + a.Value.String()
		return true
	})
	r.mu.Lock()
	r.msgs = append(r.msgs, msg)
	close(r.news)
	r.news = make(chan struct{})
	r.mu.Unlock()
	return nil
}

func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

// count returns how many messages hold sub.
func (r *logRecorder) count(sub string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.msgs {
		if strings.Contains(m, sub) {
			n++
		}
	}
	return n
}

// wait waits until a message holding sub has been logged, and returns it.
func (r *logRecorder) wait(t *testing.T, sub string) string {
	t.Helper()
	deadline := time.After(20 * time.Second) // bounds a hang only
	for {
		r.mu.Lock()
		for _, m := range r.msgs {
			if strings.Contains(m, sub) {
				r.mu.Unlock()
				return m
			}
		}
		news := r.news
		r.mu.Unlock()
		select {
		case <-news:
		case <-deadline:
			t.Fatalf("nothing logged holding %q", sub)
			return ""
		}
	}
}

// spyScripts counts the script commands that reach f's proxies from now
// on: a LoseReply rule that matches nothing, so that it stays armed and,
// armed first, sees every command before the rules armed after it.
func spyScripts(f *redistest.Faults) *atomic.Int64 {
	var n atomic.Int64
	f.LoseReply(1, func(cmd []string) bool {
		if redistest.Scripts(cmd) {
			n.Add(1)
		}
		return false
	})
	return &n
}

// A rescale whose reply never came (every re-send lost its reply too) is
// tried again by Run with the record of its first attempt: the retry is
// answered from the record, and the ranking is halved once.
func TestRescaler_Run_outcomeUnknown(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb)
		r, err := s.Rescaler(session.WithInterval(time.Hour))
		require.NoError(t, err)
		require.NoError(t, r.Rescale(t.Context())) // the script cached; no ranking yet
		require.NoError(t, b.Client.ZAdd(t.Context(), key(b, "views"), redisZ("i", -8)).Err())
		logs := newLogRecorder()
		r, err = s.Rescaler(session.WithInterval(time.Hour), session.WithLogger(slog.New(logs)))
		require.NoError(t, err)

		sent := spyScripts(f)
		f.LoseReply(4, redistest.Scripts) // go-redis's 4 attempts
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, r.Run)
		assert.Contains(t, logs.wait(t, "will retry"), "outcome unknown")
		// The retry: a fifth script command. Run then pauses an hour; a
		// rescale in flight when ctx ends is finished.
		require.Eventually(t, func() bool { return sent.Load() >= 5 }, 20*time.Second, time.Millisecond)
		cancel()
		assert.NoError(t, returned(t, done))
		assert.Equal(t, int64(4), f.Lost())
		assert.Equal(t, int64(5), sent.Load(), "one retry")
		assert.Equal(t, -4.0, b.Client.ZScore(t.Context(), key(b, "views"), "i").Val(), "halved once")
		assert.Zero(t, logs.count("not repeated"))
	})
}

// deadlineSpy is a hook that keeps, for each script call, its keys and the
// deadline of its context (zero when it has none).
type deadlineSpy struct {
	mu    sync.Mutex
	calls []scriptCall
}

type scriptCall struct {
	keys     []string
	deadline time.Time
}

func (*deadlineSpy) DialHook(next redis.DialHook) redis.DialHook { return next }

func (*deadlineSpy) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (s *deadlineSpy) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			args := cmd.Args() // name, script, numkeys, keys..., args...
			n := args[2].(int)
			var c scriptCall
			for _, k := range args[3 : 3+n] {
				c.keys = append(c.keys, k.(string))
			}
			c.deadline, _ = ctx.Deadline()
			s.mu.Lock()
			s.calls = append(s.calls, c)
			s.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (s *deadlineSpy) snapshot() []scriptCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Run's retry of a rescale whose outcome is unknown is given a context
// that ends before the first attempt's reply record expires, so that no
// re-send of the retry by go-redis can reach Redis once the record is
// gone and halve the ranking a second time. Before, a retry had the 30 s
// of any unit of work, from its own start: with a client whose retry
// window (the record's TTL) is shorter, here 3 × (PoolTimeout 3 s +
// WriteTimeout 2 s + ReadTimeout 2 s + MaxRetryBackoff 512 ms, 1 s on a
// Cluster) + 1 s = 23.5 s (25 s), its re-sends could come after the record
// had expired, and run the rescale again.
func TestRescaler_Run_outcomeUnknown_retryEndsBeforeRecord(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.PoolTimeout, o.ReadTimeout = 3*time.Second, 2*time.Second
		})
		s := newStore(t, b, rdb)
		r, err := s.Rescaler(session.WithInterval(time.Hour))
		require.NoError(t, err)
		require.NoError(t, r.Rescale(t.Context())) // the script cached; no ranking yet
		require.NoError(t, b.Client.ZAdd(t.Context(), key(b, "views"), redisZ("i", -8)).Err())
		logs := newLogRecorder()
		r, err = s.Rescaler(session.WithInterval(time.Hour), session.WithLogger(slog.New(logs)))
		require.NoError(t, err)
		spy := &deadlineSpy{}
		rdb.AddHook(spy)

		sent := spyScripts(f)
		f.LoseReply(4, redistest.Scripts) // go-redis's 4 attempts
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, r.Run)
		logs.wait(t, "will retry")
		require.Eventually(t, func() bool { return sent.Load() >= 5 }, 20*time.Second, time.Millisecond)
		cancel()
		assert.NoError(t, returned(t, done))

		calls := spy.snapshot()
		require.Len(t, calls, 2, "the first attempt and one retry")
		record := calls[0].keys[len(calls[0].keys)-1]
		require.Equal(t, record, calls[1].keys[len(calls[1].keys)-1], "the retry uses the first attempt's record")
		ttl, err := b.Client.PTTL(t.Context(), record).Result()
		require.NoError(t, err)
		require.Greater(t, ttl, time.Duration(0), "the record lives")
		expires := time.Now().Add(ttl)
		require.False(t, calls[1].deadline.IsZero(), "the retry has a deadline")
		assert.False(t, calls[1].deadline.After(expires),
			"the retry may be re-sent until %v, after its record expires (%v)", calls[1].deadline, expires)
		assert.Equal(t, -4.0, b.Client.ZScore(t.Context(), key(b, "views"), "i").Val(), "halved once")
	})
}

// With a client that keeps no reply records (it never re-sends), a
// rescale whose outcome is unknown is not tried again: Run warns and
// waits for the next one, rather than risk halving twice.
func TestRescaler_Run_outcomeUnknownNoRecord(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) { o.MaxRetries, o.MaxRedirects = -1, -1 })
		s := newStore(t, b, rdb)
		logs := newLogRecorder()
		r, err := s.Rescaler(session.WithInterval(time.Hour), session.WithLogger(slog.New(logs)))
		require.NoError(t, err)
		require.NoError(t, r.Rescale(t.Context())) // the script cached; no ranking yet
		require.NoError(t, b.Client.ZAdd(t.Context(), key(b, "views"), redisZ("i", -8)).Err())

		sent := spyScripts(f)
		f.LoseReply(1, redistest.Scripts)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, r.Run)
		logs.wait(t, "not repeated")
		cancel()
		assert.NoError(t, returned(t, done))
		assert.Equal(t, int64(1), f.Lost())
		assert.Equal(t, int64(1), sent.Load(), "no retry")
		assert.Equal(t, -4.0, b.Client.ZScore(t.Context(), key(b, "views"), "i").Val(), "halved once")
	})
}

// A loader that panics does not kill the process: the panic is recovered
// and reported (an error wrapping ErrLoaderPanic, with the row, the value
// and the stack), the row keeps its cached copy and is tried again after
// its delay, and the other rows are cached.
func TestRowCacher_loaderPanic(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		clock := newFakeClock()
		var panicking atomic.Bool
		inv := &inventory{}
		load := func(ctx context.Context, id string) (any, error) {
			if id == "bad" && panicking.Load() {
				panic("the database driver broke")
			}
			return inv.load(ctx, id)
		}
		rc, err := s.RowCacher(load, session.WithClock(clock.Now))
		require.NoError(t, err)
		require.NoError(t, s.ScheduleRowCache(ctx, "bad", 10*time.Second))
		_, err = rc.CacheDue(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rowVersion(t, s, "bad"))

		panicking.Store(true)
		require.NoError(t, s.ScheduleRowCache(ctx, "bad", 10*time.Second))
		require.NoError(t, s.ScheduleRowCache(ctx, "good", 10*time.Second))
		n, err := rc.CacheDue(ctx)
		assert.ErrorIs(t, err, session.ErrLoaderPanic)
		assert.ErrorContains(t, err, `session: load row "bad": session: loader panicked: the database driver broke`)
		assert.ErrorContains(t, err, "goroutine", "the stack")
		assert.Equal(t, 1, n, "the good row")
		assert.Equal(t, 2, rowVersion(t, s, "good"))
		assert.Equal(t, 1, rowVersion(t, s, "bad"), "the old copy stays")
		assert.Equal(t, float64(clock.Now().Add(10*time.Second).UnixMilli()),
			b.Client.ZScore(ctx, key(b, "schedule"), "bad").Val(), "tried again after its delay")

		// Run reports it through its logger and goes on.
		logs := newLogRecorder()
		rc, err = s.RowCacher(load, session.WithClock(clock.Now), session.WithLogger(slog.New(logs)),
			session.WithInterval(time.Millisecond))
		require.NoError(t, err)
		clock.Add(10 * time.Second)
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := runAsync(runCtx, rc.Run)
		msg := logs.wait(t, "load failed")
		assert.Contains(t, msg, "ERROR")
		assert.Contains(t, msg, "session: loader panicked: the database driver broke")
		require.Eventually(t, func() bool { return rowVersion(t, s, "good") == 3 }, 20*time.Second, time.Millisecond)
		cancel()
		assert.NoError(t, returned(t, done), "Run goes on after a loader panic")
	})
}

// Loops log to slog.Default() unless told otherwise.
func TestRun_defaultLogger(t *testing.T) {
	logs := newLogRecorder()
	old := slog.Default()
	slog.SetDefault(slog.New(logs))
	t.Cleanup(func() { slog.SetDefault(old) })
	b := redistest.New(t, redistest.Mini)
	s := newStore(t, b, b.Client)
	rc, err := s.RowCacher(func(context.Context, string) (any, error) { return nil, errors.New("db down") },
		session.WithInterval(time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, s.ScheduleRowCache(t.Context(), "r", time.Hour))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := runAsync(ctx, rc.Run)
	assert.Contains(t, logs.wait(t, "load failed"), "db down")
	cancel()
	assert.NoError(t, returned(t, done))
}
