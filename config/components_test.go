package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
)

// TestStore_components lists a type's components on every backend (a
// Cluster's values are spread over its masters): exactly those set, glob
// characters taken literally, a deleted one gone, other types and
// prefixes left out.
func TestStore_components(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		empty, err := s.Components(ctx, "limits")
		require.NoError(t, err)
		assert.Empty(t, empty)
		want := []string{"a:b", "api", "db*", "web[1]", `x\y`}
		for _, c := range want {
			require.NoError(t, s.Set(ctx, "limits", c, 1))
		}
		require.NoError(t, s.Set(ctx, "limits", "gone", 1))
		require.NoError(t, s.Delete(ctx, "limits", "gone"))
		require.NoError(t, s.Set(ctx, "limit", "short", 1))     // a type that is a prefix of another
		require.NoError(t, s.Set(ctx, "limits*", "starred", 1)) // a type with a glob character
		require.NoError(t, s.SetMaintenance(ctx, true))
		got, err := s.Components(ctx, "limits")
		require.NoError(t, err)
		assert.Equal(t, want, got)
		got, err = s.Components(ctx, "limits*")
		require.NoError(t, err)
		assert.Equal(t, []string{"starred"}, got)
		got, err = s.Components(ctx, "limit")
		require.NoError(t, err)
		assert.Equal(t, []string{"short"}, got)

		// A type holding ':' is refused everywhere: ("a:b", "c") and
		// ("a", "b:c") would share a key.
		assert.ErrorContains(t, s.Set(ctx, "a:b", "c", 1), "must not contain ':'")
		_, err = s.Components(ctx, "a:b")
		assert.ErrorContains(t, err, "must not contain ':'")
		_, err = s.Components(ctx, "")
		assert.Error(t, err)
	})
}
