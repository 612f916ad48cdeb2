// Command shard runs the memory-saving structures of Redis in Action
// chapters 9 and 11 on the ria shard package: 1,000,000 ids in a sharded
// hash (with the memory it takes, where the server reports it, next to one
// STRING key per id), unique visitors counted exactly with sharded sets and
// approximately with a HyperLogLog, users' locations packed two bytes each
// and aggregated by scanning, and a sharded list with a blocking pop.
//
//	go run ./examples/shard                       # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/shard
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/shard"
)

const prefix = "example:shard:"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "shard example:", err)
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
	if err := clean(ctx, rdb); err != nil {
		return err
	}
	if err := hash(ctx, rdb); err != nil {
		return err
	}
	if err := visitors(ctx, rdb); err != nil {
		return err
	}
	if err := locations(ctx, rdb); err != nil {
		return err
	}
	if err := list(ctx, rdb); err != nil {
		return err
	}
	return clean(ctx, rdb)
}

// hash stores 1,000,000 media ids -> user ids in a sharded hash, the
// Instagram layout.
func hash(ctx context.Context, rdb redis.UniversalClient) error {
	const n = 1_000_000
	l, err := shard.ReadLimits(ctx, rdb)
	if err != nil {
		return err
	}
	fmt.Printf("server limits: hash-max-listpack-entries %d, set-max-intset-entries %d (read from the server: %v)\n",
		l.HashEntries, l.SetIntEntries, l.FromServer)
	h, err := shard.NewHash(ctx, rdb, "media", n, shard.WithPrefix(prefix))
	if err != nil {
		return err
	}
	user := func(media int) string { return strconv.Itoa(1_000_000_000 + media*7) }
	before, memOK := usedMemory(ctx, rdb)
	start := time.Now()
	const chunk = 10_000
	for lo := 0; lo < n; lo += chunk {
		vals := make(map[string]string, chunk)
		for i := lo; i < lo+chunk; i++ {
			vals[strconv.Itoa(i)] = user(i)
		}
		if err := h.SetMany(ctx, vals); err != nil { // one HSET per shard, one round trip per server
			return err
		}
	}
	fmt.Printf("sharded hash: %d ids in shards of %d written in %v\n", n, h.ShardSize(), time.Since(start).Round(time.Millisecond))
	v, ok, err := h.Get(ctx, "765432")
	if err != nil {
		return err
	}
	fmt.Printf("media 765432 -> user %s (found %v) in %s\n", v, ok, h.ShardKey("765432"))
	if v != user(765432) {
		return errors.New("hash: wrong value read back")
	}
	after, _ := usedMemory(ctx, rdb)
	if !memOK {
		fmt.Println("memory: this server does not report used_memory (miniredis); run with REDIS_URL to see it")
		return nil
	}
	hashBytes := after - before
	// The same data as one STRING key per id, for comparison.
	before = after
	for lo := 0; lo < n; lo += chunk {
		p := rdb.Pipeline()
		for i := lo; i < lo+chunk; i++ {
			p.Set(ctx, prefix+"media:"+strconv.Itoa(i), user(i), 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			return err
		}
	}
	after, _ = usedMemory(ctx, rdb)
	strBytes := after - before
	fmt.Printf("memory: sharded hash %.1f MB (%.1f B/id), one STRING per id %.1f MB (%.1f B/id): %.1fx less\n",
		float64(hashBytes)/1e6, float64(hashBytes)/n, float64(strBytes)/1e6, float64(strBytes)/n, float64(strBytes)/float64(hashBytes))
	return nil
}

// usedMemory returns the sum of INFO memory's used_memory over the
// primaries (ok false when the server does not report it).
func usedMemory(ctx context.Context, rdb redis.UniversalClient) (int64, bool) {
	var (
		mu    sync.Mutex
		total int64
		ok    = true
	)
	read := func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "memory").Result()
		mu.Lock()
		defer mu.Unlock()
		for _, line := range strings.Split(info, "\r\n") {
			if v, found := strings.CutPrefix(line, "used_memory:"); found && err == nil {
				n, perr := strconv.ParseInt(v, 10, 64)
				if perr == nil {
					total += n
					return nil
				}
			}
		}
		ok = false
		return nil
	}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		_ = c.ForEachMaster(ctx, read)
	case *redis.Client:
		_ = read(ctx, c)
	default:
		return 0, false
	}
	return total, ok
}

// visitors counts the book's unique visitors both ways.
func visitors(ctx context.Context, rdb redis.UniversalClient) error {
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	const n = 50_000
	for _, m := range []shard.Method{shard.Sets, shard.HyperLogLog} {
		v, err := shard.NewVisitors(ctx, rdb, "site", m, shard.WithPrefix(prefix+m.String()+":"), shard.WithDailyExpected(n))
		if err != nil {
			return err
		}
		ids := make([]int64, 0, 1000)
		for i := range int64(n) {
			ids = append(ids, visitorID(i), visitorID(i/2)) // every other visit is a return visit
			if len(ids) >= 1000 {
				if err := v.Visit(ctx, day, ids...); err != nil {
					return err
				}
				ids = ids[:0]
			}
		}
		if err := v.Visit(ctx, day, ids...); err != nil {
			return err
		}
		got, err := v.Count(ctx, day)
		if err != nil {
			return err
		}
		fmt.Printf("unique visitors (%s): %d visits of %d visitors counted %d (error %.2f%%)\n",
			m, 2*n, n, got, 100*math.Abs(float64(got-n))/n)
		if m == shard.Sets && got != n || math.Abs(float64(got-n)) > 0.02*n {
			return errors.New("visitors: wrong count")
		}
	}
	return nil
}

// visitorID spreads i over 60 bits, like the ids shard.SessionID derives
// from session UUIDs.
func visitorID(i int64) int64 { return int64(uint64(i) * 0x9E3779B97F4A7C15 & (1<<60 - 1)) }

// locations packs 100,000 users' locations and aggregates them by scanning.
func locations(ctx context.Context, rdb redis.UniversalClient) error {
	locs, err := shard.NewLocations(ctx, rdb, "location", nil, shard.WithPrefix(prefix))
	if err != nil {
		return err
	}
	places := [][2]string{{"USA", "CA"}, {"USA", "NY"}, {"CAN", "QC"}, {"FRA", ""}, {"JPN", ""}, {"USA", "TX"}}
	const users = 100_000
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 { // eight writers: one SETRANGE per user
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := w; u < users; u += 8 {
				p := places[u%len(places)]
				if err := locs.Set(ctx, int64(u), p[0], p[1]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	start := time.Now()
	a, err := locs.Aggregate(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("locations: %d users (%d bytes each) aggregated by scanning in %v\n", users, 2, time.Since(start).Round(time.Millisecond))
	fmt.Printf("  countries %v\n  states %v\n", a.Countries, a.States)
	err = locs.Set(ctx, 1, "USA", "ZZ")
	fmt.Printf("  an unknown state is refused: %v\n", err)
	if a.Countries["USA"] != 50_000 || a.States["CAN"]["QC"] != 16_667 || !errors.Is(err, shard.ErrUnknownCode) {
		return errors.New("locations: wrong aggregate")
	}
	return nil
}

// list runs the book's sharded-list consumer: ten blocking pops of 1 s
// while a producer pushes 0 to 3, pauses, then pushes 4 to 7.
func list(ctx context.Context, rdb redis.UniversalClient) error {
	l, err := shard.NewList(ctx, rdb, "queue", shard.WithPrefix(prefix))
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		for i := range 8 {
			if i == 4 {
				time.Sleep(2 * time.Second) // the book's producer pauses
			}
			if _, err := l.PushRight(ctx, strconv.Itoa(i)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var got []string
	for range 10 {
		v, ok, err := l.BlockingPopLeft(ctx, time.Second)
		if err != nil {
			return err
		}
		if !ok {
			v = "nothing"
		}
		got = append(got, v)
	}
	if err := <-done; err != nil {
		return err
	}
	fmt.Printf("sharded list: ten blocking pops of 1 s got %s\n", strings.Join(got, ", "))
	return nil
}

// clean deletes the example's keys (from an earlier run, on REDIS_URL).
func clean(ctx context.Context, rdb redis.UniversalClient) error {
	del := func(ctx context.Context, c *redis.Client) error {
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, prefix+"*", 10_000).Result()
			if err != nil {
				return err
			}
			for _, k := range keys { // one by one: on a cluster they may be in several slots
				if err := c.Unlink(ctx, k).Err(); err != nil {
					return err
				}
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, del)
	case *redis.Client:
		return del(ctx, c)
	}
	return nil
}
