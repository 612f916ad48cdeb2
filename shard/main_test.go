package shard_test

import (
	"slices"
	"testing"

	"github.com/ria-go/ria/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// run runs fn on every backend of the harness and on the sharded one (a
// shard.Router over three standalone servers), which the harness keeps
// opt-in (redistest.Kinds does not list it). The test runs in parallel
// with the package's other tests (each has its own key prefix; most of
// their time is spent waiting on the servers).
func run(t *testing.T, fn func(t *testing.T, b *redistest.Backend)) {
	t.Helper()
	t.Parallel()
	redistest.Run(t, fn)
	if !slices.Contains(redistest.Kinds, redistest.Sharded) {
		t.Run(string(redistest.Sharded), func(t *testing.T) { fn(t, redistest.NewSharded(t)) })
	}
}

// must returns v, or panics on err (test setup with valid arguments).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
