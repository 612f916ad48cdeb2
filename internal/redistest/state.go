package redistest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
)

// Snapshot returns every key under the test's prefix with its type and
// content (not its TTL), to compare the state before and after a call.
func (b *Backend) Snapshot() map[string]string {
	b.t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, k := range b.Keys("") {
		typ, err := b.Client.Type(ctx, k).Result()
		if err != nil {
			b.t.Fatalf("redistest: TYPE %s: %v", k, err)
		}
		var v any
		switch typ {
		case "none":
			continue // expired between KEYS and TYPE
		case "string":
			v, err = b.Client.Get(ctx, k).Result()
		case "hash":
			v, err = b.Client.HGetAll(ctx, k).Result()
		case "list":
			v, err = b.Client.LRange(ctx, k, 0, -1).Result()
		case "set":
			var m []string
			m, err = b.Client.SMembers(ctx, k).Result()
			slices.Sort(m)
			v = m
		case "zset":
			v, err = b.Client.ZRangeWithScores(ctx, k, 0, -1).Result()
		default:
			err = fmt.Errorf("type %s not handled", typ)
		}
		if err != nil && err != redis.Nil {
			b.t.Fatalf("redistest: read %s: %v", k, err)
		}
		out[k] = fmt.Sprintf("%s %v", typ, v)
	}
	return out
}

// Flush deletes every key under the test's prefix.
func (b *Backend) Flush() {
	b.t.Helper()
	ctx := context.Background()
	for _, k := range b.Keys("") {
		if err := b.Client.Del(ctx, k).Err(); err != nil {
			b.t.Fatalf("redistest: DEL %s: %v", k, err)
		}
	}
}

// KeyRole names a key a call relies on, the Redis type it should hold and
// its role, as the call's *ria.KeyError names it.
type KeyRole struct {
	Key, Type, Role string
	// Wrong is the type put at Key: "hash", or else a string (a hash
	// when Type is "string").
	Wrong string
}

// CheckWrongTypes checks that call refuses a key someone else wrote: for
// each key, it flushes the test's keys, runs setup (which builds the state
// the call needs), puts a value of another type at the key, and runs call,
// which must fail with a *ria.KeyError naming the key and its role
// (ria.ErrWrongType) and change nothing.
func (b *Backend) CheckWrongTypes(t *testing.T, setup func(), call func() error, keys ...KeyRole) {
	t.Helper()
	ctx := context.Background()
	for _, k := range keys {
		b.Flush()
		setup()
		require.NoError(t, b.Client.Del(ctx, k.Key).Err())
		if k.Type == "string" || k.Wrong == "hash" {
			require.NoError(t, b.Client.HSet(ctx, k.Key, "wrong", "type").Err())
		} else {
			require.NoError(t, b.Client.Set(ctx, k.Key, "wrong type", 0).Err())
		}
		before := b.Snapshot()
		err := call()
		var kerr *ria.KeyError
		if assert.ErrorAs(t, err, &kerr, "%s %s", k.Role, k.Key) {
			assert.ErrorIs(t, err, ria.ErrWrongType)
			assert.Equal(t, k.Key, kerr.Key, "the error names the key")
			assert.Equal(t, k.Role, kerr.Role, "the error names the key's role")
			assert.Equal(t, "a "+k.Type, kerr.Want)
		}
		assert.Equal(t, before, b.Snapshot(), "nothing changed after the %s was of the wrong type", k.Role)
	}
	b.Flush()
}
