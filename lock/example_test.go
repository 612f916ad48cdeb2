package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/lock"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	locker, _ := lock.New(rdb)
	err := locker.Do(ctx, "market", 10*time.Second, func(ctx context.Context, l *lock.Lock) error {
		// ctx is cancelled if the lock is lost; the lock is released after.
		fmt.Println("buying item 42")
		return nil
	})
	fmt.Println("done:", err)
	// Output:
	// buying item 42
	// done: <nil>
}

func ExampleLocker_TryAcquire() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	locker, _ := lock.New(rdb)

	l, err := locker.TryAcquire(ctx, "report", time.Minute)
	fmt.Println("first:", err)
	_, err = locker.TryAcquire(ctx, "report", time.Minute)
	fmt.Println("second:", errors.Is(err, lock.ErrNotObtained))
	fmt.Println("release:", l.Release(ctx))
	// Output:
	// first: <nil>
	// second: true
	// release: <nil>
}

func ExampleLocker_Acquire() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	locker, _ := lock.New(rdb)

	holder, _ := locker.TryAcquire(ctx, "report", time.Minute)
	go func() {
		time.Sleep(50 * time.Millisecond) // some work
		_ = holder.Release(ctx)           // wakes the waiter below
	}()
	l, err := locker.Acquire(ctx, "report", time.Minute, lock.WithWait(5*time.Second))
	fmt.Println("acquired after release:", err == nil)
	fmt.Println("newer fence:", l.Fence() > holder.Fence())
	// Output:
	// acquired after release: true
	// newer fence: true
}

func ExampleLock_Release_expired() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	locker, _ := lock.New(rdb)

	l, _ := locker.TryAcquire(ctx, "report", time.Second)
	srv.FastForward(2 * time.Second) // the holder stalled past its TTL
	fmt.Println(errors.Is(l.Release(ctx), lock.ErrNotHeld))
	// Output:
	// true
}

func ExampleLock_KeepAlive() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	locker, _ := lock.New(rdb)
	l, _ := locker.TryAcquire(ctx, "report", 3*time.Second)
	held := l.KeepAlive(ctx) // extends every second until Release
	// ... long work that watches held.Done() ...
	_ = l.Release(ctx)
	fmt.Println(held.Err())
	// Output:
	// context canceled
}

func ExampleLocker_RW() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	locker, _ := lock.New(rdb)
	rw := locker.RW("catalog")

	r1, _ := rw.RLock(ctx, time.Minute)
	r2, err := rw.TryRLock(ctx, time.Minute)
	fmt.Println("two readers:", err == nil)
	_, err = rw.TryLock(ctx, time.Minute)
	fmt.Println("writer while reading:", errors.Is(err, lock.ErrNotObtained))
	_ = r1.Release(ctx)
	_ = r2.Release(ctx)

	err = rw.DoWrite(ctx, time.Minute, func(ctx context.Context, w *lock.RWHold) error {
		fmt.Println("writing alone, fence above the readers':", w.Fence() > r2.Fence())
		return nil
	})
	fmt.Println("done:", err)
	// Output:
	// two readers: true
	// writer while reading: true
	// writing alone, fence above the readers': true
	// done: <nil>
}

func ExampleLocker_Break() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	locker, _ := lock.New(rdb)

	stuck, _ := locker.TryAcquire(ctx, "report", time.Hour) // its holder hangs
	s, _ := locker.State(ctx, "report")
	fmt.Println("held:", s.Held, "fence is the holder's:", s.Fence == stuck.Fence())

	broken, err := locker.Break(ctx, "report") // an operator clears it
	fmt.Println("broken:", broken, err)
	s, _ = locker.State(ctx, "report")
	fmt.Println("held:", s.Held)
	fmt.Println("the holder is told:", errors.Is(stuck.Release(ctx), lock.ErrNotHeld))
	// Output:
	// held: true fence is the holder's: true
	// broken: true <nil>
	// held: false
	// the holder is told: true
}
