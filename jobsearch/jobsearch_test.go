package jobsearch_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/jobsearch"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func newBoard(t *testing.T, b *redistest.Backend) *jobsearch.Board {
	t.Helper()
	j, err := jobsearch.New(b.Client, "jobs", jobsearch.WithPrefix(b.Prefix))
	require.NoError(t, err)
	return j
}

// skills returns skills at level 0 with no years.
func skills(names ...string) []jobsearch.Skill {
	out := make([]jobsearch.Skill, len(names))
	for i, n := range names {
		out[i] = jobsearch.Skill{Name: n}
	}
	return out
}

// TestBook runs the book's scenarios (find_jobs, search_job_levels,
// search_job_years) with their exact data.
func TestBook(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		j := newBoard(t, b)
		added, replaced, err := j.Index(ctx,
			jobsearch.Job{ID: "test1", Requires: skills("q1", "q2", "q3")},
			jobsearch.Job{ID: "test2", Requires: skills("q1", "q3", "q4")},
			jobsearch.Job{ID: "test3", Requires: skills("q1", "q3", "q5")})
		require.NoError(t, err)
		assert.Equal(t, 3, added)
		assert.Equal(t, 0, replaced)
		for _, c := range []struct {
			have []string
			want []string
		}{
			{[]string{"q1"}, []string{}},
			{[]string{"q1", "q3", "q4"}, []string{"test2"}},
			{[]string{"q1", "q3", "q4", "q5"}, []string{"test2", "test3"}},
			{[]string{"q1", "q2", "q3", "q4", "q5"}, []string{"test1", "test2", "test3"}},
		} {
			got, err := j.Find(ctx, skills(c.have...)...)
			require.NoError(t, err)
			assert.Equal(t, c.want, got, "candidate %v", c.have)
		}

		// Levels: job1 needs q1 at 1, job2 q1 at 0 and q2 at 2.
		lv := newBoardNamed(t, b, "levels")
		_, _, err = lv.Index(ctx,
			jobsearch.Job{ID: "job1", Requires: []jobsearch.Skill{{Name: "q1", Level: 1}}},
			jobsearch.Job{ID: "job2", Requires: []jobsearch.Skill{{Name: "q1", Level: 0}, {Name: "q2", Level: 2}}})
		require.NoError(t, err)
		got, err := lv.Find(ctx, jobsearch.Skill{Name: "q1", Level: 1}, jobsearch.Skill{Name: "q2", Level: 2})
		require.NoError(t, err)
		assert.Equal(t, []string{"job1", "job2"}, got)
		got, err = lv.Find(ctx, jobsearch.Skill{Name: "q1", Level: 0}, jobsearch.Skill{Name: "q2", Level: 1})
		require.NoError(t, err)
		assert.Empty(t, got)
		got, err = lv.Find(ctx, jobsearch.Skill{Name: "q1", Level: 2})
		require.NoError(t, err)
		assert.Equal(t, []string{"job1"}, got, "a higher level than required qualifies")

		// Years: the same scenario with years of experience.
		yr := newBoardNamed(t, b, "years")
		_, _, err = yr.Index(ctx,
			jobsearch.Job{ID: "job1", Requires: []jobsearch.Skill{{Name: "q1", Years: 1}}},
			jobsearch.Job{ID: "job2", Requires: []jobsearch.Skill{{Name: "q1", Years: 0}, {Name: "q2", Years: 2}}})
		require.NoError(t, err)
		got, err = yr.Find(ctx, jobsearch.Skill{Name: "q1", Years: 1}, jobsearch.Skill{Name: "q2", Years: 2})
		require.NoError(t, err)
		assert.Equal(t, []string{"job1", "job2"}, got)
		got, err = yr.Find(ctx, jobsearch.Skill{Name: "q1", Years: 0}, jobsearch.Skill{Name: "q2", Years: 1})
		require.NoError(t, err)
		assert.Empty(t, got)

		// Levels and years together.
		both := newBoardNamed(t, b, "both")
		_, _, err = both.Index(ctx, jobsearch.Job{ID: "senior", Requires: []jobsearch.Skill{{Name: "go", Level: 2, Years: 5}}})
		require.NoError(t, err)
		for _, c := range []struct {
			level, years int
			want         int
		}{{2, 5, 1}, {2, 4, 0}, {1, 9, 0}, {3, 6, 1}} {
			got, err := both.Find(ctx, jobsearch.Skill{Name: "go", Level: c.level, Years: c.years})
			require.NoError(t, err)
			assert.Len(t, got, c.want, "level %d years %d", c.level, c.years)
		}
	})
}

// dataKeys returns the test's keys but the reply records of once-scripts,
// which live for the client's retry window.
func dataKeys(b *redistest.Backend) []string {
	var out []string
	for _, k := range b.Keys("") {
		if !strings.Contains(k, "}:once:") {
			out = append(out, k)
		}
	}
	return out
}

func newBoardNamed(t *testing.T, b *redistest.Backend, name string) *jobsearch.Board {
	t.Helper()
	j, err := jobsearch.New(b.Client, name, jobsearch.WithPrefix(b.Prefix))
	require.NoError(t, err)
	return j
}

func TestBoard_Index_replace_and_Remove(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		j := newBoard(t, b)
		_, _, err := j.Index(ctx, jobsearch.Job{ID: "dev", Requires: skills("go", "redis")})
		require.NoError(t, err)
		got, err := j.Find(ctx, skills("go", "redis")...)
		require.NoError(t, err)
		assert.Equal(t, []string{"dev"}, got)

		// Re-index: the job now needs go and lua; redis alone no longer counts.
		added, replaced, err := j.Index(ctx, jobsearch.Job{ID: "dev", Requires: skills("go", "lua")})
		require.NoError(t, err)
		assert.Equal(t, [2]int{0, 1}, [2]int{added, replaced})
		got, err = j.Find(ctx, skills("go", "redis")...)
		require.NoError(t, err)
		assert.Empty(t, got)
		got, err = j.Find(ctx, skills("go", "lua")...)
		require.NoError(t, err)
		assert.Equal(t, []string{"dev"}, got)
		assert.Empty(t, b.Keys(b.Prefix+"{jobs}:skill:redis"), "the old posting is gone")

		n, err := j.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)

		removed, err := j.Remove(ctx, "dev", "dev", "none")
		require.NoError(t, err)
		assert.Equal(t, 1, removed)
		got, err = j.Find(ctx, skills("go", "lua")...)
		require.NoError(t, err)
		assert.Empty(t, got)
		assert.Empty(t, dataKeys(b), "removing the last job leaves no key (but reply records)")
	})
}

func TestBadInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		j := newBoard(t, b)
		_, _, err := j.Index(ctx, jobsearch.Job{ID: "ok", Requires: skills("go")})
		require.NoError(t, err)
		before := b.Snapshot()

		long := strings.Repeat("x", jobsearch.MaxNameBytes+1)
		many := make([]jobsearch.Skill, jobsearch.MaxJobSkills+1)
		for i := range many {
			many[i] = jobsearch.Skill{Name: fmt.Sprint("s", i)}
		}
		batch := make([]jobsearch.Job, jobsearch.MaxBatch+1)
		for i := range batch {
			batch[i] = jobsearch.Job{ID: fmt.Sprint("b", i), Requires: skills("go")}
		}
		good := jobsearch.Job{ID: "new", Requires: skills("go")}
		for name, jobs := range map[string][]jobsearch.Job{
			"empty skill set":    {good, {ID: "j", Requires: nil}},
			"empty id":           {good, {ID: "", Requires: skills("go")}},
			"long id":            {good, {ID: long, Requires: skills("go")}},
			"bad utf-8 id":       {good, {ID: "\xff", Requires: skills("go")}},
			"empty skill":        {good, {ID: "j", Requires: skills("go", "")}},
			"long skill":         {good, {ID: "j", Requires: skills(long)}},
			"skill twice":        {good, {ID: "j", Requires: skills("go", "go")}},
			"job twice":          {good, good},
			"negative level":     {good, {ID: "j", Requires: []jobsearch.Skill{{Name: "go", Level: -1}}}},
			"level too high":     {good, {ID: "j", Requires: []jobsearch.Skill{{Name: "go", Level: jobsearch.MaxLevel + 1}}}},
			"negative years":     {good, {ID: "j", Requires: []jobsearch.Skill{{Name: "go", Years: -1}}}},
			"years too high":     {good, {ID: "j", Requires: []jobsearch.Skill{{Name: "go", Years: jobsearch.MaxYears + 1}}}},
			"too many skills":    {good, {ID: "j", Requires: many}},
			"batch over maximum": batch,
		} {
			_, _, err := j.Index(ctx, jobs...)
			assert.ErrorIs(t, err, jobsearch.ErrInvalid, name)
			t.Logf("%s: %v", name, err)
		}
		for name, ids := range map[string][]string{
			"empty id": {"ok", ""},
			"long id":  {"ok", long},
		} {
			_, err := j.Remove(ctx, ids...)
			assert.ErrorIs(t, err, jobsearch.ErrInvalid, name)
		}
		manyCand := make([]jobsearch.Skill, jobsearch.MaxCandidateSkills+1)
		for i := range manyCand {
			manyCand[i] = jobsearch.Skill{Name: fmt.Sprint("s", i)}
		}
		for name, cand := range map[string][]jobsearch.Skill{
			"empty skill set": nil,
			"empty skill":     skills("go", ""),
			"skill twice":     skills("go", "go"),
			"negative level":  {{Name: "go", Level: -1}},
			"level too high":  {{Name: "go", Level: jobsearch.MaxLevel + 1}},
			"negative years":  {{Name: "go", Years: -1}},
			"years too high":  {{Name: "go", Years: jobsearch.MaxYears + 1}},
			"too many skills": manyCand,
		} {
			_, err := j.Find(ctx, cand...)
			assert.ErrorIs(t, err, jobsearch.ErrInvalid, name)
		}
		assert.Equal(t, before, b.Snapshot(), "bad input changes nothing")

		_, err = jobsearch.New(b.Client, "")
		assert.Error(t, err)
		_, err = jobsearch.New(b.Client, "a{b")
		assert.Error(t, err)
		_, err = jobsearch.New(b.Client, "a", jobsearch.WithPrefix("p{"))
		assert.Error(t, err)
	})
}

func TestRoundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		j := newBoard(t, b)
		// Load the scripts.
		_, _, err := j.Index(ctx, jobsearch.Job{ID: "a", Requires: skills("go")})
		require.NoError(t, err)
		_, err = j.Find(ctx, skills("go")...)
		require.NoError(t, err)
		_, err = j.Remove(ctx, "none")
		require.NoError(t, err)
		_, err = j.Job(ctx, "a")
		require.NoError(t, err)
		_, err = j.Jobs(ctx, 0, 10)
		require.NoError(t, err)
		for _, op := range []struct {
			name string
			fn   func()
		}{
			{"index batch", func() {
				_, _, err := j.Index(ctx, jobsearch.Job{ID: "b", Requires: skills("go", "lua")},
					jobsearch.Job{ID: "c", Requires: []jobsearch.Skill{{Name: "go", Level: 2, Years: 3}}})
				require.NoError(t, err)
			}},
			{"find", func() {
				got, err := j.Find(ctx, jobsearch.Skill{Name: "go", Level: 2, Years: 5}, jobsearch.Skill{Name: "lua"})
				require.NoError(t, err)
				require.Equal(t, []string{"a", "b", "c"}, got)
			}},
			{"is qualified", func() {
				ok, err := j.IsQualified(ctx, "c", jobsearch.Skill{Name: "go", Level: 2, Years: 5}, jobsearch.Skill{Name: "lua"})
				require.NoError(t, err)
				require.True(t, ok)
			}},
			{"is qualified, unknown job", func() {
				_, err := j.IsQualified(ctx, "none", skills("go")...)
				require.ErrorIs(t, err, jobsearch.ErrNoJob)
			}},
			{"job", func() {
				got, err := j.Job(ctx, "b")
				require.NoError(t, err)
				require.Equal(t, jobsearch.Job{ID: "b", Requires: skills("go", "lua")}, got)
			}},
			{"jobs", func() {
				got, err := j.Jobs(ctx, 0, 10)
				require.NoError(t, err)
				require.Equal(t, []string{"a", "c", "b"}, got)
			}},
			{"remove", func() { _, err := j.Remove(ctx, "a", "b", "c"); require.NoError(t, err) }},
		} {
			rt, cmds := b.Count.Delta(op.fn)
			assert.Equal(t, int64(1), rt, "%s round trips", op.name)
			assert.Equal(t, int64(1), cmds, "%s: one script", op.name)
		}
	})
}

func TestWrongTypes(t *testing.T) {
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
		posting := func(s string) redistest.KeyRole {
			return redistest.KeyRole{Key: key("skill:" + s), Type: "zset", Role: "jobsearch skill"}
		}
		// Index: re-index dev with a new skill (old postings go, a new one comes).
		b.CheckWrongTypes(t, setup, func() error {
			_, _, err := j.Index(ctx, jobsearch.Job{ID: "dev", Requires: skills("go", "lua")})
			return err
		}, jobs, job, posting("go"), posting("redis"), posting("lua"))
		b.CheckWrongTypes(t, setup, func() error {
			_, err := j.Remove(ctx, "dev")
			return err
		}, jobs, job, posting("go"), posting("redis"))
		b.CheckWrongTypes(t, setup, func() error {
			_, err := j.Find(ctx, skills("go", "redis", "lua")...)
			return err
		}, posting("go"), posting("redis"), posting("lua"))

		// A corrupt requirement code in the job's hash.
		setup()
		require.NoError(t, b.Client.HSet(ctx, key("job:dev"), "go", "x").Err())
		before := b.Snapshot()
		_, _, err := j.Index(ctx, jobsearch.Job{ID: "dev", Requires: skills("lua")})
		assert.ErrorIs(t, err, ria.ErrCorrupt)
		assert.Equal(t, before, b.Snapshot())
	})
}

func TestFaults_Index_Remove(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		j, err := jobsearch.New(rdb, "jobs", jobsearch.WithPrefix(b.Prefix))
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "jobsearch Index")
		for i := range 6 {
			id := fmt.Sprintf("job%d", i)
			var added, replaced int
			h.Call(1, redistest.Scripts, func() {
				added, replaced, err = j.Index(ctx, jobsearch.Job{ID: id, Requires: skills("go", "redis")})
			})
			require.NoError(t, err)
			h.Check(added == 1 && replaced == 0, "index %s: added=%d replaced=%d", id, added, replaced)
			h.Call(1, redistest.Scripts, func() {
				added, replaced, err = j.Index(ctx, jobsearch.Job{ID: id, Requires: []jobsearch.Skill{{Name: "go", Level: 1}}})
			})
			require.NoError(t, err)
			h.Check(added == 0 && replaced == 1, "re-index %s: added=%d replaced=%d", id, added, replaced)
		}
		got, err := j.Find(ctx, jobsearch.Skill{Name: "go", Level: 1})
		require.NoError(t, err)
		h.Check(len(got) == 6, "6 jobs indexed once each, found %v", got)
		n, err := j.Len(ctx)
		require.NoError(t, err)
		h.Check(n == 6, "6 jobs, Len %d", n)

		hr := redistest.NewHarness(t, f, "jobsearch Remove")
		for i := range 6 {
			var n int
			hr.Call(1, redistest.Scripts, func() { n, err = j.Remove(ctx, fmt.Sprintf("job%d", i)) })
			require.NoError(t, err)
			hr.Check(n == 1, "remove job%d: %d", i, n)
		}
		got, err = j.Find(ctx, jobsearch.Skill{Name: "go", Level: 1})
		require.NoError(t, err)
		hr.Check(len(got) == 0, "all removed, found %v", got)
		left := dataKeys(b)
		hr.Check(len(left) == 0, "no key but reply records left: %v", left)
	})
}

func TestFaults_delay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.ReadTimeout = 50 * time.Millisecond
			o.MaxRetries = -1
		})
		j, err := jobsearch.New(rdb, "jobs", jobsearch.WithPrefix(b.Prefix))
		require.NoError(t, err)
		f.Delay(200 * time.Millisecond)
		_, _, err = j.Index(ctx, jobsearch.Job{ID: "slow", Requires: skills("go", "redis")})
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown, "the reply timed out: the outcome is unknown")
		_, err = j.Remove(ctx, "slow")
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		f.Delay(0)
		// Whatever happened, the board is whole: the job is indexed fully
		// or not at all.
		k := newBoard(t, b)
		got, err := k.Find(ctx, skills("go", "redis")...)
		require.NoError(t, err)
		n, err := k.Len(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(len(got)), n)
		if n == 0 {
			assert.Empty(t, dataKeys(b), "not indexed: no key but reply records")
		}
	})
}
