package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Analyzer turns text into the terms an index stores and a query looks
// up. The same Analyzer must serve an index's documents and its queries:
// [Index] uses the one given with [WithAnalyzer] for both.
//
// A custom Analyzer (a stemmer, n-grams, another language's rules) is
// any type with this method; terms must be valid UTF-8 without control
// characters, at most [MaxTermBytes] bytes, or [Index.Add] refuses the
// document (see [CheckTerm]). An Analyzer must be safe for concurrent use.
type Analyzer interface {
	// Terms returns the terms of text in the order they occur, repeats
	// included: the index counts them for relevance ranking.
	Terms(text string) []string
}

// AnalyzerFunc adapts a function to an [Analyzer].
type AnalyzerFunc func(text string) []string

// Terms returns f(text).
func (f AnalyzerFunc) Terms(text string) []string { return f(text) }

// BookStopWords are the stop words of Redis in Action (listing 7.1), the
// default of [NewStandard].
var BookStopWords = strings.Fields(`able about across after all almost also am among
an and any are as at be because been but by can cannot could dear did
do does either else ever every for from get got had has have he her
hers him his how however if in into is it its just least let like
likely may me might most must my neither no nor not of off often on
only or other our own rather said say says she should since so some
than that the their them then there these they this tis to too twas us
wants was we were what when where which while who whom why will with
would yet you your`)

// Standard is the default [Analyzer]: the book's tokenizer made
// Unicode-aware. A word is a run of letters, digits and combining marks
// of any script and apostrophes (the ASCII ' and the typographic ’,
// which counts as '); it is lower-cased, apostrophes at its ends are
// stripped ("'quoted'" → "quoted", "don't" stays), and it is dropped if
// it is shorter than the minimum length (2 characters by default), longer
// than the maximum (100 characters), or a stop word. Every other
// character separates words: "e-mail" is "e" (dropped) and "mail". Then
// each filter (see [Filter]) runs on each word. The book kept a-z and '
// only; here "café", "naïve" and "2024" are words too.
//
// A Standard is immutable and safe for concurrent use.
type Standard struct {
	stop    map[string]struct{}
	min     int
	max     int
	filters []func(string) string
}

// StandardOption configures a [Standard].
type StandardOption func(*Standard)

// StopWords replaces the stop words (default [BookStopWords]). They are
// matched before the filters run, and read as words are: lower-cased,
// the typographic apostrophe ’ as ', apostrophes at their ends stripped
// (so "It’s" and "it's" are the same stop word). No words: no stop words.
func StopWords(words ...string) StandardOption {
	return func(s *Standard) {
		s.stop = make(map[string]struct{}, len(words))
		for _, w := range words {
			s.stop[normWord(w)] = struct{}{}
		}
	}
}

// normWord reads w as [Standard.Terms] reads a word: lower-cased, ’ as ',
// apostrophes at its ends stripped.
func normWord(w string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r == '’' {
			return '\''
		}
		return unicode.ToLower(r)
	}, w), "'")
}

// MinLength sets the minimum length of a word in characters (default 2,
// the book's; at least 1).
func MinLength(n int) StandardOption { return func(s *Standard) { s.min = max(n, 1) } }

// MaxLength sets the maximum length of a word in characters (default 100;
// longer words, such as base64 blobs, are dropped). It is at most
// [MaxTermBytes]/4, so that a word always fits the index's term limit.
func MaxLength(n int) StandardOption {
	return func(s *Standard) { s.max = min(max(n, 1), MaxTermBytes/utf8.UTFMax) }
}

// Filter adds a function that rewrites each word after the stop words are
// removed, in the order given: a stemmer, a folding of accents. A filter
// that returns "" drops the word.
func Filter(f func(term string) string) StandardOption {
	return func(s *Standard) {
		if f != nil {
			s.filters = append(s.filters, f)
		}
	}
}

// NewStandard returns a [Standard] analyzer. A nil option is ignored.
func NewStandard(opts ...StandardOption) *Standard {
	s := &Standard{min: 2, max: 100}
	StopWords(BookStopWords...)(s)
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	return s
}

var defaultAnalyzer = NewStandard()

// Tokenize returns the distinct terms of text by the default [Standard]
// analyzer, in order of first occurrence: the book's tokenize.
func Tokenize(text string) []string {
	terms := defaultAnalyzer.Terms(text)
	seen := make(map[string]struct{}, len(terms))
	out := terms[:0]
	for _, t := range terms {
		if _, ok := seen[t]; !ok {
			seen[t] = struct{}{}
			out = append(out, t)
		}
	}
	return out
}

// IsStopWord reports whether s drops the word w as a stop word, reading w
// as [Standard.Terms] does (lower-cased, ’ as ', apostrophes at its ends
// stripped): IsStopWord("It’s") is true when "it's" is a stop word.
func (s *Standard) IsStopWord(w string) bool {
	_, ok := s.stop[normWord(w)]
	return ok
}

// Terms returns the words of text as the type's doc describes.
func (s *Standard) Terms(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		w := strings.Trim(b.String(), "'")
		b.Reset()
		if n := utf8.RuneCountInString(w); n < s.min || n > s.max {
			return
		}
		if _, stop := s.stop[w]; stop {
			return
		}
		for _, f := range s.filters {
			if w = f(w); w == "" {
				return
			}
		}
		out = append(out, w)
	}
	for _, r := range text {
		switch {
		case r == '\'' || r == '’':
			b.WriteByte('\'')
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(unicode.ToLower(r))
		default: // utf8.RuneError of invalid UTF-8 too
			flush()
		}
	}
	flush()
	return out
}
