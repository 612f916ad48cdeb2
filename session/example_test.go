package session_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/session"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	st, err := session.New(rdb, "shop")
	if err != nil {
		panic(err)
	}
	// A request of a logged-in user viewing an item.
	if err := st.UpdateToken(ctx, "token-1", "alice", "item-42"); err != nil {
		panic(err)
	}
	user, ok, _ := st.CheckToken(ctx, "token-1")
	fmt.Println(user, ok)
	viewed, _ := st.Viewed(ctx, "token-1")
	fmt.Println("viewed:", viewed)
	_, ok, _ = st.CheckToken(ctx, "forged")
	fmt.Println("forged token:", ok)
	// Output:
	// alice true
	// viewed: [item-42]
	// forged token: false
}

func ExampleStore_AddToCart() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	st, _ := session.New(rdb, "shop")
	_ = st.AddToCart(ctx, "token-1", "book", 2)
	_ = st.AddToCart(ctx, "token-1", "pen", 1)
	_ = st.AddToCart(ctx, "token-1", "pen", 0) // takes it out
	cart, _ := st.Cart(ctx, "token-1")
	fmt.Println(cart)
	fmt.Println(st.AddToCart(ctx, "token-1", "pen", -1))
	// Output:
	// map[book:2]
	// session: add to cart: item "pen" count -1: must not be negative (0 removes the item): session: invalid argument
}

func ExampleStore_CacheRequest() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	st, _ := session.New(rdb, "shop")
	_ = st.UpdateToken(ctx, "token-1", "alice", "42") // item 42 is now among the most viewed
	render := func(_ context.Context, req string) (string, error) {
		fmt.Println("rendering", req)
		return "<html>item 42</html>", nil
	}
	for range 2 {
		page, _ := st.CacheRequest(ctx, "/item?item=42", render)
		fmt.Println(page)
	}
	_, _ = st.CacheRequest(ctx, "/item?item=42&_=1700000000", render) // dynamic: never cached
	// Output:
	// rendering /item?item=42
	// <html>item 42</html>
	// <html>item 42</html>
	// rendering /item?item=42&_=1700000000
}

func ExampleStore_CanCache() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	st, _ := session.New(rdb, "shop")
	_ = st.UpdateToken(ctx, "token-1", "alice", "42")
	for _, req := range []string{"/item?item=42", "/item?item=7", "/cart", "/item?item=42&_=1"} {
		ok, _ := st.CanCache(ctx, req)
		fmt.Println(req, ok)
	}
	// Output:
	// /item?item=42 true
	// /item?item=7 false
	// /cart false
	// /item?item=42&_=1 false
}

func ExampleCleaner_Clean() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	st, _ := session.New(rdb, "shop")
	for i := range 5 {
		srv.SetTime(time.Unix(1_700_000_000+int64(i), 0)) // miniredis's TIME: a second apart
		_ = st.UpdateToken(ctx, fmt.Sprint("token-", i), "user", "item")
	}
	c, _ := st.Cleaner(2) // keep the 2 newest sessions
	n, _ := c.Clean(ctx)
	left, _ := st.Sessions(ctx)
	fmt.Println("deleted", n, "left", left)
	for i := range 5 {
		_, ok, _ := st.CheckToken(ctx, fmt.Sprint("token-", i))
		fmt.Print(ok, " ")
	}
	fmt.Println()
	// Output:
	// deleted 3 left 2
	// false false false true true
}

func ExampleRowCacher() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	st, _ := session.New(rdb, "shop")
	now := time.Unix(1_700_000_000, 0) // the RowCacher's clock, moved by hand
	stock := 10
	rc, _ := st.RowCacher(func(_ context.Context, id string) (any, error) {
		return map[string]any{"id": id, "stock": stock}, nil // from the database
	}, session.WithClock(func() time.Time { return now }))

	_ = st.ScheduleRowCache(ctx, "item-7", 5*time.Second)
	_, _ = rc.CacheDue(ctx) // in production: go rc.Run(ctx)
	row, _, _ := st.Row(ctx, "item-7")
	fmt.Println(string(row))

	stock = 9
	now = now.Add(5 * time.Second)
	_, _ = rc.CacheDue(ctx)
	row, _, _ = st.Row(ctx, "item-7")
	fmt.Println(string(row))

	_ = st.ScheduleRowCache(ctx, "item-7", -1) // stop caching it
	_, ok, _ := st.Row(ctx, "item-7")
	fmt.Println("cached:", ok)
	// Output:
	// {"id":"item-7","stock":10}
	// {"id":"item-7","stock":9}
	// cached: false
}

func ExampleRescaler_Rescale() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	st, _ := session.New(rdb, "shop")
	for range 4 {
		_ = st.UpdateToken(ctx, "token-1", "alice", "42")
	}
	r, _ := st.Rescaler() // in production: go r.Run(ctx), every 5 minutes
	_ = r.Rescale(ctx)
	score, _ := rdb.ZScore(ctx, "session:{shop}:views", "42").Result()
	fmt.Println("views of 42 after rescaling:", -score)
	// Output:
	// views of 42 after rescaling: 2
}

func ExampleCleaner_Run() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	st, _ := session.New(rdb, "shop")
	for i := range 3 {
		_ = st.UpdateToken(context.Background(), fmt.Sprint("token-", i), "user", "")
	}
	c, _ := st.Cleaner(1, session.WithInterval(10*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	for n := int64(3); n > 1; n, _ = st.Sessions(context.Background()) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	fmt.Println("Run returned:", <-done)
	// Output:
	// Run returned: <nil>
}

func ExampleStore_Logout() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	st, _ := session.New(rdb, "shop")
	_ = st.UpdateToken(ctx, "token-1", "alice", "item-42")
	_ = st.AddToCart(ctx, "token-1", "book", 1)
	_ = st.UpdateToken(ctx, "token-2", "bob", "")

	existed, _ := st.Logout(ctx, "token-1")
	fmt.Println("logged out:", existed)
	_, ok, _ := st.CheckToken(ctx, "token-1")
	viewed, _ := st.Viewed(ctx, "token-1")
	cart, _ := st.Cart(ctx, "token-1")
	fmt.Println("token valid:", ok, "viewed:", viewed, "cart:", cart)
	user, _, _ := st.CheckToken(ctx, "token-2")
	fmt.Println("still logged in:", user)
	existed, _ = st.Logout(ctx, "token-1") // again
	fmt.Println("logged out:", existed)
	// Output:
	// logged out: true
	// token valid: false viewed: [] cart: map[]
	// still logged in: bob
	// logged out: false
}

func ExampleStore_ClearCart() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	st, _ := session.New(rdb, "shop")
	_ = st.UpdateToken(ctx, "token-1", "alice", "")
	_ = st.AddToCart(ctx, "token-1", "book", 2)
	// Checkout: the order is placed, the cart empties, the user stays.
	_ = st.ClearCart(ctx, "token-1")
	cart, _ := st.Cart(ctx, "token-1")
	user, ok, _ := st.CheckToken(ctx, "token-1")
	fmt.Println(cart, user, ok)
	// Output:
	// map[] alice true
}
