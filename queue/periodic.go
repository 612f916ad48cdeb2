package queue

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
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
)

// Periodic is a task enqueued once every period ([Group.Scheduler]).
type Periodic struct {
	// Name names the schedule, unique in the group; the task of period p
	// gets the ID "<Name>@<p>".
	Name string
	// Every is the period, 1ms to [MaxDelay]; periods start at the Unix
	// epoch plus Offset (0 <= Offset < Every) on the server's clock: Every
	// 24h with Offset 3h is every day at 03:00 UTC.
	Every, Offset time.Duration
	// Queue, Task and Payload are the task's, as for [Group.Enqueue].
	Queue, Task string
	Payload     any
	// MaxRetry is the task's retry limit; 0 means the default (25).
	MaxRetry int
}

// Scheduler enqueues the tasks of periodic schedules. Any number of
// Schedulers, in any processes, may run the same schedules: each period's
// task is enqueued once, by whichever asks first.
type Scheduler struct {
	g       *Group
	entries []periodicEntry
	log     *slog.Logger
}

type periodicEntry struct {
	p      Periodic
	packed []byte
}

// Scheduler returns a Scheduler of the schedules ps, whose payloads it
// encodes once with the group's codec. A schedule without a name, with a
// name holding '{', '}' or '@' or used twice, with an Every or Offset out
// of range, or a task without queue or name is an error. logger (nil:
// slog.Default) hears of the errors [Scheduler.Run] rides out.
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
		switch {
		case err != nil:
		case seen[p.Name]:
			err = fmt.Errorf("schedule name %q: used twice", p.Name)
		case containsAt(p.Name):
			err = fmt.Errorf("schedule name %q: holds '@'", p.Name)
		case p.Every < time.Millisecond || p.Every > MaxDelay:
			err = fmt.Errorf("every %v: must be between 1ms and %v", p.Every, MaxDelay)
		case p.Offset < 0 || p.Offset >= p.Every:
			err = fmt.Errorf("offset %v: must be at least 0 and less than every (%v)", p.Offset, p.Every)
		default:
			if p.MaxRetry == 0 {
				p.MaxRetry = defaultMaxRetry
			}
			err = checkJob(Job{Queue: p.Queue, Name: p.Task}, enqueueOptions{maxRetry: p.MaxRetry})
		}
		if err != nil {
			return nil, fmt.Errorf("queue: scheduler for %q: schedule %d: %w", g.name, i, err)
		}
		seen[p.Name] = true
		payload, err := g.codec.Marshal(p.Payload)
		if err != nil {
			return nil, fmt.Errorf("queue: scheduler for %q: schedule %q: payload: %w", g.name, p.Name, err)
		}
		s.entries = append(s.entries, periodicEntry{p: p, packed: pack(nil, p.Queue, p.Task, p.MaxRetry, "", payload)})
	}
	return s, nil
}

func containsAt(s string) bool {
	for i := range len(s) {
		if s[i] == '@' {
			return true
		}
	}
	return false
}

// Tick enqueues the task of the current period of every schedule whose
// period has no task yet, in one round trip (one script per schedule, in
// one pipeline), and returns the IDs it enqueued and how long until the
// next period of any schedule starts. A period in which no Scheduler
// ticked is skipped, not caught up. A key of the group holding another
// type gives a *ria.KeyError; a failed round trip an error wrapping
// ria.ErrOutcomeUnknown (ticking again is safe).
func (s *Scheduler) Tick(ctx context.Context) (enqueued []string, next time.Duration, err error) {
	k := s.g.keys
	calls := make([]*script.Call, len(s.entries))
	for i, e := range s.entries {
		calls[i] = periodicScript.Call([]string{k.tasks, k.ready + e.p.Queue, k.signal + e.p.Queue, k.periodic},
			e.p.Name, e.p.Every.Milliseconds(), e.p.Offset.Milliseconds(), e.packed)
	}
	script.Send(ctx, s.g.rdb, calls)
	next = MaxDelay
	var errs []error
	for i, c := range calls {
		if c.Err != nil {
			errs = append(errs, fmt.Errorf("schedule %q: %w", s.entries[i].p.Name, script.Unknown(c.Err)))
			continue
		}
		r, err := periodicScript.AsInt64s(c.Val)
		if err != nil || len(r) != 4 {
			errs = append(errs, fmt.Errorf("schedule %q: %w: reply %v", s.entries[i].p.Name, ria.ErrCorrupt, c.Val))
			continue
		}
		if r[0] == 1 {
			enqueued = append(enqueued, fmt.Sprintf("%s@%d", s.entries[i].p.Name, r[1]))
		}
		next = min(next, time.Duration(r[2]-r[3])*time.Millisecond)
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
