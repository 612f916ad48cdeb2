package search_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

func TestStandard_Terms(t *testing.T) {
	for _, tc := range []struct {
		a    *search.Standard
		text string
		want []string
	}{
		{search.NewStandard(), "Hello, World! hello", []string{"hello", "world", "hello"}},
		{search.NewStandard(), "The quick fox's den", []string{"quick", "fox's", "den"}},
		{search.NewStandard(), "'quoted' don’t", []string{"quoted", "don't"}},
		{search.NewStandard(), "e-mail a b cd", []string{"mail", "cd"}},
		{search.NewStandard(), "Café NAÏVE 2024 Ελληνικά 東京", []string{"café", "naïve", "2024", "ελληνικά", "東京"}},
		{search.NewStandard(), "bad\xffutf", []string{"bad", "utf"}},
		{search.NewStandard(search.MinLength(4)), "one three four", []string{"three", "four"}},
		{search.NewStandard(search.MinLength(1)), "a b", []string{"a", "b"}}, // the book's list lacks "a"
		{search.NewStandard(search.StopWords()), "the a", []string{"the"}},
		{search.NewStandard(search.StopWords("Foo")), "foo bar the", []string{"bar", "the"}},
		{search.NewStandard(search.MaxLength(3)), "abc abcd", []string{"abc"}},
		{search.NewStandard(search.Filter(func(s string) string { return strings.TrimSuffix(s, "s") }),
			search.Filter(func(s string) string {
				if s == "drop" {
					return ""
				}
				return s
			})), "cats dogs drop", []string{"cat", "dog"}},
	} {
		assert.Equal(t, tc.want, tc.a.Terms(tc.text), "%q", tc.text)
	}
	assert.Equal(t, []string{"redis", "search"}, search.Tokenize("Redis search, redis SEARCH"))
	assert.True(t, search.NewStandard().IsStopWord("THE"))
	assert.False(t, search.NewStandard().IsStopWord("redis"))
}

func TestParse(t *testing.T) {
	q, err := search.Parse(nil, "connect +connection pool -cluster -Cluster")
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"connect", "connection"}, {"pool"}}, q.Groups)
	assert.Equal(t, []string{"cluster"}, q.Exclude)
	assert.Equal(t, "connect +connection pool -cluster", q.String())
	assert.Equal(t, []string{"cluster", "connect", "connection", "pool"}, q.Terms())
	held := map[string]bool{"connection": true, "pool": true}
	assert.True(t, q.Matches(func(s string) bool { return held[s] }))
	held["cluster"] = true
	assert.False(t, q.Matches(func(s string) bool { return held[s] }))

	q, err = search.Parse(nil, "+lead word")
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"lead"}, {"word"}}, q.Groups, "a leading +word is a plain word, as in the book")

	for _, tc := range []struct {
		q    string
		pos  int
		want error
	}{
		{"", 0, search.ErrEmptyQuery},
		{"the and", 7, search.ErrEmptyQuery},
		{"-a1 -b2", 7, search.ErrOnlyExclusions},
		{"redis +", 6, search.ErrSyntax},
		{"redis - x", 6, search.ErrSyntax},
		{"ab +-cd", 4, search.ErrSyntax},
		{"ok \xff", 3, search.ErrSyntax},
		{strings.Repeat("a", search.MaxQueryBytes+1), search.MaxQueryBytes, search.ErrSyntax},
		{strings.Repeat("ab ", search.MaxQueryTerms+1), 3 * search.MaxQueryTerms, search.ErrSyntax},
	} {
		_, err := search.Parse(nil, tc.q)
		var perr *search.ParseError
		if assert.True(t, errors.As(err, &perr), "%q: %v", tc.q, err) {
			assert.Equal(t, tc.pos, perr.Pos, "%q: %v", tc.q, err)
			assert.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), "at byte")
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"a +b -c", "+", "-x", "café +naïve", "\xff", "a  b\t+c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := search.Parse(nil, s)
		if err != nil {
			var perr *search.ParseError
			if !errors.As(err, &perr) || perr.Pos < 0 || perr.Pos > len(s) {
				t.Fatalf("%q: bad error %v", s, err)
			}
			return
		}
		if len(q.Groups) == 0 {
			t.Fatalf("%q: no groups and no error", s)
		}
		for _, term := range q.Terms() {
			if err := search.CheckTerm(term); err != nil {
				t.Fatalf("%q: %v", s, err)
			}
		}
	})
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"Hello world", "'a'", "’’", "\xff\xfe", "東京 2024"} {
		f.Add(s)
	}
	a := search.NewStandard()
	f.Fuzz(func(t *testing.T, s string) {
		for _, term := range a.Terms(s) {
			if err := search.CheckTerm(term); err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			if a.IsStopWord(term) {
				t.Fatalf("%q: stop word %q kept", s, term)
			}
		}
	})
}

func TestScorer(t *testing.T) {
	words := []string{"", "a", "ab", "abc", "b", "robber", "robbers", "robbery", "z"}
	for _, sc := range []search.Scorer{search.Bytes, search.Lower} {
		prev := -1.0
		for _, w := range words {
			s, err := sc.Score(w)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, s, prev, "%q", w)
			prev = s
		}
		r1, _ := sc.Score("robber")
		r2, _ := sc.Score("robbers")
		assert.Less(t, r1, r2)
	}
	_, err := search.Lower.Score("Abc")
	assert.ErrorIs(t, err, search.ErrInvalid)
	a, err := search.NewAlphabet("zyx")
	require.NoError(t, err)
	z, _ := a.Score("z")
	x, _ := a.Score("x")
	assert.Less(t, z, x, "the alphabet's order")
	_, err = search.NewAlphabet("aa")
	assert.ErrorIs(t, err, search.ErrInvalid)
	i1, _ := search.BytesIgnoreCase.Score("ABC")
	i2, _ := search.BytesIgnoreCase.Score("abc")
	assert.Equal(t, i1, i2)
}

func TestZAddString(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		key := b.Prefix + "names"
		words := map[string]string{"m1": "robbers", "m2": "robber", "m3": "alice", "m4": "bob", "m5": "", "m6": "alicia"}
		n, err := search.ZAddString(t.Context(), b.Client, key, search.Lower, words)
		require.NoError(t, err)
		assert.Equal(t, int64(6), n)
		got, err := b.Client.ZRange(t.Context(), key, 0, -1).Result()
		require.NoError(t, err)
		assert.Equal(t, []string{"m5", "m3", "m6", "m4", "m2", "m1"}, got)
		_, err = search.ZAddString(t.Context(), b.Client, key, search.Lower, map[string]string{"x": "Upper"})
		assert.ErrorIs(t, err, search.ErrInvalid)
		c, _ := b.Client.ZCard(t.Context(), key).Result()
		assert.Equal(t, int64(6), c, "nothing written")
	})
}

// TestStandard_StopWordsApostrophe: stop words and IsStopWord read a word
// as Terms does: the typographic apostrophe ’ is ', apostrophes at the
// ends are stripped.
func TestStandard_StopWordsApostrophe(t *testing.T) {
	a := search.NewStandard(search.StopWords("It’s", "'tis'"))
	assert.Equal(t, []string{"here"}, a.Terms("It’s here"), "stop word it’s")
	assert.Equal(t, []string{"here"}, a.Terms("it's here"), "stop word it’s written it's")
	assert.Equal(t, []string{"here"}, a.Terms("’Tis here"), "stop word 'tis' read as tis")
	b := search.NewStandard(search.StopWords("it's"))
	require.Equal(t, []string{"here"}, b.Terms("It’s here"))
	for _, w := range []string{"It’s", "IT'S", "'it’s'", "it's"} {
		assert.True(t, b.IsStopWord(w), "Terms drops %q, IsStopWord must say so", w)
	}
	assert.False(t, b.IsStopWord("its"))
}
