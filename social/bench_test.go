package social_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/social"
)

const benchFollowers = 100_000

// benchNet is a Network on a real server whose user "author" has
// benchFollowers followers, and a running worker for its tasks.
func benchNet(b *testing.B, opts ...social.Option) (*redistest.Backend, *social.Network, *queue.Group, []string) {
	be := redistest.New(b, redistest.Standalone)
	g, err := queue.New(be.Client, "social", queue.WithPrefix(be.Prefix+"queue:"))
	if err != nil {
		b.Fatal(err)
	}
	n, err := social.New(be.Client, g, append([]social.Option{social.WithPrefix(be.Prefix + "social:")}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := n.CreateUser(b.Context(), "author", "a"); err != nil {
		b.Fatal(err)
	}
	fs := addFollowers(b, be, "author", benchFollowers, 0)
	return be, n, g, fs
}

// waitIdle waits until the group has no task left.
func waitIdle(b *testing.B, g *queue.Group) {
	for {
		s, err := g.Stats(b.Context(), social.DefaultQueue)
		if err != nil {
			b.Fatal(err)
		}
		if s.Ready[social.DefaultQueue] == 0 && s.Delayed == 0 && s.InFlight == 0 {
			return
		}
		time.Sleep(time.Millisecond) // polling a benchmark's end, not synchronising a test
	}
}

// BenchmarkFanout is the whole fan-out of one post to 100,000 followers
// (the first batch in Post, the rest by 4 workers of 4 slots, trimming
// included), next to the limit: ZADD and ZREMRANGEBYRANK into as many keys
// from one client, pipelined 1000 at a time. Metric: timeline inserts/s.
func BenchmarkFanout(b *testing.B) {
	be, n, g, fs := benchNet(b)
	ctx, stop := context.WithCancel(b.Context())
	var running sync.WaitGroup
	defer running.Wait()
	defer stop()
	for range 4 {
		w, err := queue.NewWorker(g, queue.Queues(social.DefaultQueue), queue.Concurrency(4))
		if err != nil {
			b.Fatal(err)
		}
		if err := n.Handle(w); err != nil {
			b.Fatal(err)
		}
		running.Go(func() { _ = w.Run(ctx) })
	}
	b.Run("social", func(b *testing.B) {
		for b.Loop() {
			if _, err := n.Post(b.Context(), "author", "to everyone"); err != nil {
				b.Fatal(err)
			}
			waitIdle(b, g)
		}
		b.ReportMetric(float64(benchFollowers*b.N)/b.Elapsed().Seconds(), "inserts/s")
	})
	b.Run("pipelined-ZADD", func(b *testing.B) {
		c := be.Client
		ms := time.Now().UnixMilli()
		for i := 0; b.Loop(); i++ {
			for start := 0; start < len(fs); start += 1000 {
				_, err := c.Pipelined(b.Context(), func(p redis.Pipeliner) error {
					for _, f := range fs[start:min(start+1000, len(fs))] {
						k := key(be, f, "bench")
						p.ZAdd(b.Context(), k, redis.Z{Score: float64(ms), Member: fmt.Sprint("author:", i)})
						p.ZRemRangeByRank(b.Context(), k, 0, -social.DefaultTimelineCap-1)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(benchFollowers*b.N)/b.Elapsed().Seconds(), "inserts/s")
	})
}

// BenchmarkPost is Post by a user with 100,000 followers (its first batch
// fed before it returns; deferred tasks left queued): first=1000 is the
// default first pass (the book's), first=100 is [social.WithFirstPass](100).
// Metric: the p99 latency.
func BenchmarkPost(b *testing.B) {
	for _, first := range []int{social.DefaultFanoutBatch, 100} {
		b.Run(fmt.Sprint("first=", first), func(b *testing.B) {
			_, n, _, _ := benchNet(b, social.WithFirstPass(first))
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := n.Post(b.Context(), "author", "to everyone"); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkPage reads a page of 30 statuses of a home timeline: this
// package's Page (one script on one server: the IDs and the hashes), next
// to the book's get_status_messages (ZREVRANGE, then the hashes in a
// MULTI/EXEC pipeline), Page with a warm status cache (WithStatusCache:
// the ZREVRANGE only), and the limit: a ZREVRANGE of the 30 IDs alone,
// one round trip that reads no status.
func BenchmarkPage(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := b.Context()
	g, err := queue.New(be.Client, "social", queue.WithPrefix(be.Prefix+"queue:"))
	if err != nil {
		b.Fatal(err)
	}
	n, err := social.New(be.Client, g, social.WithPrefix(be.Prefix+"social:"))
	if err != nil {
		b.Fatal(err)
	}
	for _, u := range []string{"reader", "author"} {
		if _, err := n.CreateUser(ctx, u, u); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := n.Follow(ctx, "reader", "author"); err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		if _, err := n.Post(ctx, "author", fmt.Sprint("status ", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("social", func(b *testing.B) {
		for b.Loop() {
			if st, _, err := n.Page(ctx, "reader", social.Home, 0, 30); err != nil || len(st) != 30 {
				b.Fatal(len(st), err)
			}
		}
	})
	b.Run("social-cached", func(b *testing.B) {
		cn, err := social.New(be.Client, g, social.WithPrefix(be.Prefix+"social:"), social.WithStatusCache(1000, time.Hour))
		if err != nil {
			b.Fatal(err)
		}
		defer cn.Close()
		for !cn.StatusCacheReady() {
			time.Sleep(time.Millisecond) // polling a benchmark's start, not synchronising a test
		}
		if st, _, err := cn.Page(ctx, "reader", social.Home, 0, 30); err != nil || len(st) != 30 {
			b.Fatal(len(st), err)
		}
		for b.Loop() {
			if st, _, err := cn.Page(ctx, "reader", social.Home, 0, 30); err != nil || len(st) != 30 {
				b.Fatal(len(st), err)
			}
		}
	})
	b.Run("limit-ZREVRANGE", func(b *testing.B) {
		home := key(be, "reader", "home")
		for b.Loop() {
			if ids, err := be.Client.ZRevRange(ctx, home, 0, 29).Result(); err != nil || len(ids) != 30 {
				b.Fatal(len(ids), err)
			}
		}
	})
	b.Run("book", func(b *testing.B) {
		home := key(be, "reader", "home")
		for b.Loop() {
			ids, err := be.Client.ZRevRange(ctx, home, 0, 29).Result()
			if err != nil {
				b.Fatal(err)
			}
			cmds, err := be.Client.TxPipelined(ctx, func(p redis.Pipeliner) error {
				for _, id := range ids {
					var uid, num string
					fmt.Sscanf(id, "author:%s", &num)
					uid = "author"
					p.HGetAll(ctx, key(be, uid, "status:"+num))
				}
				return nil
			})
			if err != nil || len(cmds) != 30 {
				b.Fatal(len(cmds), err)
			}
		}
	})
}
