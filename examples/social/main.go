// Command social runs the book's chapter 8 social network on ria: users
// follow each other, post, read their timelines, unfollow and delete, and
// keep a user list, while a streaming subscriber (8.5) prints the statuses
// that mention "redis" and a queue worker carries out the deferred fan-out.
//
//	go run ./examples/social                       # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/social
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/social"
)

const prefix = "example:social:"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "social example:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := demo.Clean(ctx, rdb, prefix); err != nil {
		return err
	}
	g, err := queue.New(rdb, "social", queue.WithPrefix(prefix+"queue:"))
	if err != nil {
		return err
	}
	// A first pass of 2 followers: the third gets the status from a task.
	n, err := social.New(rdb, g, social.WithPrefix(prefix), social.WithFanoutBatch(2))
	if err != nil {
		return err
	}
	w, err := queue.NewWorker(g, queue.Queues(social.DefaultQueue))
	if err != nil {
		return err
	}
	if err := n.Handle(w); err != nil {
		return err
	}
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(ctx) }()

	stream, err := n.Subscribe(ctx, social.Filter{Track: []string{"redis"}})
	if err != nil {
		return err
	}

	for _, login := range []string{"Josiah", "jeff", "jenny", "jack"} {
		if _, err := n.CreateUser(ctx, login, login+" Carlson"); err != nil {
			return err
		}
	}
	if _, err := n.CreateUser(ctx, "JOSIAH", "again"); err != nil {
		fmt.Println("create JOSIAH:", err)
	}
	for _, f := range []string{"jeff", "jenny", "jack"} {
		if _, err := n.Follow(ctx, f, "josiah"); err != nil {
			return err
		}
	}
	u, err := n.User(ctx, "josiah")
	if err != nil {
		return err
	}
	fmt.Printf("josiah: %d followers\n", u.Followers)

	first, err := n.Post(ctx, "josiah", "Hello, world")
	if err != nil {
		return err
	}
	second, err := n.Post(ctx, "josiah", "Redis in Action, chapter 8", social.At(40.7, -74.0))
	if err != nil {
		return err
	}
	e := <-stream
	fmt.Printf("stream: %s %q\n", e.Status.Login, e.Status.Message)

	// jack is the third follower: the deferred pass feeds him.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		page, _, err := n.Page(ctx, "jack", social.Home, 0, 10)
		if err != nil {
			return err
		}
		if len(page) == 2 {
			fmt.Printf("jack's home: %q, %q\n", page[0].Message, page[1].Message)
			break
		}
		<-tick.C
	}

	if err := n.Delete(ctx, "josiah", second.ID); err != nil {
		return err
	}
	e = <-stream
	fmt.Printf("stream: deleted=%v %q\n", e.Deleted, e.Status.Message)
	page, _, err := n.Page(ctx, "jeff", social.Home, 0, 10)
	if err != nil {
		return err
	}
	fmt.Printf("jeff's home after the delete: %d status(es)\n", len(page))

	if _, err := n.Unfollow(ctx, "jenny", "josiah"); err != nil {
		return err
	}
	page, _, err = n.Page(ctx, "jenny", social.Home, 0, 10)
	if err != nil {
		return err
	}
	fmt.Printf("jenny's home after unfollowing: %d status(es)\n", len(page))
	if _, err := n.Follow(ctx, "jenny", "josiah"); err != nil {
		return err
	}
	page, _, err = n.Page(ctx, "jenny", social.Home, 0, 10)
	if err != nil {
		return err
	}
	if len(page) != 1 || page[0].ID != first.ID {
		return fmt.Errorf("jenny's home after following again: %v", page)
	}
	fmt.Printf("jenny's home after following again: %q\n", page[0].Message)

	// A user list (create_user_list, follow_user_list): jack lists josiah
	// without following more; the list's timeline takes josiah's statuses.
	if err := n.CreateList(ctx, "jack", "authors"); err != nil {
		return err
	}
	if _, err := n.AddToList(ctx, "jack", "authors", "josiah"); err != nil {
		return err
	}
	if _, err := n.Post(ctx, "josiah", "Lists are fed like home timelines"); err != nil {
		return err
	}
	for { // the list is josiah's fourth target: a deferred pass feeds it
		page, _, err = n.ListPage(ctx, "jack", "authors", 0, 10)
		if err != nil {
			return err
		}
		if len(page) == 2 {
			break
		}
		<-tick.C
	}
	for _, s := range page {
		fmt.Printf("jack's list %q: %q\n", "authors", s.Message)
	}

	cancel()
	return <-workerDone
}
