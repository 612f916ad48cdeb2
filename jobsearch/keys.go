package jobsearch

import "github.com/ria-go/ria/internal/keys"

// The keys of a board are <prefix>{<name>}:<part>: every key shares the
// board's hash tag, so each script touches one Cluster slot. The scripts
// build the per-job and per-skill keys from the prefixes below (a batch
// of jobs touches thousands of them); the hash tag in the prefix keeps
// them in the board's slot.

// boardKeys holds the keys and key prefixes of one board.
type boardKeys struct {
	space keys.Space
	name  string
	// jobs is a ZSET: job ID -> number of required skills (the book's
	// jobs:req).
	jobs string
	// jobPrefix + <job ID> is the job's HASH: skill -> requirement code.
	jobPrefix string
	// skillPrefix + <skill> is the skill's posting, a ZSET: job ID ->
	// requirement code.
	skillPrefix string
}

func newBoardKeys(ks keys.Space, name string) boardKeys {
	return boardKeys{
		space:       ks,
		name:        name,
		jobs:        ks.Key(name, "jobs"),
		jobPrefix:   ks.Key(name, "job:"),
		skillPrefix: ks.Key(name, "skill:"),
	}
}

// scriptKeys are the KEYS of index.lua and remove.lua.
func (k boardKeys) scriptKeys() []string { return []string{k.jobs, k.jobPrefix, k.skillPrefix} }

// skill returns the posting of skill.
func (k boardKeys) skill(name string) string { return k.skillPrefix + name }

// job returns the HASH of job id.
func (k boardKeys) job(id string) string { return k.jobPrefix + id }

// onceKey returns a new reply record key of the board.
func (k boardKeys) onceKey() string { return k.space.Once(k.name) }
