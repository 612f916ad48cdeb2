package session_test

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

func redisZ(member string, score float64) redis.Z { return redis.Z{Member: member, Score: score} }

// Rescale keeps the 2×top most viewed items and halves their counts.
func TestRescaler_Rescale(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client, session.WithCacheTop(5)) // keeps 10
		r, err := s.Rescaler()
		require.NoError(t, err)
		require.NoError(t, r.Rescale(ctx)) // the script cached; no ranking yet
		for range 4 {
			require.NoError(t, s.UpdateToken(ctx, "tok", "u", "hot"))
		}
		require.NoError(t, s.UpdateToken(ctx, "tok", "u", "warm"))
		require.NoError(t, s.UpdateToken(ctx, "tok", "u", "warm"))
		var tail []redis.Z // 12 items viewed once
		for i := range 12 {
			tail = append(tail, redisZ(fmt.Sprintf("cold-%02d", i), -1))
		}
		require.NoError(t, b.Client.ZAdd(ctx, key(b, "views"), tail...).Err())

		rt, cmds := b.Count.Delta(func() { require.NoError(t, r.Rescale(ctx)) })
		assert.Equal(t, int64(1), rt, "one script")
		assert.Equal(t, int64(1), cmds, "one script")

		views, err := b.Client.ZRangeWithScores(ctx, key(b, "views"), 0, -1).Result()
		require.NoError(t, err)
		require.Len(t, views, 10, "trimmed to 2×top")
		assert.Equal(t, redisZ("hot", -2), views[0])
		assert.Equal(t, redisZ("warm", -1), views[1])
		for _, z := range views[2:] {
			assert.Equal(t, -0.5, z.Score, z.Member)
		}
		ok, err := s.CanCache(ctx, "/?item=hot")
		require.NoError(t, err)
		assert.True(t, ok, "ranks survive")

		require.NoError(t, r.Rescale(ctx))
		assert.Equal(t, -1.0, b.Client.ZScore(ctx, key(b, "views"), "hot").Val(), "halved again")
		assert.Equal(t, int64(10), b.Client.ZCard(ctx, key(b, "views")).Val())
	})
}

// The book's numbers: the top 20,000 of a larger ranking survive.
func TestRescaler_Rescale_bookLimit(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		zs := make([]redis.Z, 20_050)
		for i := range zs {
			zs[i] = redisZ(fmt.Sprintf("i%05d", i), -float64(len(zs)-i)) // i00000 most viewed
		}
		require.NoError(t, b.Client.ZAdd(ctx, key(b, "views"), zs...).Err())
		r, err := s.Rescaler()
		require.NoError(t, err)
		require.NoError(t, r.Rescale(ctx))
		assert.Equal(t, int64(20_000), b.Client.ZCard(ctx, key(b, "views")).Val())
		assert.Equal(t, -float64(len(zs))/2, b.Client.ZScore(ctx, key(b, "views"), "i00000").Val())
		assert.Equal(t, int64(1), b.Client.Exists(ctx, key(b, "views")).Val())
		_, err = b.Client.ZScore(ctx, key(b, "views"), "i20000").Result()
		assert.ErrorIs(t, err, redis.Nil, "the 20,001st is gone")
	})
}
