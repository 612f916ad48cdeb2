// Command cache runs the usage blog's caching patterns (seeds/004) with ria's
// cache package: a read-through cache that 20 concurrent callers in four
// "processes" hit on a miss (one load), a job-views counter restored from the
// system of record after Redis lost it, the password-reset guard, the latest
// and top job views, the blog's get_cache: a session and the view counts
// of a page of jobs read in one round trip, and a near cache in two
// processes kept fresh by invalidations.
//
//	go run ./examples/cache                       # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/cache
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/examples/demo"
)

const prefix = "example:cache:"

type job struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type session struct {
	User string `json:"user"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cache example:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	rt := &roundTrips{} // our own client: we may hook it
	rdb.AddHook(rt)
	ctx := context.Background()
	opt := cache.WithPrefix(prefix)

	// Start clean when running on a real server.
	if err := clean(ctx, rdb); err != nil {
		return err
	}

	// 1. Read-through cache: 20 callers miss job 42 at once, 5 in each of 4
	// "processes" (a Cache each). One of them runs the heavy task (the
	// blog's hard_task: 200ms); the others wait for its value.
	var loads atomic.Int64
	hardTask := func(ctx context.Context) (job, error) {
		loads.Add(1)
		time.Sleep(200 * time.Millisecond)
		return job{ID: "42", Title: "Senior Gopher"}, nil
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		titles = map[string]int{}
		errs   []error
	)
	for p := range 4 {
		jobs, err := cache.New[job](rdb, "jobs", opt, cache.WithTTL(time.Minute))
		if err != nil {
			return err
		}
		for range 5 {
			wg.Go(func() {
				j, err := jobs.Get(ctx, "42", hardTask)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("process %d: %w", p, err))
				}
				titles[j.Title]++
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Printf("read-through: 20 callers in 4 processes got %v; hard task ran %d time(s)\n", titles, loads.Load())
	if loads.Load() != 1 || titles["Senior Gopher"] != 20 {
		return errors.New("invariant broken: want exactly one load and 20 equal values")
	}

	// 2. Job views, restored from the system of record when Redis lost them.
	viewsInDB := map[string]int64{"1": 10, "2": 3, "3": 7} // the RDB's job views table
	var restores atomic.Int64
	views, err := cache.NewCounter(rdb, "job-views", func(ctx context.Context, id string) (int64, error) {
		restores.Add(1)
		return viewsInDB[id], nil
	}, opt, cache.WithTTL(100*time.Second))
	if err != nil {
		return err
	}
	n1, err := views.Incr(ctx, "1", 1)
	if err != nil {
		return err
	}
	n2, err := views.Incr(ctx, "1", 1)
	if err != nil {
		return err
	}
	fmt.Printf("job 1 views: %d, %d (restored from the RDB once: %d restore)\n", n1, n2, restores.Load())
	viewsInDB["1"] = n2                                                      // the RDB caught up meanwhile
	if err := rdb.Del(ctx, prefix+"{job-views:1}:count").Err(); err != nil { // Redis lost the counter
		return err
	}
	n3, err := views.Incr(ctx, "1", 1)
	if err != nil {
		return err
	}
	fmt.Printf("job 1 views after Redis lost the counter: %d (restores: %d)\n", n3, restores.Load())
	if n1 != 11 || n2 != 12 || n3 != 13 || restores.Load() != 2 {
		return errors.New("invariant broken: counter lost increments or restored too often")
	}

	// 3. Password reset: one email per user per window (5s; the window's
	// end is shown in the package's tests and examples, which can move
	// the clock).
	resets, err := cache.NewGuard(rdb, "password-reset", opt)
	if err != nil {
		return err
	}
	var sent []bool
	for _, user := range []string{"user1", "user1", "user2"} {
		ok, err := resets.Allow(ctx, user, 5*time.Second)
		if err != nil {
			return err
		}
		sent = append(sent, ok)
		if ok {
			fmt.Println("password reset for", user+": email sent")
		} else {
			fmt.Println("password reset for", user+": please try later")
		}
	}
	if !sent[0] || sent[1] || !sent[2] {
		return errors.New("invariant broken: the guard let through the wrong requests")
	}

	// 4. Latest 3 job views and top jobs by views.
	latest, err := cache.NewLatest[string](rdb, "job-views", 3, opt)
	if err != nil {
		return err
	}
	top, err := cache.NewTop[string](rdb, "jobs-by-views", opt)
	if err != nil {
		return err
	}
	for _, id := range []string{"1", "2", "3", "2", "1", "2"} {
		if err := latest.Push(ctx, "site", id); err != nil {
			return err
		}
		if _, err := top.Incr(ctx, "site", id, 1); err != nil {
			return err
		}
	}
	last, err := latest.List(ctx, "site")
	if err != nil {
		return err
	}
	best, err := top.Range(ctx, "site", 3)
	if err != nil {
		return err
	}
	fmt.Println("latest 3 views:", last)
	fmt.Print("top jobs:")
	for _, r := range best {
		fmt.Printf(" %s (%.0f)", r.Member, r.Score)
	}
	fmt.Println()

	// 5. get_cache: the user's session, the latest views, the top job and
	// the view counts of jobs 1..3 in one pipeline. Job 2 and 3 counters
	// are restored first, so that the batch finds everything.
	sessions, err := cache.New[session](rdb, "sessions", opt)
	if err != nil {
		return err
	}
	if err := sessions.Set(ctx, "user1", session{User: "ann"}); err != nil {
		return err
	}
	for _, id := range []string{"2", "3"} {
		if _, err := views.Get(ctx, id); err != nil {
			return err
		}
	}
	b := cache.NewBatch(rdb)
	sess := sessions.Read(b, "user1", nil)
	counts := []*cache.Result[int64]{views.Read(b, "1"), views.Read(b, "2"), views.Read(b, "3")}
	lastViews := latest.Read(b, "site")
	topJob := top.Read(b, "site", 1)
	trips := rt.Delta(func() { err = b.Exec(ctx) })
	if err != nil {
		return err
	}
	s, _, _ := sess.Value()
	fmt.Printf("get_cache: %d reads of 4 kinds in %d round trip(s):\n  user %s", b.Len(), trips, s.User)
	for i, r := range counts {
		n, _, _ := r.Value()
		fmt.Printf(", job %d: %d views", i+1, n)
	}
	lv, _, _ := lastViews.Value()
	tj, _, _ := topJob.Value()
	fmt.Printf("\n  latest %v, top job %s\n", lv, tj[0].Member)
	if trips != 1 || s.User != "ann" {
		return errors.New("invariant broken: the batch took more than one round trip")
	}

	// 6. Near cache: two processes (a Cache each) keep the jobs they read
	// in memory; a Set in one invalidates the other's copy through Pub/Sub.
	if err := nearCache(ctx, rdb, rt, opt); err != nil {
		return err
	}
	return clean(ctx, rdb)
}

// nearCache runs part 6: a near cache in each of two processes.
func nearCache(ctx context.Context, rdb redis.UniversalClient, rt *roundTrips, opt cache.Option) error {
	var procs [2]*cache.Cache[job]
	for i := range procs {
		c, err := cache.New[job](rdb, "near-jobs", opt, cache.WithTTL(time.Minute), cache.WithNear(1000, 5*time.Second))
		if err != nil {
			return err
		}
		defer c.Close()
		procs[i] = c
	}
	a, b := procs[0], procs[1]
	for deadline := time.Now().Add(10 * time.Second); !a.NearReady() || !b.NearReady(); {
		if time.Now().After(deadline) {
			return errors.New("near caches not subscribed")
		}
		time.Sleep(time.Millisecond) // subscribing at startup
	}
	load := func(context.Context) (job, error) { return job{ID: "7", Title: "Gopher"}, nil }
	var (
		j   job
		err error
	)
	first := rt.Delta(func() { j, err = b.Get(ctx, "7", load) })
	if err != nil {
		return err
	}
	second := rt.Delta(func() { j, err = b.Get(ctx, "7", load) })
	if err != nil {
		return err
	}
	fmt.Printf("near cache: process B reads job 7 %q in %d round trips, then from memory in %d\n", j.Title, first, second)
	if err := a.Set(ctx, "7", job{ID: "7", Title: "Staff Gopher"}); err != nil {
		return err
	}
	start := time.Now()
	for j.Title != "Staff Gopher" {
		if time.Since(start) > 10*time.Second {
			return errors.New("invariant broken: the invalidation never reached process B")
		}
		time.Sleep(time.Millisecond) // the invalidation is on its way
		if j, err = b.Get(ctx, "7", load); err != nil {
			return err
		}
	}
	fmt.Printf("near cache: process A sets job 7 to %q; process B reads it after the invalidation (maxStale 5s bounds a lost one)\n", j.Title)
	if second != 0 {
		return errors.New("invariant broken: a near cache hit took a round trip")
	}
	return nil
}

// roundTrips is a redis.Hook that counts the requests a client sends: one
// per command, or per pipeline; not those go-redis sends to set up a new
// connection (HELLO, CLIENT SETINFO, ...).
type roundTrips struct{ n atomic.Int64 }

func setup(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "auth", "select", "client", "readonly", "cluster", "command":
		return true
	}
	return false
}

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !setup(cmd) {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if !setup(cmd) {
				h.n.Add(1)
				break
			}
		}
		return next(ctx, cmds)
	}
}

// Delta returns the round trips fn made.
func (h *roundTrips) Delta(fn func()) int64 {
	n := h.n.Load()
	fn()
	return h.n.Load() - n
}

// clean deletes the example's keys: every key under its prefix (a SCAN of
// each server), the near cache's and the reply records' included.
func clean(ctx context.Context, rdb redis.UniversalClient) error {
	return demo.Clean(ctx, rdb, prefix)
}
