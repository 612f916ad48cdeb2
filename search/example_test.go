package search_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/search"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	ctx := context.Background()

	x, err := search.New(rdb, "posts",
		search.WithFields(search.NumericField("updated")),
		search.WithScores("votes"))
	if err != nil {
		panic(err)
	}
	_, _, err = x.Add(ctx,
		search.Document{ID: "p1", Text: "Redis in Action: searching with sets",
			Fields: map[string]string{"updated": "3"}, Scores: map[string]float64{"votes": 10}},
		search.Document{ID: "p2", Text: "Connecting to a Redis cluster",
			Fields: map[string]string{"updated": "2"}, Scores: map[string]float64{"votes": 50}},
		search.Document{ID: "p3", Text: "A connection pool for Redis",
			Fields: map[string]string{"updated": "1"}, Scores: map[string]float64{"votes": 20}})
	if err != nil {
		panic(err)
	}
	for _, q := range []string{"redis", "redis -cluster", "connecting +connection"} {
		r, err := x.Search(ctx, q)
		if err != nil {
			panic(err)
		}
		fmt.Println(q, "->", r.IDs)
	}
	r, _ := x.Search(ctx, "redis", search.ByField("updated", true))
	fmt.Println("newest first:", r.IDs)
	r, _ = x.Search(ctx, "redis", search.ByScores(map[string]float64{"votes": 1}, false))
	fmt.Println("most votes first:", r.IDs)
	_, err = x.Search(ctx, "redis +")
	fmt.Println(err)
	// Output:
	// redis -> [p1 p2 p3]
	// redis -cluster -> [p1 p3]
	// connecting +connection -> [p2 p3]
	// newest first: [p1 p2 p3]
	// most votes first: [p2 p3 p1]
	// search: query "redis +": at byte 6: '+' must be followed by a word
}

func ExampleIndex_Page() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	ctx := context.Background()

	x, _ := search.New(rdb, "notes")
	for i := range 5 {
		_, _, _ = x.Add(ctx, search.Document{ID: fmt.Sprintf("n%d", i), Text: "meeting notes"})
	}
	r, _ := x.Search(ctx, "meeting", search.Limit(0, 2))
	fmt.Println(r.Total, r.IDs)
	for off := 2; off < r.Total; off += 2 {
		p, _ := x.Page(ctx, r.ID, off, 2) // read from the cached result
		fmt.Println(p.Offset, p.IDs)
	}
	// Output:
	// 5 [n0 n1]
	// 2 [n2 n3]
	// 4 [n4]
}

func ExampleParse() {
	q, err := search.Parse(nil, "Connect +connection pool -the -cluster")
	if err != nil {
		panic(err)
	}
	fmt.Println(q.Groups, q.Exclude)
	// Output:
	// [[connect connection] [pool]] [cluster]
}

func ExampleZAddString() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	ctx := context.Background()

	_, _ = search.ZAddString(ctx, rdb, "names", search.Lower, map[string]string{
		"u1": "robbers", "u2": "robber", "u3": "alice", "u4": "bob"})
	names, _ := rdb.ZRange(ctx, "names", 0, -1).Result()
	fmt.Println(names)
	// Output:
	// [u3 u4 u2 u1]
}

func ExampleNewStandard() {
	a := search.NewStandard(search.MinLength(3), search.StopWords("le", "la", "les"))
	fmt.Println(a.Terms("Les crêpes de la Bretagne, c'est l'été!"))
	// Output:
	// [crêpes bretagne c'est l'été]
}
