// Command counters runs a simulated web service for three minutes of
// simulated time (Redis in Action 5.2): it counts page hits at several
// precisions, times every request (statistics per page and the slowest
// pages), counts API calls through a client-side batcher, and then lets a
// cleaner enforce the retention.
//
//	go run ./examples/counters                       # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/counters
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/examples/demo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "counters example:", err)
		os.Exit(1)
	}
}

var pages = []string{"/", "/item/42", "/cart", "/checkout"}

func run() error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	ctx := context.Background()
	const prefix = "example:counters:"

	// The simulation runs on its own clock; a service would leave the
	// default, the Redis server's clock.
	start := time.Date(2024, 3, 1, 11, 58, 30, 0, time.UTC)
	now := start
	c, err := counters.New(rdb, counters.WithPrefix(prefix), counters.WithClock(func() time.Time { return now }))
	if err != nil {
		return err
	}
	st, err := c.Stats(counters.AccessTime)
	if err != nil {
		return err
	}
	for _, p := range pages { // a clean start on a real server
		if err := rdb.Del(ctx, prefix+"stats:{AccessTime}:cur:"+p, prefix+"stats:{AccessTime}:last:"+p).Err(); err != nil {
			return err
		}
	}
	if err := rdb.Del(ctx, prefix+"stats:{AccessTime}:slowest").Err(); err != nil {
		return err
	}
	if err := forget(ctx, c, now.Add(400*24*time.Hour)); err != nil {
		return err
	}

	// Three minutes of traffic: request i of second s hits a page and
	// takes a time that depends on the page.
	for s := range 180 {
		now = start.Add(time.Duration(s) * time.Second)
		for i := range 1 + s%4 {
			page := pages[(s+i)%len(pages)]
			if err := c.Update(ctx, "hits:"+page, 1); err != nil {
				return err
			}
			took := time.Duration(5+10*((s+i)%len(pages))+s%7) * time.Millisecond
			if err := st.Record(ctx, page, took); err != nil {
				return err
			}
		}
	}

	for _, step := range []time.Duration{time.Second, 5 * time.Second, time.Minute, time.Hour} {
		samples, err := c.Get(ctx, "hits:/cart", step)
		if err != nil {
			return err
		}
		fmt.Printf("hits of /cart per %-4v %3d samples, last 3:", step, len(samples))
		for _, x := range samples[max(0, len(samples)-3):] {
			fmt.Printf(" %s=%d", x.Start.UTC().Format("15:04:05"), x.Count)
		}
		fmt.Println()
	}
	for _, p := range pages {
		cur, prev, err := st.Get(ctx, p)
		if err != nil {
			return err
		}
		fmt.Printf("%-9s %s: n=%3d mean=%5.1fms sd=%4.1fms min=%2.0fms max=%2.0fms (previous hour: n=%d)\n", p,
			cur.Hour.UTC().Format("15:04"), cur.Count, 1000*cur.Mean(), 1000*cur.StdDev(), 1000*cur.Min, 1000*cur.Max, prev.Count)
	}
	slowest, err := st.Slowest(ctx, 3)
	if err != nil {
		return err
	}
	fmt.Print("slowest pages:")
	for _, s := range slowest {
		fmt.Printf(" %s (%.1fms)", s.Context, 1000*s.Mean)
	}
	fmt.Println()

	// A batcher: increments cost no round trip; a flush writes them all.
	b, err := c.Batcher()
	if err != nil {
		return err
	}
	for i := range 10_000 {
		if err := b.Add("api:"+pages[i%len(pages)], 1); err != nil {
			return err
		}
	}
	if err := b.Close(ctx); err != nil {
		return err
	}
	day, err := c.Get(ctx, "api:/cart", 24*time.Hour)
	if err != nil {
		return err
	}
	fmt.Printf("batcher: %d increments written in one flush; api:/cart today = %d\n", b.Stats().Counted, day[0].Count)

	names, err := c.Names(ctx)
	if err != nil {
		return err
	}
	fmt.Println("known counters:", len(names))
	now = now.Add(10 * time.Minute) // the cleaner keeps 120 samples per precision
	cl, err := c.Cleaner()          // a service runs: go cl.Run(ctx)
	if err != nil {
		return err
	}
	cs, err := cl.Clean(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("cleaner, 10 minutes later: %d counters, %d samples deleted\n", cs.Counters, cs.Deleted)
	return forget(ctx, c, now.Add(400*24*time.Hour))
}

// forget deletes every counter, as a cleaner does when the retention has
// passed.
func forget(ctx context.Context, c *counters.Counters, at time.Time) error {
	cl, err := c.Cleaner(counters.WithCleanerClock(func() time.Time { return at }))
	if err != nil {
		return err
	}
	_, err = cl.Clean(ctx)
	return err
}
