package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ria-go/ria/bench/internal/report"
	"github.com/ria-go/ria/bench/internal/server"
)

// metrics are the numbers of one run that the table shows.
type metrics struct {
	ops, acq, rtPerAcq, srvPerAcq float64
}

func (r result) metrics(attempts bool) metrics {
	secs := r.Elapsed.Seconds()
	m := metrics{acq: float64(r.acquired) / secs}
	if attempts {
		m.ops = float64(r.acquired+r.failed) / secs
	} else {
		m.ops = m.acq
	}
	if r.acquired > 0 {
		m.rtPerAcq = float64(r.RoundTrips) / float64(r.acquired)
		m.srvPerAcq = float64(r.Calls.Total()) / float64(r.acquired)
	}
	return m
}

// summary is the medians over rounds of one contender.
type summary struct {
	metrics
	minAcq, maxAcq     float64
	minPer, maxPer     float64 // acquisitions of the least and most served goroutine
	errors, violations int64
	firstErr           error
	perCmd             map[string]float64 // server calls per acquisition by command
	hold, rtt          time.Duration      // medians, see result
}

func summarize(c contender, rs []result) summary {
	var s summary
	var ops, acq, rt, srv, minPer, maxPer, n, hold, rtt []float64
	var calls []server.Calls
	for _, r := range rs {
		m := r.metrics(c.attempts)
		ops, acq, rt, srv = append(ops, m.ops), append(acq, m.acq), append(rt, m.rtPerAcq), append(srv, m.srvPerAcq)
		minPer, maxPer = append(minPer, float64(r.minPer)), append(maxPer, float64(r.maxPer))
		calls, n = append(calls, r.Calls), append(n, float64(r.acquired))
		hold, rtt = append(hold, float64(r.hold)), append(rtt, float64(r.rtt))
		s.errors += r.errors
		s.violations += r.violations
		if s.firstErr == nil {
			s.firstErr = r.firstErr
		}
	}
	s.metrics = metrics{ops: report.Median(ops), acq: report.Median(acq), rtPerAcq: report.Median(rt), srvPerAcq: report.Median(srv)}
	s.minAcq, s.maxAcq = slices.Min(acq), slices.Max(acq)
	s.minPer, s.maxPer = report.Median(minPer), report.Median(maxPer)
	s.perCmd = report.PerCommand(calls, n)
	s.hold, s.rtt = time.Duration(report.Median(hold)), time.Duration(report.Median(rtt))
	return s
}

// fraction formats a/b as a fraction of the limit b (1.00: the limit).
func fraction(a, b float64) string {
	if b == 0 {
		return "inf"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// printReport prints one scenario's table, its ratio lines and the contenders'
// configurations. res[i] holds the rounds of sc.runs()[i]: ria first, then
// the other contenders, then the physical limit.
func printReport(w io.Writer, sc scenario, res [][]result, verbose bool) {
	runs := sc.runs()
	sums := make([]summary, len(res))
	names, about := make([]string, len(res)), make([]string, len(res))
	for i, rs := range res {
		sums[i] = summarize(runs[i], rs)
		names[i], about[i] = runs[i].name, runs[i].note
	}
	ria := sums[0]
	limit := sums[len(sums)-1]

	report.Heading(w, sc.name, sc.title)
	head := []string{"contender", "ops/s", "acq/s", "acq/s min..max", "ria/x", "of limit", "rt/acq", "srv cmds/acq", "errors"}
	if sc.wait {
		head = append(head, "violations", "acq/goroutine min..max")
	}
	rows := [][]string{head}
	for i, s := range sums {
		c := runs[i]
		ops := fmt.Sprintf("%.0f", s.ops)
		if !c.attempts && !c.limit {
			ops += "*"
		}
		ratio := report.Ratio(ria.acq, s.acq)
		if c.limit {
			ratio = "-"
		}
		row := []string{
			c.name, ops, fmt.Sprintf("%.0f", s.acq),
			fmt.Sprintf("%.0f..%.0f", s.minAcq, s.maxAcq),
			ratio, fraction(s.acq, limit.acq),
			fmt.Sprintf("%.2f", s.rtPerAcq), fmt.Sprintf("%.2f", s.srvPerAcq),
			fmt.Sprint(s.errors),
		}
		if sc.wait {
			if c.limit {
				row = append(row, "-", "-")
			} else {
				row = append(row, fmt.Sprint(s.violations), fmt.Sprintf("%.0f..%.0f", s.minPer, s.maxPer))
			}
		}
		rows = append(rows, row)
	}
	report.Table(w, rows)

	fmt.Fprintln(w)
	handoff := -1 // the hand-off limit's row, if the scenario has one
	for i, c := range runs {
		if c.handoff {
			handoff = i
		}
	}
	for i, s := range sums[1 : len(sums)-1] {
		if i+1 != handoff {
			report.RatioLine(w, sc.name, names[0], names[i+1], ria.acq, s.acq, "successful acquisitions/s")
		}
	}
	for i, s := range sums[:len(sums)-1] {
		fmt.Fprintf(w, "%s: %s reaches %s of the physical limit (acq/s vs PING/s at the same concurrency, medians: %.0f vs %.0f)\n",
			sc.name, names[i], fraction(s.acq, limit.acq), s.acq, limit.acq)
	}
	if handoff >= 0 {
		h := sums[handoff]
		for i, s := range sums[:handoff] {
			fmt.Fprintf(w, "%s: %s reaches %s of the hand-off limit (acq/s vs a token passed round the same goroutines through Redis lists, with the same work, medians: %.0f vs %.0f)\n",
				sc.name, names[i], fraction(s.acq, h.acq), s.acq, h.acq)
		}
	}
	if sc.wait && sc.hold > 0 && ria.hold > 0 && limit.rtt > 0 {
		// One holder at a time: each acquisition takes the work under the
		// lock plus, at best, one round trip to hand the lock on.
		lockLimit := float64(time.Second) / float64(ria.hold+limit.rtt)
		fmt.Fprintf(w, "%s: lock limit = 1 / (work under the lock %v (block.For(%v), measured) + one round trip %v (a PING alone, measured)) = %.0f acq/s\n",
			sc.name, ria.hold.Round(time.Microsecond), sc.hold, limit.rtt.Round(time.Microsecond), lockLimit)
		for i, s := range sums[:len(sums)-1] {
			fmt.Fprintf(w, "%s: %s reaches %s of the lock limit (%.0f vs %.0f acq/s)\n",
				sc.name, names[i], fraction(s.acq, lockLimit), s.acq, lockLimit)
		}
	}

	fmt.Fprintln(w)
	report.Notes(w, names, about)
	for i, s := range sums {
		report.Errors(w, names[i], s.errors, s.firstErr)
	}
	if verbose {
		report.Commands(w, "acquisition", names, func(i int) map[string]float64 { return sums[i].perCmd })
	}
}

// notes explains the columns and the libraries' settings.
func notes(w io.Writer) {
	fmt.Fprint(w, `
Columns
  ops/s          attempts per second, failed ones included, where they can be counted: ria
                 TryAcquire and redislock/redsync without retry report each failure; with
                 retries, redislock asks its RetryStrategy and redsync its retry-delay
                 function for a delay after each failed attempt, which the benchmark counts.
                 * ria's waiting Acquire does not expose its attempts: successful acquisitions/s.
  acq/s          successful acquisitions per second (min..max: over the rounds).
  ria/x          ria's acq/s divided by this contender's.
  of limit       this row's acq/s divided by the physical limit's: a plain go-redis PING
                 loop at the same concurrency (the "limit" row, no lock, no work), measured
                 in the same rounds. A fraction: 1.00 is one round trip per acquisition at
                 full concurrency. For one lock, serialising matters more: one holder at
                 a time, each holding for the work plus one round trip to hand on. The
                 contended scenarios measure that in the same rounds (the "limit-handoff"
                 row: a token passed round the goroutines through Redis lists, with the
                 same work), and contended-work also prints the lock limit computed from
                 the work's measured time and a PING alone.
  rt/acq         round trips the clients sent (go-redis hook: 1 per command or pipeline;
                 a BLPOP counts 1 however long it blocks; connection set-up commands not
                 counted) per successful acquisition, its release included.
  srv cmds/acq   INFO commandstats calls, summed over all commands but config, info, ping,
                 hello, client and select, per successful acquisition. Redis counts the
                 commands a Lua script runs (redis.call) as calls of their own, besides the
                 EVALSHA that ran the script: a script doing GET then DEL counts 3.
  errors         calls that returned an error (contended: also an acquisition whose 10s
                 wait ran out); summed over the rounds, not a median.
  violations     times a goroutine entered the critical section while another was in it
                 (an atomic counter); summed over the rounds; must be 0.
  acq/goroutine  successful acquisitions of the least and of the most served goroutine
  min..max       in a run (medians): how evenly the lock went round.

Library settings
  redsync defaults (not used here): expiry 8s, 32 tries, retry delay random in 50..250ms,
  drift factor 0.01, per-attempt timeout expiry*0.05. Each failed attempt also runs its
  delete script, so it costs 2 round trips. Used here: a single pool per mutex (the
  goroutine's go-redis client), WithExpiry(10s), WithTries(MaxInt32), a 1ms retry
  delay (WithRetryDelayFunc returning 1ms, as WithRetryDelay(1ms) does, to count
  retries).
  redislock defaults: no retry; an Obtain whose ctx has no deadline waits at most the TTL.
  Each acquisition here gets a ctx of 10s.
`)
}
