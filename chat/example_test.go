package chat_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/chat"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	cs, err := chat.New(rdb)
	if err != nil {
		panic(err)
	}
	if _, err := cs.Create(ctx, "c1", "joe", []string{"jeff", "jenny"}, "message 1"); err != nil {
		panic(err)
	}
	for _, text := range []string{"message 2", "message 3"} {
		if _, err := cs.Send(ctx, "c1", "joe", text); err != nil {
			panic(err)
		}
	}
	ms, err := cs.Fetch(ctx, "jeff")
	if err != nil {
		panic(err)
	}
	for _, m := range ms {
		var text string
		_ = m.Decode(&text)
		fmt.Println(m.Chat, m.ID, m.Sender, text)
	}
	ms, _ = cs.Fetch(ctx, "jeff")
	fmt.Println("then", len(ms))
	unread, _ := cs.Unread(ctx, "jenny")
	fmt.Println("jenny unread:", unread["c1"])
	// Output:
	// c1 1 joe message 1
	// c1 2 joe message 2
	// c1 3 joe message 3
	// then 0
	// jenny unread: 3
}

func ExampleChats_Wait() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	cs, _ := chat.New(rdb)
	_, _ = cs.Create(ctx, "c1", "ann", []string{"bob"}, "hello")
	_, _ = cs.Fetch(ctx, "bob") // bob is up to date

	got := make(chan []chat.Message)
	go func() {
		ms, _ := cs.Wait(ctx, "bob") // blocks until ann sends
		got <- ms
	}()
	_, _ = cs.Send(ctx, "c1", "ann", "are you there?")
	for _, m := range <-got {
		var text string
		_ = m.Decode(&text)
		fmt.Println(m.Sender+":", text)
	}
	// Output:
	// ann: are you there?
}

func ExampleChats_History() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	cs, _ := chat.New(rdb)
	_, _ = cs.Create(ctx, "c1", "ann", []string{"bob"}, "one")
	_, _ = cs.Send(ctx, "c1", "bob", "two")
	_, _ = cs.Send(ctx, "c1", "ann", "three")
	for after := int64(0); ; {
		page, _ := cs.History(ctx, "c1", after, 2)
		if len(page) == 0 {
			break
		}
		fmt.Print("page:")
		for _, m := range page {
			fmt.Print(" ", m.ID)
		}
		fmt.Println()
		after = page[len(page)-1].ID
	}
	// Output:
	// page: 1 2
	// page: 3
}
