package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ria-go/ria/bench/internal/report"
	"github.com/ria-go/ria/bench/internal/server"
)

// summary is the medians over rounds of one contender in one scenario.
type summary struct {
	rate, minRate, maxRate float64 // tasks per second
	rtPerTask, srvPerTask  float64
	cpuClient, cpuServer   float64 // µs per task
	left                   int64   // summed over rounds
	perCmd                 map[string]float64
}

func summarize(rs []result) summary {
	var rate, rt, srv, tasks, cc, cs []float64
	var calls []server.Calls
	var s summary
	for _, r := range rs {
		n := float64(max(r.tasks, 1))
		rate = append(rate, float64(r.tasks)/r.Elapsed.Seconds())
		rt = append(rt, float64(r.RoundTrips)/n)
		srv = append(srv, float64(r.Calls.Total())/n)
		calls, tasks = append(calls, r.Calls), append(tasks, n)
		cc = append(cc, float64(r.cpu.client.Microseconds())/n)
		cs = append(cs, float64(r.cpu.server.Microseconds())/n)
		s.left += r.left
	}
	s.rate, s.minRate, s.maxRate = report.Median(rate), slices.Min(rate), slices.Max(rate)
	s.rtPerTask, s.srvPerTask = report.Median(rt), report.Median(srv)
	s.cpuClient, s.cpuServer = report.Median(cc), report.Median(cs)
	s.perCmd = report.PerCommand(calls, tasks)
	return s
}

func medianDur(d []time.Duration) time.Duration {
	f := make([]float64, len(d))
	for i, v := range d {
		f[i] = float64(v)
	}
	return time.Duration(report.Median(f))
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	}
}

// printReport prints one scenario's table, ratio and limit lines; cs[0] is
// ria, the limits come last: the first one a PING loop, the second (if
// any) the same loop sending pipelines.
func printReport(w io.Writer, name, title string, cs []contender, res [][]result, verbose bool) {
	sums := make([]summary, len(res))
	var libs, limits []int
	for i, rs := range res {
		sums[i] = summarize(rs)
		if cs[i].limit {
			limits = append(limits, i)
		} else {
			libs = append(libs, i)
		}
	}
	report.Heading(w, name, title)
	head := []string{"contender", "tasks/s", "min..max", "ria/x"}
	for n := range limits {
		head = append(head, fmt.Sprintf("of limit %d", n+1))
	}
	rows := [][]string{append(head, "rt/task", "srv cmds/task", "cpu µs/task", "left")}
	for _, i := range libs {
		s := sums[i]
		row := []string{cs[i].name, fmt.Sprintf("%.0f", s.rate), fmt.Sprintf("%.0f..%.0f", s.minRate, s.maxRate),
			report.Ratio(sums[0].rate, s.rate)}
		for _, l := range limits {
			row = append(row, fmt.Sprintf("%.2f", s.rate/sums[l].rate))
		}
		rows = append(rows, append(row, fmt.Sprintf("%.3f", s.rtPerTask), fmt.Sprintf("%.2f", s.srvPerTask), fmtCPU(s), fmt.Sprint(s.left)))
	}
	for n, i := range limits {
		s := sums[i]
		row := []string{fmt.Sprintf("(limit %d) %s", n+1, cs[i].name[len("limit: "):]), fmt.Sprintf("%.0f", s.rate),
			fmt.Sprintf("%.0f..%.0f", s.minRate, s.maxRate), ""}
		for _, l := range limits {
			row = append(row, fmt.Sprintf("%.2f", s.rate/sums[l].rate))
		}
		rows = append(rows, append(row, fmt.Sprintf("%.3f", s.rtPerTask), "", fmtCPU(s), ""))
	}
	report.Table(w, rows)
	fmt.Fprintln(w)
	for _, i := range libs[1:] {
		report.RatioLine(w, name, cs[0].name, cs[i].name, sums[0].rate, sums[i].rate, "tasks/s")
		fmt.Fprintf(w, "%s: CPU per task, %s/%s = %s (client+server µs, medians: %.1f vs %.1f)\n", name, cs[i].name, cs[0].name,
			report.Ratio(sums[i].cpuClient+sums[i].cpuServer, sums[0].cpuClient+sums[0].cpuServer),
			sums[i].cpuClient+sums[i].cpuServer, sums[0].cpuClient+sums[0].cpuServer)
	}
	// ria's other variants (prefetch) against each peer library too.
	for _, i := range libs[1:] {
		if !strings.HasPrefix(cs[i].name, "ria ") {
			continue
		}
		for _, j := range libs[1:] {
			if !strings.HasPrefix(cs[j].name, "ria") {
				report.RatioLine(w, name, cs[i].name, cs[j].name, sums[i].rate, sums[j].rate, "tasks/s")
			}
		}
	}
	for _, i := range libs {
		for n, l := range limits {
			fmt.Fprintf(w, "%s: %s/limit %d = %.2f (limit %d: %s, %.0f PINGs/s)\n", name, cs[i].name, n+1,
				sums[i].rate/sums[l].rate, n+1, cs[l].name[len("limit: "):], sums[l].rate)
		}
	}
	if verbose {
		names := make([]string, len(libs))
		for n, i := range libs {
			names[n] = cs[i].name
		}
		report.Commands(w, "task", names, func(n int) map[string]float64 { return sums[libs[n]].perCmd })
	}
}

// fmtCPU formats the CPU µs per task of the client process and the server.
func fmtCPU(s summary) string { return fmt.Sprintf("%.1f+%.1f", s.cpuClient, s.cpuServer) }

func notes(w io.Writer, libs []library, c config) {
	fmt.Fprintf(w, `
Columns
  tasks/s        enqueue: tasks enqueued per second; process: tasks whose handler ran per
                 second, from the worker's start until the last handler returned (the
                 queue was filled beforehand, outside the measurement); a limit: PINGs
                 answered per second.
  ria/x          ria's tasks/s divided by this contender's.
  of limit N     this contender's tasks/s divided by limit N's PINGs/s, measured in the
                 same rounds: limit 1 is a go-redis PING loop at the scenario's
                 concurrency (one round trip per operation); limit 2, in the processing
                 scenarios, the same goroutines sending pipelines of %d PINGs (a take
                 brings several tasks per round trip, so a worker can pass limit 1).
  rt/task        round trips the client sent (go-redis hook: 1 per command or
                 pipeline; a BLPOP counts 1 however long it blocks; connection set-up
                 commands not counted) per task, background loops included.
  srv cmds/task  INFO commandstats calls, summed over all commands but config, info, ping,
                 hello, client and select, per task. Redis counts the commands a Lua script
                 runs (redis.call) as calls of their own, besides the EVALSHA that ran it.
  cpu µs/task    CPU time per task (per PING for a limit) of this process (the client,
                 and the worker's goroutines) + of redis-server, from getrusage and INFO
                 cpu: what a task costs. Other loads on a shared machine slow a run down
                 much more than they change this; a ratio above 1 means ria costs less.
  left           tasks not acknowledged after the worker's graceful stop, summed over the
                 rounds; must be 0.
  pickup         time from the Enqueue call to the handler's start, for a worker that had
                 nothing to do.

Contenders
`, c.depth)
	names := make([]string, len(libs))
	about := make([]string, len(libs))
	for i, l := range libs {
		names[i], about[i] = l.name, l.note
	}
	report.Notes(w, names, about)
}
