package logs_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/logs"
)

// The recent log keeps the newest N messages per severity, newest first,
// with their times; one round trip per write.
func TestLogs_LogRecent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client, logs.WithRecent(3))
		require.NoError(t, l.LogRecent(ctx, "app", logs.Entry{Severity: logs.Info, Message: "warm"}))
		for i := range 5 {
			var err error
			rt, _ := b.Count.Delta(func() {
				err = l.LogRecent(ctx, "app", logs.Entry{Severity: logs.Info, Message: fmt.Sprint("m", i), Time: hourEnd.Add(time.Duration(i) * time.Second)})
			})
			require.NoError(t, err)
			assert.Equal(t, int64(1), rt)
		}
		require.NoError(t, l.LogRecent(ctx, "app", logs.Entry{Severity: logs.Error, Message: "boom"}))
		got, err := l.Recent(ctx, "app", logs.Info)
		require.NoError(t, err)
		assert.Equal(t, []logs.Message{
			{Time: hourEnd.Add(4 * time.Second), Text: "m4"},
			{Time: hourEnd.Add(3 * time.Second), Text: "m3"},
			{Time: hourEnd.Add(2 * time.Second), Text: "m2"},
		}, got)
		got, err = l.Recent(ctx, "app", logs.Error)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, "boom", got[0].Text)
		assert.WithinDuration(t, time.Now(), got[0].Time, 2*time.Hour, "the server's time")
		// Several entries, several severities: one round trip.
		rt, _ := b.Count.Delta(func() {
			err = l.LogRecent(ctx, "app", logs.Entry{Severity: logs.Info, Message: "a"}, logs.Entry{Severity: logs.Debug, Message: "b"})
		})
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt)
	})
}

// The common log across an hour boundary, by explicit times: the
// current and the previous hour are right; a late entry of the previous
// hour counts there; an older one is refused and changes nothing.
func TestLogs_LogCommon_hours(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		log := func(msg string, at time.Time) error {
			return l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Warning, Message: msg, Time: at})
		}
		require.NoError(t, log("disk full", hourEnd.Add(-10*time.Second)))
		require.NoError(t, log("disk full", hourEnd.Add(-5*time.Second)))
		require.NoError(t, log("slow", hourEnd.Add(-1*time.Second)))
		var err error
		rt, _ := b.Count.Delta(func() { err = log("disk full", hourEnd) }) // rotates
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt)
		require.NoError(t, log("slow", hourEnd.Add(-2*time.Second))) // late, previous hour
		require.NoError(t, log("slow", hourEnd.Add(time.Second)))
		require.NoError(t, log("slow", hourEnd.Add(2*time.Second)))

		var cur, prev logs.Hour
		rt, _ = b.Count.Delta(func() { cur, prev, err = l.Common(ctx, "app", logs.Warning, 10) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt)
		assert.Equal(t, logs.Hour{Start: hourEnd, Counts: []logs.Count{{"slow", 2}, {"disk full", 1}}}, cur)
		assert.Equal(t, logs.Hour{Start: hourEnd.Add(-time.Hour), Counts: []logs.Count{{"slow", 2}, {"disk full", 2}}}, prev) // ties: ZREVRANGE order

		before := b.Snapshot()
		err = l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Warning, Message: "x", Time: hourEnd},
			logs.Entry{Severity: logs.Warning, Message: "old", Time: hourEnd.Add(-time.Hour - time.Second)})
		assert.ErrorIs(t, err, logs.ErrTooOld)
		assert.Equal(t, before, b.Snapshot(), "nothing written")

		// Two hours on: the previous hour had nothing.
		require.NoError(t, log("later", hourEnd.Add(2*time.Hour)))
		cur, prev, err = l.Common(ctx, "app", logs.Warning, 10)
		require.NoError(t, err)
		assert.Equal(t, logs.Hour{Start: hourEnd.Add(2 * time.Hour), Counts: []logs.Count{{"later", 1}}}, cur)
		assert.Zero(t, prev)
		recent, err := l.Recent(ctx, "app", logs.Warning)
		require.NoError(t, err)
		assert.Len(t, recent, 8, "every entry is in the recent log")
	})
}

// Many writers across the hour boundary: nothing lost, nothing rotated
// twice.
func TestLogs_LogCommon_concurrentBoundary(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		const goroutines, each = 8, 200
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					// alternate sides of the boundary, the later side more often
					at := hourEnd.Add(time.Duration((g+i)%5-1) * time.Second)
					if err := l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Info, Message: "hit", Time: at}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		var before int64
		for g := range goroutines {
			for i := range each {
				if (g+i)%5 == 0 {
					before++
				}
			}
		}
		cur, prev, err := l.Common(ctx, "app", logs.Info, 10)
		require.NoError(t, err)
		assert.Equal(t, hourEnd, cur.Start)
		assert.Equal(t, goroutines*each-before, total(cur))
		assert.Equal(t, before, total(prev))
	})
}

// An entry more than [logs.MaxAhead] after the server's time is refused,
// naming its time, and changes nothing; later writes at the server's
// time still work.
func TestLogs_LogCommon_future(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLogs(t, b, b.Client)
		require.NoError(t, l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Warning, Message: "now"}))
		before := b.Snapshot()
		at := time.Now().Add(2 * time.Hour).Truncate(time.Second)
		err := l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Warning, Message: "now"},
			logs.Entry{Severity: logs.Warning, Message: "ahead", Time: at})
		assert.ErrorIs(t, err, logs.ErrInvalid)
		assert.ErrorContains(t, err, "entry 1: time "+at.UTC().Format(time.RFC3339Nano))
		assert.Equal(t, before, b.Snapshot(), "nothing written")

		require.NoError(t, l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Warning, Message: "now"}))
		cur, prev, err := l.Common(ctx, "app", logs.Warning, 10)
		require.NoError(t, err)
		assert.Equal(t, int64(2), total(cur)+total(prev))
		recent, err := l.Recent(ctx, "app", logs.Warning)
		require.NoError(t, err)
		assert.Len(t, recent, 2)
	})
}

// The server commands the package doc states per write (INFO
// commandstats, on the real standalone server: the test binary's own).
func TestLogs_serverCommands(t *testing.T) {
	b := redistest.New(t, redistest.Standalone)
	ctx := t.Context()
	rdb := b.Client.(*redis.Client)
	l := newLogs(t, b, rdb)
	commands := func(fn func() error) int64 {
		t.Helper()
		require.NoError(t, rdb.ConfigResetStat(ctx).Err())
		require.NoError(t, fn())
		var n int64
		for _, line := range strings.Split(rdb.Info(ctx, "commandstats").Val(), "\n") {
			name, stats, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
			if !ok || name == "config|resetstat" {
				continue
			}
			calls, _, _ := strings.Cut(stats, ",")
			c, err := strconv.ParseInt(calls, 10, 64)
			require.NoError(t, err, line)
			n += c
		}
		return n
	}
	common := func(at time.Time) func() error {
		return func() error { return l.LogCommon(ctx, "app", logs.Entry{Severity: logs.Info, Message: "m", Time: at}) }
	}
	require.NoError(t, l.LogRecent(ctx, "app", logs.Entry{Severity: logs.Info, Message: "warm"})) // caches the script
	assert.Equal(t, int64(7), commands(func() error {
		return l.LogRecent(ctx, "app", logs.Entry{Severity: logs.Info, Message: "m"})
	}), "log recent")
	assert.Equal(t, int64(13+2), commands(common(hourEnd.Add(-time.Second))), "log common: first count of a severity")
	assert.Equal(t, int64(13), commands(common(hourEnd.Add(-time.Second))), "log common")
	assert.Equal(t, int64(13+3), commands(common(hourEnd)), "log common: the next hour")
	assert.Equal(t, int64(13+2), commands(common(hourEnd.Add(2*time.Hour))), "log common: two hours on")
}
