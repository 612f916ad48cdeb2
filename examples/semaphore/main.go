// Command semaphore runs eight workers that share three permits of one
// Redis semaphore: each waits for a permit, does a little work, and gives it
// back. It prints who held a permit when and, at the end, the most permits
// held at once, which can never exceed three.
//
// It uses the server named by REDIS_URL, or an embedded miniredis.
package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/semaphore"
)

const (
	workers = 8
	permits = 3
	jobs    = 3 // per worker
	work    = 40 * time.Millisecond
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "semaphore:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Permits lapse after 5s unless released, so a crashed run frees them.
	sem, err := semaphore.New(rdb, "example-workers", permits, 5*time.Second)
	if err != nil {
		return err
	}
	fmt.Printf("%d workers, %d jobs each, share %d permits\n", workers, jobs, permits)

	var (
		inUse, maxInUse, done atomic.Int64
		wg                    sync.WaitGroup
		errs                  = make(chan error, workers)
	)
	start := time.Now()
	for w := 1; w <= workers; w++ {
		wg.Go(func() {
			for j := 1; j <= jobs; j++ {
				p, err := sem.Acquire(ctx, semaphore.WithWait(5*time.Second))
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
				n := inUse.Add(1)
				for m := maxInUse.Load(); n > m && !maxInUse.CompareAndSwap(m, n); m = maxInUse.Load() {
				}
				fmt.Printf("%4dms worker %d job %d: got a permit, %d in use\n",
					time.Since(start).Milliseconds(), w, j, n)
				time.Sleep(work) // the job
				inUse.Add(-1)
				if err := p.Release(ctx); err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}

	fmt.Printf("done: %d jobs in %v, at most %d permits held at once (limit %d)\n",
		done.Load(), time.Since(start).Round(10*time.Millisecond), maxInUse.Load(), permits)
	if maxInUse.Load() > permits {
		return fmt.Errorf("%d holders at once, more than %d", maxInUse.Load(), permits)
	}
	if done.Load() != workers*jobs {
		return fmt.Errorf("%d jobs done, want %d", done.Load(), workers*jobs)
	}
	return nil
}
