package queue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// Three schedulers on three clients tick at once, many times: each
// period's task is enqueued once. On miniredis, whose clock the test
// moves, a new period gets its own task, a scheduler that stopped (a
// crash) leaves the others to enqueue it, and a period no one ticked in
// is skipped.
func TestScheduler_oncePerPeriod(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		// On real servers, days whose boundaries lie 12 and 18 hours away
		// (the server runs on this machine's clock): the ticks fall in one
		// period.
		every := 24 * time.Hour
		day := (time.Duration(time.Now().UnixNano()) % every).Truncate(time.Millisecond)
		off1, off2 := (day+12*time.Hour)%every, (day+18*time.Hour)%every
		if b.Mini != nil {
			b.Mini.SetTime(time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC))
			every, off1, off2 = time.Minute, 0, 30*time.Second
		}
		ps := []queue.Periodic{
			{Name: "digest", Every: every, Offset: off1, Queue: "default", Task: "send_digest", Payload: map[string]string{"kind": "daily"}},
			{Name: "cleanup", Every: every, Offset: off2, Queue: "low", Task: "cleanup", MaxRetry: 2},
		}
		var scheds []*queue.Scheduler
		for range 3 {
			c, _ := b.NewClient()
			s, err := newGroup(t, b, c).Scheduler(discard, ps...)
			require.NoError(t, err)
			scheds = append(scheds, s)
		}
		tickAll := func(ss []*queue.Scheduler) []string {
			var mu sync.Mutex
			var all []string
			var wg sync.WaitGroup
			for _, s := range ss {
				wg.Go(func() {
					for range 10 {
						ids, next, err := s.Tick(ctx)
						if !assert.NoError(t, err) {
							return
						}
						assert.Positive(t, next)
						assert.LessOrEqual(t, next, every)
						mu.Lock()
						all = append(all, ids...)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			return all
		}
		got := tickAll(scheds)
		require.Len(t, got, 2, "one task per schedule: %v", got)
		g := newGroup(t, b, b.Client)
		for _, id := range got {
			info, err := g.Task(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, queue.StateReady, info.State)
			if info.Name == "send_digest" {
				assert.JSONEq(t, `{"kind":"daily"}`, string(info.Payload))
			} else {
				assert.Equal(t, "low", info.Queue)
				assert.Equal(t, 2, info.MaxRetry)
			}
		}
		if b.Mini == nil {
			return
		}
		b.FastForward(time.Minute) // the next period of both
		got = tickAll(scheds[1:])  // the first scheduler has crashed
		assert.Len(t, got, 2)
		b.FastForward(3 * time.Minute) // two periods with no tick: skipped
		got = tickAll(scheds)
		assert.Len(t, got, 2)
		s, err := g.Stats(ctx, "default", "low")
		require.NoError(t, err)
		assert.Equal(t, int64(3), s.Ready["default"])
		assert.Equal(t, int64(3), s.Ready["low"])
	})
}

// Run enqueues the current period's task at once and stops with ctx.
func TestScheduler_Run(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		g := newGroup(t, b, b.Client)
		s, err := g.Scheduler(discard, queue.Periodic{Name: "p", Every: time.Hour, Queue: "default", Task: "t"})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		require.Eventually(t, func() bool {
			st, err := g.Stats(t.Context(), "default")
			return err == nil && st.Ready["default"] == 1
		}, time.Minute, time.Millisecond)
		cancel()
		require.NoError(t, <-done)

		for _, bad := range []queue.Periodic{
			{}, {Name: "a{b", Every: time.Hour, Queue: "q", Task: "t"}, {Name: "a@b", Every: time.Hour, Queue: "q", Task: "t"},
			{Name: "a", Every: 0, Queue: "q", Task: "t"}, {Name: "a", Every: time.Hour, Offset: time.Hour, Queue: "q", Task: "t"},
			{Name: "a", Every: time.Hour, Task: "t"}, {Name: "a", Every: time.Hour, Queue: "q"},
			{Name: "a", Every: time.Hour, Queue: "q", Task: "t", MaxRetry: -1},
		} {
			_, err := g.Scheduler(nil, bad)
			assert.Error(t, err, "%+v", bad)
		}
		_, err = g.Scheduler(nil)
		assert.Error(t, err)
		_, err = g.Scheduler(nil, queue.Periodic{Name: "a", Every: time.Hour, Queue: "q", Task: "t"}, queue.Periodic{Name: "a", Every: time.Hour, Queue: "q", Task: "t"})
		assert.Error(t, err)
		b.CheckWrongTypes(t, func() {}, func() error { _, _, err := s.Tick(t.Context()); return err },
			redistest.KeyRole{Key: b.Prefix + "{" + g.Name() + "}:periodic", Type: "hash", Role: "queue periodic marks"},
			redistest.KeyRole{Key: b.Prefix + "{" + g.Name() + "}:tasks", Type: "hash", Role: "queue tasks"},
			redistest.KeyRole{Key: b.Prefix + "{" + g.Name() + "}:ready:default", Type: "list", Role: "queue ready list"},
		)
	})
}

// miniAt returns a group on miniredis whose clock the test sets (a real
// server's cannot be), at 2026-01-01 12:34:30 UTC.
func miniAt(t *testing.T) (*redistest.Backend, *queue.Group, time.Time) {
	b := redistest.New(t, redistest.Mini)
	now := time.Date(2026, 1, 1, 12, 34, 30, 0, time.UTC)
	b.Mini.SetTime(now)
	return b, newGroup(t, b, b.Client), now
}

// The mark of a schedule is its last period's start time, so a longer
// Every takes effect at the next period that starts after the last one
// enqueued, and a shorter one at once: a mark kept as a period number of
// another Every (29 million minutes against 20 thousand days) stopped the
// schedule for decades.
func TestScheduler_Tick_everyChanged(t *testing.T) {
	b, g, now := miniAt(t)
	ctx := t.Context()
	sched := func(every time.Duration) *queue.Scheduler {
		s, err := g.Scheduler(discard, queue.Periodic{Name: "digest", Every: every, Queue: "default", Task: "t"})
		require.NoError(t, err)
		return s
	}
	minute := sched(time.Minute)
	ids, _, err := minute.Tick(ctx)
	require.NoError(t, err)
	require.Len(t, ids, 1)
	daily := sched(24 * time.Hour)
	ids, _, err = daily.Tick(ctx)
	require.NoError(t, err)
	assert.Empty(t, ids, "a task was enqueued after today's period started")
	for d := 1; d <= 3; d++ {
		b.Mini.SetTime(now.AddDate(0, 0, d))
		ids, _, err = daily.Tick(ctx)
		require.NoError(t, err)
		day := now.AddDate(0, 0, d).Truncate(24 * time.Hour)
		assert.Equal(t, []string{fmt.Sprintf("digest@%d", day.UnixMilli())}, ids, "day %d", d)
	}
	// Back to a minute: the next minute is a new period.
	b.Mini.SetTime(now.AddDate(0, 0, 3).Add(time.Minute))
	ids, _, err = minute.Tick(ctx)
	require.NoError(t, err)
	assert.Len(t, ids, 1)
}

// A mark written by an older version (the number of the last period
// enqueued) still counts for that period, and an older one does not.
func TestScheduler_Tick_oldMark(t *testing.T) {
	b, g, now := miniAt(t)
	ctx := t.Context()
	p := now.Unix() / 3600
	require.NoError(t, b.Client.HSet(ctx, key(b, "periodic"), "hourly", p).Err())
	s, err := g.Scheduler(discard, queue.Periodic{Name: "hourly", Every: time.Hour, Queue: "default", Task: "t"})
	require.NoError(t, err)
	ids, _, err := s.Tick(ctx)
	require.NoError(t, err)
	assert.Empty(t, ids, "this period was enqueued by the old version")
	require.NoError(t, b.Client.HSet(ctx, key(b, "periodic"), "hourly", p-1).Err())
	ids, _, err = s.Tick(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{fmt.Sprintf("hourly@%d", p*3600*1000)}, ids, "named by the period's start")
	mark, err := b.Client.HGet(ctx, key(b, "periodic"), "hourly").Int64()
	require.NoError(t, err)
	assert.Equal(t, p*3600*1000, mark, "the new mark is the period's start in Unix ms")
}

// A change of Offset takes effect at the first period that starts after
// the last one enqueued, even while that one's task is still there: the
// tasks are named by their periods' start times. Named by period numbers,
// which an Offset change keeps while the start moves, the new period's
// task took the ID of the last one's, found it there (ready, running,
// retrying or dead) and the period was marked and silently skipped.
func TestScheduler_Tick_offsetChanged(t *testing.T) {
	b, g, now := miniAt(t) // 2026-01-01 12:34:30 UTC
	ctx := t.Context()
	sched := func(name string, every, offset time.Duration) *queue.Scheduler {
		s, err := g.Scheduler(discard, queue.Periodic{Name: name, Every: every, Offset: offset, Queue: "default", Task: "t"})
		require.NoError(t, err)
		return s
	}
	at := func(hhmm string) time.Time {
		d, err := time.ParseDuration(hhmm)
		require.NoError(t, err)
		return now.Truncate(24 * time.Hour).Add(d)
	}
	id := func(name, hhmm string) string { return fmt.Sprintf("%s@%d", name, at(hhmm).UnixMilli()) }
	tick := func(s *queue.Scheduler) []string {
		ids, _, err := s.Tick(ctx)
		require.NoError(t, err)
		return ids
	}

	// An hourly schedule moved from :00 to :45 past the hour, its 12:00
	// task still ready.
	at00, at45 := sched("digest", time.Hour, 0), sched("digest", time.Hour, 45*time.Minute)
	require.Equal(t, []string{id("digest", "12h")}, tick(at00))
	b.Mini.SetTime(at("12h50m30s"))
	assert.Equal(t, []string{id("digest", "12h45m")}, tick(at45), "12:45 starts after the last period enqueued (12:00)")
	assert.Empty(t, tick(at45), "once per period")
	assert.Empty(t, tick(at00), "12:00 starts before the mark (12:45)")
	// Moved back to :15: 12:15 starts before the mark, 13:15 after it.
	at15 := sched("digest", time.Hour, 15*time.Minute)
	assert.Empty(t, tick(at15))
	b.Mini.SetTime(at("13h15m"))
	assert.Equal(t, []string{id("digest", "13h15m")}, tick(at15))
	assert.Equal(t, []string{id("digest", "12h"), id("digest", "12h45m"), id("digest", "13h15m")}, readyIDs(t, b, "default"))

	// A daily job at 03:00 dies; the operator moves it to 04:00: that
	// day's 04:00 run is enqueued, the dead task kept.
	// (The next day.)
	b.Mini.SetTime(at("27h0m1s"))
	_, err := g.Purge(ctx, "default")
	require.NoError(t, err)
	at3, at4 := sched("nightly", 24*time.Hour, 3*time.Hour), sched("nightly", 24*time.Hour, 4*time.Hour)
	dead := id("nightly", "27h")
	require.Equal(t, []string{dead}, tick(at3))
	ts, _, err := g.TakeRuns(ctx, "w", []string{"default"}, 1, time.Hour, "tok")
	require.NoError(t, err)
	require.Len(t, ts, 1)
	require.NoError(t, g.SettleForTest(ctx, "w", nil, queue.Outcome{ID: dead, Token: "tok", Kind: 'd', Attempts: "1", Err: "boom"}))
	b.Mini.SetTime(at("28h0m1s"))
	assert.Equal(t, []string{id("nightly", "28h")}, tick(at4))
	info, err := g.Task(ctx, dead)
	require.NoError(t, err)
	assert.Equal(t, queue.StateDead, info.State)
	assert.Equal(t, []string{id("nightly", "28h")}, readyIDs(t, b, "default"))
}

// A tick that finds its period's task there already, unmarked (the mark
// was lost), does not report it as its own, nor push its ID twice; the
// same for a cron time.
func TestScheduler_Tick_taskThereUnmarked(t *testing.T) {
	b, g, now := miniAt(t)
	ctx := t.Context()
	hourly := fmt.Sprintf("h@%d", now.Truncate(time.Hour).UnixMilli())
	cron := fmt.Sprintf("c@%d", now.Truncate(time.Hour).Unix())
	for _, id := range []string{hourly, cron} {
		_, err := g.Enqueue(ctx, "default", "t", 1, queue.ID(id))
		require.NoError(t, err)
	}
	s, err := g.Scheduler(discard, queue.Periodic{Name: "h", Every: time.Hour, Queue: "default", Task: "t"},
		queue.Periodic{Name: "c", Cron: "@hourly", Queue: "default", Task: "t"})
	require.NoError(t, err)
	ids, _, err := s.Tick(ctx)
	require.NoError(t, err)
	assert.Empty(t, ids)
	assert.Equal(t, []string{hourly, cron}, readyIDs(t, b, "default"))
	ids, _, err = s.Tick(ctx)
	require.NoError(t, err)
	assert.Empty(t, ids, "marked now")
}

// Every and Offset are whole milliseconds: the script's unit.
func TestScheduler_subMillisecond(t *testing.T) {
	b := redistest.New(t, redistest.Mini)
	g := newGroup(t, b, b.Client)
	for _, p := range []queue.Periodic{
		{Name: "a", Every: time.Millisecond + time.Microsecond, Queue: "q", Task: "t"},
		{Name: "a", Every: time.Hour, Offset: time.Microsecond, Queue: "q", Task: "t"},
	} {
		_, err := g.Scheduler(nil, p)
		assert.ErrorContains(t, err, "whole number of milliseconds", "%+v", p)
	}
}

// A schedule whose Offset lies beyond the server's time since the epoch
// (valid input: 0 <= Offset < Every <= MaxDelay) is in period -1, which
// started before the epoch. Its first tick must enqueue that period's task
// like any other ("the first tick in it enqueues its task").
func TestScheduler_Tick_periodBeforeEpoch(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		s, err := g.Scheduler(discard, queue.Periodic{Name: "far", Every: queue.MaxDelay,
			Offset: queue.MaxDelay - time.Millisecond, Queue: "default", Task: "t"})
		require.NoError(t, err)
		ids, _, err := s.Tick(ctx)
		require.NoError(t, err)
		assert.Len(t, ids, 1, "the current period's task is enqueued by the first tick")
		assert.Equal(t, int64(len(ids)), stats(t, g, "default").Ready["default"])
		assert.Len(t, readyIDs(t, b, "default"), 1, "a task is ready")
	})
}
