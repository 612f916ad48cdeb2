package redistest_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestRun_backends(t *testing.T) {
	seen := map[redistest.Kind]bool{}
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		seen[b.Kind] = true
		ctx := t.Context()
		assert.Contains(t, b.Prefix, t.Name())
		assert.Equal(t, b.Kind != redistest.Mini, b.Real())

		rt, cmds := b.Count.Delta(func() {
			require.NoError(t, b.Client.Set(ctx, b.Prefix+"{x}:a", "1", 0).Err())
			_, err := b.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.Get(ctx, b.Prefix+"{x}:a")
				p.Get(ctx, b.Prefix+"{x}:b")
				return nil
			})
			require.ErrorIs(t, err, redis.Nil)
		})
		assert.Equal(t, int64(2), rt)
		assert.Equal(t, int64(3), cmds)

		// Keys that share a hash tag can be used together; others cannot on a cluster.
		err := b.Client.Eval(ctx, "return redis.call('mget', KEYS[1], KEYS[2])", []string{b.Prefix + "{x}:a", b.Prefix + "{x}:b"}).Err()
		assert.NoError(t, err)
		if b.Kind == redistest.Cluster {
			err := b.Client.MGet(ctx, b.Prefix+"{x}:a", b.Prefix+"{y}:a").Err()
			assert.ErrorContains(t, err, "CROSSSLOT")
		}

		require.NoError(t, b.Client.Set(ctx, b.Prefix+"{x}:ttl", "1", 200*time.Millisecond).Err())
		b.FastForward(300 * time.Millisecond)
		assert.ErrorIs(t, b.Client.Get(ctx, b.Prefix+"{x}:ttl").Err(), redis.Nil)
	})
	if !t.Skipped() {
		assert.Len(t, seen, 3)
	}
}

func TestFastForward_movesServerTime(t *testing.T) {
	b := redistest.New(t, redistest.Mini)
	before, err := b.Client.Time(t.Context()).Result()
	require.NoError(t, err)
	b.FastForward(time.Hour)
	after, err := b.Client.Time(t.Context()).Result()
	require.NoError(t, err)
	assert.WithinDuration(t, before.Add(time.Hour), after, time.Second)
}

func TestServer_Restart(t *testing.T) {
	s := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer c.Close()
	ctx := t.Context()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	s.Kill()
	assert.Error(t, c.Ping(ctx).Err())
	s.Restart(t)
	require.Eventually(t, func() bool { return c.Ping(ctx).Err() == nil }, 5*time.Second, 10*time.Millisecond)
	assert.ErrorIs(t, c.Get(ctx, "k").Err(), redis.Nil, "restart begins with an empty dataset")
}

func TestStartReplicated(t *testing.T) {
	p, r := redistest.StartReplicated(t)
	ctx := t.Context()
	pc := redis.NewClient(&redis.Options{Addr: p.Addr()})
	defer pc.Close()
	rc := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer rc.Close()
	require.NoError(t, pc.Set(ctx, "k", "v", 0).Err())
	n, err := pc.Do(ctx, "wait", 1, 5000).Int()
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the replica acknowledged the write")
	assert.Equal(t, "v", rc.Get(ctx, "k").Val())
	assert.Error(t, rc.Set(ctx, "k", "w", 0).Err(), "a replica is read-only")
}
