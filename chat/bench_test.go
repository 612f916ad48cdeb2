package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

const benchSenders = 8

// sendN runs n sends split over benchSenders goroutines.
func sendN(b *testing.B, n int, send func(ctx context.Context, sender string) error) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, benchSenders)
	for g := range benchSenders {
		wg.Go(func() {
			for i := g; i < n; i += benchSenders {
				if err := send(ctx, "s"+strconv.Itoa(g)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// BenchmarkSend is one message to one chat, 8 senders at once, on a real
// server: this package's Send (one script, no lock), the book's
// send_message (lock, INCR, ZADD, unlock: four round trips and retries
// while the lock is taken), and the limit, a plain go-redis ZADD loop at
// the same concurrency (one round trip a message).
func BenchmarkSend(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	members := make([]string, benchSenders)
	for i := range members {
		members[i] = "s" + strconv.Itoa(i)
	}
	b.Run("ria", func(b *testing.B) {
		cs, err := chat.New(be.Client, chat.WithPrefix(be.Prefix+"ria:"))
		if err != nil {
			b.Fatal(err)
		}
		id := chat.NewID() // the function runs more than once
		if _, err := cs.Create(context.Background(), id, "s0", members[1:], "hi"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		rt0 := be.Count.RoundTrips()
		b.ResetTimer()
		sendN(b, b.N, func(ctx context.Context, s string) error { _, err := cs.Send(ctx, id, s, "a message"); return err })
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	})
	b.Run("book-lock", func(b *testing.B) {
		p := be.Prefix + "book:"
		release := redis.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`)
		rt0 := be.Count.RoundTrips()
		b.ResetTimer()
		sendN(b, b.N, func(ctx context.Context, s string) error {
			token := fmt.Sprintf("%s-%d", s, time.Now().UnixNano())
			for { // acquire_lock: SET NX with a timeout, retry every ms
				ok, err := be.Client.SetNX(ctx, p+"lock:chat:c", token, 10*time.Second).Result()
				if err != nil {
					return err
				}
				if ok {
					break
				}
				time.Sleep(time.Millisecond)
			}
			id, err := be.Client.Incr(ctx, p+"ids:c").Result()
			if err != nil {
				return err
			}
			packed, _ := json.Marshal(map[string]any{"id": id, "ts": time.Now().Unix(), "sender": s, "message": "a message"})
			if err := be.Client.ZAdd(ctx, p+"msgs:c", redis.Z{Score: float64(id), Member: packed}).Err(); err != nil {
				return err
			}
			return release.Run(ctx, be.Client, []string{p + "lock:chat:c"}, token).Err()
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		b.ReportMetric(float64(be.Count.RoundTrips()-rt0)/float64(b.N), "roundtrips/op")
	})
	b.Run("limit-zadd", func(b *testing.B) {
		var seq sync.Mutex
		n := 0
		b.ResetTimer()
		sendN(b, b.N, func(ctx context.Context, s string) error {
			seq.Lock()
			n++
			id := n
			seq.Unlock()
			return be.Client.ZAdd(ctx, be.Prefix+"limit:msgs", redis.Z{Score: float64(id), Member: strconv.Itoa(id) + ":" + s + "a message"}).Err()
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	})
}

// BenchmarkFetch is one Fetch of a user in 50 chats, one new message in
// each: two round trips whatever the number of chats.
func BenchmarkFetch(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := context.Background()
	cs, err := chat.New(be.Client, chat.WithPrefix(be.Prefix+chat.NewID()+":"))
	if err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		if _, err := cs.Create(ctx, "c"+strconv.Itoa(i), "a", []string{"u"}, "x"); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := cs.Fetch(ctx, "u"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var rts int64
	for b.Loop() {
		b.StopTimer()
		for i := range 50 {
			if _, err := cs.Send(ctx, "c"+strconv.Itoa(i), "a", "x"); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		var ms []chat.Message
		rt, _ := be.Count.Delta(func() { ms, err = cs.Fetch(ctx, "u") })
		if err != nil || len(ms) != 50 {
			b.Fatalf("fetched %d, %v", len(ms), err)
		}
		rts += rt
	}
	b.ReportMetric(float64(rts)/float64(b.N), "roundtrips/op")
}
