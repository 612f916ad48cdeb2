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

// A message longer than MaxMessage that is not valid UTF-8 (a binary
// payload, bytes 0x80-0xBF) is cut to MaxMessage bytes, less at most the
// 3 bytes of an incomplete character: not to (nearly) nothing (truncate
// backed up over every continuation byte, and wrote only "dump").
func TestHandler_truncatesNonUTF8(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		h, err := l.Handler("app", logs.WithInterval(time.Hour))
		require.NoError(t, err)
		long := "dump " + strings.Repeat("\x80", logs.MaxMessage)
		slog.New(h).Info(long)
		require.NoError(t, h.Close(ctx))
		rec, err := l.Recent(ctx, "app", logs.Info)
		require.NoError(t, err)
		require.Len(t, rec, 1)
		assert.GreaterOrEqual(t, len(rec[0].Text), logs.MaxMessage-3, "recent text cut to %d bytes: %q", len(rec[0].Text), rec[0].Text)
		cur, _, err := l.Common(ctx, "app", logs.Info, 10)
		require.NoError(t, err)
		require.Len(t, cur.Counts, 1)
		assert.GreaterOrEqual(t, len(cur.Counts[0].Message), logs.MaxMessage-3, "common message cut to %d bytes", len(cur.Counts[0].Message))
	})
}
