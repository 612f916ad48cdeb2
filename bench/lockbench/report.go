package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// metrics are the numbers of one run that the table shows.
type metrics struct {
	ops, acq, rtPerAcq, srvPerAcq float64
}

func (r result) metrics(attempts bool) metrics {
	secs := r.elapsed.Seconds()
	m := metrics{acq: float64(r.acquired) / secs}
	if attempts {
		m.ops = float64(r.acquired+r.failed) / secs
	} else {
		m.ops = m.acq
	}
	if r.acquired > 0 {
		m.rtPerAcq = float64(r.roundTrips) / float64(r.acquired)
		m.srvPerAcq = float64(r.calls.Total()) / float64(r.acquired)
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
	var ops, acq, rt, srv, minPer, maxPer []float64
	cmds := map[string][]float64{}
	for _, r := range rs {
		m := r.metrics(c.attempts)
		ops, acq, rt, srv = append(ops, m.ops), append(acq, m.acq), append(rt, m.rtPerAcq), append(srv, m.srvPerAcq)
		minPer, maxPer = append(minPer, float64(r.minPer)), append(maxPer, float64(r.maxPer))
		s.errors += r.errors
		s.violations += r.violations
		if s.firstErr == nil {
			s.firstErr = r.firstErr
		}
		for name := range r.calls {
			cmds[name] = nil
		}
	}
	for name := range cmds {
		for _, r := range rs {
			v := 0.0
			if r.acquired > 0 {
				v = float64(r.calls[name]) / float64(r.acquired)
			}
			cmds[name] = append(cmds[name], v)
		}
	}
	s.metrics = metrics{ops: median(ops), acq: median(acq), rtPerAcq: median(rt), srvPerAcq: median(srv)}
	s.minAcq, s.maxAcq = slices.Min(acq), slices.Max(acq)
	s.minPer, s.maxPer = median(minPer), median(maxPer)
	s.perCmd = map[string]float64{}
	for name, v := range cmds {
		s.perCmd[name] = median(v)
	}
	return s
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// report prints one scenario's table, its ratio lines and the contenders'
// configurations. res[i] holds the rounds of sc.contenders[i], the first of
// which is ria.
func report(w io.Writer, sc scenario, res [][]result, verbose bool) {
	sums := make([]summary, len(res))
	for i, rs := range res {
		sums[i] = summarize(sc.contenders[i], rs)
	}
	ria := sums[0]

	fmt.Fprintf(w, "\n== %s: %s ==\n\n", sc.name, sc.title)
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
			ratio(ria.acq, s.acq),
			fmt.Sprintf("%.2f", s.rtPerAcq), fmt.Sprintf("%.2f", s.srvPerAcq),
			fmt.Sprint(s.errors),
		}
		if sc.wait {
			row = append(row, fmt.Sprint(s.violations), fmt.Sprintf("%.0f..%.0f", s.minPer, s.maxPer))
		}
		rows = append(rows, row)
	}
	table(w, rows)

	fmt.Fprintln(w)
	for i, s := range sums[1:] {
		c := sc.contenders[i+1]
		fmt.Fprintf(w, "%s: ria/%s = %s (successful acquisitions/s, medians: %.0f vs %.0f)\n",
			sc.name, c.name, ratio(ria.acq, s.acq), ria.acq, s.acq)
	}

	fmt.Fprintln(w)
	for _, c := range sc.contenders {
		fmt.Fprintf(w, "  %-*s %s\n", nameWidth(sc), c.name, c.note)
	}
	for i, s := range sums {
		if s.firstErr != nil {
			fmt.Fprintf(w, "  %s: %d errors, the first: %v\n", sc.contenders[i].name, s.errors, s.firstErr)
		}
	}
	if verbose {
		fmt.Fprintln(w, "\n  server commands per acquisition, by command (medians):")
		for i, s := range sums {
			names := slices.Collect(maps.Keys(s.perCmd))
			slices.SortFunc(names, func(a, b string) int {
				if d := s.perCmd[b] - s.perCmd[a]; d != 0 {
					if d > 0 {
						return 1
					}
					return -1
				}
				return strings.Compare(a, b)
			})
			parts := make([]string, 0, len(names))
			for _, n := range names {
				if s.perCmd[n] >= 0.005 {
					parts = append(parts, fmt.Sprintf("%s %.2f", n, s.perCmd[n]))
				}
			}
			fmt.Fprintf(w, "  %-*s %s\n", nameWidth(sc), sc.contenders[i].name, strings.Join(parts, ", "))
		}
	}
}

func nameWidth(sc scenario) int {
	n := 0
	for _, c := range sc.contenders {
		n = max(n, len(c.name))
	}
	return n + 1
}

func ratio(a, b float64) string {
	if b == 0 {
		return "inf"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// table prints rows with aligned columns: the first left-aligned, the others
// right-aligned.
func table(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], len(cell))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			if i == 0 {
				fmt.Fprintf(&b, "%-*s", widths[i], cell)
			} else {
				fmt.Fprintf(&b, "  %*s", widths[i], cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
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
