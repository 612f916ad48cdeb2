package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// summary is the medians over rounds of one library in one scenario.
type summary struct {
	rate, minRate, maxRate float64 // tasks per second
	rtPerTask, srvPerTask  float64
	left                   int64 // summed over rounds
	perCmd                 map[string]float64
}

func summarize(rs []result) summary {
	var rate, rt, srv []float64
	cmds := map[string][]float64{}
	var s summary
	for _, r := range rs {
		for name := range r.calls {
			cmds[name] = nil
		}
	}
	for _, r := range rs {
		n := float64(max(r.tasks, 1))
		rate = append(rate, float64(r.tasks)/r.elapsed.Seconds())
		rt = append(rt, float64(r.roundTrips)/n)
		srv = append(srv, float64(r.calls.Total())/n)
		s.left += r.left
		for name := range cmds {
			cmds[name] = append(cmds[name], float64(r.calls[name])/n)
		}
	}
	s.rate, s.minRate, s.maxRate = median(rate), slices.Min(rate), slices.Max(rate)
	s.rtPerTask, s.srvPerTask = median(rt), median(srv)
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

func medianDur(d []time.Duration) time.Duration {
	f := make([]float64, len(d))
	for i, v := range d {
		f[i] = float64(v)
	}
	return time.Duration(median(f))
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

// report prints one scenario's table and ratio line; libs[0] is ria.
func report(w io.Writer, name, title string, libs []library, res [][]result, verbose bool) {
	sums := make([]summary, len(res))
	for i, rs := range res {
		sums[i] = summarize(rs)
	}
	fmt.Fprintf(w, "\n== %s: %s ==\n\n", name, title)
	rows := [][]string{{"library", "tasks/s", "min..max", "ria/x", "rt/task", "srv cmds/task", "left"}}
	for i, s := range sums {
		rows = append(rows, []string{
			libs[i].name, fmt.Sprintf("%.0f", s.rate), fmt.Sprintf("%.0f..%.0f", s.minRate, s.maxRate),
			ratio(sums[0].rate, s.rate), fmt.Sprintf("%.3f", s.rtPerTask), fmt.Sprintf("%.2f", s.srvPerTask),
			fmt.Sprint(s.left),
		})
	}
	table(w, rows)
	fmt.Fprintln(w)
	for i, s := range sums[1:] {
		fmt.Fprintf(w, "%s: ria/%s = %s (tasks/s, medians: %.0f vs %.0f)\n", name, libs[i+1].name, ratio(sums[0].rate, s.rate), sums[0].rate, s.rate)
	}
	if verbose {
		fmt.Fprintln(w, "\n  server commands per task, by command (medians):")
		for i, s := range sums {
			names := slices.Collect(maps.Keys(s.perCmd))
			slices.SortFunc(names, func(a, b string) int {
				if s.perCmd[a] != s.perCmd[b] {
					if s.perCmd[a] > s.perCmd[b] {
						return -1
					}
					return 1
				}
				return strings.Compare(a, b)
			})
			var parts []string
			for _, n := range names {
				if s.perCmd[n] >= 0.005 {
					parts = append(parts, fmt.Sprintf("%s %.2f", n, s.perCmd[n]))
				}
			}
			fmt.Fprintf(w, "  %-6s %s\n", libs[i].name, strings.Join(parts, ", "))
		}
	}
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
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
			if i == 0 {
				b.WriteString(cell + pad)
			} else {
				b.WriteString("  " + pad + cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
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
	for _, l := range libs {
		fmt.Fprintf(w, "  %-6s %s\n", l.name, l.note)
	}
}
