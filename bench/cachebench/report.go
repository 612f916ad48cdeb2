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
	ops, rtPerOp, srvPerOp, loadsPerOp float64
}

func (r result) metrics() metrics {
	m := metrics{ops: float64(r.ops) / r.Elapsed.Seconds()}
	if r.ops > 0 {
		m.rtPerOp = float64(r.RoundTrips) / float64(r.ops)
		m.srvPerOp = float64(r.Calls.Total()) / float64(r.ops)
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
	var ops, rt, srv, loads, n []float64
	var calls []server.Calls
	for _, r := range rs {
		m := r.metrics()
		ops, rt, srv, loads = append(ops, m.ops), append(rt, m.rtPerOp), append(srv, m.srvPerOp), append(loads, m.loadsPerOp)
		calls, n = append(calls, r.Calls), append(n, float64(r.ops))
		s.allowed += r.allowed
		s.keys += r.keys
		s.errors += r.errors
		if s.firstErr == nil {
			s.firstErr = r.firstErr
		}
	}
	s.metrics = metrics{ops: report.Median(ops), rtPerOp: report.Median(rt), srvPerOp: report.Median(srv), loadsPerOp: report.Median(loads)}
	s.minOps, s.maxOps = slices.Min(ops), slices.Max(ops)
	s.perCmd = report.PerCommand(calls, n)
	return s
}

// printReport prints one scenario's table, its ratio lines and the contenders'
// configurations. runs are sc's contenders and then the physical limit, and
// res[i] holds the rounds of runs[i]; the last contender before the limit
// (and before limit-batched, a second limit, if the scenario has it) is the
// other library, which every ria row is compared with.
func printReport(w io.Writer, sc scenario, runs []contender, res [][]result, verbose bool) {
	sums := make([]summary, len(res))
	names, about := make([]string, len(res)), make([]string, len(res))
	for i, rs := range res {
		sums[i] = summarize(rs)
		names[i], about[i] = runs[i].name, runs[i].note
	}
	limit := len(sums) - 1
	lib := limit - 1
	batched := slices.Index(names, "limit-batched") // a second limit, after the libraries
	if batched == lib {
		lib--
	}
	other := names[lib]

	report.Heading(w, sc.name, sc.title)
	head := []string{"contender", "ops/s", "ops/s min..max", "x/" + other, "of limit", "rt/op", "srv cmds/op"}
	if sc.kind == kindGuard {
		head = append(head, "allowed/keys")
	} else {
		head = append(head, "loads/op")
	}
	head = append(head, "errors")
	rows := [][]string{head}
	for i, s := range sums {
		row := []string{
			runs[i].name, fmt.Sprintf("%.0f", s.ops),
			fmt.Sprintf("%.0f..%.0f", s.minOps, s.maxOps),
			report.Ratio(s.ops, sums[lib].ops), fraction(s.ops, sums[limit].ops),
			fmt.Sprintf("%.2f", s.rtPerOp), fmt.Sprintf("%.2f", s.srvPerOp),
		}
		if i == limit {
			row[3] = "-"
		}
		if sc.kind == kindGuard {
			row = append(row, fmt.Sprintf("%d/%d", s.allowed, s.keys))
		} else {
			row = append(row, fmt.Sprintf("%.2f", s.loadsPerOp))
		}
		row = append(row, fmt.Sprint(s.errors))
		rows = append(rows, row)
	}
	report.Table(w, rows)

	fmt.Fprintln(w)
	for i, s := range sums[:lib] {
		report.RatioLine(w, sc.name, names[i], other, s.ops, sums[lib].ops, "ops/s")
	}
	// Like for like: each ria codec against go-redis/cache with the same one
	// (the lines above compare each with go-redis/cache's default, msgpack
	// plus s2 compression).
	if r, j := slices.Index(names, "ria"), slices.Index(names, "go-redis/cache-json"); r >= 0 && j >= 0 {
		report.RatioLine(w, sc.name+" (both encoding/json)", names[r], names[j], sums[r].ops, sums[j].ops, "ops/s")
	}
	if r, j := slices.Index(names, "ria-msgpack"), slices.Index(names, "go-redis/cache-msgpack"); r >= 0 && j >= 0 {
		report.RatioLine(w, sc.name+" (both msgpack, no compression)", names[r], names[j], sums[r].ops, sums[j].ops, "ops/s")
	}
	for i, s := range sums[:limit] {
		fmt.Fprintf(w, "%s: %s reaches %s of the physical limit (ops/s, medians: %.0f vs %.0f)\n",
			sc.name, names[i], fraction(s.ops, sums[limit].ops), s.ops, sums[limit].ops)
	}
	if batched >= 0 {
		for i, s := range sums[:lib+1] {
			fmt.Fprintf(w, "%s: %s reaches %s of the batched limit (ops/s, medians: %.0f vs %.0f)\n",
				sc.name, names[i], fraction(s.ops, sums[batched].ops), s.ops, sums[batched].ops)
		}
	}
	fmt.Fprintln(w)
	report.Notes(w, names, about)
	for i, s := range sums {
		report.Errors(w, names[i], s.errors, s.firstErr)
	}
	if verbose {
		report.Commands(w, "operation", names, func(i int) map[string]float64 { return sums[i].perCmd })
	}
}

// fraction formats a/b as "0.87", or "inf" when b is 0.
func fraction(a, b float64) string {
	if b == 0 {
		return "inf"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// notes explains the columns and the libraries' settings.
func notes(w io.Writer) {
	fmt.Fprint(w, `
Columns
  ops/s          operations per second (stampede: keys per second, all 32 callers of a key
                 served); min..max over the rounds.
  x/<library>    this row's ops/s divided by the other library's.
  of limit       this row's ops/s divided by the physical limit's: plain go-redis commands
                 at the same concurrency, measured in the same rounds (the "limit" row): a
                 GET for a hit, a GET and a SET for a miss, per stampede key 32 GETs then
                 one load and SET, SET NX PX for the guard. A fraction: 1.00 is the limit.
  rt/op          round trips the clients sent (go-redis hook: 1 per command or pipeline;
                 a BLMOVE counts 1 however long it blocks; connection set-up not counted)
                 per operation.
  srv cmds/op    INFO commandstats calls, summed over all commands but config, info, ping,
                 hello, client and select, per operation. Redis counts the commands a Lua
                 script runs (redis.call) as calls of their own, besides the EVALSHA that
                 ran the script: ria's hit is one SET NX GET (1), its miss that and the
                 store script (4 in all, see -v).
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
  near-hit scenarios: ria-near is cache.WithNear(2000, 1m): hits served from memory
  until invalidated (every write through ria publishes the key; Pub/Sub) or 1m after
  their read; go-redis/cache+local is its TinyLFU local cache (2000, 1m): hits served
  from memory for 1m, with no invalidation across processes. Both keep values encoded
  and decode each hit. The limit row is still a Redis GET: local hits exceed it.
`)
}
