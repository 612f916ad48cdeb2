package jobsearch

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed job.lua
	jobLua string
	//go:embed jobs.lua
	jobsLua string

	jobScript  = script.New("jobsearch job", jobLua)
	jobsScript = script.New("jobsearch jobs", jobsLua)
)

// maxOffset bounds the offset of [Board.Jobs].
const maxOffset = 1 << 30

// Job returns the stored requirements of job id, its Requires sorted by
// skill name: one read-only script, one round trip. It returns an error
// matching [ErrNoJob] if id is not indexed, and one matching [ErrInvalid]
// for an empty, long or invalid-UTF-8 id (nothing is sent). A job HASH of
// another type is a *ria.KeyError matching ria.ErrWrongType; a field of it
// that is not a requirement code, a *ria.KeyError matching ria.ErrCorrupt.
func (b *Board) Job(ctx context.Context, id string) (Job, error) {
	if err := checkName("job ID", id); err != nil {
		return Job{}, fmt.Errorf("jobsearch: job: %w", err)
	}
	j, err := b.job(ctx, id)
	if err != nil {
		return Job{}, fmt.Errorf("jobsearch: job %q: %w", trunc(id), err)
	}
	return j, nil
}

// IsQualified reports whether a candidate with skills qualifies for job
// id: the candidate has each skill the job requires, at its level or
// higher and with its years or more (the book's is_qualified, with levels
// and years). It agrees with [Board.Find]: IsQualified(id) is true exactly
// when Find with the same skills returns id. One read-only script (the
// job's HASH, matched in Go): one round trip.
//
// Unlike the book's is_qualified, which finds a candidate qualified for a
// job that does not exist, it returns an error matching [ErrNoJob] if id
// is not indexed. An empty, long or invalid-UTF-8 id, an empty skill set,
// a skill named twice, a level or years out of range or more than
// [MaxCandidateSkills] skills is an error matching [ErrInvalid] (nothing
// is sent). A job HASH of another type or holding a field that is not a
// requirement code is a *ria.KeyError, as for [Board.Job].
func (b *Board) IsQualified(ctx context.Context, id string, skills ...Skill) (bool, error) {
	if err := checkName("job ID", id); err != nil {
		return false, fmt.Errorf("jobsearch: is qualified: %w", err)
	}
	if err := checkSkills("candidate", skills, MaxCandidateSkills); err != nil {
		return false, fmt.Errorf("jobsearch: is qualified for %q: %w", trunc(id), err)
	}
	j, err := b.job(ctx, id)
	if err != nil {
		return false, fmt.Errorf("jobsearch: is qualified for %q: %w", trunc(id), err)
	}
	have := make(map[string]Skill, len(skills))
	for _, s := range skills {
		have[s.Name] = s
	}
	for _, r := range j.Requires {
		s, ok := have[r.Name]
		if !ok || s.Level < r.Level || s.Years < r.Years {
			return false, nil
		}
	}
	return true, nil
}

// job reads and decodes the HASH of job id.
func (b *Board) job(ctx context.Context, id string) (Job, error) {
	key := b.k.job(id)
	v, err := jobScript.Run(ctx, b.rdb, []string{key})
	if err != nil {
		return Job{}, err
	}
	arr, ok := v.([]any)
	if !ok || len(arr)%2 != 0 {
		return Job{}, fmt.Errorf("bad reply %T", v)
	}
	if len(arr) == 0 {
		return Job{}, ErrNoJob
	}
	j := Job{ID: id, Requires: make([]Skill, 0, len(arr)/2)}
	for i := 0; i < len(arr); i += 2 {
		name, ok1 := arr[i].(string)
		val, ok2 := arr[i+1].(string)
		if !ok1 || !ok2 {
			return Job{}, fmt.Errorf("bad reply element %T %T", arr[i], arr[i+1])
		}
		s, k, ok := decode(val)
		if !ok || k != len(arr)/2 {
			return Job{}, &ria.KeyError{Role: "jobsearch job field " + name, Key: key,
				Got: strconv.Quote(trunc(val)), Want: "a requirement code", Err: ria.ErrCorrupt}
		}
		s.Name = name
		j.Requires = append(j.Requires, s)
	}
	slices.SortFunc(j.Requires, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return j, nil
}

// decode is the inverse of code: the required level and years, and the
// job's number of required skills k. It refuses what code never writes.
func decode(v string) (s Skill, k int, ok bool) {
	if v == "" || len(v) > 10 || strings.Trim(v, "0123456789") != "" {
		return Skill{}, 0, false
	}
	c, err := strconv.Atoi(v)
	if err != nil {
		return Skill{}, 0, false
	}
	s = Skill{Level: c / 1e6, Years: c / 1e3 % 1e3}
	k = c % 1e3
	if s.Level > MaxLevel || s.Years > MaxYears || k < 1 || k > MaxJobSkills {
		return Skill{}, 0, false
	}
	return s, k, true
}

// Jobs returns up to count (1 to [MaxPage]) job IDs of the board from
// offset (0 to 2^30) on, in the jobs ZSET's order: by number of required
// skills, then by ID (byte order). The order is stable while the board
// does not change; paging through a board that changes meanwhile may skip
// or repeat a job, as any offset paging does. A page past the end is
// empty. One read-only script: one round trip. An offset or count out of
// range is an error matching [ErrInvalid] (nothing is sent); a jobs key of
// another type is a *ria.KeyError matching ria.ErrWrongType.
func (b *Board) Jobs(ctx context.Context, offset, count int) ([]string, error) {
	if offset < 0 || offset > maxOffset || count < 1 || count > MaxPage {
		return nil, fmt.Errorf("jobsearch: jobs: %w: offset %d, count %d: want offset 0 to %d and count 1 to %d",
			ErrInvalid, offset, count, maxOffset, MaxPage)
	}
	v, err := jobsScript.Run(ctx, b.rdb, []string{b.k.jobs}, offset, offset+count-1)
	if err != nil {
		return nil, fmt.Errorf("jobsearch: jobs: %w", err)
	}
	out, err := jobsScript.AsStrings(v)
	if err != nil {
		return nil, fmt.Errorf("jobsearch: jobs: %w", err)
	}
	return out, nil
}
