package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/semaphore"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	// At most two reports are built at once, across all processes.
	sem, err := semaphore.New(rdb, "reports", 2, 30*time.Second)
	if err != nil {
		panic(err)
	}
	p, err := sem.Acquire(ctx, semaphore.WithWait(10*time.Second))
	if err != nil {
		fmt.Println("no permit:", err)
		return
	}
	defer p.Release(ctx)
	// ... build the report, calling p.Refresh(ctx) within every 30s.

	n, _ := sem.Holders(ctx)
	fmt.Println("holders:", n)
	// Output:
	// holders: 1
}

func ExampleSemaphore_TryAcquire() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	sem, _ := semaphore.New(rdb, "uploads", 2, time.Minute)
	for i := 1; i <= 3; i++ {
		_, err := sem.TryAcquire(ctx)
		switch {
		case errors.Is(err, semaphore.ErrNoPermit):
			fmt.Printf("try %d: full\n", i)
		case err != nil:
			fmt.Println(err)
		default:
			fmt.Printf("try %d: permit\n", i)
		}
	}
	// Output:
	// try 1: permit
	// try 2: permit
	// try 3: full
}

func ExampleSemaphore_Acquire() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	sem, _ := semaphore.New(rdb, "printer", 1, time.Minute)
	first, _ := sem.TryAcquire(ctx)

	_, err := sem.Acquire(ctx, semaphore.WithWait(50*time.Millisecond))
	fmt.Println("while held:", err)

	go func() {
		time.Sleep(50 * time.Millisecond) // the first holder's work
		_ = first.Release(ctx)
	}()
	// The release hands the permit to the waiter at once.
	p, err := sem.Acquire(ctx, semaphore.WithWait(10*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("after release: later permit:", p.Seq() > first.Seq())
	_ = p.Release(ctx)
	// Output:
	// while held: semaphore: acquire "printer": semaphore: no permit available
	// after release: later permit: true
}

func ExamplePermit_Refresh() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	// Permits are timed by the server's clock; move miniredis's by hand.
	now := time.Now()
	srv.SetTime(now)
	sem, _ := semaphore.New(rdb, "crawler", 1, time.Second)
	p, _ := sem.TryAcquire(ctx)

	srv.SetTime(now.Add(800 * time.Millisecond))
	fmt.Println("refresh in time:", p.Refresh(ctx)) // the deadline is now +1s again

	srv.SetTime(now.Add(1600 * time.Millisecond))
	fmt.Println("still held:", p.Refresh(ctx))

	srv.SetTime(now.Add(5 * time.Second)) // the holder stalled
	err := p.Refresh(ctx)
	fmt.Println("after stalling:", errors.Is(err, semaphore.ErrNotHeld))
	// Output:
	// refresh in time: <nil>
	// still held: <nil>
	// after stalling: true
}

func ExampleSemaphore_Do() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	sem, _ := semaphore.New(rdb, "reports", 2, 30*time.Second)
	// Do waits for a permit, refreshes it every 10s while fn runs (fn's ctx
	// is cancelled if it is lost) and releases it when fn returns.
	err := sem.Do(ctx, func(ctx context.Context, p *semaphore.Permit) error {
		n, _ := sem.Holders(ctx)
		fmt.Println("holders while building:", n)
		return nil // ... build the report, stopping if ctx is cancelled
	}, semaphore.WithWait(10*time.Second))
	fmt.Println("err:", err)

	n, _ := sem.Holders(ctx)
	fmt.Println("holders after:", n)
	// Output:
	// holders while building: 1
	// err: <nil>
	// holders after: 0
}

func ExamplePermit_KeepAlive() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	sem, _ := semaphore.New(rdb, "crawler", 1, 3*time.Second)
	p, _ := sem.TryAcquire(ctx)
	held := p.KeepAlive(ctx) // refreshes every second until Release
	// ... long work that watches held.Done() ...
	_ = p.Release(ctx)
	fmt.Println(held.Err())
	// Output:
	// context canceled
}

func ExamplePermit_Release() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	sem, _ := semaphore.New(rdb, "jobs", 1, time.Minute)
	p, _ := sem.TryAcquire(ctx)
	fmt.Println(p.Release(ctx))
	fmt.Println(p.Release(ctx))
	// Output:
	// <nil>
	// semaphore: release "jobs": semaphore: permit not held
}

func ExampleNew() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	_, err := semaphore.New(rdb, "jobs", 0, time.Minute)
	fmt.Println(err)
	_, err = semaphore.New(rdb, "", 1, time.Minute)
	fmt.Println(err)
	// Output:
	// semaphore: new "jobs": limit 0: must be at least 1
	// semaphore: new: semaphore name: empty name
}
