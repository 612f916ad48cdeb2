package social_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/social"
)

// Users follow each other, post and read their home timelines; a
// subscriber receives the statuses that mention "redis".
func Example() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	g, _ := queue.New(rdb, "social")
	n, err := social.New(rdb, g)
	if err != nil {
		panic(err)
	}
	stream, _ := n.Subscribe(ctx, social.Filter{Track: []string{"redis"}})
	for _, login := range []string{"Alice", "bob"} {
		if _, err := n.CreateUser(ctx, login, login); err != nil {
			panic(err)
		}
	}
	_, err = n.CreateUser(ctx, "ALICE", "again")
	fmt.Println(err)
	if _, err := n.Follow(ctx, "bob", "alice"); err != nil {
		panic(err)
	}
	for _, msg := range []string{"hello", "reading Redis in Action"} {
		if _, err := n.Post(ctx, "alice", msg); err != nil {
			panic(err)
		}
	}
	home, _, _ := n.Page(ctx, "bob", social.Home, 0, 10)
	for _, s := range home {
		fmt.Printf("bob's home: %s: %s\n", s.Login, s.Message)
	}
	e := <-stream
	fmt.Println("stream:", e.Status.Message)
	// Output:
	// social: create user "ALICE": social: login taken
	// bob's home: Alice: reading Redis in Action
	// bob's home: Alice: hello
	// stream: reading Redis in Action
}

// A user list: its timeline is fed with its members' statuses, as a home
// timeline is with the followed users'.
func ExampleNetwork_AddToList() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	ctx := context.Background()

	g, _ := queue.New(rdb, "social")
	n, err := social.New(rdb, g)
	if err != nil {
		panic(err)
	}
	for _, login := range []string{"carol", "dave"} {
		if _, err := n.CreateUser(ctx, login, login); err != nil {
			panic(err)
		}
	}
	if _, err := n.Post(ctx, "dave", "an old one"); err != nil {
		panic(err)
	}
	if err := n.CreateList(ctx, "carol", "friends"); err != nil {
		panic(err)
	}
	added, _ := n.AddToList(ctx, "carol", "friends", "dave")
	fmt.Println("added:", added)
	if _, err := n.Post(ctx, "dave", "a new one"); err != nil {
		panic(err)
	}
	page, _, _ := n.ListPage(ctx, "carol", "friends", 0, 10)
	for _, s := range page {
		fmt.Println("carol's friends:", s.Message)
	}
	removed, _ := n.RemoveFromList(ctx, "carol", "friends", "dave")
	page, _, _ = n.ListPage(ctx, "carol", "friends", 0, 10)
	fmt.Println("removed:", removed, "left:", len(page))
	// Output:
	// added: true
	// carol's friends: a new one
	// carol's friends: an old one
	// removed: true left: 0
}
