package social_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/social"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newNet returns a Network of the test's prefix on rdb, and its group.
func newNet(t *testing.T, b *redistest.Backend, rdb redis.UniversalClient, opts ...social.Option) (*social.Network, *queue.Group) {
	t.Helper()
	g, err := queue.New(rdb, "social", queue.WithPrefix(b.Prefix+"queue:"))
	require.NoError(t, err)
	n, err := social.New(rdb, g, append([]social.Option{social.WithPrefix(b.Prefix + "social:")}, opts...)...)
	require.NoError(t, err)
	return n, g
}

func key(b *redistest.Backend, uid, part string) string {
	return b.Prefix + "social:{" + uid + "}:" + part
}

// drain runs a worker with the network's handlers until the group has no
// ready, delayed or in-flight task, then stops it.
func drain(t *testing.T, n *social.Network, g *queue.Group) {
	t.Helper()
	w, err := queue.NewWorker(g, queue.Queues(social.DefaultQueue), queue.Concurrency(4))
	require.NoError(t, err)
	require.NoError(t, n.Handle(w))
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	require.Eventually(t, func() bool {
		s, err := g.Stats(t.Context(), social.DefaultQueue)
		return err == nil && s.Ready[social.DefaultQueue] == 0 && s.Delayed == 0 && s.InFlight == 0
	}, time.Minute, 5*time.Millisecond)
	stop()
	require.NoError(t, <-done)
	s, err := g.Stats(t.Context(), social.DefaultQueue)
	require.NoError(t, err)
	assert.Zero(t, s.Dead, "dead tasks")
}

// ringNet returns a Network on a *redis.Ring of two miniredis shards (its
// task queue on the first), and the ring.
func ringNet(t *testing.T, opts ...social.Option) (*social.Network, *redis.Ring) {
	t.Helper()
	m1, m2 := miniredis.RunT(t), miniredis.RunT(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": m1.Addr(), "b": m2.Addr()}})
	t.Cleanup(func() { _ = ring.Close() })
	qc := redis.NewClient(&redis.Options{Addr: m1.Addr()})
	t.Cleanup(func() { _ = qc.Close() })
	g, err := queue.New(qc, "social")
	require.NoError(t, err)
	n, err := social.New(ring, g, opts...)
	require.NoError(t, err)
	return n, ring
}

// runUntilDead runs a worker of n's tasks until want tasks are dead and
// the rest settled (retries hurried on miniredis, whose TIME the harness
// stops), and returns the dead tasks, newest first.
func runUntilDead(t *testing.T, b *redistest.Backend, n *social.Network, g *queue.Group, want int) []queue.DeadTask {
	t.Helper()
	ctx := t.Context()
	w, err := queue.NewWorker(g, queue.Queues(social.DefaultQueue), queue.Backoff(time.Millisecond, 5*time.Millisecond),
		queue.Logger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	require.NoError(t, n.Handle(w))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	require.Eventually(t, func() bool {
		if b.Mini != nil {
			b.FastForward(10 * time.Millisecond) // let retries fall due
		}
		s, err := g.Stats(ctx, social.DefaultQueue)
		return err == nil && s.Dead == int64(want) && s.Ready[social.DefaultQueue] == 0 && s.Delayed == 0 && s.InFlight == 0
	}, time.Minute, 5*time.Millisecond)
	stop()
	require.NoError(t, <-done, "a task's error is the task's, not the worker's")
	d, err := g.Dead(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, d, want)
	return d
}

func mustUser(t *testing.T, n *social.Network, login string) string {
	t.Helper()
	uid, err := n.CreateUser(t.Context(), login, login+" name")
	require.NoError(t, err)
	return uid
}

func mustPost(t *testing.T, n *social.Network, uid, msg string) social.Status {
	t.Helper()
	st, err := n.Post(t.Context(), uid, msg)
	require.NoError(t, err)
	return st
}

func mustFollow(t *testing.T, n *social.Network, uid, other string) {
	t.Helper()
	ok, err := n.Follow(t.Context(), uid, other)
	require.NoError(t, err)
	require.True(t, ok)
}

func user(t *testing.T, n *social.Network, uid string) social.User {
	t.Helper()
	u, err := n.User(t.Context(), uid)
	require.NoError(t, err)
	return u
}

// page returns the IDs of the first count statuses of a timeline.
func page(t *testing.T, n *social.Network, uid string, tl social.Timeline, count int) []string {
	t.Helper()
	st, _, err := n.Page(t.Context(), uid, tl, 0, count)
	require.NoError(t, err)
	ids := make([]string, len(st))
	for i, s := range st {
		ids[i] = s.ID
	}
	return ids
}
