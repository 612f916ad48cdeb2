package search

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query limits: [Parse] refuses longer queries, or more terms.
const (
	MaxQueryBytes = 4096
	MaxQueryTerms = 64
)

// Query is a parsed query: a document matches if, for every group, it
// holds at least one of the group's terms, and it holds none of the
// excluded terms.
type Query struct {
	// Groups are AND-ed; the terms of one group (a word and its +synonyms)
	// are OR-ed. Each group is sorted and the groups are sorted and
	// distinct, so equal queries have equal Groups.
	Groups [][]string
	// Exclude lists the terms no result may hold, sorted and distinct.
	Exclude []string
}

// ParseError is a query that [Parse] refuses, with where and why.
type ParseError struct {
	Query string
	// Pos is the byte offset in Query where the problem is (len(Query)
	// for a problem with the whole query).
	Pos int
	// Msg says what is wrong.
	Msg string
	// Err is [ErrSyntax], [ErrEmptyQuery] or [ErrOnlyExclusions].
	Err error
}

// Error returns `search: query "...": at byte N: msg`.
func (e *ParseError) Error() string {
	q := e.Query
	if len(q) > 80 {
		q = q[:80] + "..."
	}
	return fmt.Sprintf("search: query %q: at byte %d: %s", q, e.Pos, e.Msg)
}

// Unwrap returns the sentinel the error matches.
func (e *ParseError) Unwrap() error { return e.Err }

// Parse parses q, the book's query language, with analyzer a (nil: the
// default [Standard]):
//
//   - Words are AND-ed: "redis search" finds documents holding both.
//   - +word is a synonym of the word before it: "connect +connection
//     pool" finds documents holding connect or connection, and pool.
//     A +word with no wanted word before it is a plain word (as in the
//     book).
//   - -word excludes: "redis -cluster" drops the documents holding
//     cluster.
//
// A + or - is an operator only at the start of a whitespace-separated
// chunk and must be followed at once by a word ("a - b", "a +", "+-a" are
// errors). The rest of the chunk goes through the analyzer like document
// text, so "e-mail" is the word mail, and a chunk with several terms
// ("-foo.bar") applies its operator to each. Stop words and words the
// analyzer drops are ignored, as in the book.
//
// Errors are *ParseError values naming the byte offset: [ErrSyntax] for
// the above, for invalid UTF-8, a query longer than [MaxQueryBytes] or
// with more than [MaxQueryTerms] terms; [ErrEmptyQuery] when no wanted
// term is left (an empty query, only stop words); [ErrOnlyExclusions]
// for a query that only excludes.
func Parse(a Analyzer, q string) (*Query, error) {
	if a == nil {
		a = defaultAnalyzer
	}
	fail := func(pos int, err error, format string, args ...any) (*Query, error) {
		return nil, &ParseError{Query: q, Pos: pos, Msg: fmt.Sprintf(format, args...), Err: err}
	}
	if len(q) > MaxQueryBytes {
		return fail(MaxQueryBytes, ErrSyntax, "longer than %d bytes", MaxQueryBytes)
	}
	if !utf8.ValidString(q) {
		i := 0
		for i < len(q) {
			r, n := utf8.DecodeRuneInString(q[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fail(i, ErrSyntax, "invalid UTF-8")
	}
	var (
		groups  [][]string
		exclude []string
		current = -1 // index of the group a +word joins
		nterms  int
	)
	for pos := 0; pos < len(q); {
		r, n := utf8.DecodeRuneInString(q[pos:])
		if unicode.IsSpace(r) {
			pos += n
			continue
		}
		end := pos
		for end < len(q) {
			r, n := utf8.DecodeRuneInString(q[end:])
			if unicode.IsSpace(r) {
				break
			}
			end += n
		}
		chunk := q[pos:end]
		op := byte(0)
		if chunk[0] == '+' || chunk[0] == '-' {
			op, chunk = chunk[0], chunk[1:]
			switch {
			case chunk == "":
				return fail(pos, ErrSyntax, "%q must be followed by a word", op)
			case chunk[0] == '+' || chunk[0] == '-':
				return fail(pos+1, ErrSyntax, "%q follows %q", chunk[0], op)
			}
		}
		for _, term := range a.Terms(chunk) {
			if nterms++; nterms > MaxQueryTerms {
				return fail(pos, ErrSyntax, "more than %d terms", MaxQueryTerms)
			}
			switch {
			case op == '-':
				exclude = append(exclude, term)
			case op == '+' && current >= 0:
				groups[current] = append(groups[current], term)
			default:
				groups = append(groups, []string{term})
				current = len(groups) - 1
			}
		}
		pos = end
	}
	if len(groups) == 0 {
		if len(exclude) > 0 {
			return fail(len(q), ErrOnlyExclusions, "only exclusions: say what to search for")
		}
		return fail(len(q), ErrEmptyQuery, "no word to search for (empty, or only stop words)")
	}
	return normalize(groups, exclude), nil
}

// normalize sorts and dedupes the terms of each group, the groups and the
// exclusions.
func normalize(groups [][]string, exclude []string) *Query {
	out := &Query{}
	for _, g := range groups {
		g = slices.Compact(slices.Sorted(slices.Values(g)))
		if !slices.ContainsFunc(out.Groups, func(h []string) bool { return slices.Equal(g, h) }) {
			out.Groups = append(out.Groups, g)
		}
	}
	slices.SortFunc(out.Groups, func(a, b []string) int { return slices.Compare(a, b) })
	if len(exclude) > 0 {
		out.Exclude = slices.Compact(slices.Sorted(slices.Values(exclude)))
	}
	return out
}

// Terms returns every term of q (wanted and excluded), sorted and
// distinct.
func (q *Query) Terms() []string {
	var out []string
	for _, g := range q.Groups {
		out = append(out, g...)
	}
	out = append(out, q.Exclude...)
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// String returns q in the query language, canonical: groups in order,
// synonyms after their group's first term, exclusions last ("a +b c -d").
// It parses back to q with an analyzer that keeps its terms as they are.
func (q *Query) String() string {
	var b strings.Builder
	for _, g := range q.Groups {
		for i, t := range g {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			if i > 0 {
				b.WriteByte('+')
			}
			b.WriteString(t)
		}
	}
	for _, t := range q.Exclude {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('-')
		b.WriteString(t)
	}
	return b.String()
}

// Matches reports whether a document for which has reports the terms it
// holds matches q: the evaluation an index makes, in memory.
func (q *Query) Matches(has func(term string) bool) bool {
	for _, g := range q.Groups {
		if !slices.ContainsFunc(g, has) {
			return false
		}
	}
	return !slices.ContainsFunc(q.Exclude, has)
}
