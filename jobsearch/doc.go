// Package jobsearch matches candidates to jobs by skills on plain Redis and
// Redis Cluster: Redis in Action 7.4 (is_qualified, index_job, find_jobs)
// with the skill-level and years-of-experience variants of the book's
// exercises (index_job_levels, search_job_levels, index_job_years,
// search_job_years) as one API.
//
//	board, err := jobsearch.New(rdb, "jobs")
//	_, _, err = board.Index(ctx, jobsearch.Job{ID: "backend", Requires: []jobsearch.Skill{
//		{Name: "go", Level: 2, Years: 3}, {Name: "redis"}}})
//	ids, err := board.Find(ctx, jobsearch.Skill{Name: "go", Level: 2, Years: 5},
//		jobsearch.Skill{Name: "redis", Level: 1}, jobsearch.Skill{Name: "lua"})
//	// ids == ["backend"]
//	ok, err := board.IsQualified(ctx, "backend", jobsearch.Skill{Name: "go", Level: 2, Years: 3},
//		jobsearch.Skill{Name: "redis"})
//	// ok == true
//
// A job requires a set of skills, each at a minimum level (0 to
// [MaxLevel]; the book's 0 beginner, 1 intermediate, 2 expert) and a
// minimum of years (0 to [MaxYears]); zero means any. A candidate has a
// set of skills, each with a level and years. [Board.Find] returns every
// job whose every required skill the candidate has, at the required level
// or higher and with the required years or more. Without levels and years
// (all zero) it is the book's find_jobs.
//
// [Board.IsQualified] answers the same question for one job (the book's
// is_qualified): it agrees with Find exactly, and returns [ErrNoJob] for
// a job that is not indexed (the book would answer true). [Board.Job]
// returns one job's stored requirements, [Board.Jobs] pages through the
// job IDs (by number of required skills, then by ID), and [Board.Len]
// counts them.
//
// # How it finds
//
// The book indexes a job in one SET per skill and in a ZSET of each job's
// number of required skills, then ZUNIONSTOREs the candidate's skill SETs
// (how many of its skills the candidate has) and ZINTERSTOREs the result
// with the counts (weights -1 and 1): a job scoring 0 is one the
// candidate qualifies for. That is three round trips and two temporary
// ZSETs as large as the union, and its levels and years variants need a
// SET per skill and level and a pass per skill.
//
// This package keeps one posting ZSET per skill, scored by a requirement
// code that packs the required level, the required years and the job's
// number of required skills (level*1e6 + years*1e3 + count). [Board.Find]
// is one read-only Lua script: for each of the candidate's skills it reads
// the posting's requirements at or below the candidate's level with one
// ZRANGEBYSCORE, keeps those within the candidate's years, and counts
// them per job; a job qualifies when its count reaches its number of
// required skills. No temporary key is written, the work is proportional
// to the postings of the candidate's skills, and the answer is exact.
//
// # Guarantees
//
// [Board.Index] and [Board.Remove] are each one Lua script over a whole
// batch: a job is indexed, re-indexed or removed entirely or not at all,
// and a Find never sees half of it. A re-indexed job requires exactly its
// new skills (it leaves the postings of the skills it no longer
// requires). Removing a job leaves no key of it behind. A Find sees the
// board at one instant.
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost. Index and Remove are
// once-scripts (internal/script RunOnce): the first run's reply is
// recorded for the client's retry window under a key of the board's slot,
// and a re-send is answered from it, so the counts they return are true.
// When every re-send failed, the error wraps ria.ErrOutcomeUnknown: the
// batch was applied entirely or not at all (Find or [Board.Len] tell
// which). Find, IsQualified, Job, Jobs and Len only read.
//
// # Wrong types
//
// Every script checks the type of every key it relies on (the jobs ZSET,
// each job's HASH, the postings of the job's old and new skills, the
// candidate's postings) before its first write: a key someone else wrote
// with another type is a *ria.KeyError (ria.ErrWrongType) naming the key
// and its role ("jobsearch jobs", "jobsearch job", "jobsearch skill"), and
// nothing is changed. The reads do the same: Find checks the candidate's
// postings, IsQualified and Job the job's HASH, Jobs the jobs ZSET. A job
// HASH field that is not a requirement code (Index, Job, IsQualified) is
// a *ria.KeyError matching ria.ErrCorrupt. Len (a plain ZCARD) names a
// jobs key of another type the same way.
//
// # Bad input
//
// An empty, long or invalid-UTF-8 job ID or skill name, an empty skill
// set, a skill named twice, a level or years out of range, a batch over a
// limit, or a Jobs offset or count out of range is an error matching
// [ErrInvalid], found before anything reaches Redis: nothing is sent.
//
// # Round trips
//
// Index (a batch up to [MaxBatch]) 1, Remove (up to [MaxBatch]) 1, Find
// 1, IsQualified 1 (one read-only script returns the job's HASH; the match
// is done in Go), Job 1, Jobs (a page up to [MaxPage]) 1, Len 1; the first
// run of a script on a server adds one for EVAL after NOSCRIPT.
//
// # Key schema
//
// With the default prefix "jobsearch:" and board name n:
//
//	{n}:jobs           ZSET  job ID -> number of required skills (the book's jobs:req)
//	{n}:job:<id>       HASH  skill -> requirement code (what the job requires)
//	{n}:skill:<skill>  ZSET  job ID -> requirement code (the skill's posting)
//	{n}:once:<nonce>   STRING reply record of an Index or Remove (retry window TTL)
//
// The scripts build the job and posting keys from prefixes passed in
// KEYS (a batch touches thousands); the hash tag in the prefix keeps them
// in the board's slot.
//
// # Cluster
//
// Every key of a board carries the board's name as its hash tag: each
// script touches one slot, and no CROSSSLOT error is possible. A board
// therefore lives on one master. To spread a very large set of jobs, use
// several boards (by region, by category) and search those that apply.
//
// # Limits
//
// Job IDs and skill names up to [MaxNameBytes], compared byte for byte
// (normalise case before if needed); up to [MaxJobSkills] skills per job
// and [MaxCandidateSkills] per candidate; levels 0 to [MaxLevel], years 0
// to [MaxYears]; pages of Jobs up to [MaxPage] IDs from an offset up to
// 2^30. Find reads the whole postings of the candidate's skills
// (up to the candidate's level) and returns every matching job, sorted by
// ID: a candidate whose skills are shared by most of a million jobs makes
// a long script. The benchmark in bench_test.go compares it with the
// book's method on 100,000 jobs.
package jobsearch
