package queue_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/queue"
)

type soldEmail struct {
	Seller, Item, Buyer string
	Price               int
}

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	g, err := queue.New(rdb, "emails")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	// The book's send_sold_email_via_queue.
	_, err = g.Enqueue(ctx, "default", "send_sold_email", soldEmail{"17", "ItemM", "27", 97})
	if err != nil {
		panic(err)
	}

	w, err := queue.NewWorker(g, queue.Queues("high", "default"), queue.Concurrency(4))
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(ctx)
	_ = w.Handle("send_sold_email", queue.Typed(func(_ context.Context, e soldEmail) error {
		fmt.Printf("to seller %s: %s sold to %s for %d\n", e.Seller, e.Item, e.Buyer, e.Price)
		stop() // one task is enough here
		return nil
	}))
	fmt.Println("run:", w.Run(ctx)) // returns once ctx ends and running tasks are settled
	s, _ := g.Stats(context.Background(), "default")
	fmt.Println("ready:", s.Ready["default"], "in flight:", s.InFlight)
	// Output:
	// to seller 17: ItemM sold to 27 for 97
	// run: <nil>
	// ready: 0 in flight: 0
}

func ExampleGroup_Enqueue_delay() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	now := time.Now()
	srv.SetTime(now) // the server's clock decides when a task is due

	g, _ := queue.New(rdb, "reports")
	id, _ := g.Enqueue(ctx, "default", "build_report", "weekly", queue.Delay(time.Hour))
	s, _ := g.Stats(ctx, "default")
	fmt.Println("ready:", s.Ready["default"], "delayed:", s.Delayed)

	srv.SetTime(now.Add(time.Hour + time.Second))
	n, _ := g.Promote(ctx) // workers do this as they take tasks
	s, _ = g.Stats(ctx, "default")
	fmt.Println("promoted:", n, "ready:", s.Ready["default"], "delayed:", s.Delayed)

	fmt.Println(errors.Is(g.Cancel(ctx, id), queue.ErrNotFound)) // too late: it is ready
	// Output:
	// ready: 0 delayed: 1
	// promoted: 1 ready: 1 delayed: 0
	// true
}

func ExampleGroup_Cancel() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	g, _ := queue.New(rdb, "reminders")
	id, _ := g.Enqueue(ctx, "default", "remind", "pay the invoice", queue.At(time.Now().Add(24*time.Hour)))
	fmt.Println(g.Cancel(ctx, id))
	s, _ := g.Stats(ctx)
	fmt.Println("delayed:", s.Delayed)
	// Output:
	// <nil>
	// delayed: 0
}

func ExampleGroup_EnqueueBatch() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	g, _ := queue.New(rdb, "emails")
	ids, err := g.EnqueueBatch(ctx, []queue.Job{ // one round trip
		{Queue: "high", Name: "send_receipt", Payload: "order-1"},
		{Queue: "low", Name: "send_newsletter", Payload: "june", Options: []queue.EnqueueOption{queue.ID("newsletter-june")}},
	})
	fmt.Println(len(ids), ids[1], err)
	_, err = g.Enqueue(ctx, "low", "send_newsletter", "june", queue.ID("newsletter-june"))
	fmt.Println(errors.Is(err, queue.ErrDuplicate))
	// Output:
	// 2 newsletter-june <nil>
	// true
}

func ExampleGroup_Dead() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	g, _ := queue.New(rdb, "emails")
	id, _ := g.Enqueue(ctx, "default", "send", "nobody@invalid", queue.MaxRetry(0))
	w, _ := queue.NewWorker(g)
	runCtx, stop := context.WithCancel(ctx)
	_ = w.Handle("send", queue.HandlerFunc(func(context.Context, *queue.Task) error {
		defer stop()
		return errors.New("mailbox unavailable")
	}))
	_ = w.Run(runCtx)

	dead, _ := g.Dead(ctx, 0, 10)
	fmt.Println(dead[0].ID == id, dead[0].Attempts, dead[0].Error)
	fmt.Println(g.Requeue(ctx, id)) // fixed the address? send it again
	s, _ := g.Stats(ctx, "default")
	fmt.Println("ready:", s.Ready["default"], "dead:", s.Dead)
	// Output:
	// true 1 mailbox unavailable
	// <nil>
	// ready: 1 dead: 0
}

func ExampleUnique() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	g, _ := queue.New(rdb, "reports")
	// One report per customer at a time: the key is the queue, name and
	// payload, or UniqueKey's.
	_, err := g.Enqueue(ctx, "default", "build_report", 42, queue.Unique(time.Hour), queue.ID("report-42"), queue.Delay(time.Minute))
	fmt.Println(err)
	_, err = g.Enqueue(ctx, "default", "build_report", 42, queue.Unique(time.Hour))
	var nu *queue.NotUniqueError
	fmt.Println(errors.Is(err, queue.ErrNotUnique), errors.As(err, &nu), nu.Holder)
	_, err = g.Enqueue(ctx, "default", "build_report", 43, queue.Unique(time.Hour))
	fmt.Println(err)

	// Done, dead or cancelled, the task frees its key.
	fmt.Println(g.Cancel(ctx, "report-42"))
	_, err = g.Enqueue(ctx, "default", "build_report", 42, queue.Unique(time.Hour))
	fmt.Println(err)
	// Output:
	// <nil>
	// true true report-42
	// <nil>
	// <nil>
	// <nil>
}

func ExampleGroup_Pause() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	g, _ := queue.New(rdb, "emails")
	// No worker, in any process, takes from a paused queue; it still
	// accepts tasks.
	_ = g.Pause(ctx, "newsletters")
	_, _ = g.Enqueue(ctx, "newsletters", "send", "issue 12")
	s, _ := g.Stats(ctx, "newsletters")
	fmt.Println(s.Paused, s.Ready["newsletters"])

	// Resume wakes an idle worker at once.
	_ = g.Resume(ctx, "newsletters")
	paused, _ := g.Paused(ctx)
	fmt.Println(paused)
	// Output:
	// [newsletters] 1
	// []
}

func ExampleParseCron() {
	c, err := queue.ParseCron("30 3 * * mon-fri") // 03:30 UTC on weekdays
	if err != nil {
		panic(err)
	}
	t := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC) // a Friday
	for range 3 {
		t = c.Next(t)
		fmt.Println(t.Format("Mon 2006-01-02 15:04"))
	}
	_, err = queue.ParseCron("30 25 * * *")
	fmt.Println(err)
	// Output:
	// Mon 2026-01-05 03:30
	// Tue 2026-01-06 03:30
	// Wed 2026-01-07 03:30
	// cron "30 25 * * *": field 2 (hour): "25": value 25: out of range 0-23
}

func ExampleGroup_Scheduler_cron() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	srv.SetTime(time.Date(2026, 1, 5, 3, 31, 0, 0, time.UTC)) // the server's clock
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	g, _ := queue.New(rdb, "reports")
	s, err := g.Scheduler(nil, queue.Periodic{Name: "nightly", Cron: "30 3 * * *", Queue: "default", Task: "build_report"})
	if err != nil {
		panic(err)
	}
	// Any number of schedulers, in any processes: each time's task once.
	ids, next, _ := s.Tick(ctx)
	fmt.Println(ids, next)
	ids, _, _ = s.Tick(ctx)
	fmt.Println(ids)
	// Output:
	// [nightly@1767583800] 23h59m0s
	// []
}
