package autocomplete

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fold returns the form of s that prefix matching compares: every rune
// replaced by one canonical rune of its Unicode simple case-folding orbit
// (the runes that [strings.EqualFold] takes for equal: "K", "k" and the
// Kelvin sign "K" fold alike), the smallest lower-case rune of the orbit
// when it has one. Folding goes rune by rune, so a prefix of s folds to a
// prefix of Fold(s): that is what lets a range of folded forms answer a
// prefix query. Two strings match case-insensitively, rune for rune, when
// their folded forms are equal. Accents are not removed ("é" does not
// match "e") and strings are not Unicode-normalised: give names and
// prefixes in one normal form (NFC, say) if your input may mix them.
func Fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune returns the canonical rune of r's simple folding orbit: its
// smallest lower-case rune, or its smallest rune when none is lower-case.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	least, lower := r, rune(-1)
	if unicode.IsLower(r) {
		lower = r
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
		if unicode.IsLower(f) && (lower < 0 || f < lower) {
			lower = f
		}
	}
	if lower >= 0 {
		return lower
	}
	return least
}

// MaxName is the longest name, contact or prefix, in bytes.
const MaxName = 512

// checkName reports whether s can be a name (kind says which argument):
// not empty, at most [MaxName] bytes, valid UTF-8, no NUL byte (the
// separator of a member's folded form and its spelling).
func checkName(kind, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s: %w", kind, ErrEmpty)
	case len(s) > MaxName:
		return fmt.Errorf("%s of %d bytes: %w", kind, len(s), ErrTooLong)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %q: %w", kind, s, ErrInvalid)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s %q: %w", kind, s, ErrInvalid)
	}
	return nil
}
