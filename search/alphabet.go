package search

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
)

// A Scorer turns a string into a ZSET score that orders strings by their
// first characters (book 7.2.2, string_to_score): if Score(a) < Score(b)
// then a sorts before b, and a before b implies Score(a) <= Score(b)
// (strings that share their first characters may share a score). Scores
// are integers below 2^53, so a float64 holds them exactly.
type Scorer interface {
	Score(s string) (float64, error)
}

// Bytes is the book's string_to_score: the first 6 bytes of a string, in
// byte order (so UTF-8 in code point order), and one bit that tells
// "robber" from "robbers". Its Score never fails.
var Bytes Scorer = byteScorer{}

// BytesIgnoreCase is [Bytes] after ASCII lower-casing: the book's
// string_to_score(s, ignore_case=True).
var BytesIgnoreCase Scorer = byteScorer{fold: true}

type byteScorer struct{ fold bool }

// Score returns the book's string_to_score of s.
func (b byteScorer) Score(s string) (float64, error) {
	if b.fold {
		s = asciiLower(s)
	}
	var score uint64
	for i := range 6 {
		piece := uint64(0) // the placeholder of a short string, below byte 0
		if i < len(s) {
			piece = uint64(s[i]) + 1
		}
		score = score*257 + piece
	}
	score *= 2
	if len(s) > 6 {
		score++
	}
	return float64(score), nil
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// Alphabet is a [Scorer] for strings over a set of characters the user
// gives, in the order given: the book's string_to_score_generic. An
// alphabet of n characters scores the first int(52 / log2(n+1))
// characters of a string (n+1: a short string's placeholder sorts before
// every character), so a smaller alphabet orders longer prefixes: 10
// characters for a-z, 9 for a-z0-9, 8 for a-zA-Z0-9. An Alphabet is
// immutable.
type Alphabet struct {
	chars  string
	index  map[rune]uint64
	length int
}

// Book alphabets (listing 7.x, to_char_map): lower-case letters; letters;
// lower-case letters and digits; letters and digits. Each in code point
// order.
var (
	Lower        = mustAlphabet("abcdefghijklmnopqrstuvwxyz")
	Alpha        = mustAlphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
	LowerNumeric = mustAlphabet("0123456789abcdefghijklmnopqrstuvwxyz")
	AlphaNumeric = mustAlphabet("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
)

func mustAlphabet(chars string) *Alphabet {
	a, err := NewAlphabet(chars)
	if err != nil {
		panic(err)
	}
	return a
}

// NewAlphabet returns the Alphabet of the characters of chars, which sort
// in the order they appear there. It returns an error wrapping
// [ErrInvalid] for invalid UTF-8, a repeated character, or fewer than 1
// or more than 2^26 characters.
func NewAlphabet(chars string) (*Alphabet, error) {
	if !utf8.ValidString(chars) {
		return nil, fmt.Errorf("search: alphabet %q: %w: invalid UTF-8", chars, ErrInvalid)
	}
	a := &Alphabet{chars: chars, index: map[rune]uint64{}}
	for _, r := range chars {
		if _, dup := a.index[r]; dup {
			return nil, fmt.Errorf("search: alphabet %q: %w: %q twice", chars, ErrInvalid, r)
		}
		a.index[r] = uint64(len(a.index)) + 1 // 0 is the placeholder
	}
	n := len(a.index)
	if n < 1 || n > 1<<26 {
		return nil, fmt.Errorf("search: alphabet of %d characters: %w: want 1 to 2^26", n, ErrInvalid)
	}
	a.length = int(52 / math.Log2(float64(n+1)))
	return a, nil
}

// Length returns how many leading characters a's scores tell apart.
func (a *Alphabet) Length() int { return a.length }

// Chars returns the alphabet's characters, in order.
func (a *Alphabet) Chars() string { return a.chars }

// Score returns the score of s: its first [Alphabet.Length] characters
// in base n+1, times 2, plus 1 if s is longer. It returns an error
// wrapping [ErrInvalid] if one of those characters is not in a.
func (a *Alphabet) Score(s string) (float64, error) {
	base := uint64(len(a.index) + 1)
	var score uint64
	i, count := 0, 0
	for ; count < a.length; count++ {
		piece := uint64(0)
		if i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			v, ok := a.index[r]
			if !ok || (r == utf8.RuneError && n <= 1) {
				return 0, fmt.Errorf("search: score %q: %w: %q at byte %d is not in the alphabet", s, ErrInvalid, s[i:i+n], i)
			}
			piece, i = v, i+n
		}
		score = score*base + piece
	}
	score *= 2
	if i < len(s) {
		score++
	}
	return float64(score), nil
}

// ZAdder is the command [ZAddString] sends.
type ZAdder interface {
	ZAdd(ctx context.Context, key string, members ...redis.Z) *redis.IntCmd
}

// ZAddString adds members to the ZSET at key, each scored by sc.Score of
// its string: the book's zadd_string. It returns how many members were
// new. A string sc cannot score is an error, and nothing is written. One
// round trip (one ZADD).
func ZAddString(ctx context.Context, c ZAdder, key string, sc Scorer, members map[string]string) (int64, error) {
	if sc == nil {
		sc = Bytes
	}
	zs := make([]redis.Z, 0, len(members))
	for m, s := range members {
		score, err := sc.Score(s)
		if err != nil {
			return 0, fmt.Errorf("search: zadd string %q member %q: %w", key, m, err)
		}
		zs = append(zs, redis.Z{Score: score, Member: m})
	}
	if len(zs) == 0 {
		return 0, nil
	}
	n, err := c.ZAdd(ctx, key, zs...).Result()
	if err != nil {
		return 0, fmt.Errorf("search: zadd string %q: %w", key, err)
	}
	return n, nil
}
