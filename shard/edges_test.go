package shard_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// SessionID refuses a string that does not start with 15 hex digits: a
// '+' is not one (strconv.ParseInt took it for a sign).
func TestSessionID_sign(t *testing.T) {
	id, err := shard.SessionID("+0000000-0000-0010-0000-000000000000")
	assert.Error(t, err, "a '+' is not a hex digit, yet SessionID returned %d", id)
}

// A blocking pop given the longest timeout (a caller's "wait for ever")
// registers itself, so that a push wakes it (its registration time used to
// overflow, which made it leave instead: a value pushed waited for the end
// of a 30 s block, wait.MaxBlock).
func TestList_blockingPopForever(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		rdb, _ := b.NewClient()
		gate := redistest.NewGate(func(cmds []redis.Cmder) bool { return cmds[0].Name() == "blmove" })
		rdb.AddHook(gate)
		l := must(shard.NewList(ctx, rdb, "forever", shard.WithPrefix(b.Prefix)))
		hold := gate.Arm()
		done := make(chan error, 1)
		go func() {
			_, _, err := l.BlockingPopLeft(ctx, time.Duration(math.MaxInt64))
			done <- err
		}()
		hold.Entered() // the pop found the list empty and is about to block
		n := b.Client.ZCard(t.Context(), b.Prefix+"{forever}:waiters").Val()
		cancel()
		hold.Release()
		<-done
		assert.Equal(t, int64(1), n, "the blocked pop is registered, so that a push wakes it")
	})
}

// A batch write of which one shard fails with a wrong type and another's
// reply is lost (it may have run) says its outcome is unknown (the
// KeyError used to hide the lost reply) and names each failed shard.
func TestSet_batchMixedErrors(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := shard.WithPrefix(b.Prefix)
		set := must(shard.NewSet(ctx, b.Client, "mixed", 100_000, shard.WithShardSize(10), p))
		// Two members of different shards, on different servers where
		// there are several (one pipeline each), else in one pipeline.
		a := int64(1)
		m := int64(2)
		several := b.Kind == redistest.Cluster || b.Kind == redistest.Sharded
		for set.ShardKey(m) == set.ShardKey(a) || several && nodeOf(t, b, set.ShardKey(m)) == nodeOf(t, b, set.ShardKey(a)) {
			m++
		}
		ka, km := set.ShardKey(a), set.ShardKey(m)
		require.NoError(t, b.Client.Set(ctx, ka, "not a set", 0).Err())

		c, _, f := b.FaultyClient(func(o *redis.UniversalOptions) { o.MaxRetries, o.MaxRedirects = -1, -1 })
		fs := must(shard.NewSet(ctx, c, "mixed", 100_000, shard.WithShardSize(10), p))
		f.LoseReply(1, func(cmd []string) bool { return len(cmd) > 1 && cmd[0] == "sadd" && cmd[1] == km })
		err := fs.Add(ctx, a, m)
		require.Equal(t, int64(1), f.Lost(), "the SADD of %s lost its reply", km)
		require.Error(t, err)
		var kerr *ria.KeyError
		assert.True(t, errors.As(err, &kerr), "the wrong-type shard is reported: %v", err)
		assert.True(t, b.Client.SIsMember(ctx, km, m).Val(), "the lost SADD ran")
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, "a shard's reply was lost: outcome unknown (%v)", err)
		assert.ErrorContains(t, err, km, "the shard whose reply was lost is named")
	})
}
