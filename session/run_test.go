package session_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// Cleaner.Run keeps cleaning as sessions come, and returns when ctx ends.
func TestCleaner_Run(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		for i := range 5 {
			require.NoError(t, s.UpdateToken(t.Context(), fmt.Sprintf("a-%d", i), "u", "item"))
		}
		c, err := s.Cleaner(2, session.WithInterval(time.Millisecond), session.WithBatch(1))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, c.Run)

		sessions := func(want int64) func() bool {
			return func() bool {
				n, err := s.Sessions(t.Context())
				return err == nil && n == want
			}
		}
		require.Eventually(t, sessions(2), 5*time.Second, time.Millisecond)
		for i := range 4 {
			require.NoError(t, s.AddToCart(t.Context(), fmt.Sprintf("b-%d", i), "item", 1))
		}
		require.Eventually(t, sessions(2), 5*time.Second, time.Millisecond, "still cleaning")

		cancel()
		assert.NoError(t, returned(t, done))
	})
}

// RowCacher.Run caches rows again and again, finishes the row in flight
// when ctx ends, and returns.
func TestRowCacher_Run(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		var loads atomic.Int64
		inFlight := make(chan struct{})
		var block atomic.Bool
		rc, err := s.RowCacher(func(ctx context.Context, id string) (any, error) {
			n := loads.Add(1)
			if block.Load() && id == "slow" {
				close(inFlight)
				<-ctx.Done() // Run's ctx ended; this load finishes anyway
				return "last", nil
			}
			return n, nil
		}, session.WithInterval(time.Millisecond))
		require.NoError(t, err)
		require.NoError(t, s.ScheduleRowCache(t.Context(), "fast", 5*time.Millisecond))

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, rc.Run)
		require.Eventually(t, func() bool { return loads.Load() >= 3 }, 5*time.Second, time.Millisecond,
			"reloaded every 5ms")
		require.NoError(t, s.ScheduleRowCache(t.Context(), "fast", -1))

		block.Store(true)
		require.NoError(t, s.ScheduleRowCache(t.Context(), "slow", time.Hour))
		select {
		case <-inFlight:
		case <-time.After(5 * time.Second):
			t.Fatal("the slow row was not loaded")
		}
		cancel()
		assert.NoError(t, returned(t, done))
		data, ok, err := s.Row(t.Context(), "slow")
		require.NoError(t, err)
		assert.True(t, ok, "the row in flight was stored")
		assert.Equal(t, `"last"`, string(data))
	})
}

// Rescaler.Run rescales at once, then sleeps its interval; ending ctx
// wakes it.
func TestRescaler_Run(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		require.NoError(t, b.Client.ZAdd(t.Context(), key(b, "views"), redisZ("i", -8)).Err())
		r, err := s.Rescaler(session.WithInterval(time.Hour))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := runAsync(ctx, r.Run)
		require.Eventually(t, func() bool {
			return b.Client.ZScore(t.Context(), key(b, "views"), "i").Val() == -4
		}, 5*time.Second, time.Millisecond)
		cancel()
		assert.NoError(t, returned(t, done))
		assert.Equal(t, -4.0, b.Client.ZScore(t.Context(), key(b, "views"), "i").Val(), "once in an hour")
	})
}

// An error that retrying cannot mend ends Run with that error.
func TestCleaner_Run_wrongType(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		require.NoError(t, b.Client.Set(t.Context(), key(b, "recent"), "not a zset", 0).Err())
		c, err := s.Cleaner(0, session.WithInterval(time.Millisecond))
		require.NoError(t, err)
		err = returned(t, runAsync(t.Context(), c.Run))
		assert.ErrorContains(t, err, "session: cleaner:")
		assert.ErrorContains(t, err, "WRONGTYPE")
	})
}

// Run on a context that has already ended returns at once.
func TestRun_cancelled(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		s := newStore(t, b, b.Client)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		c, err := s.Cleaner(0)
		require.NoError(t, err)
		rc, err := s.RowCacher(func(context.Context, string) (any, error) { return 1, nil })
		require.NoError(t, err)
		r, err := s.Rescaler()
		require.NoError(t, err)
		rt, _ := b.Count.Delta(func() {
			assert.NoError(t, c.Run(ctx))
			assert.NoError(t, rc.Run(ctx))
			assert.NoError(t, r.Run(ctx))
		})
		assert.Zero(t, rt)
	})
}
