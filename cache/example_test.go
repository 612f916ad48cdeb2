package cache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/cache"
)

type Job struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
}

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	jobs, _ := cache.New[Job](rdb, "jobs", cache.WithTTL(time.Minute))
	var loads atomic.Int64
	heavy := func(ctx context.Context) (Job, error) { // the blog's hard_task
		loads.Add(1)
		time.Sleep(50 * time.Millisecond)
		return Job{ID: 42, Title: "Gopher wanted"}, nil
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { _, _ = jobs.Get(ctx, "42", heavy) })
	}
	wg.Wait()
	job, err := jobs.Get(ctx, "42", heavy)
	fmt.Println(job.Title, err)
	fmt.Println("loads:", loads.Load())
	// Output:
	// Gopher wanted <nil>
	// loads: 1
}

func ExampleCache_Get_staleWhileRevalidate() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	prices, _ := cache.New[int](rdb, "prices", cache.WithTTL(time.Minute), cache.WithStaleGrace(time.Hour))
	price := 10
	load := func(context.Context) (int, error) { return price, nil }
	v, _ := prices.Get(ctx, "gold", load)
	fmt.Println("first:", v)

	price = 12
	srv.FastForward(2 * time.Minute) // expired, within the grace
	v, _ = prices.Get(ctx, "gold", load)
	fmt.Println("stale, at once:", v)
	prices.Wait() // the background reload
	v, _ = prices.Get(ctx, "gold", load)
	fmt.Println("reloaded:", v)
	// Output:
	// first: 10
	// stale, at once: 10
	// reloaded: 12
}

func ExampleCounter_Incr() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	viewsInDB := map[string]int64{"job1": 10} // the system of record
	views, _ := cache.NewCounter(rdb, "job-views", func(ctx context.Context, job string) (int64, error) {
		return viewsInDB[job], nil
	}, cache.WithTTL(100*time.Second))

	n, _ := views.Incr(ctx, "job1", 1)
	fmt.Println("restored and counted:", n)
	n, _ = views.Incr(ctx, "job1", 1)
	fmt.Println("counted:", n)
	srv.FlushAll() // Redis lost everything
	n, _ = views.Incr(ctx, "job1", 1)
	fmt.Println("restored again:", n)
	// Output:
	// restored and counted: 11
	// counted: 12
	// restored again: 11
}

func ExampleGuard_Allow() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	resets, _ := cache.NewGuard(rdb, "password-reset")
	for range 2 {
		if ok, _ := resets.Allow(ctx, "user1", 5*time.Second); ok {
			fmt.Println("email sent")
		} else {
			fmt.Println("please try later")
		}
	}
	srv.FastForward(5 * time.Second)
	ok, _ := resets.Allow(ctx, "user1", 5*time.Second)
	fmt.Println("after 5s:", ok)
	// Output:
	// email sent
	// please try later
	// after 5s: true
}

func ExampleLatest() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	latest, _ := cache.NewLatest[int](rdb, "job-views", 3)
	for job := range 10 {
		_ = latest.Push(ctx, "site", job)
	}
	jobs, _ := latest.List(ctx, "site")
	fmt.Println(jobs)
	// Output:
	// [9 8 7]
}

func ExampleTop() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	top, _ := cache.NewTop[string](rdb, "jobs-by-views")
	for _, job := range []string{"go", "rust", "go", "zig", "go", "rust"} {
		_, _ = top.Incr(ctx, "site", job, 1)
	}
	best, _ := top.Range(ctx, "site", 2)
	for _, r := range best {
		fmt.Println(r.Member, r.Score)
	}
	// Output:
	// go 3
	// rust 2
}

// The blog's get_cache: a session and the view counts of a page of jobs,
// of different kinds, in one round trip.
func ExampleBatch() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	sessions, _ := cache.New[string](rdb, "sessions")
	views, _ := cache.NewCounter(rdb, "job-views", func(context.Context, string) (int64, error) { return 10, nil })
	_ = sessions.Set(ctx, "user1", "session...")
	_, _ = views.Incr(ctx, "job1", 1)
	_, _ = views.Incr(ctx, "job2", 1)

	b := cache.NewBatch(rdb)
	session := sessions.Read(b, "user1", nil)
	counts := map[string]*cache.Result[int64]{}
	for _, job := range []string{"job1", "job2", "job3"} {
		counts[job] = views.Read(b, job)
	}
	if err := b.Exec(ctx); err != nil { // job3 is missing: restored after the pipeline
		fmt.Println(err)
	}
	s, _, _ := session.Value()
	fmt.Println("user:", s)
	for _, job := range []string{"job1", "job2", "job3"} {
		n, _, _ := counts[job].Value()
		fmt.Println(job, n)
	}
	// Output:
	// user: session...
	// job1 11
	// job2 11
	// job3 10
}

// A client may make 3 requests a minute, in a burst or spread out; the
// fourth is refused with the time to wait.
func ExampleLimiter_Allow() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	srv.SetTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) // miniredis's clock stands still
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	api, _ := cache.NewLimiter(rdb, "api")
	for range 4 {
		r, err := api.Allow(ctx, "client-1", cache.PerMinute(3))
		if err != nil {
			panic(err)
		}
		fmt.Printf("allowed %d, remaining %d, retry after %v\n", r.Allowed, r.Remaining, r.RetryAfter)
	}
	// Output:
	// allowed 1, remaining 2, retry after -1ns
	// allowed 1, remaining 1, retry after -1ns
	// allowed 1, remaining 0, retry after -1ns
	// allowed 0, remaining 0, retry after 20s
}

func ExampleWithNear() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	ctx := context.Background()
	// Two processes, each with its own client and near cache.
	rdbA := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdbA.Close()
	rdbB := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdbB.Close()
	a, _ := cache.New[string](rdbA, "prices", cache.WithNear(1000, 2*time.Second))
	defer a.Close()
	b, _ := cache.New[string](rdbB, "prices", cache.WithNear(1000, 2*time.Second))
	defer b.Close() // stops its invalidation subscriber

	load := func(context.Context) (string, error) { return "10", nil }
	v, _ := b.Get(ctx, "gold", load) // loaded and stored; later Gets in b cost no round trip
	fmt.Println("b reads", v)
	_ = a.Set(ctx, "gold", "11") // publishes an invalidation of "gold" in its script
	// b drops "gold" when the invalidation arrives (at once, normally; 2s
	// after its read at the latest, if the invalidation were lost).
	for deadline := time.Now().Add(10 * time.Second); v != "11" && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		v, _ = b.Get(ctx, "gold", load)
	}
	fmt.Println("b reads", v)
	// Output:
	// b reads 10
	// b reads 11
}

func ExampleTop_Rank() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	top, _ := cache.NewTop[string](rdb, "jobs-by-views")
	for _, job := range []string{"go", "rust", "go", "zig", "go", "rust"} {
		_, _ = top.Incr(ctx, "site", job, 1)
	}
	rank, _, _ := top.Rank(ctx, "site", "rust") // 0 is the top
	score, _, _ := top.Score(ctx, "site", "rust")
	fmt.Println("rust: rank", rank, "score", score)
	n, _ := top.Remove(ctx, "site", "go", "cobol")
	fmt.Println("removed", n)
	rank, _, _ = top.Rank(ctx, "site", "rust")
	_, ok, _ := top.Rank(ctx, "site", "go")
	fmt.Println("rust: rank", rank, "go ranked:", ok)
	// Output:
	// rust: rank 1 score 2
	// removed 1
	// rust: rank 0 go ranked: false
}

func ExampleGuard_Reset() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	resets, _ := cache.NewGuard(rdb, "password-reset")
	ok, _ := resets.Allow(ctx, "user1", time.Minute)
	fmt.Println("first:", ok)
	ok, _ = resets.Allow(ctx, "user1", time.Minute)
	fmt.Println("again:", ok)
	_ = resets.Reset(ctx, "user1") // say, the user changed their password meanwhile
	ok, _ = resets.Allow(ctx, "user1", time.Minute)
	fmt.Println("after Reset:", ok)
	// Output:
	// first: true
	// again: false
	// after Reset: true
}

func ExampleLatest_Clear() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	latest, _ := cache.NewLatest[int](rdb, "job-views", 3)
	_ = latest.Push(ctx, "user1", 4, 8)
	n, _ := latest.Len(ctx, "user1")
	fmt.Println("len", n)
	_ = latest.Clear(ctx, "user1")
	n, _ = latest.Len(ctx, "user1")
	fmt.Println("len after Clear", n)
	// Output:
	// len 2
	// len after Clear 0
}
