package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ria-go/ria/bench/internal/report"
	"github.com/ria-go/ria/bench/internal/server"
)

// summary is the medians over rounds of one library in one scenario.
type summary struct {
	rate, minRate, maxRate float64 // tasks per second
	rtPerTask, srvPerTask  float64
	left                   int64 // summed over rounds
	perCmd                 map[string]float64
}

func summarize(rs []result) summary {
	var rate, rt, srv, tasks []float64
	var calls []server.Calls
	var s summary
	for _, r := range rs {
		n := float64(max(r.tasks, 1))
		rate = append(rate, float64(r.tasks)/r.Elapsed.Seconds())
		rt = append(rt, float64(r.RoundTrips)/n)
		srv = append(srv, float64(r.Calls.Total())/n)
		calls, tasks = append(calls, r.Calls), append(tasks, n)
		s.left += r.left
	}
	s.rate, s.minRate, s.maxRate = report.Median(rate), slices.Min(rate), slices.Max(rate)
	s.rtPerTask, s.srvPerTask = report.Median(rt), report.Median(srv)
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

// printReport prints one scenario's table and ratio line; libs[0] is ria.
func printReport(w io.Writer, name, title string, libs []library, res [][]result, verbose bool) {
	sums := make([]summary, len(res))
	for i, rs := range res {
		sums[i] = summarize(rs)
	}
	report.Heading(w, name, title)
	rows := [][]string{{"library", "tasks/s", "min..max", "ria/x", "rt/task", "srv cmds/task", "left"}}
	for i, s := range sums {
		rows = append(rows, []string{
			libs[i].name, fmt.Sprintf("%.0f", s.rate), fmt.Sprintf("%.0f..%.0f", s.minRate, s.maxRate),
			report.Ratio(sums[0].rate, s.rate), fmt.Sprintf("%.3f", s.rtPerTask), fmt.Sprintf("%.2f", s.srvPerTask),
			fmt.Sprint(s.left),
		})
	}
	report.Table(w, rows)
	fmt.Fprintln(w)
	for i, s := range sums[1:] {
		report.RatioLine(w, name, "ria", libs[i+1].name, sums[0].rate, s.rate, "tasks/s")
	}
	if verbose {
		report.Commands(w, "task", names(libs), func(i int) map[string]float64 { return sums[i].perCmd })
	}
}

func names(libs []library) []string {
	out := make([]string, len(libs))
	for i, l := range libs {
		out[i] = l.name
	}
	return out
}

func notes(w io.Writer, libs []library) {
	fmt.Fprint(w, `
Columns
  tasks/s        enqueue: tasks enqueued per second; process: tasks whose handler ran per
                 second, from the worker's start until the last handler returned (the
                 queue was filled beforehand, outside the measurement).
  ria/x          ria's tasks/s divided by this library's.
  rt/task        round trips the library's client sent (go-redis hook: 1 per command or
                 pipeline; a BLPOP counts 1 however long it blocks; connection set-up
                 commands not counted) per task, background loops included.
  srv cmds/task  INFO commandstats calls, summed over all commands but config, info, ping,
                 hello, client and select, per task. Redis counts the commands a Lua script
                 runs (redis.call) as calls of their own, besides the EVALSHA that ran it.
  left           tasks not acknowledged after the worker's graceful stop, summed over the
                 rounds; must be 0.
  pickup         time from the Enqueue call to the handler's start, for a worker that had
                 nothing to do.

Libraries
`)
	about := make([]string, len(libs))
	for i, l := range libs {
		about[i] = l.note
	}
	report.Notes(w, names(libs), about)
}
