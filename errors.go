package ria

import (
	"errors"
	"fmt"
)

var (
	// ErrOutcomeUnknown is wrapped by the error of a state-changing call
	// whose request may have reached Redis but whose reply never came,
	// even after go-redis re-sent it (connection lost, timeout, ctx ended
	// while the request was in flight, or re-sends that could not connect
	// or were refused with LOADING, READONLY and the like, as a restarted
	// or failed-over server answers, or with BUSY, as a server running a
	// long script answers): it may or may not have taken effect.
	// Read the state back to find out. The error also wraps the cause.
	ErrOutcomeUnknown = errors.New("ria: outcome unknown")
	// ErrWrongType is matched by a [*KeyError] about a key that holds a
	// Redis type other than the one the package writes there.
	ErrWrongType = errors.New("ria: key holds the wrong type")
	// ErrCorrupt is matched by a [*KeyError] about a key that holds a value
	// the package cannot parse (a counter that is not an integer, say).
	ErrCorrupt = errors.New("ria: key holds a malformed value")
)

// KeyError reports a key that holds something the package did not write
// there: a value of another Redis type ([ErrWrongType]) or a value it cannot
// parse ([ErrCorrupt]). The call that met it changed nothing.
type KeyError struct {
	Role string // what the key is for, e.g. "lock owner"
	Key  string // the key's name
	Got  string // the type or value found, e.g. "hash"
	Want string // what the package expects there, e.g. "string"
	Err  error  // ErrWrongType or ErrCorrupt
}

// Error returns, for example, `ria: lock owner "lock:{job}:owner" holds a
// hash, want a string`.
func (e *KeyError) Error() string {
	return fmt.Sprintf("ria: %s %q holds %s, want %s", e.Role, e.Key, e.Got, e.Want)
}

// Unwrap returns [ErrWrongType] or [ErrCorrupt].
func (e *KeyError) Unwrap() error { return e.Err }
