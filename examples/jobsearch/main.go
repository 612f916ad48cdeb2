// Command jobsearch runs the book's job search (Redis in Action 7.4,
// index_job and find_jobs) and its skill-level and years-of-experience
// variants on a ria job board: jobs are indexed with the skills they
// require, candidates find every job they qualify for in one round trip,
// a job is re-indexed with new requirements and another removed.
//
//	go run ./examples/jobsearch                       # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/jobsearch
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/jobsearch"
)

const prefix = "example:jobsearch:"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "jobsearch example:", err)
		os.Exit(1)
	}
}

// sk is a skill at a level with years of experience.
func sk(name string, level, years int) jobsearch.Skill {
	return jobsearch.Skill{Name: name, Level: level, Years: years}
}

func run() error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	ctx := context.Background()
	if err := demo.Clean(ctx, rdb, prefix); err != nil {
		return err
	}

	board, err := jobsearch.New(rdb, "board", jobsearch.WithPrefix(prefix))
	if err != nil {
		return err
	}
	// Levels: 0 beginner, 1 intermediate, 2 expert (the book's scale).
	added, _, err := board.Index(ctx,
		jobsearch.Job{ID: "backend-dev", Requires: []jobsearch.Skill{sk("go", 1, 2), sk("redis", 1, 0)}},
		jobsearch.Job{ID: "sre", Requires: []jobsearch.Skill{sk("linux", 2, 5), sk("redis", 1, 1), sk("terraform", 0, 0)}},
		jobsearch.Job{ID: "data-engineer", Requires: []jobsearch.Skill{sk("python", 1, 3), sk("sql", 2, 3)}},
		jobsearch.Job{ID: "intern", Requires: []jobsearch.Skill{sk("python", 0, 0)}},
	)
	if err != nil {
		return err
	}
	fmt.Printf("indexed %d jobs\n", added)

	candidates := []struct {
		name   string
		skills []jobsearch.Skill
	}{
		{"ana", []jobsearch.Skill{sk("go", 2, 4), sk("redis", 1, 3), sk("python", 0, 1)}},
		{"bo", []jobsearch.Skill{sk("linux", 2, 7), sk("redis", 2, 2), sk("terraform", 1, 1), sk("go", 0, 1)}},
		{"cy", []jobsearch.Skill{sk("python", 2, 5), sk("sql", 2, 2)}},
	}
	find := func() error {
		for _, c := range candidates {
			ids, err := board.Find(ctx, c.skills...)
			if err != nil {
				return err
			}
			fmt.Printf("  %-4s qualifies for %v\n", c.name, ids)
		}
		return nil
	}
	fmt.Println("searches:")
	if err := find(); err != nil {
		return err
	}

	// The data-engineer job now needs only 2 years of SQL; the intern
	// position is filled.
	if _, _, err := board.Index(ctx, jobsearch.Job{ID: "data-engineer",
		Requires: []jobsearch.Skill{sk("python", 1, 3), sk("sql", 2, 2)}}); err != nil {
		return err
	}
	if _, err := board.Remove(ctx, "intern"); err != nil {
		return err
	}
	fmt.Println("after re-indexing data-engineer (2 years of SQL) and removing intern:")
	if err := find(); err != nil {
		return err
	}

	// Bad input changes nothing and says what was wrong.
	_, err = board.Find(ctx, sk("go", 7000, 0))
	fmt.Println("bad input:", err)
	return demo.Clean(ctx, rdb, prefix)
}
