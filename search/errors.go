package search

import "errors"

var (
	// ErrSyntax matches a [*ParseError] for a malformed query: an
	// operator without its word, invalid UTF-8, a query over the limits.
	ErrSyntax = errors.New("search: malformed query")
	// ErrEmptyQuery matches a [*ParseError] for a query with no word to
	// search for: empty, or only stop words.
	ErrEmptyQuery = errors.New("search: empty query")
	// ErrOnlyExclusions matches a [*ParseError] for a query whose every
	// word is an exclusion (-word): there is nothing to exclude from.
	ErrOnlyExclusions = errors.New("search: query only excludes")
	// ErrUnknownField means a field, score or tag name that the index was
	// not created with (see [WithFields], [WithScores]), or one that is
	// malformed.
	ErrUnknownField = errors.New("search: unknown field")
	// ErrTooLarge means a document, a batch or a request over one of the
	// documented limits (see [Limits]).
	ErrTooLarge = errors.New("search: too large")
	// ErrInvalid means an argument that is malformed in another way: an
	// empty document ID, a value that is not a number, a page below 1.
	ErrInvalid = errors.New("search: invalid argument")
	// ErrNotFound means the document is not in the index ([Index.Get]).
	ErrNotFound = errors.New("search: document not indexed")
)
