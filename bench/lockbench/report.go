package main

import (
	"fmt"
	"io"
	"slices"

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
}

func summarize(c contender, rs []result) summary {
	var s summary
	var ops, acq, rt, srv, minPer, maxPer, n []float64
	var calls []server.Calls
	for _, r := range rs {
		m := r.metrics(c.attempts)
		ops, acq, rt, srv = append(ops, m.ops), append(acq, m.acq), append(rt, m.rtPerAcq), append(srv, m.srvPerAcq)
		minPer, maxPer = append(minPer, float64(r.minPer)), append(maxPer, float64(r.maxPer))
		calls, n = append(calls, r.Calls), append(n, float64(r.acquired))
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
	return s
}

// printReport prints one scenario's table, its ratio lines and the contenders'
// configurations. res[i] holds the rounds of sc.contenders[i], the first of
// which is ria.
func printReport(w io.Writer, sc scenario, res [][]result, verbose bool) {
	sums := make([]summary, len(res))
	names, about := make([]string, len(res)), make([]string, len(res))
	for i, rs := range res {
		sums[i] = summarize(sc.contenders[i], rs)
		names[i], about[i] = sc.contenders[i].name, sc.contenders[i].note
	}
	ria := sums[0]

	report.Heading(w, sc.name, sc.title)
	head := []string{"contender", "ops/s", "acq/s", "acq/s min..max", "ria/x", "rt/acq", "srv cmds/acq", "errors"}
	if sc.wait {
		head = append(head, "violations", "acq/goroutine min..max")
	}
	rows := [][]string{head}
	for i, s := range sums {
		c := sc.contenders[i]
		ops := fmt.Sprintf("%.0f", s.ops)
		if !c.attempts {
			ops += "*"
		}
		row := []string{
			c.name, ops, fmt.Sprintf("%.0f", s.acq),
			fmt.Sprintf("%.0f..%.0f", s.minAcq, s.maxAcq),
			report.Ratio(ria.acq, s.acq),
			fmt.Sprintf("%.2f", s.rtPerAcq), fmt.Sprintf("%.2f", s.srvPerAcq),
			fmt.Sprint(s.errors),
		}
		if sc.wait {
			row = append(row, fmt.Sprint(s.violations), fmt.Sprintf("%.0f..%.0f", s.minPer, s.maxPer))
		}
		rows = append(rows, row)
	}
	report.Table(w, rows)

	fmt.Fprintln(w)
	for i, s := range sums[1:] {
		report.RatioLine(w, sc.name, "ria", names[i+1], ria.acq, s.acq, "successful acquisitions/s")
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
