package autocomplete_test

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/autocomplete"
	"github.com/ria-go/ria/internal/redistest"
)

// alphabet is what generated names are made of: ASCII letters of both
// cases, digits, accented Latin letters of both cases, Greek (with both
// small sigmas), Cyrillic, letters whose case folding leaves their
// block (the Kelvin sign, long s, sharp s), CJK, an emoji, space and
// punctuation.
var alphabet = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" +
	"éÉèÈêÊëËàÀâÂäÄçÇñÑöÖüÜøØåÅæÆœŒłŁżŻźŹśŚąĄęĘ" +
	"αΑβΒσΣςωΩδΔжЖдДяЯ" + "\u212aſßẞ" + "日本語中文" + "😀 -_.'")

// names returns n distinct names of 1 to 12 runes drawn from alphabet,
// biased to a few leading runes so that prefixes match many names.
func genNames(rng *rand.Rand, n int) []string {
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		l := 1 + rng.IntN(12)
		for i := range l {
			if i < 2 && rng.IntN(2) == 0 {
				b.WriteRune(alphabet[rng.IntN(12)]) // a-l
				continue
			}
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// prefixOf returns a prefix to look up: the first 1 to 4 runes of a name,
// each possibly swapped for another rune of its case-folding orbit, or
// now and then a random string.
func prefixOf(rng *rand.Rand, names []string) string {
	if rng.IntN(10) == 0 {
		return genNames(rng, 1)[0]
	}
	name := []rune(names[rng.IntN(len(names))])
	k := 1 + rng.IntN(min(4, len(name)))
	p := name[:k]
	for i, r := range p {
		for range rng.IntN(3) {
			r = unicode.SimpleFold(r)
		}
		p[i] = r
	}
	return string(p)
}

// hasFoldPrefix is the linear filter the search must agree with: name's
// leading runes equal prefix's runes under strings.EqualFold, one by one.
func hasFoldPrefix(name, prefix string) bool {
	for _, pr := range prefix {
		r, size := utf8.DecodeRuneInString(name)
		if size == 0 || !strings.EqualFold(string(r), string(pr)) {
			return false
		}
		name = name[size:]
	}
	return true
}

// foldKey returns the least rune of r's case-folding orbit: two runes are
// equal under strings.EqualFold when their keys are equal.
func foldKey(r rune) rune {
	k := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		k = min(k, f)
	}
	return k
}

// byFirstRune indexes names by the fold key of their first rune, so that
// the linear filter of a prefix reads only the names that can match it.
func byFirstRune(names []string) map[rune][]string {
	out := make(map[rune][]string)
	for _, n := range names {
		r, _ := utf8.DecodeRuneInString(n)
		out[foldKey(r)] = append(out[foldKey(r)], n)
	}
	return out
}

// candidates returns the names of index that may have prefix.
func candidates(index map[rune][]string, prefix string) []string {
	r, _ := utf8.DecodeRuneInString(prefix)
	return index[foldKey(r)]
}

// foldOrder orders names as Complete returns them, by their folded form
// then their spelling. It folds each name once (sorts compare often).
type foldOrder map[string]string

func (o foldOrder) fold(s string) string {
	f, ok := o[s]
	if !ok {
		f = autocomplete.Fold(s)
		o[s] = f
	}
	return f
}

func (o foldOrder) cmp(a, b string) int {
	return cmp.Or(strings.Compare(o.fold(a), o.fold(b)), strings.Compare(a, b))
}

// Prefix search agrees with a linear filter of the same names for 1,000
// random prefixes over 100,000 generated UTF-8 names, while other
// goroutines join and leave names that the prefixes match too.
func TestComplete_agreesWithLinearFilter(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const (
			nChurn   = 2000
			nQueries = 1000
		)
		// 100,000 names on the real servers. miniredis sorts a whole
		// ZSET on every ZRANGEBYLEX (O(N log N) a query, where Redis
		// is O(log N + k)): it gets 5,000, or the test takes
		// minutes under -race; the search logic is the same.
		nStatic := 100000
		if !b.Real() {
			nStatic = 5000
		}
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		rng := rand.New(rand.NewPCG(7, 11))
		all := genNames(rng, nStatic+nChurn)
		static, churn := all[:nStatic], all[nStatic:]
		for i := 0; i < len(static); i += autocomplete.MaxBatch {
			require.NoError(t, ac.Join(ctx, "names", static[i:min(i+autocomplete.MaxBatch, len(static))]...))
		}
		staticIndex := byFirstRune(static)
		folded := make(foldOrder, len(all)).cmp
		isChurn := make(map[string]bool, nChurn)
		for _, n := range churn {
			isChurn[n] = true
		}

		// Churn: two goroutines join and leave the churn names until the
		// queries are done.
		churnCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for g := range 2 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 3))
				for churnCtx.Err() == nil {
					batch := make([]string, 1+r.IntN(20))
					for i := range batch {
						batch[i] = churn[r.IntN(nChurn)]
					}
					var err error
					if r.IntN(2) == 0 {
						err = ac.Join(churnCtx, "names", batch...)
					} else {
						err = ac.Leave(churnCtx, "names", batch...)
					}
					if err != nil && churnCtx.Err() == nil {
						errs <- err
						return
					}
				}
			})
		}

		bad := 0
		for q := range nQueries {
			prefix := prefixOf(rng, static)
			got, err := ac.Complete(ctx, "names", prefix, autocomplete.MaxCompletions)
			require.NoError(t, err)
			var want []string
			for _, n := range candidates(staticIndex, prefix) {
				if hasFoldPrefix(n, prefix) {
					want = append(want, n)
				}
			}
			// Every static match and some churn matches, in folded order;
			// a full page may end before the last static match.
			var gotStatic []string
			for _, n := range got {
				switch {
				case isChurn[n]:
					if !hasFoldPrefix(n, prefix) {
						bad++
						t.Errorf("query %d %q: %q does not match", q, prefix, n)
					}
				default:
					gotStatic = append(gotStatic, n)
				}
			}
			slices.SortFunc(want, folded)
			if len(got) == autocomplete.MaxCompletions && len(gotStatic) < len(want) {
				want = want[:len(gotStatic)]
			}
			if !slices.Equal(want, gotStatic) {
				bad++
				t.Errorf("query %d %q: %d static names, want %d", q, prefix, len(gotStatic), len(want))
			}
			if !slices.IsSortedFunc(got, folded) {
				bad++
				t.Errorf("query %d %q: not in folded order", q, prefix)
			}
		}
		stop()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("churn: %v", err)
		}

		// At rest, the whole set (static and churn names present) agrees
		// with the filter exactly.
		present := append([]string(nil), static...)
		for _, n := range churn {
			got, err := ac.Complete(ctx, "names", n, autocomplete.MaxCompletions)
			require.NoError(t, err)
			if slices.Contains(got, n) {
				present = append(present, n)
			}
		}
		presentIndex := byFirstRune(present)
		for range 100 {
			prefix := prefixOf(rng, all)
			got, err := ac.Complete(ctx, "names", prefix, autocomplete.MaxCompletions)
			require.NoError(t, err)
			var want []string
			for _, n := range candidates(presentIndex, prefix) {
				if hasFoldPrefix(n, prefix) {
					want = append(want, n)
				}
			}
			slices.SortFunc(want, folded)
			want = append([]string{}, want[:min(len(want), autocomplete.MaxCompletions)]...)
			if !assert.Equal(t, want, got, "at rest: %q", prefix) {
				bad++
			}
		}
		t.Logf("%d names, %d queries under churn, 100 at rest: %d disagreements", nStatic, nQueries, bad)
	})
}
