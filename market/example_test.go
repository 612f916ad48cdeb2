package market_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/market"
)

// The book's scenario: Frank lists ItemA for 10 and Bill, with 125, buys it.
func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	m, _ := market.New(rdb, "game")
	_ = m.AddUser(ctx, "17", "Frank", 0)
	_ = m.AddUser(ctx, "27", "Bill", 125)
	_ = m.AddItem(ctx, "17", "ItemA")

	fmt.Println("list:", m.List(ctx, "17", "ItemA", 10))
	listings, _ := m.Listings(ctx, 10)
	fmt.Println("on the market:", listings)

	paid, err := m.Buy(ctx, "27", "17", "ItemA", 10)
	fmt.Println("paid:", paid, err)
	bill, _ := m.User(ctx, "27")
	frank, _ := m.Funds(ctx, "17")
	inv, _ := m.Inventory(ctx, "27")
	fmt.Println("Bill:", bill.Funds, inv, "Frank:", frank)

	_, err = m.Buy(ctx, "27", "17", "ItemA", 10)
	fmt.Println("again:", errors.Is(err, market.ErrNotListed))
	totals, _ := m.Totals(ctx)
	fmt.Printf("totals: %+v\n", totals)
	// Output:
	// list: <nil>
	// on the market: [{17 ItemA 10}]
	// paid: 10 <nil>
	// Bill: 115 [ItemA] Frank: 10
	// again: true
	// totals: {Money:125 Items:1}
}

func ExampleMarket_Buy_refused() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	m, _ := market.New(rdb, "game")
	_ = m.AddUser(ctx, "17", "Frank", 0)
	_ = m.AddUser(ctx, "28", "Poor", 5)
	_ = m.AddItem(ctx, "17", "ItemA")
	_ = m.List(ctx, "17", "ItemA", 10)

	_, err := m.Buy(ctx, "28", "17", "ItemA", 10)
	fmt.Println(errors.Is(err, market.ErrInsufficientFunds), err)
	_, err = m.Buy(ctx, "28", "17", "ItemA", 8) // the most Poor will pay
	fmt.Println(errors.Is(err, market.ErrPriceTooHigh))
	_, err = m.Buy(ctx, "17", "17", "ItemA", 10)
	fmt.Println(errors.Is(err, market.ErrOwnListing))
	err = m.List(ctx, "28", "ItemB", 10)
	fmt.Println(errors.Is(err, market.ErrNotOwned))
	// Output:
	// true market: buy "ItemA" from "17" for "28": market: insufficient funds: price 10, funds 5
	// true
	// true
	// true
}

// BuyWatch is the book's optimistic purchase: WATCH, read, MULTI/EXEC,
// retried while the market changes, until WithTimeout.
func ExampleMarket_BuyWatch() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	m, _ := market.New(rdb, "game")
	_ = m.AddUser(ctx, "17", "Frank", 0)
	_ = m.AddUser(ctx, "27", "Bill", 125)
	_ = m.AddItem(ctx, "17", "ItemA")
	_ = m.ListWatch(ctx, "17", "ItemA", 10)

	paid, err := m.BuyWatch(ctx, "27", "17", "ItemA", 10)
	fmt.Println(paid, err)
	// Output:
	// 10 <nil>
}

// BuyLocked is the book's purchase under a market-wide lock, with a TTL and
// fair waiting.
func ExampleMarket_BuyLocked() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	m, _ := market.New(rdb, "game")
	_ = m.AddUser(ctx, "17", "Frank", 0)
	_ = m.AddUser(ctx, "27", "Bill", 125)
	_ = m.AddItem(ctx, "17", "ItemA")
	_ = m.List(ctx, "17", "ItemA", 10)

	paid, err := m.BuyLocked(ctx, "27", "17", "ItemA", 10)
	fmt.Println(paid, err)
	funds, _ := m.Funds(ctx, "27")
	fmt.Println(funds)
	// Output:
	// 10 <nil>
	// 115
}

// Unlist takes a listing back: Frank listed ItemA too high, so he takes it
// back (it returns to his inventory, and nobody can buy it any more) and
// lists it again at a lower price.
func ExampleMarket_Unlist() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	m, _ := market.New(rdb, "game")
	_ = m.AddUser(ctx, "17", "Frank", 0)
	_ = m.AddUser(ctx, "27", "Bill", 125)
	_ = m.AddItem(ctx, "17", "ItemA")
	_ = m.List(ctx, "17", "ItemA", 500)

	_, err := m.Buy(ctx, "27", "17", "ItemA", 125)
	fmt.Println("too dear:", errors.Is(err, market.ErrPriceTooHigh))

	fmt.Println("unlist:", m.Unlist(ctx, "17", "ItemA"))
	inv, _ := m.Inventory(ctx, "17")
	fmt.Println("Frank holds:", inv)
	_, err = m.Buy(ctx, "27", "17", "ItemA", 500)
	fmt.Println("taken back:", errors.Is(err, market.ErrNotListed))
	err = m.Unlist(ctx, "17", "ItemA")
	fmt.Println("again:", errors.Is(err, market.ErrNotListed))

	_ = m.List(ctx, "17", "ItemA", 100)
	paid, err := m.Buy(ctx, "27", "17", "ItemA", 125)
	fmt.Println("paid:", paid, err)
	// Output:
	// too dear: true
	// unlist: <nil>
	// Frank holds: [ItemA]
	// taken back: true
	// again: true
	// paid: 100 <nil>
}
