package redistest_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
)

// A lost reply makes go-redis re-send the command, which then runs twice:
// the fault every state-changing operation must survive.
func TestFaults_LoseReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient()
		k := b.Prefix + "{x}:n"
		require.NoError(t, c.Set(ctx, k, 0, 0).Err()) // also learns the cluster layout

		f.LoseReply(1, redistest.Commands("incr"))
		n, err := c.Incr(ctx, k).Result()
		require.NoError(t, err, "go-redis re-sent the command")
		assert.Equal(t, int64(2), n, "the first run counted too")
		assert.Equal(t, int64(1), f.Lost())
		assert.Zero(t, f.Armed())

		// Without retries the caller sees the lost reply.
		c2, _, f2 := b.FaultyClient(func(o *redis.UniversalOptions) { o.MaxRetries = -1; o.MaxRedirects = -1 })
		require.NoError(t, c2.Get(ctx, k).Err())
		f2.LoseReply(1, redistest.Scripts)
		err = c2.Eval(ctx, "return redis.call('incr', KEYS[1])", []string{k}).Err()
		assert.Error(t, err)
		assert.Equal(t, "3", b.Client.Get(ctx, k).Val(), "it ran before its reply was lost")

		// Pipelines: the replies before the lost one arrive, the rest is re-sent.
		f.LoseReply(1, redistest.Commands("incrby"))
		cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, k)
			p.IncrBy(ctx, k, 10)
			return nil
		})
		require.NoError(t, err)
		assert.Len(t, cmds, 2)
		v, err := b.Client.Get(ctx, k).Int64()
		require.NoError(t, err)
		assert.GreaterOrEqual(t, v, int64(3+1+10+10), "the pipeline ran at least once more than once")

		// Two commands of one pipeline marked to lose their replies: the
		// cut after the first loses the second's reply too, and both count.
		lost := f.Lost()
		f.LoseReply(1, redistest.Commands("incr"))
		f.LoseReply(1, redistest.Commands("incrby"))
		_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, k)
			p.IncrBy(ctx, k, 10)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, lost+2, f.Lost())
		assert.Zero(t, f.Armed())
	})
}

func TestFaults_DelayAndCut(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.ReadTimeout = 50 * time.Millisecond
			o.MaxRetries = -1
			o.MaxRedirects = -1
		})
		k := b.Prefix + "{x}:n"
		// On a loaded machine a 50 ms read can time out without any fault
		// (a Cluster client's first command also fetches COMMAND info):
		// set up until it works, so that the INCR below is sent as is.
		require.Eventually(t, func() bool { return c.Set(ctx, k, 0, 0).Err() == nil }, 30*time.Second, time.Millisecond)
		f.Delay(200 * time.Millisecond)
		err := c.Incr(ctx, k).Err()
		assert.ErrorContains(t, err, "timeout")
		f.Delay(0)
		// The proxy forwards the request at once and stalls the reply: the
		// INCR runs on the server although its caller timed out.
		require.Eventually(t, func() bool { return b.Client.Get(ctx, k).Val() == "1" }, 30*time.Second, time.Millisecond,
			"the stalled command ran")

		require.NoError(t, c.Ping(ctx).Err())
		f.Cut()
		// The pooled connection is dead; a command on it fails or is
		// re-dialled, and later commands work.
		_ = c.Ping(ctx).Err()
		assert.NoError(t, c.Ping(ctx).Err())
	})
}
