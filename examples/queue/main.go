// Command queue runs the book's "sold item" email worker (Redis in Action
// 6.4.1, send_sold_email_via_queue and process_sold_email_queue) on a ria
// task queue, with a delayed task (6.4.2, execute_later) and the reliability
// the book leaves out: a failed email is retried with backoff, an email whose
// payload does not decode goes to the dead letters with the reason, and the
// worker carries on. Beyond the book: the digest is a unique task (a second
// one is refused while it is pending), its queue is paused until the
// emails are out (it waits, due, without running), and a cron schedule
// enqueues a task once per scheduled time however many schedulers tick.
//
//	go run ./examples/queue                       # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/queue
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/queue"
)

const prefix = "example:queue:"

// soldEmail is the book's payload: who sold what to whom, for how much.
type soldEmail struct {
	Seller string  `json:"seller_id"`
	Item   string  `json:"item_id"`
	Price  float64 `json:"price"`
	Buyer  string  `json:"buyer_id"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "queue example:", err)
		os.Exit(1)
	}
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

	g, err := queue.New(rdb, "market", queue.WithPrefix(prefix))
	if err != nil {
		return err
	}

	// The marketplace sells five items and queues an email to each seller
	// (one round trip for the batch), plus a sales digest due in 300ms.
	sales := []soldEmail{
		{"17", "ItemA", 35, "27"}, {"17", "ItemB", 12, "28"}, {"18", "ItemC", 99, "29"},
		{"19", "ItemD", 7, "30"}, {"17", "ItemE", 51, "31"},
	}
	jobs := make([]queue.Job, 0, len(sales)+1)
	for _, s := range sales {
		jobs = append(jobs, queue.Job{Queue: "email", Name: "send_sold_email", Payload: s})
	}
	// A producer with a bug: this payload does not decode into soldEmail.
	jobs = append(jobs, queue.Job{Queue: "email", Name: "send_sold_email", Payload: json.RawMessage(`{"price":"lots"}`)})
	if _, err := g.EnqueueBatch(ctx, jobs); err != nil {
		return err
	}
	// The reports queue is paused (for every worker, in any process) until
	// the emails are out: its tasks wait, and become due, without running.
	if err := g.Pause(ctx, "reports"); err != nil {
		return err
	}
	digestDue := time.Now().Add(300 * time.Millisecond)
	digest, err := g.Enqueue(ctx, "reports", "send_digest", "daily", queue.Delay(300*time.Millisecond), queue.Unique(time.Hour))
	if err != nil {
		return err
	}
	// A second digest (a double click) is refused while the first is pending.
	_, err = g.Enqueue(ctx, "reports", "send_digest", "daily", queue.Unique(time.Hour))
	var nu *queue.NotUniqueError
	if !errors.As(err, &nu) || nu.Holder != digest {
		return fmt.Errorf("second digest: want it refused, got %v", err)
	}
	fmt.Println("second digest refused: the first one holds its uniqueness key")

	// Three schedulers (three processes, say) tick a cron schedule: its
	// current time's task is enqueued once.
	cronTasks := 0
	for range 3 {
		sch, err := g.Scheduler(nil, queue.Periodic{Name: "rollup", Cron: "*/5 * * * *", Queue: "cron", Task: "rollup"})
		if err != nil {
			return err
		}
		ids, _, err := sch.Tick(ctx)
		if err != nil {
			return err
		}
		cronTasks += len(ids)
	}
	fmt.Printf("cron schedule */5 ticked by 3 schedulers: %d task enqueued\n", cronTasks)
	s, err := g.Stats(ctx, "email", "reports")
	if err != nil {
		return err
	}
	fmt.Printf("queued: %d emails ready, %d delayed task\n", s.Ready["email"], s.Delayed)

	var (
		mu       sync.Mutex
		sent     = map[string]int{}
		failedB  bool
		digestAt time.Time
		finished = make(chan struct{})
	)
	var (
		resumed        bool
		pausedWhileDue bool // the digest was due and waiting in its paused queue
	)
	check := func() { // all done: five emails sent and the digest ran
		if len(sent) == len(sales) && !digestAt.IsZero() {
			select {
			case <-finished:
			default:
				close(finished)
			}
		}
	}
	w, err := queue.NewWorker(g, queue.Queues("email", "reports"), queue.Concurrency(4),
		queue.Backoff(50*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		return err
	}
	err = w.Handle("send_sold_email", queue.Typed(func(_ context.Context, e soldEmail) error {
		mu.Lock()
		defer mu.Unlock()
		if e.Item == "ItemB" && !failedB { // the mail server times out once
			failedB = true
			return errors.New("smtp: timeout")
		}
		sent[e.Item]++
		check()
		return nil
	}))
	if err != nil {
		return err
	}
	err = w.Handle("send_digest", queue.HandlerFunc(func(context.Context, *queue.Task) error {
		mu.Lock()
		defer mu.Unlock()
		digestAt = time.Now()
		check()
		return nil
	}))
	if err != nil {
		return err
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	// Wait until the emails and the digest are done and the bad email has
	// reached the dead letters (or give up after 10s: the checks below fail).
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		emailsOut := len(sent) == len(sales)
		mu.Unlock()
		if !resumed && emailsOut && time.Now().After(digestDue) {
			// Once due, the digest is promoted into its paused queue and
			// waits there (checked until it is, or for a second).
			s, err := g.Stats(ctx, "reports")
			if err != nil {
				return err
			}
			ready := s.Ready["reports"] == 1
			if ready || time.Now().After(digestDue.Add(time.Second)) {
				mu.Lock()
				pausedWhileDue = ready && digestAt.IsZero()
				mu.Unlock()
				if err := g.Resume(ctx, "reports"); err != nil {
					return err
				}
				resumed = true
			}
		}
		select {
		case <-finished:
			s, err := g.Stats(ctx, "email", "reports")
			if err == nil && s.Dead == 1 && s.Ready["email"]+s.Ready["reports"]+s.Delayed+s.InFlight == 0 {
				deadline = time.Time{}
			}
		default:
		}
		time.Sleep(10 * time.Millisecond) // a demo's progress check
	}
	stop()
	if err := <-done; err != nil {
		return err
	}

	mu.Lock()
	defer mu.Unlock()
	items := make([]string, 0, len(sent))
	for it := range sent {
		items = append(items, it)
	}
	slices.Sort(items)
	for _, it := range items {
		i := slices.IndexFunc(sales, func(s soldEmail) bool { return s.Item == it })
		fmt.Printf("emailed seller %s: %s sold to buyer %s for %.0f (sent %d time)\n",
			sales[i].Seller, it, sales[i].Buyer, sales[i].Price, sent[it])
	}
	fmt.Printf("ItemB failed once (smtp: timeout) and was retried: %v\n", failedB)
	fmt.Printf("digest ran after its delay: %v\n", !digestAt.IsZero() && !digestAt.Before(digestDue.Add(-20*time.Millisecond)))
	fmt.Printf("digest waited, due, in its paused queue until Resume: %v\n", pausedWhileDue)

	dead, err := g.Dead(ctx, 0, 10)
	if err != nil {
		return err
	}
	for _, d := range dead {
		fmt.Printf("dead letter: %s after %d attempt: %s\n", d.Name, d.Attempts, d.Error)
	}
	s, err = g.Stats(ctx, "email", "reports")
	if err != nil {
		return err
	}
	fmt.Printf("left: ready %d, delayed %d, in flight %d, dead %d\n",
		s.Ready["email"]+s.Ready["reports"], s.Delayed, s.InFlight, s.Dead)

	once := len(sent) == len(sales)
	for _, n := range sent {
		once = once && n == 1
	}
	if !once || !failedB || digestAt.IsZero() || !pausedWhileDue || cronTasks != 1 || len(dead) != 1 ||
		s.Ready["email"]+s.Ready["reports"]+s.Delayed+s.InFlight != 0 || s.Dead != 1 {
		return errors.New("invariant broken")
	}
	return demo.Clean(ctx, rdb, prefix)
}
