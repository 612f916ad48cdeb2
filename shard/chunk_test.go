package shard_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// pipeWatch is a redis.Hook that records the size of each pipeline whose
// first command is cmd, and calls after (if set) once such a pipeline has
// had its replies.
type pipeWatch struct {
	cmd   string
	after func()
	mu    sync.Mutex
	sizes []int
}

func (w *pipeWatch) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (w *pipeWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (w *pipeWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if len(cmds) > 0 && strings.EqualFold(cmds[0].Name(), w.cmd) {
			w.mu.Lock()
			w.sizes = append(w.sizes, len(cmds))
			w.mu.Unlock()
			if w.after != nil {
				w.after()
			}
		}
		return err
	}
}

func (w *pipeWatch) Sizes() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.sizes...)
}

// watched returns a client of b of its own with w on it. On a Cluster
// (and a Router) the hook sees each pipeline whole, before it is split
// over the nodes.
func watched(b *redistest.Backend, w *pipeWatch) redis.UniversalClient {
	c, _ := b.NewClient()
	c.AddHook(w)
	return c
}

// Records.Scan reads the strings' lengths 10,000 per pipeline and stops
// between pipelines when ctx ends: a far max string number cannot make it
// build one huge pipeline that ignores ctx.
func TestRecords_Scan_chunked(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := shard.WithPrefix(b.Prefix)
		w := &pipeWatch{cmd: "strlen"}
		c := watched(b, w)
		r := must(shard.NewRecords(ctx, c, "r", 2, shard.WithIDsPerShard(1), p))
		for _, id := range []int64{0, 12_000, 25_000} {
			require.NoError(t, r.Put(ctx, id, []byte("ab")))
		}
		var firsts []int64
		require.NoError(t, r.Scan(ctx, func(first int64, block []byte) error {
			assert.Equal(t, "ab", string(block))
			firsts = append(firsts, first)
			return nil
		}))
		assert.ElementsMatch(t, []int64{0, 12_000, 25_000}, firsts)
		assert.Equal(t, []int{10_000, 10_000, 5_001}, w.Sizes(), "STRLEN pipelines")

		// ctx ends once the first pipeline has its replies: Scan sends no
		// other and says so.
		w2 := &pipeWatch{cmd: "strlen"}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w2.after = cancel
		r2 := must(shard.NewRecords(ctx, watched(b, w2), "r", 2, shard.WithIDsPerShard(1), p))
		err := r2.Scan(cctx, func(int64, []byte) error { return nil })
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []int{10_000}, w2.Sizes(), "no pipeline after ctx ended")
	})
}

// Set.Len and Visitors.Count read their shards' sizes 10,000 per
// pipeline, and stop between pipelines when ctx ends.
func TestSet_Len_chunked(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := shard.WithPrefix(b.Prefix)
		w := &pipeWatch{cmd: "scard"}
		c := watched(b, w)
		s := must(shard.NewSet(ctx, c, "s", 12_500, shard.WithShardSize(1), p)) // 25,000 shards
		require.NoError(t, s.Add(ctx, 1, 2, 3, 1_000_000))
		n, err := s.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(4), n)
		assert.Equal(t, []int{10_000, 10_000, 5_000}, w.Sizes(), "SCARD pipelines")

		w2 := &pipeWatch{cmd: "scard"}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w2.after = cancel
		s2 := must(shard.NewSet(ctx, watched(b, w2), "s", 12_500, shard.WithShardSize(1), p))
		_, err = s2.Len(cctx)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []int{10_000}, w2.Sizes(), "no pipeline after ctx ended")

		// A Visitors day of 2·16,384 shards (8,000 expected: 12,000 up to
		// a power of two).
		w3 := &pipeWatch{cmd: "scard"}
		v := must(shard.NewVisitors(ctx, watched(b, w3), "v", shard.Sets, shard.WithShardSize(1),
			shard.WithDailyExpected(8_000), p))
		day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
		require.NoError(t, v.Visit(ctx, day, 7, 8, 9))
		w3.mu.Lock()
		w3.sizes = nil // the day before's count
		w3.mu.Unlock()
		n, err = v.Count(ctx, day)
		require.NoError(t, err)
		assert.Equal(t, int64(3), n)
		assert.Equal(t, []int{10_000, 10_000, 10_000, 2_768}, w3.Sizes(), "SCARD pipelines")
	})
}

// Shard and string counts are bounded by MaxShards when a structure is
// created or written, with ErrSize and nothing written; values past the
// bound found in Redis are corrupt.
func TestMaxShards(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := shard.WithPrefix(b.Prefix)

		_, err := shard.NewSet(ctx, b.Client, "huge", 1<<50, shard.WithShardSize(512), p)
		assert.ErrorIs(t, err, shard.ErrSize, "4.4e12 shards")
		_, err = shard.NewSet(ctx, b.Client, "over", shard.MaxShards*256+256, shard.WithShardSize(512), p)
		assert.ErrorIs(t, err, shard.ErrSize, "MaxShards+1 shards")
		_, err = shard.NewVisitors(ctx, b.Client, "huge", shard.Sets, shard.WithDailyExpected(1<<40), shard.WithShardSize(512), p)
		assert.ErrorIs(t, err, shard.ErrSize, "daily expected")
		_, err = shard.NewVisitors(ctx, b.Client, "huge", shard.Sets, shard.WithDailyExpected(1<<62), shard.WithShardSize(512), p)
		assert.ErrorIs(t, err, shard.ErrSize, "daily expected that overflows 1.5·n")
		assert.Empty(t, b.Keys(""), "nothing written")

		set := must(shard.NewSet(ctx, b.Client, "max", shard.MaxShards*256, shard.WithShardSize(512), p))
		assert.Equal(t, int64(shard.MaxShards), set.Shards())
		must(shard.NewVisitors(ctx, b.Client, "hll", shard.HyperLogLog, shard.WithDailyExpected(1<<62), shard.WithShardSize(512), p))

		// A day's size stored past the bound (by hand, or an older version).
		v := must(shard.NewVisitors(ctx, b.Client, "v", shard.Sets, shard.WithShardSize(512), p))
		day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
		require.NoError(t, b.Client.Set(ctx, b.Prefix+"{v:2024-05-01}:expected", int64(1)<<50, 0).Err())
		_, err = v.Count(ctx, day)
		assert.ErrorIs(t, err, ria.ErrCorrupt)

		// Records: ids past MaxShards strings.
		r := must(shard.NewRecords(ctx, b.Client, "r", 2, shard.WithIDsPerShard(2), p))
		before := b.Snapshot()
		assert.ErrorIs(t, r.Put(ctx, 1<<62, []byte("ab")), shard.ErrSize)
		assert.ErrorIs(t, r.Put(ctx, 2*shard.MaxShards, []byte("ab")), shard.ErrSize)
		_, err = r.Get(ctx, 2*shard.MaxShards)
		assert.ErrorIs(t, err, shard.ErrSize)
		assert.Equal(t, before, b.Snapshot(), "nothing written")
		require.NoError(t, r.Put(ctx, 2*shard.MaxShards-1, []byte("ab")), "the last id")
		rec, err := r.Get(ctx, 2*shard.MaxShards-1)
		require.NoError(t, err)
		assert.Equal(t, "ab", string(rec))
		require.NoError(t, b.Client.Set(ctx, b.Prefix+"{r}:records:max", shard.MaxShards, 0).Err())
		err = r.Scan(ctx, func(int64, []byte) error { return nil })
		assert.ErrorIs(t, err, ria.ErrCorrupt, "a max string number Put never writes")
	})
}
