// Command voting runs the article-voting site of Redis in Action chapter 1:
// it posts a few articles, files some in groups, lets readers vote them up
// and down (many at once, some twice), and prints the top page and a group
// page. It checks that every article's counters and score match its
// distinct voters, and exits non-zero if they do not.
//
// It uses the server named by REDIS_URL, or an embedded miniredis. Each run
// uses a site of its own and deletes its keys at the end.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/voting"
)

type post struct {
	poster, title, link string
	groups              []string
	up, down            int // readers voting up, down
}

var posts = []post{
	{"user:83271", "Go To Statement Considered Harmful", "http://goo.gl/kZUSu", []string{"programming", "classics"}, 12, 2},
	{"user:1", "Redis in Action, chapter 1", "https://redis.io", []string{"databases"}, 30, 0},
	{"user:2", "Tabs are better than spaces", "https://example.com/tabs", []string{"programming"}, 5, 20},
	{"user:3", "A new garbage collector", "https://example.com/gc", []string{"programming", "runtime"}, 18, 1},
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "voting:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	name := "example-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	site, err := voting.New(rdb, name)
	if err != nil {
		return err
	}
	defer cleanup(rdb, name)

	ids := make([]string, len(posts))
	for i, p := range posts {
		if ids[i], err = site.Post(ctx, p.poster, p.title, p.link); err != nil {
			return err
		}
		if err := site.UpdateGroups(ctx, ids[i], p.groups, nil); err != nil {
			return err
		}
	}

	// Readers vote all at once; every third one clicks twice.
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i, p := range posts {
		for r := range p.up + p.down {
			d := voting.Up
			if r >= p.up {
				d = voting.Down
			}
			user := "reader:" + strconv.Itoa(r)
			clicks := 1 + (r%3)/2
			for range clicks {
				wg.Go(func() {
					if _, err := site.Vote(ctx, ids[i], user, d); err != nil {
						errs <- err
					}
				})
			}
		}
	}
	// The poster of the tabs article changes their mind.
	if _, err := site.Vote(ctx, ids[2], posts[2].poster, voting.Down); err != nil {
		return err
	}
	wg.Wait()
	close(errs)
	if err, ok := <-errs; ok {
		return err
	}
	posts[2].down++ // the switch: one more down, one fewer up (the poster's)

	top, err := site.Page(ctx, voting.ByScore, 1, 10)
	if err != nil {
		return err
	}
	fmt.Println("Top articles:")
	show(top)
	group, err := site.GroupPage(ctx, "programming", voting.ByScore, 1, 10)
	if err != nil {
		return err
	}
	fmt.Println("Programming:")
	show(group)

	// Invariants: counters and score match the distinct voters.
	if len(top) != len(posts) || len(group) != 3 {
		return fmt.Errorf("pages hold %d and %d articles, want %d and 3", len(top), len(group), len(posts))
	}
	for _, a := range top {
		i, _ := strconv.Atoi(a.ID)
		p := posts[i-1]
		wantUp := int64(1 + p.up)
		if i == 3 {
			wantUp-- // the poster switched
		}
		if a.Votes != wantUp || a.Downvotes != int64(p.down) {
			return fmt.Errorf("article %s: votes %d/%d, want %d/%d", a.ID, a.Votes, a.Downvotes, wantUp, p.down)
		}
		want := float64(a.Posted.UnixMicro())/1e6 + voting.VoteScore*float64(a.Votes-a.Downvotes)
		if math.Abs(a.Score-want) > 1e-3 {
			return fmt.Errorf("article %s: score %f, want %f", a.ID, a.Score, want)
		}
	}
	for i := 1; i < len(top); i++ {
		if top[i-1].Score < top[i].Score {
			return fmt.Errorf("top page out of order at %d", i)
		}
	}
	fmt.Println("ok: every count and score matches the distinct voters")
	return nil
}

func show(as []voting.Article) {
	for i, a := range as {
		fmt.Printf("  %d. %-36s by %-10s %3d up %3d down\n", i+1, a.Title, a.Poster, a.Votes, a.Downvotes)
	}
}

// cleanup deletes the site's keys (all in the {name} hash tag), so that runs
// on a real server leave nothing behind.
func cleanup(rdb redis.UniversalClient, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, "voting:{"+name+"}:*", 100).Iterator()
	for iter.Next(ctx) {
		rdb.Del(ctx, iter.Val())
	}
}
