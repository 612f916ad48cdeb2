package social_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
)

// beforeScript is a go-redis hook that runs fn once, just before the
// first script call (EVALSHA or EVAL) naming key is sent.
type beforeScript struct {
	key string
	fn  func()
	ran atomic.Bool
}

func (h *beforeScript) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *beforeScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := make([]string, len(cmd.Args()))
		for i, a := range cmd.Args() {
			args[i] = fmt.Sprint(a)
		}
		if (args[0] == "evalsha" || args[0] == "eval") && slices.Contains(args, h.key) && h.ran.CompareAndSwap(false, true) {
			h.fn()
		}
		return next(ctx, cmd)
	}
}

func (h *beforeScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A status deleted while a follow runs, after its first step read the
// followed user's profile and before the second copies it, does not stay
// in the follower's home timeline: the third step sees the delete and the
// copy step removes it (with a tombstone). The same for a list add.
func TestNetwork_Follow_deleteDuring(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client)
		a, f, o := mustUser(t, n, "a"), mustUser(t, n, "b"), mustUser(t, n, "o")
		one := mustPost(t, n, a, "one")
		two := mustPost(t, n, a, "two")
		require.NoError(t, n.CreateList(ctx, o, "l"))
		del := func(id string) func() {
			return func() { assert.NoError(t, n.Delete(ctx, a, id)) }
		}

		rdb, _ := b.NewClient()
		h := &beforeScript{key: key(b, f, "following"), fn: del(one.ID)}
		rdb.AddHook(h)
		nf, _ := newNet(t, b, rdb)
		ok, err := nf.Follow(ctx, f, a)
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, h.ran.Load(), "the delete ran between the first and second steps")
		drain(t, n, g)
		assert.Equal(t, []string{two.ID}, home(t, b, f))
		_, err = b.Client.ZScore(ctx, key(b, f, "gone"), one.ID).Result()
		assert.NoError(t, err, "a tombstone, as a clean leaves")

		rdb2, _ := b.NewClient()
		h2 := &beforeScript{key: key(b, o, "list:l:timeline"), fn: del(two.ID)}
		rdb2.AddHook(h2)
		nl, _ := newNet(t, b, rdb2)
		ok, err = nl.AddToList(ctx, o, "l", a)
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, h2.ran.Load(), "the delete ran between the first and second steps")
		drain(t, n, g)
		tl, err := b.Client.ZRange(ctx, key(b, o, "list:l:timeline"), 0, -1).Result()
		require.NoError(t, err)
		assert.Empty(t, tl)

		// Nothing deleted during the follow: nothing removed.
		three := mustPost(t, n, a, "three")
		_, err = n.Unfollow(ctx, f, a)
		require.NoError(t, err)
		mustFollow(t, n, f, a)
		assert.Equal(t, []string{three.ID}, home(t, b, f))
	})
}
