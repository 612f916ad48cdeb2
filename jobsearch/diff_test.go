package jobsearch_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/jobsearch"
)

// model is the brute-force in-memory board the differential test checks
// Find against.
type model map[string]jobsearch.Job

func (m model) find(cand []jobsearch.Skill) []string {
	have := make(map[string]jobsearch.Skill, len(cand))
	for _, s := range cand {
		have[s.Name] = s
	}
	out := []string{}
	for id, j := range m {
		ok := true
		for _, r := range j.Requires {
			h, found := have[r.Name]
			if !found || h.Level < r.Level || h.Years < r.Years {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// randSkills draws n distinct skills of a universe of u, with levels 0..2
// (the book's) and years 0..maxYears, zero half the time.
func randSkills(r *rand.Rand, n, u, maxYears int) []jobsearch.Skill {
	out := make([]jobsearch.Skill, 0, n)
	for _, i := range r.Perm(u)[:n] {
		s := jobsearch.Skill{Name: fmt.Sprintf("skill-%02d", i), Level: r.IntN(3)}
		if r.IntN(2) == 0 {
			s.Years = r.IntN(maxYears + 1)
		}
		out = append(out, s)
	}
	return out
}

// TestFind_differential indexes random jobs (then re-indexes and removes
// some) and checks that random candidates find exactly the jobs a
// brute-force match finds: 10,000 jobs and 1,000 candidates on the real
// servers, fewer on miniredis (slow on big sorted sets).
func TestFind_differential(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		nJobs, nCands := 10000, 1000
		if !b.Real() {
			nJobs, nCands = 2000, 200
		}
		const universe = 40
		r := rand.New(rand.NewPCG(12, uint64(nJobs)))
		j := newBoard(t, b)
		m := model{}
		var batch []jobsearch.Job
		flush := func() {
			_, _, err := j.Index(ctx, batch...)
			require.NoError(t, err)
			batch = batch[:0]
		}
		for i := range nJobs {
			job := jobsearch.Job{ID: fmt.Sprintf("job-%05d", i), Requires: randSkills(r, 1+r.IntN(5), universe, 10)}
			m[job.ID] = job
			if batch = append(batch, job); len(batch) == jobsearch.MaxBatch {
				flush()
			}
		}
		flush()
		// Re-index a tenth with new requirements, remove a twentieth.
		for i := 0; i < nJobs; i += 10 {
			job := jobsearch.Job{ID: fmt.Sprintf("job-%05d", i), Requires: randSkills(r, 1+r.IntN(5), universe, 10)}
			m[job.ID] = job
			batch = append(batch, job)
		}
		flush()
		var gone []string
		for i := 5; i < nJobs; i += 20 {
			id := fmt.Sprintf("job-%05d", i)
			delete(m, id)
			gone = append(gone, id)
		}
		n, err := j.Remove(ctx, gone...)
		require.NoError(t, err)
		require.Equal(t, len(gone), n)
		size, err := j.Len(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(len(m)), size)

		found := 0
		for c := range nCands {
			cand := randSkills(r, 1+r.IntN(16), universe, 12)
			got, err := j.Find(ctx, cand...)
			require.NoError(t, err)
			want := m.find(cand)
			if !assert.Equal(t, want, got, "candidate %d: %v", c, cand) {
				return
			}
			found += len(got)
		}
		t.Logf("%d jobs, %d candidates, %d matches", len(m), nCands, found)
		assert.Positive(t, found)
	})
}
