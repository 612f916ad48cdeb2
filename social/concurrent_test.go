package social_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/social"
)

// Many goroutines post, follow and add to a list at once while fan-out
// workers run. No status is lost: once everything has finished, every
// follower's home timeline and the list's timeline hold exactly the newest
// statuses (up to the cap) of the users they follow, whether a status
// reached them by the copy of a follow or by the fan-out, and counts are
// exact.
func TestNetwork_concurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const (
			authors   = 3
			followers = 12
			posts     = 20
			capacity  = 30 // < authors*posts: the timelines are trimmed
		)
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithTimelineCap(capacity), social.WithFanoutBatch(3))
		var as, fs []string
		for i := range authors {
			as = append(as, mustUser(t, n, fmt.Sprint("a", i)))
		}
		for i := range followers {
			fs = append(fs, mustUser(t, n, fmt.Sprint("f", i)))
		}
		require.NoError(t, n.CreateList(ctx, "f0", "all"))

		w, err := queue.NewWorker(g, queue.Queues(social.DefaultQueue), queue.Concurrency(4))
		require.NoError(t, err)
		require.NoError(t, n.Handle(w))
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(runCtx) }()

		var wg sync.WaitGroup
		var mu sync.Mutex
		var all []social.Status
		for _, a := range as {
			wg.Go(func() {
				for i := range posts {
					st, err := n.Post(ctx, a, fmt.Sprint(a, " ", i))
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					all = append(all, st)
					mu.Unlock()
				}
			})
		}
		for i, f := range fs {
			wg.Go(func() {
				order := slices.Clone(as)
				rand.New(rand.NewPCG(uint64(i), 7)).Shuffle(len(order), func(x, y int) { order[x], order[y] = order[y], order[x] })
				for _, a := range order {
					ok, err := n.Follow(ctx, f, a)
					assert.NoError(t, err)
					assert.True(t, ok, "%s follows %s", f, a)
				}
			})
		}
		wg.Go(func() {
			for _, a := range as {
				ok, err := n.AddToList(ctx, "f0", "all", a)
				assert.NoError(t, err)
				assert.True(t, ok, a)
			}
		})
		wg.Wait()
		require.Eventually(t, func() bool {
			s, err := g.Stats(ctx, social.DefaultQueue)
			return err == nil && s.Ready[social.DefaultQueue] == 0 && s.Delayed == 0 && s.InFlight == 0
		}, time.Minute, 5*time.Millisecond)
		stop()
		require.NoError(t, <-done)
		s, err := g.Stats(ctx, social.DefaultQueue)
		require.NoError(t, err)
		require.Zero(t, s.Dead)

		// The newest capacity statuses in the order of a timeline ZSET:
		// score (ms), then ID, highest first.
		require.Len(t, all, authors*posts)
		slices.SortFunc(all, func(x, y social.Status) int {
			return cmp.Or(y.Posted.Compare(x.Posted), strings.Compare(y.ID, x.ID))
		})
		var want []string
		for _, st := range all[:capacity] {
			want = append(want, st.ID)
		}
		for _, f := range fs {
			assert.Equal(t, want, page(t, n, f, social.Home, social.MaxPage), "home of %s", f)
			u := user(t, n, f)
			assert.EqualValues(t, authors, u.Following, f)
		}
		assert.Equal(t, want, listPage(t, n, "f0", "all", social.MaxPage), "the list's timeline")
		for _, a := range as {
			u := user(t, n, a)
			assert.EqualValues(t, followers, u.Followers, a)
			assert.EqualValues(t, posts, u.Posts, a)
			assert.Len(t, page(t, n, a, social.Profile, social.MaxPage), posts, a)
		}
	})
}
