package cache_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// A batched read with a loader of an entry that does not decode into T is
// a miss: Exec loads it (once), the Result holds the loaded value, the
// entry is overwritten with its encoding, and the treatment is logged. (A
// batched read without a loader reports ErrDecode: see
// TestCache_Get_undecodable.)
func TestBatch_undecodableWithLoader(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var logs logBuffer
		c := newCache[job](t, b.Client, b, cache.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		k := key(b, "jobs", "7", "val")
		require.NoError(t, b.Client.Set(ctx, k, "not json", time.Minute).Err())

		var loads atomic.Int64
		bt := cache.NewBatch(b.Client)
		r := c.Read(bt, "7", func(context.Context) (job, error) {
			loads.Add(1)
			return job{ID: 7, Title: "welder"}, nil
		})
		require.NoError(t, bt.Exec(ctx))
		got, ok, err := r.Value()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, job{ID: 7, Title: "welder"}, got)
		assert.Equal(t, int64(1), loads.Load())
		assert.JSONEq(t, `{"id":7,"title":"welder","tags":null}`, raw(t, b, k), "overwritten")
		assert.Contains(t, logs.String(), "undecodable entry treated as a miss")

		// The stored value is a hit now, for a read without a loader.
		bt = cache.NewBatch(b.Client)
		r = c.Read(bt, "7", nil)
		require.NoError(t, bt.Exec(ctx))
		got, ok, err = r.Value()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, job{ID: 7, Title: "welder"}, got)
		assert.Equal(t, int64(1), loads.Load(), "not loaded again")
	})
}
