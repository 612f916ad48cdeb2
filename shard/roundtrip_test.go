package shard_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// otherClient returns another client of b (another process), not counted
// by b.Count.
func otherClient(t *testing.T, b *redistest.Backend) redis.UniversalClient {
	t.Helper()
	c, _ := b.NewClient()
	return c
}

// The round trips the package doc states, for the calls other tests do
// not count.
func TestRoundTrips(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := shard.WithPrefix(b.Prefix)
		rt := func(fn func() error) int64 {
			t.Helper()
			var err error
			n, _ := b.Count.Delta(func() { err = fn() })
			require.NoError(t, err)
			return n
		}

		s := must(shard.NewSet(ctx, b.Client, "s", 100, shard.WithShardSize(10), p))
		members := []int64{1, 2, 3, 4, 5, 6, 7, 8}
		var keys []string
		for _, m := range members {
			keys = append(keys, s.ShardKey(m))
		}
		assert.Equal(t, nodes(t, b, keys...), rt(func() error { return s.Add(ctx, members...) }), "set add: 1 per server")
		assert.Equal(t, int64(1), rt(func() error { _, err := s.Contains(ctx, 3); return err }), "set contains")
		var all []string
		for i := range 2 * 100 / 10 {
			all = append(all, b.Prefix+"{s:"+strconv.Itoa(i)+"}:set")
		}
		assert.Equal(t, nodes(t, b, all...), rt(func() error { _, err := s.Len(ctx); return err }), "set len: 1 per server")
		assert.Equal(t, nodes(t, b, keys[:3]...), rt(func() error { return s.Remove(ctx, members[:3]...) }), "set remove")

		day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
		hll := must(shard.NewVisitors(ctx, b.Client, "w", shard.HyperLogLog, p))
		assert.Equal(t, int64(1), rt(func() error { return hll.Visit(ctx, day, 1, 2, 3) }), "hyperloglog visit")
		assert.Equal(t, int64(1), rt(func() error { _, err := hll.Count(ctx, day); return err }), "hyperloglog count")

		r := must(shard.NewRecords(ctx, b.Client, "r", 2, shard.WithIDsPerShard(10), shard.WithBlockSize(8), p))
		require.NoError(t, r.Put(ctx, 1, []byte("ab"))) // loads the raise script
		assert.Equal(t, int64(1), rt(func() error { return r.Put(ctx, 2, []byte("cd")) }), "put")
		assert.Equal(t, int64(2), rt(func() error { return r.Put(ctx, 15, []byte("ef")) }), "first put into a string: raise + SETRANGE")
		assert.Equal(t, int64(1), rt(func() error { _, err := r.Get(ctx, 2); return err }), "get")
		strs := []string{b.Prefix + "{r:0}:records", b.Prefix + "{r:1}:records"}
		assert.Equal(t, nodes(t, b, strs...), rt(func() error { _, err := r.GetMany(ctx, 1, 2, 15); return err }), "get many: 1 per server")
		// Scan: GET max, STRLEN of strings 0 and 1, then blocks of 8 bytes
		// (4 records): string 0 holds 6 bytes (1 block), string 1 12 (2).
		assert.Equal(t, 1+nodes(t, b, strs...)+3, rt(func() error {
			return r.Scan(ctx, func(int64, []byte) error { return nil })
		}), "scan")

		// A blocking pop: 1 round trip when the list has a value, 3 when a
		// value arrives while it waits (register, wait, pop again).
		l := must(shard.NewList(ctx, b.Client, "l", p))
		oc := otherClient(t, b)
		pusher := must(shard.NewList(ctx, oc, "l", p))
		_, _, err := l.PopLeft(ctx) // loads the script
		require.NoError(t, err)
		_, err = l.PushRight(ctx, "a")
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt(func() error { _, _, err := l.BlockingPopLeft(ctx, time.Second); return err }), "blocking pop of a value there")
		n := rt(func() error {
			done := make(chan error, 1)
			go func() {
				waitWaiterClient(t, oc, pusher, b.Prefix+"{l}:waiters", done)
			}()
			v, ok, err := l.BlockingPopLeft(ctx, 30*time.Second)
			require.NoError(t, <-done)
			assert.True(t, ok)
			assert.Equal(t, "b", v)
			return err
		})
		assert.Equal(t, int64(3), n, "blocking pop that waits")
	})
}

// waitWaiterClient waits (on the pusher's own client) until a pop is
// registered, then pushes "b", and reports on done.
func waitWaiterClient(t *testing.T, c redis.UniversalClient, l *shard.List, waiters string, done chan<- error) {
	deadline := time.Now().Add(30 * time.Second) // bounds a hang only
	for c.ZCard(t.Context(), waiters).Val() == 0 {
		if time.Now().After(deadline) {
			done <- assert.AnError
			return
		}
		time.Sleep(time.Millisecond) // polls the server for the event
	}
	_, err := l.PushRight(t.Context(), "b")
	done <- err
}
