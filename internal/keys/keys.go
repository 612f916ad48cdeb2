// Package keys builds the Redis key names of every ria package.
//
// A package's keys are <prefix>{<entity>}:<part>. The prefix defaults to the
// package name plus a colon ("lock:") and is set with the package's WithPrefix
// option. {<entity>} is a Redis Cluster hash tag: every key that one atomic
// operation touches shares it, so they live in one slot and CROSSSLOT errors
// cannot happen.
package keys

import (
	"errors"
	"fmt"
	"strings"
)

// Space builds the keys of one package under one prefix. The zero value is not
// useful; use [New].
type Space struct{ prefix string }

// New returns a Space for prefix. It panics if prefix holds '{' or '}', which
// would move the hash tag and break Cluster slot locality; a prefix is a
// constant chosen by the programmer, so that is a programmer error.
func New(prefix string) Space {
	if err := CheckPrefix(prefix); err != nil {
		panic("keys: " + err.Error())
	}
	return Space{prefix: prefix}
}

// CheckPrefix reports whether prefix can start a package's keys: it must
// not hold '{' or '}', which would move the hash tag. Packages whose New
// returns an error call it (and wrap its error) before [New].
func CheckPrefix(prefix string) error {
	if strings.ContainsAny(prefix, "{}") {
		return fmt.Errorf("prefix %q: must not contain '{' or '}'", prefix)
	}
	return nil
}

// Prefix returns the prefix the Space was built with.
func (s Space) Prefix() string { return s.prefix }

// Key returns <prefix>{<entity>}:<part>. The entity must have passed
// [CheckEntity].
func (s Space) Key(entity, part string) string {
	return s.prefix + "{" + entity + "}:" + part
}

// ErrEmpty is returned (wrapped) by [CheckEntity] for an empty name.
var ErrEmpty = errors.New("empty name")

// CheckEntity reports whether entity can name a hash-tagged entity. kind names
// the argument in the error ("lock name"). An empty entity, or one that starts
// with '}', would leave the hash tag empty so that Redis hashes each whole key
// to its own slot; both are rejected. Other braces are harmless: Redis takes
// the tag up to the first '}', which is the same for every key of the entity.
func CheckEntity(kind, entity string) error {
	if entity == "" {
		return fmt.Errorf("%s: %w", kind, ErrEmpty)
	}
	if entity[0] == '}' {
		return fmt.Errorf("%s %q: must not start with '}'", kind, entity)
	}
	return nil
}
