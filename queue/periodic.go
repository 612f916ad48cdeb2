package queue

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/wait"
)

var (
	//go:embed periodic.lua
	periodicLua    string
	periodicScript = script.New("queue periodic", libLua+periodicLua)
	//go:embed cron.lua
	cronLua    string
	cronScript = script.New("queue cron", libLua+cronLua)
)

// Periodic is a task enqueued once every period, or at the times of a cron
// spec ([Group.Scheduler]).
type Periodic struct {
	// Name names the schedule, unique in the group; the task of the period
	// starting at t gets the ID "<Name>@<t in Unix milliseconds>", that of
	// the cron time t "<Name>@<t in Unix seconds>".
	Name string
	// Every is the period, 1ms to [MaxDelay] in whole milliseconds;
	// periods start at the Unix epoch plus Offset (0 <= Offset < Every,
	// whole milliseconds) on the server's clock: Every 24h with Offset 3h
	// is every day at 03:00 UTC. Zero with Cron. A change of Every or
	// Offset takes effect at the first period that starts after the last
	// one enqueued, whether or not that one's task is still there.
	Every, Offset time.Duration
	// Cron, instead of Every, gives the times as a cron spec (see
	// [ParseCron]): "30 3 * * 1-5" is 03:30 UTC on weekdays, "@hourly"
	// every hour on the hour. Times are in UTC, by the server's clock.
	Cron string
	// Queue, Task and Payload are the task's, as for [Group.Enqueue].
	Queue, Task string
	Payload     any
	// MaxRetry is the task's retry limit; 0 means the default (5).
	MaxRetry int
}

// Scheduler enqueues the tasks of periodic schedules. Any number of
// Schedulers, in any processes, may run the same schedules: each period's
// (or cron time's) task is enqueued once, by whichever asks first. It is
// safe for concurrent use.
type Scheduler struct {
	g       *Group
	entries []periodicEntry
	log     *slog.Logger
	skew    atomic.Int64 // the server's clock minus the local one, in ns, as the last tick saw it
}

type periodicEntry struct {
	p       Periodic
	cron    *CronSpec // nil for an interval schedule
	payload []byte
}

// Scheduler returns a Scheduler of the schedules ps, whose payloads it
// encodes once with the group's codec. A schedule without a name, with a
// name holding '{', '}' or '@' or used twice, with an Every or Offset out
// of range or not whole milliseconds, with both Cron and Every (or Offset) or a Cron that does not
// parse (the error names the field and value), or a task without queue or
// name is an error. logger (nil: slog.Default) hears of the errors
// [Scheduler.Run] rides out.
func (g *Group) Scheduler(logger *slog.Logger, ps ...Periodic) (*Scheduler, error) {
	if len(ps) == 0 {
		return nil, fmt.Errorf("queue: scheduler for %q: no schedule", g.name)
	}
	if logger == nil {
		logger = slog.Default()
	}
	s := &Scheduler{g: g, log: logger}
	seen := map[string]bool{}
	for i, p := range ps {
		err := keys.CheckEntity("schedule name", p.Name)
		var spec *CronSpec
		switch {
		case err != nil:
		case seen[p.Name]:
			err = fmt.Errorf("schedule name %q: used twice", p.Name)
		case containsAt(p.Name):
			err = fmt.Errorf("schedule name %q: holds '@'", p.Name)
		case p.Cron != "" && (p.Every != 0 || p.Offset != 0):
			err = fmt.Errorf("cron %q with every %v and offset %v: give either Cron or Every", p.Cron, p.Every, p.Offset)
		case p.Cron != "":
			var c CronSpec
			if c, err = ParseCron(p.Cron); err == nil {
				spec = &c
				err = checkPeriodicTask(&p)
			}
		case p.Every < time.Millisecond || p.Every > MaxDelay:
			err = fmt.Errorf("every %v: must be between 1ms and %v", p.Every, MaxDelay)
		case p.Offset < 0 || p.Offset >= p.Every:
			err = fmt.Errorf("offset %v: must be at least 0 and less than every (%v)", p.Offset, p.Every)
		case p.Every%time.Millisecond != 0:
			err = fmt.Errorf("every %v: must be a whole number of milliseconds", p.Every)
		case p.Offset%time.Millisecond != 0:
			err = fmt.Errorf("offset %v: must be a whole number of milliseconds", p.Offset)
		default:
			err = checkPeriodicTask(&p)
		}
		if err != nil {
			return nil, fmt.Errorf("queue: scheduler for %q: schedule %d: %w", g.name, i, err)
		}
		seen[p.Name] = true
		payload, err := g.codec.Marshal(p.Payload)
		if err != nil {
			return nil, fmt.Errorf("queue: scheduler for %q: schedule %q: payload: %w", g.name, p.Name, err)
		}
		s.entries = append(s.entries, periodicEntry{p: p, cron: spec, payload: payload})
	}
	return s, nil
}

// checkPeriodicTask sets the default retry limit of p and checks its task.
func checkPeriodicTask(p *Periodic) error {
	if p.MaxRetry == 0 {
		p.MaxRetry = defaultMaxRetry
	}
	return checkJob(Job{Queue: p.Queue, Name: p.Task}, enqueueOptions{maxRetry: p.MaxRetry})
}

// periodicID is the ID of the task of schedule name's period that starts
// at start (Unix ms), as periodic.lua names it.
func periodicID(name string, start int64) string {
	return fmt.Sprintf("%s@%d", name, start)
}

func containsAt(s string) bool {
	for i := range len(s) {
		if s[i] == '@' {
			return true
		}
	}
	return false
}

// Tick enqueues the task of the current period (or last cron time) of
// every schedule that has no task for it yet, in one round trip (one
// script per schedule, in one pipeline), and returns the IDs it enqueued
// and how long until the next period or cron time of any schedule. A
// period or cron time in which no Scheduler ticked is skipped, not caught
// up. A key of the group holding another type gives a *ria.KeyError; a
// failed round trip an error wrapping ria.ErrOutcomeUnknown (ticking again
// is safe).
//
// A cron schedule's times are computed here from the server's clock as
// the last tick saw it (the local clock at first), and checked by the
// script against the server's clock; when they do not hold (the clocks
// drifted, or a time passed in between), Tick computes again and sends
// those schedules once more: one more round trip, rarely.
func (s *Scheduler) Tick(ctx context.Context) (enqueued []string, next time.Duration, err error) {
	k := s.g.keys
	next = MaxDelay
	var errs []error
	pending := make([]int, len(s.entries))
	for i := range pending {
		pending[i] = i
	}
	// The tick's nonce, packed with the tasks, tells a re-send of a script
	// (go-redis re-sends one whose reply was lost) that this tick enqueued
	// the task it finds.
	nonce := script.Nonce()
	for attempt := 0; len(pending) > 0; attempt++ {
		calls := make([]*script.Call, len(pending))
		sched := make([]time.Time, len(pending)) // the cron time sent
		after := make([]time.Time, len(pending)) // the cron time after it
		sent := time.Now()
		est := sent.Add(time.Duration(s.skew.Load()))
		for c, i := range pending {
			e := s.entries[i]
			keys := []string{k.tasks, k.ready + e.p.Queue, k.signal + e.p.Queue, k.periodic}
			packed := pack(make([]byte, 0, 32+len(e.p.Queue)+len(e.p.Task)+len(nonce)+len(e.payload)),
				e.p.Queue, e.p.Task, e.p.MaxRetry, nonce, e.payload)
			if e.cron == nil {
				calls[c] = periodicScript.Call(keys, e.p.Name, e.p.Every.Milliseconds(), e.p.Offset.Milliseconds(), packed, nonce)
				continue
			}
			sched[c] = e.cron.Prev(est)
			after[c] = e.cron.Next(est)
			id := fmt.Sprintf("%s@%d", e.p.Name, sched[c].Unix())
			from := sched[c].UnixMilli()
			if sched[c].IsZero() {
				from, id = math.MinInt64/2, "" // no time in the last 10 years: nothing to enqueue
			}
			to := int64(math.MaxInt64 / 2)
			if !after[c].IsZero() {
				to = after[c].UnixMilli()
			}
			calls[c] = cronScript.Call(keys, e.p.Name+"@cron", from, to, id, packed, nonce)
		}
		script.Send(ctx, s.g.rdb, calls)
		var again []int
		for c, call := range calls {
			i := pending[c]
			e := s.entries[i]
			if call.Err != nil {
				errs = append(errs, fmt.Errorf("schedule %q: %w", e.p.Name, script.Unknown(call.Err)))
				continue
			}
			if e.cron == nil {
				r, err := periodicScript.AsInt64s(call.Val)
				if err != nil || len(r) != 4 {
					errs = append(errs, fmt.Errorf("schedule %q: %w: reply %v", e.p.Name, ria.ErrCorrupt, call.Val))
					continue
				}
				s.skew.Store(int64(time.Duration(r[3])*time.Millisecond) - time.Now().UnixNano())
				if r[0] == 1 {
					enqueued = append(enqueued, periodicID(e.p.Name, r[1]))
				}
				next = min(next, time.Duration(r[2]-r[3])*time.Millisecond)
				continue
			}
			r, err := cronScript.AsInt64s(call.Val)
			if err != nil || len(r) != 2 || r[0] < 0 || r[0] > 2 {
				errs = append(errs, fmt.Errorf("schedule %q: %w: reply %v", e.p.Name, ria.ErrCorrupt, call.Val))
				continue
			}
			s.skew.Store(int64(time.Duration(r[1])*time.Millisecond) - time.Now().UnixNano())
			switch {
			case r[0] == 2 && attempt < 3:
				again = append(again, i)
				continue
			case r[0] == 2:
				errs = append(errs, fmt.Errorf("schedule %q: the server's clock does not settle (now %d ms, cron time %v)", e.p.Name, r[1], sched[c]))
				continue
			case r[0] == 1:
				enqueued = append(enqueued, fmt.Sprintf("%s@%d", e.p.Name, sched[c].Unix()))
			}
			if !after[c].IsZero() {
				next = min(next, time.Duration(after[c].UnixMilli()-r[1])*time.Millisecond)
			}
		}
		pending = again
	}
	if len(errs) > 0 {
		return enqueued, 0, fmt.Errorf("queue: scheduler for %q: %w", s.g.name, errors.Join(errs...))
	}
	return enqueued, max(next, time.Millisecond), nil
}

// Run ticks until ctx ends, waking at the start of each period (by the
// server's clock, read at every tick). Transient errors are logged and
// retried with backoff; Run returns nil when ctx ends, or an error that
// retrying cannot mend (a *ria.KeyError).
func (s *Scheduler) Run(ctx context.Context) error {
	backoff := 10 * time.Millisecond
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		_, next, err := s.Tick(ctx)
		switch {
		case err == nil:
			backoff = 10 * time.Millisecond
			timer.Reset(next)
		case ctx.Err() != nil:
			return nil
		case !wait.Transient(err):
			var kerr *ria.KeyError
			if errors.As(err, &kerr) {
				return err
			}
			fallthrough
		default:
			s.log.Warn("queue: scheduler tick failed; retrying", "group", s.g.name, "err", err, "retry_in", backoff)
			timer.Reset(backoff)
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}
