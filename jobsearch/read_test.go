package jobsearch_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/jobsearch"
)

// TestBoard_IsQualified_book runs the book's is_qualified test
// (add_job 'test' with q1 q2 q3) and its levels and years variants.
func TestBoard_IsQualified_book(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		j := newBoard(t, b)
		_, _, err := j.Index(ctx, jobsearch.Job{ID: "test", Requires: skills("q1", "q2", "q3")})
		require.NoError(t, err)
		ok, err := j.IsQualified(ctx, "test", skills("q1", "q3", "q2")...)
		require.NoError(t, err)
		assert.True(t, ok, "q1 q3 q2 meets q1 q2 q3")
		ok, err = j.IsQualified(ctx, "test", skills("q1", "q2")...)
		require.NoError(t, err)
		assert.False(t, ok, "q1 q2 lacks q3")
		ok, err = j.IsQualified(ctx, "test", skills("q1", "q2", "q3", "q4")...)
		require.NoError(t, err)
		assert.True(t, ok, "an extra skill does not hurt")

		// The book answers True for a job that does not exist; this is an error.
		_, err = j.IsQualified(ctx, "nope", skills("q1")...)
		assert.ErrorIs(t, err, jobsearch.ErrNoJob)

		// Levels and years: senior needs go at 2 with 5 years, redis at any level.
		_, _, err = j.Index(ctx, jobsearch.Job{ID: "senior", Requires: []jobsearch.Skill{{Name: "go", Level: 2, Years: 5}, {Name: "redis"}}})
		require.NoError(t, err)
		for _, c := range []struct {
			level, years int
			want         bool
		}{{2, 5, true}, {2, 4, false}, {1, 9, false}, {3, 6, true}} {
			ok, err := j.IsQualified(ctx, "senior", jobsearch.Skill{Name: "go", Level: c.level, Years: c.years}, jobsearch.Skill{Name: "redis"})
			require.NoError(t, err)
			assert.Equal(t, c.want, ok, "go level %d years %d", c.level, c.years)
		}
		ok, err = j.IsQualified(ctx, "senior", jobsearch.Skill{Name: "go", Level: 2, Years: 5})
		require.NoError(t, err)
		assert.False(t, ok, "redis missing")

		// A removed job is unknown.
		_, err = j.Remove(ctx, "test")
		require.NoError(t, err)
		_, err = j.IsQualified(ctx, "test", skills("q1", "q2", "q3")...)
		assert.ErrorIs(t, err, jobsearch.ErrNoJob)
	})
}

func TestBoard_Job_Jobs(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		j := newBoard(t, b)
		ids, err := j.Jobs(ctx, 0, 10)
		require.NoError(t, err)
		assert.Empty(t, ids, "an empty board")
		_, err = j.Job(ctx, "dev")
		assert.ErrorIs(t, err, jobsearch.ErrNoJob)

		dev := jobsearch.Job{ID: "dev", Requires: []jobsearch.Skill{
			{Name: "redis", Level: 1}, {Name: "go", Level: jobsearch.MaxLevel, Years: jobsearch.MaxYears}, {Name: "lua", Years: 3}}}
		_, _, err = j.Index(ctx, dev,
			jobsearch.Job{ID: "b", Requires: skills("go")},
			jobsearch.Job{ID: "a", Requires: skills("go", "c")},
			jobsearch.Job{ID: "c", Requires: skills("x")},
			jobsearch.Job{ID: "a2", Requires: skills("y")})
		require.NoError(t, err)
		got, err := j.Job(ctx, "dev")
		require.NoError(t, err)
		assert.Equal(t, jobsearch.Job{ID: "dev", Requires: []jobsearch.Skill{
			{Name: "go", Level: jobsearch.MaxLevel, Years: jobsearch.MaxYears}, {Name: "lua", Years: 3}, {Name: "redis", Level: 1}}}, got,
			"the stored requirements, sorted by skill")

		// Re-indexed: the new requirements only.
		_, _, err = j.Index(ctx, jobsearch.Job{ID: "dev", Requires: []jobsearch.Skill{{Name: "go", Level: 1}}})
		require.NoError(t, err)
		got, err = j.Job(ctx, "dev")
		require.NoError(t, err)
		assert.Equal(t, jobsearch.Job{ID: "dev", Requires: []jobsearch.Skill{{Name: "go", Level: 1}}}, got)

		// Pages: by number of required skills, then by ID.
		want := []string{"a2", "b", "c", "dev", "a"}
		all, err := j.Jobs(ctx, 0, jobsearch.MaxPage)
		require.NoError(t, err)
		assert.Equal(t, want, all)
		var paged []string
		for off := 0; ; off += 2 {
			page, err := j.Jobs(ctx, off, 2)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			assert.LessOrEqual(t, len(page), 2)
			paged = append(paged, page...)
		}
		assert.Equal(t, want, paged)
		page, err := j.Jobs(ctx, 5, 1)
		require.NoError(t, err)
		assert.Empty(t, page, "past the end")
		page, err = j.Jobs(ctx, 4, 100)
		require.NoError(t, err)
		assert.Equal(t, []string{"a"}, page)

		_, err = j.Remove(ctx, "dev")
		require.NoError(t, err)
		_, err = j.Job(ctx, "dev")
		assert.ErrorIs(t, err, jobsearch.ErrNoJob)
		all, err = j.Jobs(ctx, 0, 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"a2", "b", "c", "a"}, all)
	})
}

func TestBadInput_reads(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		j := newBoard(t, b)
		_, _, err := j.Index(ctx, jobsearch.Job{ID: "ok", Requires: skills("go")})
		require.NoError(t, err)
		before := b.Snapshot()

		long := strings.Repeat("x", jobsearch.MaxNameBytes+1)
		manyCand := make([]jobsearch.Skill, jobsearch.MaxCandidateSkills+1)
		for i := range manyCand {
			manyCand[i] = jobsearch.Skill{Name: fmt.Sprint("s", i)}
		}
		check := func(name string, call func() error) {
			t.Helper()
			var err error
			rt, cmds := b.Count.Delta(func() { err = call() })
			assert.ErrorIs(t, err, jobsearch.ErrInvalid, name)
			assert.Equal(t, [2]int64{0, 0}, [2]int64{rt, cmds}, "%s: nothing sent", name)
			t.Logf("%s: %v", name, err)
		}
		for name, id := range map[string]string{"empty id": "", "long id": long, "bad utf-8 id": "\xff"} {
			check("job: "+name, func() error { _, err := j.Job(ctx, id); return err })
			check("is qualified: "+name, func() error { _, err := j.IsQualified(ctx, id, skills("go")...); return err })
		}
		for name, cand := range map[string][]jobsearch.Skill{
			"empty skill set": nil,
			"empty skill":     skills("go", ""),
			"long skill":      skills(long),
			"skill twice":     skills("go", "go"),
			"negative level":  {{Name: "go", Level: -1}},
			"level too high":  {{Name: "go", Level: jobsearch.MaxLevel + 1}},
			"negative years":  {{Name: "go", Years: -1}},
			"years too high":  {{Name: "go", Years: jobsearch.MaxYears + 1}},
			"too many skills": manyCand,
		} {
			check("is qualified: "+name, func() error { _, err := j.IsQualified(ctx, "ok", cand...); return err })
		}
		for name, p := range map[string][2]int{
			"negative offset": {-1, 10},
			"offset too high": {1<<30 + 1, 10},
			"zero count":      {0, 0},
			"negative count":  {0, -1},
			"count too high":  {0, jobsearch.MaxPage + 1},
		} {
			check("jobs: "+name, func() error { _, err := j.Jobs(ctx, p[0], p[1]); return err })
		}
		assert.Equal(t, before, b.Snapshot(), "bad input changes nothing")
	})
}

func TestWrongTypes_reads(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		j := newBoard(t, b)
		setup := func() {
			_, _, err := j.Index(ctx, jobsearch.Job{ID: "dev", Requires: skills("go", "redis")})
			require.NoError(t, err)
		}
		key := func(part string) string { return b.Prefix + "{jobs}:" + part }
		jobs := redistest.KeyRole{Key: key("jobs"), Type: "zset", Role: "jobsearch jobs"}
		job := redistest.KeyRole{Key: key("job:dev"), Type: "hash", Role: "jobsearch job"}
		b.CheckWrongTypes(t, setup, func() error {
			_, err := j.IsQualified(ctx, "dev", skills("go", "redis")...)
			return err
		}, job)
		b.CheckWrongTypes(t, setup, func() error {
			_, err := j.Job(ctx, "dev")
			return err
		}, job)
		b.CheckWrongTypes(t, setup, func() error {
			_, err := j.Jobs(ctx, 0, 10)
			return err
		}, jobs)
		b.CheckWrongTypes(t, setup, func() error {
			_, err := j.Len(ctx)
			return err
		}, jobs)

		// Fields that are not requirement codes: not a number, a number
		// code never writes, a skill count that is not the job's.
		for _, bad := range []string{"x", "-1", "1000", "101000001", "99999999999", "1"} {
			b.Flush()
			setup()
			require.NoError(t, b.Client.HSet(ctx, key("job:dev"), "go", bad).Err())
			before := b.Snapshot()
			_, err := j.Job(ctx, "dev")
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, "code %q", bad) {
				assert.ErrorIs(t, err, ria.ErrCorrupt)
				assert.Equal(t, key("job:dev"), kerr.Key)
				assert.Equal(t, "jobsearch job field go", kerr.Role)
			}
			_, err = j.IsQualified(ctx, "dev", skills("go", "redis")...)
			assert.ErrorIs(t, err, ria.ErrCorrupt, "code %q", bad)
			assert.Equal(t, before, b.Snapshot())
		}
		b.Flush()
	})
}
