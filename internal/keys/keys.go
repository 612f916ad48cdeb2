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

	"github.com/ria-go/ria/internal/script"
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

// Once returns a new reply record key of entity, <prefix>{<entity>}:once:<nonce>,
// for one call of a script run with script.RunOnce: a STRING that lives for
// the client's retry window.
func (s Space) Once(entity string) string { return s.Key(entity, "once:"+script.Nonce()) }

// ErrEmpty is returned (wrapped) by [CheckEntity] for an empty name.
var ErrEmpty = errors.New("empty name")

// CheckEntity reports whether entity can name a hash-tagged entity. kind names
// the argument in the error ("lock name"). An empty entity would leave the
// hash tag empty, so that Redis hashes each whole key to its own slot. An
// entity with a brace could make two namespaces share a key: the keys of
// queue "a}:tasks" in group "g" and of group "g}:ready:a" would both be
// queue:{g}:ready:a}:tasks. Without braces in the entity (and the prefix),
// the first '}' of a key closes its entity, so a key names one entity and
// one part, whatever the part holds. Both are rejected.
func CheckEntity(kind, entity string) error {
	if entity == "" {
		return fmt.Errorf("%s: %w", kind, ErrEmpty)
	}
	if strings.ContainsAny(entity, "{}") {
		return fmt.Errorf("%s %q: must not contain '{' or '}'", kind, entity)
	}
	return nil
}
