package jobsearch

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed index.lua
	indexLua string
	//go:embed remove.lua
	removeLua string
	//go:embed find.lua
	findLua string

	indexScript  = script.NewOnce("jobsearch index", indexLua)
	removeScript = script.NewOnce("jobsearch remove", removeLua)
	findScript   = script.New("jobsearch find", findLua)
)

// Limits of the values a board accepts.
const (
	// MaxLevel is the highest skill level. The book's levels are 0
	// (beginner), 1 (intermediate) and 2 (expert); any scale from 0 to
	// MaxLevel works.
	MaxLevel = 100
	// MaxYears is the most years of experience a requirement or a
	// candidate may give.
	MaxYears = 100
	// MaxJobSkills bounds the skills one job requires.
	MaxJobSkills = 100
	// MaxCandidateSkills bounds the skills of one [Board.Find].
	MaxCandidateSkills = 1000
	// MaxNameBytes bounds a job ID and a skill name.
	MaxNameBytes = 256
	// MaxBatch bounds the jobs of one [Board.Index] and the IDs of one
	// [Board.Remove].
	MaxBatch = 1000
	// MaxPage bounds the count of one [Board.Jobs].
	MaxPage = 10000
)

var (
	// ErrInvalid means an argument that is malformed: an empty or long job
	// ID or skill name, an empty skill set, a skill given twice, a level
	// or years out of range, a batch over [MaxBatch].
	ErrInvalid = errors.New("jobsearch: invalid argument")
	// ErrNoJob means a job ID that is not indexed ([Board.Job],
	// [Board.IsQualified]).
	ErrNoJob = errors.New("jobsearch: no such job")
)

// Client is the subset of go-redis this package uses. *redis.Client,
// *redis.ClusterClient and *redis.Ring satisfy it.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd

	// ZCard counts the jobs ([Board.Len]).
	ZCard(ctx context.Context, key string) *redis.IntCmd
	Do(ctx context.Context, args ...any) *redis.Cmd // TYPE, to name a key of another type
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// Option configures a [Board].
type Option func(*options)

type options struct{ prefix string }

// WithPrefix sets the key prefix. Default: "jobsearch:".
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// Board is an index of jobs and their required skills, in one Cluster
// slot. A Board is safe for concurrent use.
type Board struct {
	rdb Client
	k   boardKeys
}

// New returns the board name backed by rdb. It returns an error for an
// empty name, or a name or prefix holding '{' or '}'. It panics if rdb is
// nil.
func New(rdb Client, name string, opts ...Option) (*Board, error) {
	if rdb == nil {
		panic("jobsearch: nil client")
	}
	o := options{prefix: "jobsearch:"}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("jobsearch: %w", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("jobsearch: %w", err)
	}
	if err := keys.CheckEntity("board name", name); err != nil {
		return nil, fmt.Errorf("jobsearch: %w", err)
	}
	return &Board{rdb: rdb, k: newBoardKeys(keys.New(o.prefix), name)}, nil
}

// Skill is a skill a job requires or a candidate has. For a job, Level
// and Years are minimums (0: any level, no experience needed); for a
// candidate, what they have. Names are compared byte for byte.
type Skill struct {
	// Name is 1 to [MaxNameBytes] bytes of valid UTF-8.
	Name string
	// Level is 0 to [MaxLevel].
	Level int
	// Years is 0 to [MaxYears].
	Years int
}

// Job is what [Board.Index] indexes: a job and the skills it requires.
type Job struct {
	// ID is 1 to [MaxNameBytes] bytes of valid UTF-8.
	ID string
	// Requires holds 1 to [MaxJobSkills] skills, each named once.
	Requires []Skill
}

// code packs a requirement into its posting score: the level orders the
// posting, so that one range reads the requirements a candidate's level
// meets; years and the job's skill count ride along.
func code(s Skill, k int) int64 { return int64(s.Level)*1e6 + int64(s.Years)*1e3 + int64(k) }

func checkName(kind, s string) error {
	if s == "" || len(s) > MaxNameBytes || !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s %q: want 1 to %d bytes of UTF-8", ErrInvalid, kind, trunc(s), MaxNameBytes)
	}
	return nil
}

func checkSkills(kind string, skills []Skill, limit int) error {
	if len(skills) == 0 {
		return fmt.Errorf("%w: %s: empty skill set", ErrInvalid, kind)
	}
	if len(skills) > limit {
		return fmt.Errorf("%w: %s: %d skills, at most %d", ErrInvalid, kind, len(skills), limit)
	}
	seen := make(map[string]bool, len(skills))
	for _, s := range skills {
		if err := checkName(kind+" skill", s.Name); err != nil {
			return err
		}
		if seen[s.Name] {
			return fmt.Errorf("%w: %s: skill %q given twice", ErrInvalid, kind, trunc(s.Name))
		}
		seen[s.Name] = true
		if s.Level < 0 || s.Level > MaxLevel {
			return fmt.Errorf("%w: %s: skill %q: level %d out of range 0..%d", ErrInvalid, kind, trunc(s.Name), s.Level, MaxLevel)
		}
		if s.Years < 0 || s.Years > MaxYears {
			return fmt.Errorf("%w: %s: skill %q: years %d out of range 0..%d", ErrInvalid, kind, trunc(s.Name), s.Years, MaxYears)
		}
	}
	return nil
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Index indexes jobs, or re-indexes those whose ID is already indexed: a
// re-indexed job requires exactly its new skills. The whole batch is one
// atomic script: one round trip.
//
// It returns how many jobs were new and how many replaced. Bad input (an
// empty, long or repeated job ID, an empty skill set, a skill named twice
// in a job, a level or years out of range, more than [MaxBatch] jobs) is
// an error matching [ErrInvalid], and nothing is written. A key of the
// board holding another type is a *ria.KeyError, and nothing is written.
// When every re-send lost its reply, the error wraps
// ria.ErrOutcomeUnknown: the batch was applied entirely or not at all.
func (b *Board) Index(ctx context.Context, jobs ...Job) (added, replaced int, err error) {
	if len(jobs) == 0 {
		return 0, 0, nil
	}
	if len(jobs) > MaxBatch {
		return 0, 0, fmt.Errorf("jobsearch: index %d jobs: %w: at most %d per call", len(jobs), ErrInvalid, MaxBatch)
	}
	args := []any{len(jobs)}
	seen := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		if err := checkName("job ID", j.ID); err != nil {
			return 0, 0, fmt.Errorf("jobsearch: index: %w", err)
		}
		if seen[j.ID] {
			return 0, 0, fmt.Errorf("jobsearch: index: %w: job %q given twice", ErrInvalid, trunc(j.ID))
		}
		seen[j.ID] = true
		if err := checkSkills("job "+strconv.Quote(trunc(j.ID)), j.Requires, MaxJobSkills); err != nil {
			return 0, 0, fmt.Errorf("jobsearch: index: %w", err)
		}
		args = append(args, j.ID, len(j.Requires))
		for _, s := range j.Requires {
			args = append(args, s.Name, code(s, len(j.Requires)))
		}
	}
	v, err := indexScript.RunOnce(ctx, b.rdb, b.k.onceKey(), b.k.scriptKeys(), args...)
	if err != nil {
		return 0, 0, fmt.Errorf("jobsearch: index: %w", err)
	}
	n, err := indexScript.AsInt64s(v)
	if err != nil || len(n) != 2 {
		return 0, 0, fmt.Errorf("jobsearch: index: bad reply %v: %w", v, err)
	}
	return int(n[0]), int(n[1]), nil
}

// Remove removes the jobs ids from the board, with their postings, in one
// atomic script (one round trip), and returns how many were indexed. IDs
// not indexed are skipped. An empty or long ID, or more than [MaxBatch]
// IDs, is an error matching [ErrInvalid]; a key of the board holding
// another type is a *ria.KeyError; in both cases nothing is removed. When
// every re-send lost its reply, the error wraps ria.ErrOutcomeUnknown.
func (b *Board) Remove(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	if len(ids) > MaxBatch {
		return 0, fmt.Errorf("jobsearch: remove %d jobs: %w: at most %d per call", len(ids), ErrInvalid, MaxBatch)
	}
	args := make([]any, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if err := checkName("job ID", id); err != nil {
			return 0, fmt.Errorf("jobsearch: remove: %w", err)
		}
		if !seen[id] {
			seen[id] = true
			args = append(args, id)
		}
	}
	v, err := removeScript.RunOnce(ctx, b.rdb, b.k.onceKey(), b.k.scriptKeys(), args...)
	if err != nil {
		return 0, fmt.Errorf("jobsearch: remove: %w", err)
	}
	n, err := removeScript.AsInt64(v)
	if err != nil {
		return 0, fmt.Errorf("jobsearch: remove: %w", err)
	}
	return int(n), nil
}

// Find returns the IDs, sorted, of every job the candidate with skills
// qualifies for: the candidate has each skill the job requires, at its
// level or higher and with its years or more. One read-only script: one
// round trip. An empty skill set, a skill named twice, a level or years
// out of range or more than [MaxCandidateSkills] skills is an error
// matching [ErrInvalid]; a posting holding another type is a
// *ria.KeyError.
func (b *Board) Find(ctx context.Context, skills ...Skill) ([]string, error) {
	if err := checkSkills("candidate", skills, MaxCandidateSkills); err != nil {
		return nil, fmt.Errorf("jobsearch: find: %w", err)
	}
	ks := make([]string, len(skills))
	args := make([]any, 0, 2*len(skills))
	for i, s := range skills {
		ks[i] = b.k.skill(s.Name)
		args = append(args, int64(s.Level+1)*1e6, s.Years)
	}
	v, err := findScript.Run(ctx, b.rdb, ks, args...)
	if err != nil {
		return nil, fmt.Errorf("jobsearch: find: %w", err)
	}
	arr, ok := v.([]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("jobsearch: find: bad reply %T", v)
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		if out[i], ok = e.(string); !ok {
			return nil, fmt.Errorf("jobsearch: find: bad reply element %T", e)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Len returns the number of jobs indexed (one ZCARD).
func (b *Board) Len(ctx context.Context) (int64, error) {
	n, err := b.rdb.ZCard(ctx, b.k.jobs).Result()
	if err != nil {
		return 0, fmt.Errorf("jobsearch: len: %w", script.WrongType(ctx, b.rdb, err, b.k.jobs, "jobsearch jobs", "zset"))
	}
	return n, nil
}
