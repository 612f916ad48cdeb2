package counters_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/counters"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	at := time.Unix(1_700_000_000, 0)
	// A fixed clock and explicit times, for the example; by default the
	// counters read the server's clock.
	c, _ := counters.New(rdb, counters.WithClock(func() time.Time { return at.Add(10 * time.Second) }))
	for i := range 7 {
		_, _ = c.UpdateAt(ctx, "hits", 1, at.Add(time.Duration(i)*time.Second))
	}
	for _, step := range []time.Duration{time.Second, 5 * time.Second} {
		samples, _ := c.Get(ctx, "hits", step)
		fmt.Print(step, ":")
		for _, s := range samples {
			fmt.Printf(" %d@+%ds", s.Count, s.Start.Unix()-at.Unix())
		}
		fmt.Println()
	}
	// Output:
	// 1s: 1@+0s 1@+1s 1@+2s 1@+3s 1@+4s 1@+5s 1@+6s
	// 5s: 5@+0s 2@+5s
}

func ExampleCounters_Update() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	c, _ := counters.New(rdb, counters.WithPrecisions(
		counters.Precision{Step: time.Minute, Samples: 60},
		counters.Precision{Step: time.Hour, Samples: 24}))
	_ = c.Update(ctx, "logins", 1) // at the server's time, every precision, one round trip
	_ = c.Update(ctx, "logins", 2)
	hours, _ := c.Get(ctx, "logins", time.Hour)
	fmt.Println(len(hours), hours[0].Count)
	names, _ := c.Names(ctx)
	fmt.Println(names)
	// Output:
	// 1 3
	// [logins]
}

func ExampleCleaner() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	now := time.Unix(1_700_000_000, 0)
	c, _ := counters.New(rdb, counters.WithClock(func() time.Time { return now }),
		counters.WithPrecisions(counters.Precision{Step: time.Second, Samples: 3}))
	for i := range 10 {
		_, _ = c.UpdateAt(ctx, "hits", 1, now.Add(time.Duration(i-2)*time.Second))
	}
	now = now.Add(7 * time.Second)
	cl, _ := c.Cleaner() // in production: go cl.Run(ctx)
	st, _ := cl.Clean(ctx)
	samples, _ := c.Get(ctx, "hits", time.Second)
	fmt.Printf("deleted %d, kept %d\n", st.Deleted, len(samples))
	// Output:
	// deleted 7, kept 3
}

func ExampleBatcher() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	c, _ := counters.New(rdb)
	b, _ := c.Batcher()
	go func() { _ = b.Run(ctx) }() // flushes every second
	for range 1000 {
		_ = b.Add("page:/home", 1) // no round trip
	}
	_ = b.Close(ctx) // flushes the rest
	day, _ := c.Get(ctx, "page:/home", 24*time.Hour)
	fmt.Println(day[0].Count, b.Stats().Counted)
	// Output:
	// 1000 1000
}

func ExampleStats_Time() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	c, _ := counters.New(rdb)
	st, _ := c.Stats(counters.AccessTime)
	for _, page := range []string{"/", "/cart", "/"} {
		_ = st.Time(ctx, page, func() error { return nil }) // serve the page
	}
	cur, _, _ := st.Get(ctx, "/")
	slowest, _ := st.Slowest(ctx, 10)
	fmt.Println(cur.Count, len(slowest))
	// Output:
	// 2 2
}

func ExampleStats_UpdateAt() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	c, _ := counters.New(rdb)
	st, _ := c.Stats("ResponseBytes")
	hour := time.Unix(1_700_002_800, 0)
	for _, v := range []float64{100, 300, 200} {
		_, _ = st.UpdateAt(ctx, "/api", v, hour.Add(-time.Minute))
	}
	_, _ = st.UpdateAt(ctx, "/api", 50, hour) // a new hour: the last one is kept as the previous
	cur, prev, _ := st.Get(ctx, "/api")
	fmt.Printf("current: n=%d mean=%.0f\n", cur.Count, cur.Mean())
	fmt.Printf("previous: n=%d mean=%.0f min=%.0f max=%.0f stddev=%.0f\n", prev.Count, prev.Mean(), prev.Min, prev.Max, prev.StdDev())
	// Output:
	// current: n=1 mean=50
	// previous: n=3 mean=200 min=100 max=300 stddev=100
}
