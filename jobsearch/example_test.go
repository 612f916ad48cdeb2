package jobsearch_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/jobsearch"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	board, err := jobsearch.New(rdb, "jobs")
	if err != nil {
		panic(err)
	}
	skills := func(names ...string) []jobsearch.Skill {
		var out []jobsearch.Skill
		for _, n := range names {
			out = append(out, jobsearch.Skill{Name: n})
		}
		return out
	}
	// The book's jobs.
	_, _, err = board.Index(ctx,
		jobsearch.Job{ID: "test1", Requires: skills("q1", "q2", "q3")},
		jobsearch.Job{ID: "test2", Requires: skills("q1", "q3", "q4")},
		jobsearch.Job{ID: "test3", Requires: skills("q1", "q3", "q5")})
	if err != nil {
		panic(err)
	}
	for _, have := range [][]string{{"q1"}, {"q1", "q3", "q4"}, {"q1", "q2", "q3", "q4", "q5"}} {
		ids, err := board.Find(ctx, skills(have...)...)
		if err != nil {
			panic(err)
		}
		fmt.Println(have, "->", ids)
	}
	// Output:
	// [q1] -> []
	// [q1 q3 q4] -> [test2]
	// [q1 q2 q3 q4 q5] -> [test1 test2 test3]
}

func ExampleBoard_Find_levelsAndYears() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	board, _ := jobsearch.New(rdb, "jobs")
	_, _, err := board.Index(ctx,
		jobsearch.Job{ID: "junior", Requires: []jobsearch.Skill{{Name: "go", Level: 1}}},
		jobsearch.Job{ID: "senior", Requires: []jobsearch.Skill{{Name: "go", Level: 2, Years: 5}, {Name: "redis", Level: 1}}})
	if err != nil {
		panic(err)
	}
	ids, _ := board.Find(ctx, jobsearch.Skill{Name: "go", Level: 2, Years: 3}, jobsearch.Skill{Name: "redis", Level: 2})
	fmt.Println(ids)
	ids, _ = board.Find(ctx, jobsearch.Skill{Name: "go", Level: 2, Years: 6}, jobsearch.Skill{Name: "redis", Level: 1})
	fmt.Println(ids)
	// Output:
	// [junior]
	// [junior senior]
}

func ExampleBoard_IsQualified() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	board, _ := jobsearch.New(rdb, "jobs")
	// The book's is_qualified test: a job requiring q1, q2 and q3.
	_, _, err := board.Index(ctx, jobsearch.Job{ID: "test", Requires: []jobsearch.Skill{{Name: "q1"}, {Name: "q2"}, {Name: "q3"}}})
	if err != nil {
		panic(err)
	}
	ok, _ := board.IsQualified(ctx, "test", jobsearch.Skill{Name: "q1"}, jobsearch.Skill{Name: "q3"}, jobsearch.Skill{Name: "q2"})
	fmt.Println(ok)
	ok, _ = board.IsQualified(ctx, "test", jobsearch.Skill{Name: "q1"}, jobsearch.Skill{Name: "q2"})
	fmt.Println(ok)
	_, err = board.IsQualified(ctx, "other", jobsearch.Skill{Name: "q1"})
	fmt.Println(errors.Is(err, jobsearch.ErrNoJob))
	// Output:
	// true
	// false
	// true
}
