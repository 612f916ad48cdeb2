package queue_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseCron_errors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"", "0 fields: want 5"},
		{"* * * *", "4 fields: want 5"},
		{"* * * * * *", "6 fields: want 5"},
		{"60 * * * *", `field 1 (minute): "60": value 60: out of range 0-59`},
		{"* 24 * * *", `field 2 (hour): "24": value 24: out of range 0-23`},
		{"* * 0 * *", `field 3 (day of month): "0": value 0: out of range 1-31`},
		{"* * 32 * *", `field 3 (day of month): "32"`},
		{"* * * 13 *", `field 4 (month): "13": value 13: out of range 1-12`},
		{"* * * * 8", `field 5 (day of week): "8": value 8: out of range 0-7`},
		{"* * * foo *", `field 4 (month): "foo": value "foo": want a number from 1 to 12 or a name`},
		{"x * * * *", `field 1 (minute): "x": value "x"`},
		{"*/0 * * * *", `field 1 (minute): "*/0": step "0"`},
		{"*/x * * * *", `step "x"`},
		{"5-1 * * * *", `field 1 (minute): "5-1": range 5-1: end before start`},
		{"1,,2 * * * *", `field 1 (minute): "": empty value`},
		{"1-2-3 * * * *", `field 1 (minute): "1-2-3"`},
		{"-1 * * * *", `field 1 (minute): "-1"`},
		{"0 0 30 2 *", "never falls"},
		{"0 0 31 4,6,9,11 *", "never falls"},
		{"@every 5m", "unknown macro"},
		{"@", "unknown macro"},
	} {
		_, err := queue.ParseCron(tc.spec)
		if assert.Error(t, err, tc.spec) {
			assert.Contains(t, err.Error(), tc.want, tc.spec)
			assert.Contains(t, err.Error(), "cron "+`"`+tc.spec+`"`, "the error quotes the spec")
		}
	}
}

func TestCronSpec_Next(t *testing.T) {
	for _, tc := range []struct {
		spec, from string
		want       []string // the next times, in order
	}{
		{"* * * * *", "2026-01-01 00:00", []string{"2026-01-01 00:01", "2026-01-01 00:02"}},
		{"*/15 * * * *", "2026-01-01 00:07", []string{"2026-01-01 00:15", "2026-01-01 00:30", "2026-01-01 00:45", "2026-01-01 01:00"}},
		{"5,10-12 3 * * *", "2026-01-01 03:10", []string{"2026-01-01 03:11", "2026-01-01 03:12", "2026-01-02 03:05"}},
		{"0 9-17/4 * * *", "2026-01-01 00:00", []string{"2026-01-01 09:00", "2026-01-01 13:00", "2026-01-01 17:00", "2026-01-02 09:00"}},
		{"30 4/6 * * *", "2026-01-01 05:00", []string{"2026-01-01 10:30", "2026-01-01 16:30", "2026-01-01 22:30", "2026-01-02 04:30"}},
		{"@hourly", "2026-01-01 10:59", []string{"2026-01-01 11:00", "2026-01-01 12:00"}},
		{"@daily", "2026-12-31 12:00", []string{"2027-01-01 00:00", "2027-01-02 00:00"}},
		{"@midnight", "2026-01-01 00:00", []string{"2026-01-02 00:00"}},
		{"@weekly", "2026-01-01 00:00", []string{"2026-01-04 00:00", "2026-01-11 00:00"}}, // Sundays
		{"@monthly", "2026-01-31 00:00", []string{"2026-02-01 00:00", "2026-03-01 00:00"}},
		{"@yearly", "2026-06-01 00:00", []string{"2027-01-01 00:00", "2028-01-01 00:00"}},
		{"@annually", "2026-06-01 00:00", []string{"2027-01-01 00:00"}},
		// Month ends: the 31st only in long months; the last days of February.
		{"0 0 31 * *", "2026-01-31 00:00", []string{"2026-03-31 00:00", "2026-05-31 00:00", "2026-07-31 00:00", "2026-08-31 00:00"}},
		{"0 0 30 * *", "2026-01-30 00:00", []string{"2026-03-30 00:00", "2026-04-30 00:00"}},
		{"0 0 28,29 2 *", "2026-01-01 00:00", []string{"2026-02-28 00:00", "2027-02-28 00:00", "2028-02-28 00:00", "2028-02-29 00:00", "2029-02-28 00:00"}},
		// 29 February: leap years only (2100 is not one).
		{"0 12 29 2 *", "2026-01-01 00:00", []string{"2028-02-29 12:00", "2032-02-29 12:00"}},
		{"0 0 29 2 *", "2096-03-01 00:00", []string{"2104-02-29 00:00"}},
		// Day of month OR day of week when both are restricted.
		{"0 0 13 * 5", "2026-02-01 00:00", []string{"2026-02-06 00:00", "2026-02-13 00:00", "2026-02-20 00:00", "2026-02-27 00:00", "2026-03-06 00:00"}},
		{"0 0 1 * mon", "2026-06-01 00:00", []string{"2026-06-08 00:00", "2026-06-15 00:00", "2026-06-22 00:00", "2026-06-29 00:00", "2026-07-01 00:00", "2026-07-06 00:00"}},
		// A '*' field (even with a step) does not restrict: AND.
		{"0 0 */10 * 1", "2026-01-01 00:00", []string{"2026-05-11 00:00", "2026-06-01 00:00"}},
		{"0 0 * * 1-5", "2026-01-02 00:00", []string{"2026-01-05 00:00", "2026-01-06 00:00"}}, // Friday to Monday
		// 7 is Sunday; names in any case.
		{"0 0 * * 7", "2026-01-01 00:00", []string{"2026-01-04 00:00"}},
		{"0 0 * * Sat-sun", "2026-01-01 00:00", []string{"2026-01-03 00:00", "2026-01-04 00:00", "2026-01-10 00:00"}},
		{"0 0 1 JAN,jul *", "2026-02-01 00:00", []string{"2026-07-01 00:00", "2027-01-01 00:00"}},
		// UTC: no DST gap or repeat (Europe changes clocks on 2026-03-29).
		{"30 1,2 * * *", "2026-03-29 00:00", []string{"2026-03-29 01:30", "2026-03-29 02:30", "2026-03-30 01:30"}},
	} {
		c, err := queue.ParseCron(tc.spec)
		require.NoError(t, err, tc.spec)
		from := utc(tc.from)
		for i, w := range tc.want {
			got := c.Next(from)
			if !assert.Equal(t, utc(w), got, "%s: next %d after %s", tc.spec, i, from) {
				break
			}
			assert.Equal(t, got, c.Prev(got), "%s: a time is its own Prev", tc.spec)
			if i > 0 {
				assert.Equal(t, from, c.Prev(got.Add(-time.Minute)), "%s: Prev of the minute before %s", tc.spec, got)
			}
			from = got
		}
	}
	// Inputs: a local time is read in UTC; seconds are dropped.
	c, err := queue.ParseCron("0 * * * *")
	require.NoError(t, err)
	paris, err := time.LoadLocation("Europe/Paris")
	if err == nil {
		assert.Equal(t, utc("2026-01-01 11:00"), c.Next(time.Date(2026, 1, 1, 11, 30, 0, 0, paris)))
	}
	assert.Equal(t, utc("2026-01-01 11:00"), c.Next(utc("2026-01-01 10:00").Add(59*time.Second)))
	assert.Equal(t, utc("2026-01-01 10:00"), c.Prev(utc("2026-01-01 10:59").Add(59*time.Second)))
	assert.True(t, queue.CronSpec{}.Next(utc("2026-01-01 00:00")).IsZero(), "the zero CronSpec never matches")
	assert.Equal(t, "0 * * * *", c.String())
}

// A day-of-week range that starts and ends on Sunday is Sunday only: its
// end 0 is read as 7 only when the range starts after Sunday ("fri-sun").
func TestCronSpec_Next_sundayRange(t *testing.T) {
	for _, spec := range []string{"0 0 * * sun-sun", "0 0 * * 0-0", "0 0 * * 7-7", "0 0 * * 0-0/2"} {
		c, err := queue.ParseCron(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, utc("2026-01-11 00:00"), c.Next(utc("2026-01-05 12:00")), spec) // Monday to Sunday
		assert.Equal(t, utc("2026-01-04 00:00"), c.Prev(utc("2026-01-05 12:00")), spec)
	}
	c, err := queue.ParseCron("0 0 * * fri-sun")
	require.NoError(t, err)
	assert.Equal(t, utc("2026-01-09 00:00"), c.Next(utc("2026-01-05 12:00")))
}

// Prev and Next agree: Prev(t) <= t < Next(Prev(t)) and nothing of the
// spec lies between, for many specs and times.
func TestCronSpec_Prev(t *testing.T) {
	specs := []string{"* * * * *", "*/7 * * * *", "0 0 31 * *", "0 12 29 2 *", "0 0 13 * 5", "15 3 * * 1-5", "@monthly", "0 0 1 1 *"}
	start := utc("2027-12-30 22:00")
	for _, spec := range specs {
		c, err := queue.ParseCron(spec)
		require.NoError(t, err)
		for i := range 500 {
			now := start.Add(time.Duration(i) * 97 * time.Minute)
			p := c.Prev(now)
			require.False(t, p.IsZero(), spec)
			assert.False(t, p.After(now), "%s: Prev(%s) = %s", spec, now, p)
			n := c.Next(p)
			assert.True(t, n.After(now), "%s: Next(Prev(%s)) = %s", spec, now, n)
			assert.Equal(t, n, c.Next(now), "%s: no time between Prev and Next of %s", spec, now)
		}
	}
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/5 1-3 1,15 */2 mon-fri", "0 0 29 2 *", "@daily", "5-1 * * * *",
		"1/2 * * * *", "0 0 13 * 5", "59 23 31 12 7", "a b c d e", "*/60 * * * *"} {
		f.Add(s)
	}
	from := utc("2026-03-01 12:34")
	f.Fuzz(func(t *testing.T, spec string) {
		c, err := queue.ParseCron(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "cron ") {
				t.Errorf("error %q does not name the spec", err)
			}
			return
		}
		n := c.Next(from)
		if n.IsZero() {
			t.Fatalf("%q parsed but never matches after %s", spec, from)
		}
		if !n.After(from) || c.Prev(n) != n || c.Next(c.Prev(from)) != n {
			t.Fatalf("%q: Next(%s) = %s, Prev(Next) = %s", spec, from, n, c.Prev(n))
		}
	})
}

// Three schedulers tick a cron schedule many times: each scheduled time's
// task is enqueued once, with the ID "<name>@<Unix seconds of the time>".
// On miniredis, whose clock the test sets (so the schedulers first learn
// that the server's clock is not theirs), a later time gets its own task,
// a crashed scheduler leaves the others to enqueue it, and the times in
// which nobody ticked are skipped.
func TestScheduler_cron(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		// On real servers (on this machine's clock), once a year on the 1st
		// of the month 6 months away: now is months from either end.
		now := time.Now().UTC()
		m := (int(now.Month())+5)%12 + 1
		spec := fmt.Sprintf("0 0 1 %d *", m)
		first := time.Date(now.Year(), time.Month(m), 1, 0, 0, 0, 0, time.UTC)
		if first.After(now) {
			first = first.AddDate(-1, 0, 0)
		}
		if b.Mini != nil {
			spec = "*/5 * * * *"
			b.Mini.SetTime(utc("2026-01-01 00:03"))
			first = utc("2026-01-01 00:00")
		}
		ps := []queue.Periodic{
			{Name: "report", Cron: spec, Queue: "default", Task: "report", Payload: 7},
			{Name: "tick", Every: time.Hour, Queue: "default", Task: "tick"},
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
						mu.Lock()
						for _, id := range ids {
							if strings.HasPrefix(id, "report@") {
								all = append(all, id)
							}
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			return all
		}
		got := tickAll(scheds)
		assert.Equal(t, []string{"report@" + itoa(first.Unix())}, got)
		g := newGroup(t, b, b.Client)
		info, err := g.Task(ctx, got[0])
		require.NoError(t, err)
		assert.Equal(t, "report", info.Name)
		assert.Equal(t, "7", string(info.Payload))

		// Once the clock is learned, a tick is one round trip.
		var c *queue.Scheduler
		{
			cl, count := b.NewClient()
			s, err := newGroup(t, b, cl).Scheduler(discard, ps[0])
			require.NoError(t, err)
			_, _, err = s.Tick(ctx)
			require.NoError(t, err)
			rt, _ := count.Delta(func() { _, _, err = s.Tick(ctx) })
			require.NoError(t, err)
			assert.Equal(t, int64(1), rt, "round trips of a Tick")
			c = s
		}
		_, next, err := c.Tick(ctx)
		require.NoError(t, err)
		if b.Mini == nil {
			assert.InDelta(t, time.Until(first.AddDate(1, 0, 0)).Seconds(), next.Seconds(), 60)
			return
		}
		assert.Equal(t, 2*time.Minute, next, "until 00:05")

		b.Mini.SetTime(utc("2026-01-01 00:05"))
		assert.Equal(t, []string{"report@" + itoa(utc("2026-01-01 00:05").Unix())}, tickAll(scheds[1:]), "the first scheduler has crashed")
		b.Mini.SetTime(utc("2026-01-01 00:27")) // 00:10 ... 00:20 missed: skipped
		assert.Equal(t, []string{"report@" + itoa(utc("2026-01-01 00:25").Unix())}, tickAll(scheds))
		st := stats(t, g, "default")
		assert.Equal(t, int64(3+1), st.Ready["default"], "three cron tasks and one interval task")
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Bad cron schedules are refused, naming the schedule and what is wrong.
func TestScheduler_cronBadInput(t *testing.T) {
	srv := redistest.New(t, redistest.Mini)
	g := newGroup(t, srv, srv.Client)
	for _, tc := range []struct {
		p    queue.Periodic
		want string
	}{
		{queue.Periodic{Name: "a", Cron: "* * *", Queue: "q", Task: "t"}, "3 fields"},
		{queue.Periodic{Name: "a", Cron: "61 * * * *", Queue: "q", Task: "t"}, "field 1 (minute)"},
		{queue.Periodic{Name: "a", Cron: "@daily", Every: time.Hour, Queue: "q", Task: "t"}, "either Cron or Every"},
		{queue.Periodic{Name: "a", Cron: "@daily", Offset: time.Second, Queue: "q", Task: "t"}, "either Cron or Every"},
		{queue.Periodic{Name: "a", Cron: "@daily", Task: "t"}, "queue name"},
		{queue.Periodic{Name: "a", Cron: "@daily", Queue: "q"}, "task name"},
		{queue.Periodic{Name: "a@b", Cron: "@daily", Queue: "q", Task: "t"}, "'@'"},
	} {
		_, err := g.Scheduler(nil, tc.p)
		assert.ErrorContains(t, err, tc.want, "%+v", tc.p)
	}
}

// A Tick whose script reply is lost is re-sent by go-redis: the re-send
// finds the period (cron time) marked and its task carrying the tick's
// nonce, and the Tick still lists the task it enqueued, once.
func TestScheduler_Tick_lostReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient()
		now := time.Now().UTC()
		m := (int(now.Month())+5)%12 + 1 // months away: one cron time during the test
		if b.Mini != nil {
			b.Mini.SetTime(utc("2026-01-01 00:03"))
		}
		ps := []queue.Periodic{
			{Name: "cron", Cron: fmt.Sprintf("0 0 1 %d *", m), Queue: "default", Task: "t"},
			{Name: "every", Every: 24 * time.Hour, Offset: (time.Duration(now.Add(12*time.Hour).UnixNano()) % (24 * time.Hour)).Truncate(time.Millisecond), Queue: "default", Task: "t"},
		}
		if b.Mini != nil {
			ps[0].Cron, ps[1].Offset = "*/5 * * * *", 0
		}
		g := newGroup(t, b, c)
		h := redistest.NewHarness(t, f, "queue Scheduler.Tick")
		for i, p := range ps {
			s, err := g.Scheduler(discard, p)
			require.NoError(t, err)
			_, _, err = s.Tick(ctx) // learns the server's clock, enqueues
			require.NoError(t, err)
			require.NoError(t, b.Client.Del(ctx, key(b, "periodic"), key(b, "tasks"), key(b, "ready:default")).Err())
			var ids []string
			h.Call(1, redistest.Scripts, func() { ids, _, err = s.Tick(ctx) })
			n, lerr := b.Client.LLen(ctx, key(b, "ready:default")).Result()
			h.Check(err == nil && lerr == nil && len(ids) == 1 && n == 1, "schedule %d: %v, ids %v, %d ready", i, err, ids, n)
			ids, _, err = s.Tick(ctx)
			h.Check(err == nil && len(ids) == 0, "schedule %d again: %v, ids %v", i, err, ids)
		}
	})
}

// A cron Tick checks the type of every key it touches before writing.
func TestScheduler_cronWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		g := newGroup(t, b, b.Client)
		s, err := g.Scheduler(discard, queue.Periodic{Name: "c", Cron: "@yearly", Queue: "default", Task: "t"})
		require.NoError(t, err)
		b.CheckWrongTypes(t, func() {}, func() error { _, _, err := s.Tick(t.Context()); return err },
			redistest.KeyRole{Key: key(b, "periodic"), Type: "hash", Role: "queue periodic marks"},
			redistest.KeyRole{Key: key(b, "tasks"), Type: "hash", Role: roleTasks},
			redistest.KeyRole{Key: key(b, "ready:default"), Type: "list", Role: roleReady},
			redistest.KeyRole{Key: key(b, "signal:default"), Type: "list", Role: roleSignal},
		)
	})
}
