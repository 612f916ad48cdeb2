package logs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/logs"
)

// An entry's time reaches the script as Unix µs, which Lua's numbers hold
// exactly only within ±2^53 (years 1685 to 2255): a time outside is bad
// input, refused before anything is sent, rather than stored rounded.
func TestLogs_LogRecent_timeOutOfRange(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		for _, at := range []time.Time{
			time.Date(2300, 1, 1, 0, 0, 0, 1000, time.UTC),
			time.Date(1600, 1, 1, 0, 0, 0, 3000, time.UTC),
			time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC), // beyond int64 µs
		} {
			var err error
			rt, _ := b.Count.Delta(func() {
				err = l.LogRecent(ctx, "app", logs.Entry{Severity: logs.Info, Message: "m", Time: at})
			})
			assert.ErrorIs(t, err, logs.ErrInvalid, "%v", at)
			assert.Zero(t, rt, "%v: nothing sent", at)
			err = l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Info, Message: "m", Time: at})
			assert.ErrorIs(t, err, logs.ErrInvalid, "%v", at)
		}
		assert.Empty(t, b.Snapshot(), "nothing written")
		// The edges of the range are kept exactly.
		for _, at := range []time.Time{time.UnixMicro(1<<53 - 1), time.UnixMicro(-(1<<53 - 1))} {
			require.NoError(t, l.LogRecent(ctx, "app", logs.Entry{Severity: logs.Info, Message: "m", Time: at}))
			got, err := l.Recent(ctx, "app", logs.Info)
			require.NoError(t, err)
			assert.True(t, at.Equal(got[0].Time), "want %v, got %v", at, got[0].Time)
		}
	})
}

// The hour of a common log is always an hour's start: a value that is
// not (written by someone else) is a *ria.KeyError, not ErrTooOld for
// every entry of the present hour, and nothing changes.
func TestLogs_LogCommon_corruptHour(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		e := logs.Entry{Severity: logs.Info, Message: "m", Time: hourEnd.Add(-time.Minute)}
		require.NoError(t, l.LogCommon(ctx, "app", e))
		require.NoError(t, b.Client.HSet(ctx, key(b, "app", "hours"), logs.Info, hourEnd.Unix()-3600+1).Err())
		before := b.Snapshot()
		err := l.LogCommon(ctx, "app", e)
		var kerr *ria.KeyError
		if assert.ErrorAs(t, err, &kerr) {
			assert.ErrorIs(t, err, ria.ErrCorrupt)
			assert.Equal(t, key(b, "app", "hours"), kerr.Key)
		}
		assert.NotErrorIs(t, err, logs.ErrTooOld)
		assert.Equal(t, before, b.Snapshot())
	})
}
