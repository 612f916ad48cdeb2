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
	ops, rtPerOp, srvPerOp, loadsPerOp float64
}

func (r result) metrics() metrics {
	m := metrics{ops: float64(r.ops) / r.elapsed.Seconds()}
	if r.ops > 0 {
		m.rtPerOp = float64(r.roundTrips) / float64(r.ops)
		m.srvPerOp = float64(r.calls.Total()) / float64(r.ops)
		m.loadsPerOp = float64(r.loads) / float64(r.ops)
	}
	return m
}

// summary is the medians over rounds of one contender.
type summary struct {
	metrics
	minOps, maxOps float64
	allowed, keys  int64 // guard: summed over rounds
	errors         int64
	firstErr       error
	perCmd         map[string]float64 // server calls per op by command
}

func summarize(rs []result) summary {
	var s summary
	var ops, rt, srv, loads []float64
	cmds := map[string][]float64{}
	for _, r := range rs {
		m := r.metrics()
		ops, rt, srv, loads = append(ops, m.ops), append(rt, m.rtPerOp), append(srv, m.srvPerOp), append(loads, m.loadsPerOp)
		s.allowed += r.allowed
		s.keys += r.keys
		s.errors += r.errors
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
			if r.ops > 0 {
				v = float64(r.calls[name]) / float64(r.ops)
			}
			cmds[name] = append(cmds[name], v)
		}
	}
	s.metrics = metrics{ops: median(ops), rtPerOp: median(rt), srvPerOp: median(srv), loadsPerOp: median(loads)}
	s.minOps, s.maxOps = slices.Min(ops), slices.Max(ops)
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
// configurations. res[i] holds the rounds of sc.contenders[i]; the last
// contender is the other library, which every ria row is compared with.
func report(w io.Writer, sc scenario, res [][]result, verbose bool) {
	sums := make([]summary, len(res))
	for i, rs := range res {
		sums[i] = summarize(rs)
	}
	lib := len(sums) - 1
	other := sc.contenders[lib].name

	fmt.Fprintf(w, "\n== %s: %s ==\n\n", sc.name, sc.title)
	head := []string{"contender", "ops/s", "ops/s min..max", "x/" + other, "rt/op", "srv cmds/op"}
	if sc.kind == kindGuard {
		head = append(head, "allowed/keys")
	} else {
		head = append(head, "loads/op")
	}
	head = append(head, "errors")
	rows := [][]string{head}
	for i, s := range sums {
		row := []string{
			sc.contenders[i].name, fmt.Sprintf("%.0f", s.ops),
			fmt.Sprintf("%.0f..%.0f", s.minOps, s.maxOps),
			ratio(s.ops, sums[lib].ops),
			fmt.Sprintf("%.2f", s.rtPerOp), fmt.Sprintf("%.2f", s.srvPerOp),
		}
		if sc.kind == kindGuard {
			row = append(row, fmt.Sprintf("%d/%d", s.allowed, s.keys))
		} else {
			row = append(row, fmt.Sprintf("%.2f", s.loadsPerOp))
		}
		row = append(row, fmt.Sprint(s.errors))
		rows = append(rows, row)
	}
	table(w, rows)

	fmt.Fprintln(w)
	for i, s := range sums[:lib] {
		fmt.Fprintf(w, "%s: %s/%s = %s (ops/s, medians: %.0f vs %.0f)\n",
			sc.name, sc.contenders[i].name, other, ratio(s.ops, sums[lib].ops), s.ops, sums[lib].ops)
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
		fmt.Fprintln(w, "\n  server commands per operation, by command (medians):")
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
  ops/s          operations per second (stampede: keys per second, all 32 callers of a key
                 served); min..max over the rounds.
  x/<library>    this row's ops/s divided by the other library's.
  rt/op          round trips the clients sent (go-redis hook: 1 per command or pipeline;
                 a BLMOVE counts 1 however long it blocks; connection set-up not counted)
                 per operation.
  srv cmds/op    INFO commandstats calls, summed over all commands but config, info, ping,
                 hello, client and select, per operation. Redis counts the commands a Lua
                 script runs (redis.call) as calls of their own, besides the EVALSHA that
                 ran the script: ria's hit is a plain GET (1), its miss a GET and two
                 scripts (12 in all, see -v).
  loads/op       calls of the load function (the system of record) per operation; in the
                 stampede, per key: what a cold key costs the database.
  allowed/keys   guard: calls allowed, and distinct keys asked about (summed over rounds);
                 a once-per-window guard allows exactly one call per key.
  errors         calls that returned an error; summed over the rounds.

Codecs
  go-redis/cache encodes with msgpack and compresses values of 64 bytes or more with s2
  (the Job here: about 150 bytes of msgpack); ria encodes with encoding/json by default
  (about 250 bytes here, not compressed) and takes any Codec: ria-msgpack uses
  vmihailenco/msgpack/v5 as go-redis/cache does, without compression.

Library settings
  go-redis/cache: no local cache (Options.LocalCache nil), so every Get reaches Redis;
  Once coalesces concurrent calls for a key within one Cache (singleflight), not across
  processes. ria: Get coalesces within one Cache too, and across processes with its
  lease and wake list. redis_rate is a GCRA rate limiter; Rate 1, Burst 1, Period 1m
  makes it allow one call per key per minute, the guard's semantics.
`)
}
