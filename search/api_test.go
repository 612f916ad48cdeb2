package search_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

// stemmer returns a crude analyzer that counts its calls: it lower-cases
// text, splits it on spaces and cuts a trailing "ing" or else "s"; a word
// left empty ("s", "ing") is dropped.
func stemmer(calls *atomic.Int64) search.AnalyzerFunc {
	return func(text string) []string {
		calls.Add(1)
		var out []string
		for _, w := range strings.Fields(strings.ToLower(text)) {
			if s, ok := strings.CutSuffix(w, "ing"); ok {
				w = s
			} else {
				w = strings.TrimSuffix(w, "s")
			}
			if w != "" {
				out = append(out, w)
			}
		}
		return out
	}
}

func TestAPI_WithAnalyzer(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		var calls atomic.Int64
		a := stemmer(&calls)
		assert.Equal(t, []string{"jump", "jump", "sleep", "the"}, a.Terms("Jumping  JUMPS sleeps s ing The"),
			"AnalyzerFunc.Terms is the function")
		assert.EqualValues(t, 1, calls.Load())

		stemmed, err := search.New(b.Client, "stemmed", search.WithPrefix(b.Prefix), search.WithAnalyzer(a))
		require.NoError(t, err)
		plain, err := search.New(b.Client, "plain", search.WithPrefix(b.Prefix))
		require.NoError(t, err)

		n := calls.Load()
		assert.Equal(t, []string{"jump"}, stemmed.Analyzer().Terms("Jumping"))
		assert.Equal(t, n+1, calls.Load(), "Analyzer returns the analyzer given")
		assert.IsType(t, &search.Standard{}, plain.Analyzer(), "the default is a Standard")
		assert.Equal(t, []string{"jumping"}, plain.Analyzer().Terms("Jumping"))

		docs := []search.Document{
			{ID: "jumps", Text: "The dog jumps high"},
			{ID: "jumping", Text: "Jumping jacks"},
			{ID: "sleeps", Text: "A cat sleeps"},
		}
		for _, x := range []*search.Index{stemmed, plain} {
			added, _, err := x.Add(t.Context(), docs...)
			require.NoError(t, err)
			require.Equal(t, len(docs), added)
		}

		// Documents are analyzed by it: their stored terms are stems.
		assert.Equal(t, []string{"jumps", "jumping"}, ids(t, stemmed, "jump"))
		assert.Empty(t, ids(t, plain, "jump"))
		// Queries are analyzed by it: "jumping" looks up "jump".
		assert.Equal(t, []string{"jumps", "jumping"}, ids(t, stemmed, "jumping"))
		assert.Equal(t, []string{"jumping"}, ids(t, plain, "jumping"))
		assert.Equal(t, []string{"sleeps"}, ids(t, stemmed, "SLEEPING"))
		assert.Empty(t, ids(t, plain, "SLEEPING"))
		assert.Equal(t, []string{"jumping"}, ids(t, stemmed, "jumping -dogs"), "an exclusion is analyzed too")

		// A query of words the analyzer drops has nothing to search for.
		_, err = stemmed.Search(t.Context(), "ing s")
		var pe *search.ParseError
		require.ErrorAs(t, err, &pe)
		assert.ErrorIs(t, err, search.ErrEmptyQuery)
		r, err := plain.Search(t.Context(), "ing s")
		require.NoError(t, err, "the default analyzer keeps \"ing\"")
		assert.Zero(t, r.Total)
	})
}

func TestAPI_Fields_Scores(t *testing.T) {
	b := redistest.New(t, redistest.Mini)
	x, err := search.New(b.Client, "idx", search.WithPrefix(b.Prefix),
		search.WithFields(search.TextField("title"), search.NumericField("updated"), search.NumericField("id")),
		search.WithFields(search.TextField("author")),
		search.WithScores("votes", "update"), search.WithScores("age"))
	require.NoError(t, err)
	wantFields := []search.Field{
		{Name: "author", Kind: search.Text},
		{Name: "id", Kind: search.Numeric},
		{Name: "title", Kind: search.Text},
		{Name: "updated", Kind: search.Numeric},
	}
	wantScores := []string{"age", "update", "votes"}
	assert.Equal(t, wantFields, x.Fields(), "sorted by name, with their kinds")
	assert.Equal(t, wantScores, x.Scores(), "sorted")

	f := x.Fields()
	f[0] = search.Field{Name: "zzz", Kind: search.Numeric}
	s := x.Scores()
	s[0] = "zzz"
	assert.Equal(t, wantFields, x.Fields(), "Fields returns a copy")
	assert.Equal(t, wantScores, x.Scores(), "Scores returns a copy")

	y, err := search.New(b.Client, "bare", search.WithPrefix(b.Prefix))
	require.NoError(t, err)
	assert.Empty(t, y.Fields())
	assert.Empty(t, y.Scores())
}

func TestAPI_Alphabet(t *testing.T) {
	custom := func(chars string) *search.Alphabet {
		a, err := search.NewAlphabet(chars)
		require.NoError(t, err)
		return a
	}
	// Length is int(52 / log2(n+1)) for n characters.
	for _, tc := range []struct {
		a      *search.Alphabet
		chars  string
		length int
	}{
		{search.Lower, "abcdefghijklmnopqrstuvwxyz", 10},
		{search.Alpha, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 9},
		{search.LowerNumeric, "0123456789abcdefghijklmnopqrstuvwxyz", 9},
		{search.AlphaNumeric, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 8},
		{custom("zyx"), "zyx", 26},
		{custom("ab"), "ab", 32},
		{custom("αβγ"), "αβγ", 26},
		{custom("q"), "q", 52},
	} {
		assert.Equal(t, tc.chars, tc.a.Chars(), "the characters given, in order")
		L := tc.a.Length()
		assert.Equal(t, tc.length, L, "%q", tc.chars)
		c := []rune(tc.a.Chars())
		first, last := string(c[0]), string(c[len(c)-1])
		score := func(s string) float64 {
			t.Helper()
			v, err := tc.a.Score(s)
			require.NoError(t, err, "%q", s)
			return v
		}
		// Equal on the first L characters, different after: same score.
		p := strings.Repeat(first, L)
		assert.Equal(t, score(p+first), score(p+last+first), "%q: differ after %d characters", tc.chars, L)
		// Different within the first L characters: ordered scores.
		q := strings.Repeat(first, L-1)
		assert.Less(t, score(q), score(q+last), "%q: shorter first at character %d", tc.chars, L)
		if len(c) > 1 {
			assert.Less(t, score(q+first), score(q+last), "%q: differ at character %d", tc.chars, L)
			for i := 1; i < len(c); i++ {
				assert.Less(t, score(string(c[i-1])), score(string(c[i])), "%q: %q before %q", tc.chars, c[i-1], c[i])
			}
		}
	}
}
