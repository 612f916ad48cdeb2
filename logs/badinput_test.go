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

// Bad input gets a clear error wrapping ErrInvalid, sends nothing and
// writes nothing.
func TestBadInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, opts := range [][]logs.Option{{logs.WithPrefix("a}")}, {logs.WithRecent(0)}, {nil}} {
			_, err := logs.New(b.Client, opts...)
			assert.ErrorIs(t, err, logs.ErrInvalid)
		}
		l := newLogs(t, b, b.Client)
		ok := logs.Entry{Severity: logs.Info, Message: "m"}
		many := make([]logs.Entry, logs.MaxEntries+1)
		for i := range many {
			many[i] = ok
		}
		calls := map[string]func() error{
			"empty name":     func() error { return l.LogRecent(ctx, "", ok) },
			"brace name":     func() error { return l.LogCommon(ctx, "a{b", ok) },
			"no entries":     func() error { return l.LogCommon(ctx, "app") },
			"many entries":   func() error { return l.LogRecent(ctx, "app", many...) },
			"empty severity": func() error { return l.LogCommon(ctx, "app", logs.Entry{Message: "m"}) },
			"upper severity": func() error { return l.LogCommon(ctx, "app", logs.Entry{Severity: "INFO", Message: "m"}) },
			"long message": func() error {
				return l.LogRecent(ctx, "app", logs.Entry{Severity: logs.Info, Message: strings.Repeat("x", logs.MaxMessage+1)})
			},
			"recent severity": func() error { _, err := l.Recent(ctx, "app", "a:b"); return err },
			"common n":        func() error { _, _, err := l.Common(ctx, "app", logs.Info, 0); return err },
			"handler name":    func() error { _, err := l.Handler(""); return err },
			"handler buffer":  func() error { _, err := l.Handler("app", logs.WithBuffer(0)); return err },
			"handler batch":   func() error { _, err := l.Handler("app", logs.WithBatch(logs.MaxEntries+1)); return err },
			"handler level":   func() error { _, err := l.Handler("app", logs.WithLevel(nil)); return err },
			"handler interval": func() error {
				_, err := l.Handler("app", logs.WithInterval(time.Microsecond))
				return err
			},
			"handler option": func() error { _, err := l.Handler("app", nil); return err },
		}
		for name, call := range calls {
			var err error
			rt, _ := b.Count.Delta(func() { err = call() })
			assert.ErrorIs(t, err, logs.ErrInvalid, name)
			assert.Zero(t, rt, name)
		}
		assert.ErrorContains(t, l.LogRecent(ctx, "", ok), "log name: empty")
		assert.ErrorContains(t, l.LogCommon(ctx, "app", logs.Entry{Severity: "INFO"}), `severity "INFO": want lower-case`)
		assert.Empty(t, b.Snapshot())
		_ = slog.LevelInfo
	})
}

// Both writes and both reads refuse a key of the wrong type, naming it and
// its role, and change nothing.
func TestWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		e := logs.Entry{Severity: logs.Info, Message: "m", Time: hourEnd}
		late := logs.Entry{Severity: logs.Info, Message: "m", Time: hourEnd.Add(-time.Second)}
		setup := func() {
			require.NoError(t, l.LogCommon(ctx, "app", e))
			require.NoError(t, l.LogCommon(ctx, "app", late))
		}
		recent := redistest.KeyRole{Key: key(b, "app", "recent:info"), Type: "list", Role: "logs recent"}
		b.CheckWrongTypes(t, setup, func() error { return l.LogRecent(ctx, "app", e) }, recent)
		b.CheckWrongTypes(t, setup, func() error { return l.LogCommon(ctx, "app", e, late) }, recent,
			redistest.KeyRole{Key: key(b, "app", "common:info"), Type: "zset", Role: "logs common"},
			redistest.KeyRole{Key: key(b, "app", "last:info"), Type: "zset", Role: "logs common previous hour"},
			redistest.KeyRole{Key: key(b, "app", "hours"), Type: "hash", Role: "logs hours"})
		b.CheckWrongTypes(t, setup, func() error { _, err := l.Recent(ctx, "app", logs.Info); return err }, recent)
		b.CheckWrongTypes(t, setup, func() error { _, _, err := l.Common(ctx, "app", logs.Info, 5); return err },
			redistest.KeyRole{Key: key(b, "app", "common:info"), Type: "zset", Role: "logs common"},
			redistest.KeyRole{Key: key(b, "app", "last:info"), Type: "zset", Role: "logs common previous hour"},
			redistest.KeyRole{Key: key(b, "app", "hours"), Type: "hash", Role: "logs hours"})
	})
}
