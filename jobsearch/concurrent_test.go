package jobsearch_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/jobsearch"
)

// TestBoard_concurrent runs writers through three clients at once on one
// board: each indexes, re-indexes and removes jobs of its own while the
// others do the same with theirs (the skill postings and the board's
// counts are shared), and meanwhile asks Find and IsQualified for random
// candidates. Its own jobs do not change during its reads, so Find
// restricted to them must be exactly what its model says, and IsQualified
// of each must agree. At the end the board must answer as one model of
// every writer's final jobs: Len, Find for random candidates, and Jobs
// paging through every job once.
func TestBoard_concurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		writers, owned, rounds := 6, 40, 150
		if !b.Real() {
			writers, owned, rounds = 4, 20, 40
		}
		const universe = 12
		clients := []redis.UniversalClient{b.Client}
		for range 2 {
			c, _ := b.NewClient()
			clients = append(clients, c)
		}
		models := make([]model, writers)
		var wg sync.WaitGroup
		for w := range writers {
			m := model{}
			models[w] = m
			board, err := jobsearch.New(clients[w%len(clients)], "jobs", jobsearch.WithPrefix(b.Prefix))
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(uint64(w), 5))
			prefix := fmt.Sprintf("w%d-", w)
			wg.Go(func() {
				ctx := t.Context()
				own := func() string { return fmt.Sprintf("%s%02d", prefix, r.IntN(owned)) }
				for round := range rounds {
					switch op := r.IntN(4); {
					case op < 2: // index or re-index a few jobs
						batch := map[string]jobsearch.Job{}
						for range 1 + r.IntN(4) {
							id := own()
							batch[id] = jobsearch.Job{ID: id, Requires: randSkills(r, 1+r.IntN(4), universe, 4)}
						}
						wantAdded := 0
						var jobs []jobsearch.Job
						for id, job := range batch {
							if _, ok := m[id]; !ok {
								wantAdded++
							}
							m[id] = job
							jobs = append(jobs, job)
						}
						added, replaced, err := board.Index(ctx, jobs...)
						if !assert.NoError(t, err, "round %d index", round) ||
							!assert.Equal(t, []int{wantAdded, len(jobs) - wantAdded}, []int{added, replaced}, "index") {
							return
						}
					case op == 2: // remove a few, some that do not exist
						var gone []string
						want := 0
						for range 1 + r.IntN(3) {
							if id := own(); !slices.Contains(gone, id) {
								gone = append(gone, id)
								if _, ok := m[id]; ok {
									want++
								}
								delete(m, id)
							}
						}
						n, err := board.Remove(ctx, gone...)
						if !assert.NoError(t, err, "remove") || !assert.Equal(t, want, n, "remove %v", gone) {
							return
						}
					default: // read while the others write
						cand := randSkills(r, 1+r.IntN(universe), universe, 5)
						got, err := board.Find(ctx, cand...)
						if !assert.NoError(t, err, "find") {
							return
						}
						mine := slices.DeleteFunc(got, func(id string) bool { return !strings.HasPrefix(id, prefix) })
						want := m.find(cand)
						if !assert.Equal(t, want, mine, "find %v: this writer's jobs", cand) {
							return
						}
						id := own()
						ok, err := board.IsQualified(ctx, id, cand...)
						if _, exists := m[id]; !exists {
							if !assert.ErrorIs(t, err, jobsearch.ErrNoJob, "is qualified %s (removed)", id) {
								return
							}
						} else if !assert.NoError(t, err) || !assert.Equal(t, slices.Contains(want, id), ok, "is qualified %s %v", id, cand) {
							return
						}
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}

		all := model{}
		for _, m := range models {
			for id, job := range m {
				all[id] = job
			}
		}
		ctx := t.Context()
		board := newBoard(t, b)
		n, err := board.Len(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(len(all)), n)
		r := rand.New(rand.NewPCG(99, 5))
		for range 100 {
			cand := randSkills(r, 1+r.IntN(universe), universe, 5)
			got, err := board.Find(ctx, cand...)
			require.NoError(t, err)
			require.Equal(t, all.find(cand), got, "find %v", cand)
		}
		var listed []string
		for off := 0; ; off += 32 {
			page, err := board.Jobs(ctx, off, 32)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			listed = append(listed, page...)
		}
		slices.Sort(listed)
		want := slices.Sorted(func(yield func(string) bool) {
			for id := range all {
				if !yield(id) {
					return
				}
			}
		})
		require.Equal(t, want, listed, "Jobs lists every job once")
	})
}
