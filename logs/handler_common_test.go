package logs_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/logs"
)

// WithCommon(false): the handler's records reach the recent log only, and
// the common log of their log stays empty (no count, no hour); by default
// they reach both.
func TestHandler_WithCommon(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		// An hour of interval: only Close writes, so the test reads what
		// Close flushed.
		recentOnly, err := l.Handler("quiet", logs.WithCommon(false), logs.WithInterval(time.Hour))
		require.NoError(t, err)
		both, err := l.Handler("loud", logs.WithInterval(time.Hour))
		require.NoError(t, err)

		for _, h := range []*logs.Handler{recentOnly, both} {
			log := slog.New(h)
			log.Info("order placed", "id", 1)
			log.Info("order placed", "id", 2)
			log.Warn("slow")
			require.NoError(t, h.Close(ctx))
			assert.Equal(t, logs.HandlerStats{Written: 3}, h.Stats())
		}

		for _, name := range []string{"quiet", "loud"} {
			info, err := l.Recent(ctx, name, logs.Info)
			require.NoError(t, err)
			if assert.Len(t, info, 2, name) {
				assert.Equal(t, "order placed id=2", info[0].Text)
				assert.Equal(t, "order placed id=1", info[1].Text)
			}
			warn, err := l.Recent(ctx, name, logs.Warning)
			require.NoError(t, err)
			if assert.Len(t, warn, 1, name) {
				assert.Equal(t, "slow", warn[0].Text)
			}
		}

		// Recent only: nothing counted, at either severity, and none of the
		// common log's keys exists.
		for _, sev := range []string{logs.Info, logs.Warning} {
			cur, prev, err := l.Common(ctx, "quiet", sev, 10)
			require.NoError(t, err)
			assert.Equal(t, logs.Hour{}, cur, sev)
			assert.Equal(t, logs.Hour{}, prev, sev)
		}
		n, err := b.Client.Exists(ctx, key(b, "quiet", "hours"), key(b, "quiet", "common:info"),
			key(b, "quiet", "common:warning"), key(b, "quiet", "last:info"), key(b, "quiet", "last:warning")).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "no common-log key of the recent-only log")

		// Default: counted in the common log of the current hour.
		cur, _, err := l.Common(ctx, "loud", logs.Info, 10)
		require.NoError(t, err)
		assert.False(t, cur.Start.IsZero())
		assert.Equal(t, []logs.Count{{"order placed", 2}}, cur.Counts)
		cur, _, err = l.Common(ctx, "loud", logs.Warning, 10)
		require.NoError(t, err)
		assert.Equal(t, []logs.Count{{"slow", 1}}, cur.Counts)
	})
}

// The common log counts a record's message without its attributes
// (doc.go), so two records with the same (empty) message and different
// attributes are one message counted twice. (With an empty message the
// Handler counted the formatted attributes: Entry.Common "" fell back to
// Message, which holds them.)
func TestHandler_emptyMessageCommon(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		h, err := l.Handler("app", logs.WithInterval(time.Hour))
		require.NoError(t, err)
		log := slog.New(h)
		log.Info("", "id", 42)
		log.Info("", "id", 43)
		require.NoError(t, h.Close(ctx))
		require.Equal(t, logs.HandlerStats{Written: 2}, h.Stats())

		cur, _, err := l.Common(ctx, "app", logs.Info, 10)
		require.NoError(t, err)
		for _, c := range cur.Counts {
			assert.False(t, strings.Contains(c.Message, "id="), "attributes counted in the common log: %q", c.Message)
		}
		assert.Len(t, cur.Counts, 1, "one message, counted twice: %+v", cur.Counts)
	})
}

// The Handler cuts a message longer than MaxMessage at the start of a
// character, never inside one (it cut at MaxMessage bytes).
func TestHandler_truncatesAtCharacter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		h, err := l.Handler("app", logs.WithInterval(time.Hour))
		require.NoError(t, err)
		long := strings.Repeat("x", logs.MaxMessage-1) + "é and more"
		slog.New(h).Info(long)
		require.NoError(t, h.Close(ctx))
		rec, err := l.Recent(ctx, "app", logs.Info)
		require.NoError(t, err)
		require.Len(t, rec, 1)
		assert.Equal(t, long[:logs.MaxMessage-1], rec[0].Text)
		cur, _, err := l.Common(ctx, "app", logs.Info, 10)
		require.NoError(t, err)
		require.Len(t, cur.Counts, 1)
		assert.Equal(t, long[:logs.MaxMessage-1], cur.Counts[0].Message)
	})
}
