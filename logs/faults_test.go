package logs_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/logs"
)

// Every write, its reply lost after it ran: go-redis sends it again and
// the entries are written once.
func TestFaults_lostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		l := newLogs(t, b, rdb)
		check := newLogs(t, b, b.Client)
		const calls = 5
		for _, op := range []struct {
			name string
			fn   func(...logs.Entry) error
		}{
			{"log recent", func(e ...logs.Entry) error { return l.LogRecent(ctx, "r", e...) }},
			{"log common", func(e ...logs.Entry) error { return l.LogCommon(ctx, "c", e...) }},
		} {
			require.NoError(t, op.fn(logs.Entry{Severity: logs.Info, Message: "warm"}))
			lost, bad := f.Lost(), 0
			for range calls {
				f.LoseReply(1, redistest.Scripts)
				require.NoError(t, op.fn(logs.Entry{Severity: logs.Info, Message: "m"}, logs.Entry{Severity: logs.Info, Message: "m"}))
			}
			name := "r"
			if op.name == "log common" {
				name = "c"
				cur, _, err := check.Common(ctx, name, logs.Info, 10)
				require.NoError(t, err)
				if total(cur) != 1+2*calls {
					bad++
				}
			}
			recent, err := check.Recent(ctx, name, logs.Info)
			require.NoError(t, err)
			if len(recent) != 1+2*calls {
				bad++
			}
			assert.Equal(t, int64(calls), f.Lost()-lost)
			t.Logf("fault harness: logs %s: calls=%d lost=%d disagreements=%d", op.name, calls, f.Lost()-lost, bad)
			assert.Zero(t, bad)
		}
	})
}

// A Handler's write, its reply lost after it ran: go-redis sends the
// pipeline again, the record of the first run answers, and every record
// is written once.
func TestFaults_handlerLostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		l := newLogs(t, b, rdb)
		check := newLogs(t, b, b.Client)
		// Caches the script on the node of "h".
		require.NoError(t, l.LogCommon(ctx, "h", logs.Entry{Severity: "notice", Message: "warm"}))
		h, err := l.Handler("h", logs.WithInterval(time.Hour))
		require.NoError(t, err)
		log := slog.New(h)
		const calls, each = 5, 10
		lost, bad := f.Lost(), 0
		for i := range calls {
			for j := range each {
				log.Info("m", "i", i, "j", j)
			}
			f.LoseReply(1, redistest.Scripts)
			require.NoError(t, h.Flush(ctx))
		}
		if st := h.Stats(); st != (logs.HandlerStats{Written: calls * each}) {
			bad++
		}
		cur, _, err := check.Common(ctx, "h", logs.Info, 10)
		require.NoError(t, err)
		if total(cur) != calls*each {
			bad++
		}
		recent, err := check.Recent(ctx, "h", logs.Info)
		require.NoError(t, err)
		if len(recent) != calls*each {
			bad++
		}
		assert.Equal(t, int64(calls), f.Lost()-lost, "the faults happened")
		t.Logf("fault harness: logs handler flush: calls=%d lost=%d disagreements=%d", calls, f.Lost()-lost, bad)
		assert.Zero(t, bad)
		require.NoError(t, h.Close(ctx))
	})
}

// Every reply stalled past the client's read timeout: the write reports
// an unknown outcome, and it was written once.
func TestFaults_delay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 50 * time.Millisecond })
		l := newLogs(t, b, rdb)
		require.NoError(t, l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Info, Message: "m"}))
		f.Delay(120 * time.Millisecond)
		err := l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Info, Message: "m"})
		f.Delay(0)
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		cur, _, err := newLogs(t, b, b.Client).Common(ctx, "app", logs.Info, 1)
		require.NoError(t, err)
		bad := 0
		if total(cur) != 2 {
			bad++
		}
		t.Logf("fault harness: logs log common (delayed replies): calls=1 lost=0 disagreements=%d", bad)
		assert.Zero(t, bad)
	})
}
