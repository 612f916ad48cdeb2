// Command session plays a small web shop against Redis with package
// session (Redis in Action chapter 2): 200 visitors browse items and fill
// carts, a cleaner keeps the newest 120 sessions, item pages are cached for
// the most viewed items, a row cache reloads a database row on schedule,
// and the view ranking is rescaled. It checks the invariants as it goes and
// exits non-zero if one breaks.
//
// It uses the server named by REDIS_URL, or an embedded miniredis. Its
// keys live under a prefix of their own, deleted at the end.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/session"
)

const (
	visitors = 200
	views    = 5 // items each visitor views
	keep     = 120
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "session:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	count := &roundTrips{} // our own client: we may hook it
	rdb.AddHook(count)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	prefix := "example:" + uuid.NewString() + ":"
	defer cleanup(rdb, prefix)
	st, err := session.New(rdb, "shop", session.WithPrefix(prefix))
	if err != nil {
		return err
	}

	// 1. Visitors browse: item-1 is the most popular, then item-2...
	rng := rand.New(rand.NewPCG(1, 2))
	for v := range visitors {
		token := fmt.Sprintf("token-%03d", v)
		for range views {
			item := fmt.Sprintf("item-%d", 1+int(rng.ExpFloat64()*3)%20)
			if err := st.UpdateToken(ctx, token, fmt.Sprintf("user-%03d", v), item); err != nil {
				return err
			}
		}
		if v%4 == 0 {
			if err := st.AddToCart(ctx, token, "item-1", 1+v%3); err != nil {
				return err
			}
		}
	}
	n, err := st.Sessions(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("%d visitors viewed %d items each: %d sessions\n", visitors, views, n)
	if n != visitors {
		return fmt.Errorf("%d sessions, want %d", n, visitors)
	}
	rt := count.delta(func() { err = st.UpdateToken(ctx, "token-000", "user-000", "item-3") })
	if err != nil {
		return err
	}
	fmt.Printf("UpdateToken: %d round trip (the book's update_token: 5)\n", rt)
	if rt != 1 {
		return fmt.Errorf("UpdateToken took %d round trips", rt)
	}

	// 2. The cleaner keeps the newest sessions, with their carts.
	cl, err := st.Cleaner(keep, session.WithInterval(10*time.Millisecond))
	if err != nil {
		return err
	}
	if err := runUntil(ctx, cl.Run, func() (bool, error) {
		n, err := st.Sessions(ctx)
		return n <= keep, err
	}); err != nil {
		return err
	}
	oldUser, oldOK, err := st.CheckToken(ctx, "token-001")
	if err != nil {
		return err
	}
	newUser, newOK, err := st.CheckToken(ctx, "token-199")
	if err != nil {
		return err
	}
	oldCart, err := st.Cart(ctx, "token-004")
	if err != nil {
		return err
	}
	newCart, err := st.Cart(ctx, "token-196")
	if err != nil {
		return err
	}
	fmt.Printf("cleaner kept %d sessions: token-001 logged in %v, token-199 logged in as %q; carts %v and %v\n",
		keep, oldOK, newUser, oldCart, newCart)
	if oldOK || oldUser != "" || len(oldCart) != 0 || !newOK || len(newCart) != 1 {
		return errors.New("the cleaner did not delete exactly the oldest sessions")
	}

	// 3. Page cache: item pages among the most viewed are rendered once.
	var renders atomic.Int64
	render := func(_ context.Context, req string) (string, error) {
		renders.Add(1)
		return "<html>" + req + "</html>", nil
	}
	for _, req := range []string{"/item?item=item-1", "/item?item=item-1", "/item?item=item-1&_=123", "/cart"} {
		if _, err := st.CacheRequest(ctx, req, render); err != nil {
			return err
		}
	}
	fmt.Printf("4 requests (2 of a cacheable page, 1 dynamic, 1 not an item): %d renders\n", renders.Load())
	if renders.Load() != 3 {
		return fmt.Errorf("%d renders, want 3", renders.Load())
	}

	// 4. Row cache: a row reloaded every 20ms until unscheduled.
	var loads atomic.Int64
	rc, err := st.RowCacher(func(_ context.Context, id string) (any, error) {
		return map[string]any{"id": id, "version": loads.Add(1)}, nil
	}, session.WithInterval(5*time.Millisecond))
	if err != nil {
		return err
	}
	if err := st.ScheduleRowCache(ctx, "item-1", 20*time.Millisecond); err != nil {
		return err
	}
	if err := runUntil(ctx, rc.Run, func() (bool, error) { return loads.Load() >= 3, nil }); err != nil {
		return err
	}
	row, ok, err := st.Row(ctx, "item-1")
	if err != nil || !ok {
		return fmt.Errorf("row not cached (%v)", err)
	}
	if err := st.ScheduleRowCache(ctx, "item-1", -1); err != nil {
		return err
	}
	_, cached, err := st.Row(ctx, "item-1")
	if err != nil {
		return err
	}
	fmt.Printf("row item-1 cached as JSON and reloaded at least 3 times: %v; unscheduled: cached %v\n", json.Valid(row), cached)
	if cached {
		return errors.New("an unscheduled row is still cached")
	}

	// 5. Rescale: counts halve, ranks stay.
	before, err := top(ctx, rdb, prefix)
	if err != nil {
		return err
	}
	rs, err := st.Rescaler()
	if err != nil {
		return err
	}
	if err := rs.Rescale(ctx); err != nil {
		return err
	}
	after, err := top(ctx, rdb, prefix)
	if err != nil {
		return err
	}
	fmt.Printf("most viewed: %s, %.0f views; after rescaling %s, %.1f\n", before.Member, -before.Score, after.Member, -after.Score)
	if after.Member != before.Member || after.Score != before.Score/2 {
		return errors.New("rescaling did not halve the counts")
	}
	fmt.Println("ok")
	return nil
}

// roundTrips is a go-redis hook that counts round trips: one per command,
// one per pipeline.
type roundTrips struct{ n atomic.Int64 }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch cmd.Name() {
		case "hello", "client", "select", "auth", "cluster", "command", "readonly":
			// sent by go-redis to set up a connection: part of no call
		default:
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// delta runs fn and returns the round trips it made.
func (h *roundTrips) delta(fn func()) int64 {
	n := h.n.Load()
	fn()
	return h.n.Load() - n
}

// runUntil runs loop until done reports true, then stops it and checks that
// it returned nil.
func runUntil(ctx context.Context, loop func(context.Context) error, done func() (bool, error)) error {
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- loop(lctx) }()
	for {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			break
		}
		select {
		case err := <-ran:
			return fmt.Errorf("loop ended early: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	stop()
	if err := <-ran; err != nil {
		return fmt.Errorf("loop returned %w", err)
	}
	return nil
}

// top returns the most viewed item of the shop and its (negative) score.
func top(ctx context.Context, rdb redis.UniversalClient, prefix string) (redis.Z, error) {
	zs, err := rdb.ZRangeWithScores(ctx, prefix+"{shop}:views", 0, 0).Result()
	if err != nil || len(zs) == 0 {
		return redis.Z{}, fmt.Errorf("no view ranking (%v)", err)
	}
	return zs[0], nil
}

// cleanup deletes every key under prefix (best effort).
func cleanup(rdb redis.UniversalClient, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		rdb.Del(ctx, iter.Val())
	}
}
