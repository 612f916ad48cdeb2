// Package report prints what the side-by-side benchmarks measured, in the
// form they share: a header that says what ran where, per scenario a
// heading, a table of medians over interleaved rounds with aligned columns,
// ratio lines and notes, and with -v the server commands by command.
package report

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ria-go/ria/bench/internal/server"
)

// Header prints the first two lines of a program's output: ria's package
// pkg against the modules against, and then the server e runs on, the
// versions of the modules uses, Go, and the CPUs.
func Header(w io.Writer, e *server.Env, pkg string, against, uses []string) {
	vs := func(paths []string) []string {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = ModVersion(p)
		}
		return out
	}
	fmt.Fprintf(w, "%s: ria %s (this repository) vs %s\n", e.Name, pkg, strings.Join(vs(against), " vs "))
	fmt.Fprintf(w, "Redis %s at %s (%s); %s; %s %s/%s, GOMAXPROCS=%d, %d CPUs shared by clients and server\n",
		e.Version, e.Server.Addr(), e.Origin(), strings.Join(vs(uses), "; "),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
}

// ModVersion returns "path version" of a module this binary was built with.
func ModVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				return m.Path + " " + m.Version
			}
		}
	}
	return path + " (version unknown)"
}

// Heading prints a scenario's heading.
func Heading(w io.Writer, name, title string) {
	fmt.Fprintf(w, "\n== %s: %s ==\n\n", name, title)
}

// Median returns the median of v (the mean of the middle two for an even
// count), 0 for none.
func Median(v []float64) float64 {
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

// Ratio formats a/b as "1.23x", or "inf" when b is 0.
func Ratio(a, b float64) string {
	if b == 0 {
		return "inf"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// RatioLine prints the ratio of medians x/y of scenario sc, rows a and b,
// measured in unit.
func RatioLine(w io.Writer, sc, a, b string, x, y float64, unit string) {
	fmt.Fprintf(w, "%s: %s/%s = %s (%s, medians: %.0f vs %.0f)\n", sc, a, b, Ratio(x, y), unit, x, y)
}

// Table prints rows with aligned columns: the first left-aligned, the others
// right-aligned. Widths count characters, not bytes.
func Table(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			if i == 0 {
				fmt.Fprintf(&b, "%-*s", widths[i], cell) // fmt pads to a width in characters
			} else {
				fmt.Fprintf(&b, "  %*s", widths[i], cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// NameWidth is the width of the name column of the lines under a table:
// the longest name plus one.
func NameWidth(names []string) int {
	n := 0
	for _, s := range names {
		n = max(n, len(s))
	}
	return n + 1
}

// Notes prints one line per name: the name, padded, and its note.
func Notes(w io.Writer, names, notes []string) {
	for i, name := range names {
		fmt.Fprintf(w, "  %-*s %s\n", NameWidth(names), name, notes[i])
	}
}

// Errors prints a line for a contender whose calls failed: how many, and the
// first error. It prints nothing when first is nil.
func Errors(w io.Writer, name string, n int64, first error) {
	if first != nil {
		fmt.Fprintf(w, "  %s: %d errors, the first: %v\n", name, n, first)
	}
}

// PerCommand returns, for every command that any round called, the median
// over the rounds of the round's calls of it divided by n[i], the round's
// operations (0 for a round of none).
func PerCommand(calls []server.Calls, n []float64) map[string]float64 {
	names := map[string]bool{}
	for _, c := range calls {
		for name := range c {
			names[name] = true
		}
	}
	out := map[string]float64{}
	for name := range names {
		v := make([]float64, len(calls))
		for i, c := range calls {
			if n[i] != 0 {
				v[i] = float64(c[name]) / n[i]
			}
		}
		out[name] = Median(v)
	}
	return out
}

// Commands prints the breakdown of -v: for each name, its server commands
// per unit by command (perCmd(i), from [PerCommand]), most first, leaving
// out those under 0.005.
func Commands(w io.Writer, unit string, names []string, perCmd func(i int) map[string]float64) {
	fmt.Fprintf(w, "\n  server commands per %s, by command (medians):\n", unit)
	for i, name := range names {
		m := perCmd(i)
		cmds := slices.Collect(maps.Keys(m))
		slices.SortFunc(cmds, func(a, b string) int {
			if m[a] != m[b] {
				if m[a] > m[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		parts := make([]string, 0, len(cmds))
		for _, c := range cmds {
			if m[c] >= 0.005 {
				parts = append(parts, fmt.Sprintf("%s %.2f", c, m[c]))
			}
		}
		fmt.Fprintf(w, "  %-*s %s\n", NameWidth(names), name, strings.Join(parts, ", "))
	}
}

// Interleave runs n contenders in rounds and returns res, res[i] holding
// contender i's results in round order. With warm, it first runs each
// contender once with round 0, a warm-up whose result it drops; then, for
// round 1 to rounds, each contender in turn (0, 1, ..., n-1, 0, 1, ...), so
// that a drift of the machine's load spreads over all of them. It stops at
// the first error.
func Interleave[R any](n, rounds int, warm bool, run func(i, round int) (R, error)) ([][]R, error) {
	if warm {
		for i := range n {
			if _, err := run(i, 0); err != nil {
				return nil, err
			}
		}
	}
	res := make([][]R, n)
	for r := 1; r <= rounds; r++ {
		for i := range n {
			got, err := run(i, r)
			if err != nil {
				return nil, err
			}
			res[i] = append(res[i], got)
		}
	}
	return res, nil
}
