package shard_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/shard"
)

// A sharded hash: each field goes to a small hash that Redis keeps in its
// compact encoding.
func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	// Sized for 10,000,000 fields; the shard size comes from the server's
	// hash-max-listpack-entries (512 where CONFIG is refused, as here).
	h, err := shard.NewHash(ctx, rdb, "media", 10_000_000)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = h.Set(ctx, "1155315", "939") // media id -> user id
	v, ok, _ := h.Get(ctx, "1155315")
	fmt.Println(v, ok, h.ShardKey("1155315"))
	_, ok, _ = h.Get(ctx, "1155316")
	fmt.Println(ok)
	// Output:
	// 939 true shard:{media:2256}:hash
	// false
}

// The book's shard_key: numeric keys by division, others by CRC32.
func ExampleKey() {
	k, _ := shard.Key("test", "1", 2, 2)
	fmt.Println(k)
	k, _ = shard.Key("test", "125", 1000, 100)
	fmt.Println(k)
	k, _ = shard.Key("test", "hello", 1000, 100) // one of 2·1000/100 = 20 shards
	fmt.Println(k)
	_, err := shard.Key("test", "1", 2, 0)
	fmt.Println(err)
	// Output:
	// test:0
	// test:1
	// test:10
	// shard: bad size: shard size 0, want at least 1
}

// Listing a sharded set: every member of every shard, shard by shard.
func ExampleSet_Members() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	s, err := shard.NewSet(ctx, rdb, "banned", 1000, shard.WithShardSize(100)) // 20 shards
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = s.Add(ctx, 42, 7, 1_000_000, 99)
	var all []int64
	err = s.Members(ctx, func(m int64) error {
		all = append(all, m)
		return nil
	})
	slices.Sort(all) // members come in no particular order
	fmt.Println(all, err)
	// Output:
	// [7 42 99 1000000] <nil>
}

// Unique visitors counted both ways, with the same API.
func ExampleVisitors() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)

	for _, m := range []shard.Method{shard.Sets, shard.HyperLogLog} {
		v, err := shard.NewVisitors(ctx, rdb, "site-"+m.String(), m)
		if err != nil {
			fmt.Println(err)
			return
		}
		for i := range int64(1000) {
			_ = v.Visit(ctx, day, i, i%10) // ids 0..9 come back: counted once
		}
		n, _ := v.Count(ctx, day)
		fmt.Printf("%s: within 2%% of 1000: %v\n", m, math.Abs(float64(n-1000)) <= 20)
	}
	// Output:
	// sets: within 2% of 1000: true
	// hyperloglog: within 2% of 1000: true
}

// A sharded list with a blocking pop woken by a push.
func ExampleList_BlockingPopLeft() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	l, err := shard.NewList(ctx, rdb, "jobs", shard.WithShardSize(2))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = l.PushRight(ctx, "a", "b", "c") // shards of 2: two keys
	_, _ = l.PushLeft(ctx, "z")
	n, _ := l.Len(ctx)
	fmt.Println(n)
	var popped []string
	for range 4 {
		v, _, _ := l.PopLeft(ctx)
		popped = append(popped, v)
	}
	fmt.Println(popped)

	go func() {
		time.Sleep(50 * time.Millisecond) // a producer, some time later
		_, _ = l.PushRight(ctx, "late")
	}()
	v, ok, _ := l.BlockingPopLeft(ctx, 5*time.Second)
	fmt.Println(v, ok)
	// Output:
	// 4
	// [z a b c]
	// late true
}

// Users' locations packed two bytes each, counted per country and state by
// scanning.
func ExampleLocations_Aggregate() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	locs, err := shard.NewLocations(ctx, rdb, "location", nil) // the book's code tables
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = locs.Set(ctx, 1, "USA", "CA")
	_ = locs.Set(ctx, 2, "USA", "NY")
	_ = locs.Set(ctx, 3, "USA", "CA")
	_ = locs.Set(ctx, 4, "FRA", "")
	fmt.Println(locs.Set(ctx, 5, "USA", "XX"))

	a, _ := locs.Aggregate(ctx)
	fmt.Println(a.Countries)
	fmt.Println(a.States)
	a, _ = locs.AggregateUsers(ctx, 1, 4)
	fmt.Println(a.Countries)
	// Output:
	// shard: locations "location": set 5: shard: unknown code: state "XX" of "USA"
	// map[FRA:1 USA:3]
	// map[USA:map[CA:2 NY:1]]
	// map[FRA:1 USA:1]
}

// A Router over independent servers: each key lives on the server of its
// hash tag, and every package of this module accepts its client.
func ExampleRouter() {
	a, _ := miniredis.Run()
	defer a.Close()
	b, _ := miniredis.Run()
	defer b.Close()
	ctx := context.Background()

	r, err := shard.NewRouter(a.Addr(), b.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	rdb := r.NewClient(nil)
	defer rdb.Close()
	for _, k := range []string{"user:1", "user:2", "user:3", "cart:{user:3}"} {
		_ = rdb.Set(ctx, k, "x", 0).Err()
		fmt.Println(k, "on server", r.Server(k), a.Exists(k) == (r.Server(k) == 0))
	}
	// Keys of several servers in one script: refused, nothing sent.
	err = rdb.Eval(ctx, "return 1", []string{"user:1", "user:2"}).Err()
	fmt.Println(err != nil)
	// Output:
	// user:1 on server 0 true
	// user:2 on server 1 true
	// user:3 on server 0 true
	// cart:{user:3} on server 0 true
	// true
}
