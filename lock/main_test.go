package lock_test

import (
	"testing"

	"github.com/ria-go/ria/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// must returns v, or panics on err (test setup with valid arguments).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
