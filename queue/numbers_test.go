package queue_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
)

// Failed attempts that match digits but are no count Lua's numbers hold
// (beyond 2^53, or too long for an integer at all) are corrupt, as a
// recovery reads them: the task goes to the dead letters unrun with its
// fields kept as they were, instead of with a count rounded (written
// back smaller, or as "1e+20").
func TestGroup_Recover_hugeAttempts(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		for _, a := range []string{"99999999999999999999", "9007199254740993"} {
			b.Flush()
			put(t, b, "x", "default", 5)
			require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), "x:a", a).Err())
			zadd(t, b, "inflight", 1, "x:tok")
			n, err := g.Recover(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, n)
			dead, err := g.Dead(ctx, 0, 10)
			require.NoError(t, err)
			if assert.Len(t, dead, 1, a) {
				assert.Equal(t, `lease expired; queue: corrupt task: field x:a holds "`+a+`", want an integer from 0 to 2^53`, dead[0].Error, a)
			}
			assert.Equal(t, a, b.Client.HGet(ctx, key(b, "tasks"), "x:a").Val(), "kept as it was, for a look")
		}
	})
}
