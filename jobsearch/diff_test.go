package jobsearch_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestIsQualified_differential checks, on random boards (indexed, partly
// re-indexed and removed) and random candidates, that IsQualified(id) is
// true exactly when Find returns id, for every job of the board and for
// the removed ones (ErrNoJob); that Job returns each job's requirements;
// and that Jobs pages through every job once, by skill count then ID.
func TestIsQualified_differential(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const nJobs, nCands, universe = 150, 25, 10
		r := rand.New(rand.NewPCG(7, 21))
		j := newBoard(t, b)
		m := model{}
		var batch []jobsearch.Job
		for i := range nJobs {
			job := jobsearch.Job{ID: fmt.Sprintf("job-%03d", i), Requires: randSkills(r, 1+r.IntN(4), universe, 4)}
			m[job.ID] = job
			batch = append(batch, job)
		}
		_, _, err := j.Index(ctx, batch...)
		require.NoError(t, err)
		batch = batch[:0]
		for i := 0; i < nJobs; i += 7 {
			job := jobsearch.Job{ID: fmt.Sprintf("job-%03d", i), Requires: randSkills(r, 1+r.IntN(4), universe, 4)}
			m[job.ID] = job
			batch = append(batch, job)
		}
		_, _, err = j.Index(ctx, batch...)
		require.NoError(t, err)
		var gone []string
		for i := 3; i < nJobs; i += 11 {
			id := fmt.Sprintf("job-%03d", i)
			delete(m, id)
			gone = append(gone, id)
		}
		_, err = j.Remove(ctx, gone...)
		require.NoError(t, err)

		// Job and Jobs against the model.
		type ranked struct {
			n  int
			id string
		}
		var order []ranked
		for id, job := range m {
			got, err := j.Job(ctx, id)
			require.NoError(t, err)
			want := jobsearch.Job{ID: id, Requires: slices.SortedFunc(slices.Values(job.Requires),
				func(a, b jobsearch.Skill) int { return strings.Compare(a.Name, b.Name) })}
			require.Equal(t, want, got)
			order = append(order, ranked{len(job.Requires), id})
		}
		slices.SortFunc(order, func(a, b ranked) int {
			if a.n != b.n {
				return a.n - b.n
			}
			return strings.Compare(a.id, b.id)
		})
		var wantIDs, gotIDs []string
		for _, o := range order {
			wantIDs = append(wantIDs, o.id)
		}
		for off := 0; ; off += 16 {
			page, err := j.Jobs(ctx, off, 16)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			gotIDs = append(gotIDs, page...)
		}
		require.Equal(t, wantIDs, gotIDs)

		yes, no := 0, 0
		for c := range nCands {
			cand := randSkills(r, 1+r.IntN(universe), universe, 6)
			found, err := j.Find(ctx, cand...)
			require.NoError(t, err)
			require.Equal(t, m.find(cand), found, "candidate %d: %v", c, cand)
			for id := range m {
				ok, err := j.IsQualified(ctx, id, cand...)
				require.NoError(t, err)
				if !assert.Equal(t, slices.Contains(found, id), ok, "candidate %d %v, job %s %v", c, cand, id, m[id].Requires) {
					return
				}
				if ok {
					yes++
				} else {
					no++
				}
			}
			for _, id := range gone {
				_, err := j.IsQualified(ctx, id, cand...)
				require.ErrorIs(t, err, jobsearch.ErrNoJob, id)
			}
		}
		t.Logf("%d jobs, %d candidates: %d qualified, %d not", len(m), nCands, yes, no)
		assert.Positive(t, yes)
		assert.Positive(t, no)
	})
}
