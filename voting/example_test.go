package voting_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/voting"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	site, err := voting.New(rdb, "news")
	if err != nil {
		panic(err)
	}
	goto1, _ := site.Post(ctx, "user:83271", "Go To Statement Considered Harmful", "http://goo.gl/kZUSu")
	redis1, _ := site.Post(ctx, "user:1", "Redis in Action", "https://redis.io")

	// Two more readers like the older article: it overtakes the newer one.
	for _, user := range []string{"user:2", "user:3"} {
		if _, err := site.Vote(ctx, goto1, user, voting.Up); err != nil {
			panic(err)
		}
	}
	top, _ := site.Page(ctx, voting.ByScore, 1, 25)
	for _, a := range top {
		fmt.Printf("%s %q votes=%d\n", a.ID, a.Title, a.Votes)
	}
	newest, _ := site.Page(ctx, voting.ByTime, 1, 1)
	fmt.Println("newest:", newest[0].ID == redis1)
	// Output:
	// 1 "Go To Statement Considered Harmful" votes=3
	// 2 "Redis in Action" votes=1
	// newest: true
}

func ExampleSite_Vote() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	site, _ := voting.New(rdb, "news")
	id, _ := site.Post(ctx, "alice", "Tabs or spaces?", "https://example.com/tabs")
	show := func(what string, counted bool, err error) {
		a, _ := site.Get(ctx, id)
		fmt.Printf("%-16s counted=%-5v err=%v votes=%d downvotes=%d net score=%+.0f\n",
			what, counted, err, a.Votes, a.Downvotes, a.Score-float64(a.Posted.UnixMicro())/1e6)
	}
	counted, err := site.Vote(ctx, id, "bob", voting.Down)
	show("bob down", counted, err)
	counted, err = site.Vote(ctx, id, "bob", voting.Down)
	show("bob down again", counted, err)
	counted, err = site.Vote(ctx, id, "bob", voting.Up)
	show("bob switches up", counted, err)
	counted, err = site.Vote(ctx, "99", "bob", voting.Up)
	fmt.Println(errors.Is(err, voting.ErrNoArticle), err)
	// Output:
	// bob down         counted=true  err=<nil> votes=1 downvotes=1 net score=+0
	// bob down again   counted=false err=<nil> votes=1 downvotes=1 net score=+0
	// bob switches up  counted=true  err=<nil> votes=2 downvotes=0 net score=+864
	// true voting: vote on article "99": voting: no such article
}

func ExampleSite_Unvote() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	site, _ := voting.New(rdb, "news")
	id, _ := site.Post(ctx, "alice", "Tabs or spaces?", "https://example.com/tabs")
	show := func(what string, changed bool, err error) {
		a, _ := site.Get(ctx, id)
		d, _ := site.VoteOf(ctx, id, "bob") // the state of bob's buttons
		fmt.Printf("%-14s changed=%-5v err=%v bob=%+d votes=%d downvotes=%d net score=%+.0f\n",
			what, changed, err, d, a.Votes, a.Downvotes, a.Score-float64(a.Posted.UnixMicro())/1e6)
	}
	show("posted", false, nil)
	counted, err := site.Vote(ctx, id, "bob", voting.Down)
	show("bob down", counted, err)
	withdrawn, err := site.Unvote(ctx, id, "bob")
	show("bob withdraws", withdrawn, err)
	withdrawn, err = site.Unvote(ctx, id, "bob")
	show("bob again", withdrawn, err)
	counted, err = site.Vote(ctx, id, "bob", voting.Up)
	show("bob up", counted, err)
	// Output:
	// posted         changed=false err=<nil> bob=+0 votes=1 downvotes=0 net score=+432
	// bob down       changed=true  err=<nil> bob=-1 votes=1 downvotes=1 net score=+0
	// bob withdraws  changed=true  err=<nil> bob=+0 votes=1 downvotes=0 net score=+432
	// bob again      changed=false err=<nil> bob=+0 votes=1 downvotes=0 net score=+432
	// bob up         changed=true  err=<nil> bob=+1 votes=2 downvotes=0 net score=+864
}

func ExampleSite_Vote_closed() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	site, _ := voting.New(rdb, "news")
	id, _ := site.Post(ctx, "alice", "Old news", "https://example.com/old")
	a, _ := site.Get(ctx, id)

	// Voting closes a week after posting, by the server's clock.
	srv.SetTime(a.Posted.Add(voting.VotingWindow))
	_, err := site.Vote(ctx, id, "bob", voting.Up)
	fmt.Println(errors.Is(err, voting.ErrVotingClosed), err)
	// Output:
	// true voting: vote on article "1": voting: voting closed
}

func ExampleSite_GroupPage() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	site, _ := voting.New(rdb, "news")
	gc, _ := site.Post(ctx, "alice", "A new GC", "https://example.com/gc")
	pg, _ := site.Post(ctx, "bob", "Postgres 18", "https://example.com/pg")
	generics, _ := site.Post(ctx, "carol", "Generic methods", "https://example.com/generics")
	_ = site.UpdateGroups(ctx, gc, []string{"go", "runtime"}, nil)
	_ = site.UpdateGroups(ctx, pg, []string{"databases"}, nil)
	_ = site.UpdateGroups(ctx, generics, []string{"go"}, nil)
	_, _ = site.Vote(ctx, gc, "dave", voting.Up)

	page, _ := site.GroupPage(ctx, "go", voting.ByScore, 1, 10)
	for _, a := range page {
		fmt.Printf("%s (%d votes)\n", a.Title, a.Votes)
	}
	// Output:
	// A new GC (2 votes)
	// Generic methods (1 votes)
}

func ExampleNew() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	_, err := voting.New(rdb, "")
	fmt.Println(err)
	_, err = voting.New(rdb, "news", voting.WithGroupCacheTTL(0))
	fmt.Println(err)
	// Output:
	// voting: new: site: empty name
	// voting: new "news": group cache TTL 0s: must be at least 1ms
}
