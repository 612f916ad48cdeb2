package counters_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// Increments from 8 goroutines are summed in memory and written by Run and
// Close: every one counted once, one round trip per node per flush.
func TestBatcher(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		bt, err := c.Batcher(counters.WithInterval(5 * time.Millisecond))
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- bt.Run(ctx) }()
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 5000 {
					if err := bt.Add(fmt.Sprintf("page-%d", (g+i)%20), 1); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		require.NoError(t, bt.Close(ctx))
		require.NoError(t, <-done)
		assert.ErrorIs(t, bt.Add("page-0", 1), counters.ErrClosed)
		assert.Equal(t, counters.BatcherStats{Counted: 40000}, bt.Stats())
		var total int64
		for i := range 20 {
			s, err := c.Get(ctx, fmt.Sprintf("page-%d", i), 24*time.Hour)
			require.NoError(t, err)
			assert.Equal(t, int64(2000), sum(s))
			total += sum(s)
		}
		assert.Equal(t, int64(40000), total)
	})
}

// A flush is one pipeline: one round trip per node, whatever the number of
// counters.
func TestBatcher_Flush_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		bt, err := c.Batcher()
		require.NoError(t, err)
		add := func() {
			for i := range 100 {
				require.NoError(t, bt.Add(fmt.Sprintf("page-%d", i), 1))
			}
		}
		add()
		require.NoError(t, bt.Flush(ctx)) // caches the script on every node
		add()
		rt, cmds := b.Count.Delta(func() { err = bt.Flush(ctx) })
		require.NoError(t, err)
		nodes := int64(1)
		if b.Kind == redistest.Cluster {
			nodes = 3
		}
		assert.Equal(t, nodes, rt, "round trips")
		assert.Equal(t, int64(100), cmds, "one script per counter")
		rt, _ = b.Count.Delta(func() { err = bt.Flush(ctx) })
		require.NoError(t, err)
		assert.Zero(t, rt, "nothing to flush")
	})
}

// Run flushes once more when its ctx ends.
func TestBatcher_Run_flushesAtEnd(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		c, _ := newCounters(t, b, b.Client)
		bt, err := c.Batcher(counters.WithInterval(time.Hour))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- bt.Run(ctx) }()
		require.NoError(t, bt.Add("hits", 3))
		cancel()
		require.NoError(t, <-done)
		s, err := c.Get(t.Context(), "hits", time.Minute)
		require.NoError(t, err)
		assert.Equal(t, int64(3), sum(s))
	})
}
