package social_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
)

// A status number at or past 10^14 is still an exact integer, but Lua
// writes such a number as "1e+14" when it joins it to a string: Post must
// name the status bob:100000000000000 (its ID and its HASH), not bob:1e+14.
func TestPost_seqLarge(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client)
		mustUser(t, n, "bob")
		require.NoError(t, b.Client.HSet(ctx, key(b, "bob", "user"), "seq", "99999999999999").Err())
		st := mustPost(t, n, "bob", "big")
		assert.Equal(t, "bob:100000000000000", st.ID)
		seq, err := b.Client.HGet(ctx, key(b, "bob", "user"), "seq").Result()
		require.NoError(t, err)
		assert.Equal(t, "100000000000000", seq)
		assert.Equal(t, int64(1), b.Client.Exists(ctx, key(b, "bob", "status:100000000000000")).Val())
	})
}

// A status number no Post gives (negative, or 2^53 and past, where the
// next one is not exact) is corrupt: Post refuses it with a *ria.KeyError
// (ErrCorrupt) and writes nothing.
func TestPost_seqOutOfRange(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client)
		mustUser(t, n, "bob")
		for _, v := range []string{"-1", "-5", "9007199254740992"} {
			require.NoError(t, b.Client.HSet(ctx, key(b, "bob", "user"), "seq", v).Err())
			before := b.Snapshot()
			_, err := n.Post(ctx, "bob", "x")
			var kerr *ria.KeyError
			if assert.True(t, errors.As(err, &kerr), "seq %s: %v", v, err) {
				assert.ErrorIs(t, err, ria.ErrCorrupt)
				assert.Equal(t, key(b, "bob", "user"), kerr.Key)
			}
			assert.Equal(t, before, b.Snapshot(), "seq %s", v)
		}
	})
}
