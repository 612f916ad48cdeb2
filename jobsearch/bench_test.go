package jobsearch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/jobsearch"
)

// BenchmarkFind compares Find with the book's find_jobs (ZUNIONSTORE of
// the candidate's skill SETs, ZINTERSTORE with the required counts,
// ZRANGEBYSCORE: three round trips, two MULTI blocks) on the same 100,000
// random jobs (1 to 5 of 200 skills) on a real server, and with PING, the
// floor of any one-round-trip call. Run:
//
//	go test -run '^$' -bench Find -benchtime 2s ./jobsearch/
func BenchmarkFind(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := context.Background()
	const nJobs, universe = 100000, 200
	r := rand.New(rand.NewPCG(1, 2))
	board, err := jobsearch.New(be.Client, "bench", jobsearch.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	bookSkill := func(s string) string { return be.Prefix + "{book}:idx:skill:" + s }
	bookReq := be.Prefix + "{book}:idx:jobs:req"
	name := func(i int) string { return "s" + strconv.Itoa(i) }
	var batch []jobsearch.Job
	for i := range nJobs {
		var req []jobsearch.Skill
		for _, k := range r.Perm(universe)[:1+r.IntN(5)] {
			req = append(req, jobsearch.Skill{Name: name(k)})
		}
		batch = append(batch, jobsearch.Job{ID: fmt.Sprint("job", i), Requires: req})
		if len(batch) == jobsearch.MaxBatch {
			if _, _, err := board.Index(ctx, batch...); err != nil {
				b.Fatal(err)
			}
			// The book's index_job, one pipeline per batch.
			if _, err := be.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, j := range batch {
					for _, s := range j.Requires {
						p.SAdd(ctx, bookSkill(s.Name), j.ID)
					}
					p.ZAdd(ctx, bookReq, redis.Z{Member: j.ID, Score: float64(len(j.Requires))})
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	cands := make([][]jobsearch.Skill, 64)
	for i := range cands {
		for _, k := range r.Perm(universe)[:10] {
			cands[i] = append(cands[i], jobsearch.Skill{Name: name(k)})
		}
	}
	// Both methods answer the same.
	for i, c := range cands {
		got, err := board.Find(ctx, c...)
		if err != nil {
			b.Fatal(err)
		}
		want, err := bookFindJobs(ctx, be.Client, be.Prefix+"{book}:idx:check:", i, c, bookSkill, bookReq)
		if err != nil {
			b.Fatal(err)
		}
		slices.Sort(want)
		if !slices.Equal(want, got) {
			b.Fatalf("candidate %d: Find %d jobs, book %d", i, len(got), len(want))
		}
	}
	var found, bookFound int
	b.Run("Find", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ids, err := board.Find(ctx, cands[i%len(cands)]...)
			if err != nil {
				b.Fatal(err)
			}
			found += len(ids)
		}
	})
	b.Run("book", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ids, err := bookFindJobs(ctx, be.Client, be.Prefix+"{book}:idx:", i, cands[i%len(cands)], bookSkill, bookReq)
			if err != nil {
				b.Fatal(err)
			}
			bookFound += len(ids)
		}
	})
	b.Run("PING", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := be.Client.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Logf("matches: Find %d, book %d", found, bookFound)
}

// bookFindJobs is the book's find_jobs: zunion, zintersect (each a MULTI
// with an EXPIRE of its temporary ZSET), zrangebyscore.
func bookFindJobs(ctx context.Context, rdb redis.UniversalClient, tmp string, i int, cand []jobsearch.Skill,
	skill func(string) string, req string) ([]string, error) {
	keys := make([]string, len(cand))
	weights := make([]float64, len(cand))
	for j, s := range cand {
		keys[j], weights[j] = skill(s.Name), 1
	}
	scores, final := tmp+"u"+strconv.Itoa(i), tmp+"i"+strconv.Itoa(i)
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZUnionStore(ctx, scores, &redis.ZStore{Keys: keys, Weights: weights})
		p.Expire(ctx, scores, 30e9)
		return nil
	}); err != nil {
		return nil, err
	}
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZInterStore(ctx, final, &redis.ZStore{Keys: []string{scores, req}, Weights: []float64{-1, 1}})
		p.Expire(ctx, final, 30e9)
		return nil
	}); err != nil {
		return nil, err
	}
	return rdb.ZRangeByScore(ctx, final, &redis.ZRangeBy{Min: "0", Max: "0"}).Result()
}
