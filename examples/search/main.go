// Command search indexes a small built-in corpus with package search (Redis
// in Action 7.1-7.2), runs the book's example queries with each sort
// (document ID, a numeric field, a text field, weighted scores by update
// time and by votes), pages through a cached result, re-indexes and removes
// a document, and shows the errors of malformed queries.
//
//	go run ./examples/search                       # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/search
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/search"
)

const prefix = "example:search:"

// corpus: title, text, update time, votes.
var corpus = []struct {
	title, text   string
	updated, vote int
}{
	{"Redis in Action", "Redis in Action shows how to use Redis for search, caching and queues", 1700000500, 120},
	{"Sorted sets", "Sorted sets keep members ordered by score: leaderboards, indexes and search", 1700000400, 80},
	{"Connection pools", "A connection pool keeps connections to Redis open between requests", 1700000300, 35},
	{"Cluster", "Redis Cluster spreads keys over masters by hash slot; hash tags keep keys together", 1700000200, 60},
	{"Caching", "Caching pages and rows in Redis with an expiration time", 1700000100, 15},
	{"Full-text search", "An inverted index maps each word to the documents that hold it, for search", 1700000600, 40},
	{"Queues", "Task queues on Redis lists and sorted sets with delayed tasks", 1700000050, 25},
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "search example:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	ctx := context.Background()
	if err := demo.Clean(ctx, rdb, prefix); err != nil {
		return err
	}
	defer func() { _ = demo.Clean(ctx, rdb, prefix) }()

	x, err := search.New(rdb, "articles", search.WithPrefix(prefix),
		search.WithFields(search.NumericField("updated"), search.TextField("title")),
		search.WithScores("update", "votes"))
	if err != nil {
		return err
	}
	var docs []search.Document
	for i, c := range corpus {
		docs = append(docs, search.Document{
			ID:     "a" + strconv.Itoa(i+1),
			Text:   c.title + " " + c.text,
			Fields: map[string]string{"updated": strconv.Itoa(c.updated), "title": c.title},
			Scores: map[string]float64{"update": float64(c.updated), "votes": float64(c.vote)},
		})
	}
	added, _, err := x.Add(ctx, docs...) // one round trip for the whole batch
	if err != nil {
		return err
	}
	fmt.Printf("indexed %d documents; tokens of the first: %v\n", added, search.Tokenize(docs[0].Text))

	title := map[string]string{}
	for _, d := range docs {
		title[d.ID] = d.Fields["title"]
	}
	show := func(label, q string, opts ...search.SearchOption) error {
		r, err := x.Search(ctx, q, opts...)
		if err != nil {
			return err
		}
		var names []string
		for _, id := range r.IDs {
			names = append(names, title[id])
		}
		fmt.Printf("%-34s %-28q %d: %q\n", label, q, r.Total, names)
		return nil
	}
	for _, s := range []struct {
		label, q string
		opts     []search.SearchOption
	}{
		{"AND", "redis search", nil},
		{"synonym", "connection +connections", nil},
		{"exclusion", "redis -cluster -search", nil},
		{"newest first (search_and_sort)", "redis", []search.SearchOption{search.ByField("updated", true)}},
		{"by title", "redis", []search.SearchOption{search.ByField("title", false)}},
		{"zsort by update time", "sets +redis", []search.SearchOption{search.ByScores(map[string]float64{"update": 1, "votes": 0}, false)}},
		{"zsort by votes", "sets +redis", []search.SearchOption{search.ByScores(map[string]float64{"update": 0, "votes": 1}, false)}},
	} {
		if err := show(s.label, s.q, s.opts...); err != nil {
			return err
		}
	}

	// Pages of a cached result.
	r, err := x.Search(ctx, "redis +search", search.ByField("updated", true), search.Limit(0, 2))
	if err != nil {
		return err
	}
	fmt.Printf("page 1 of %d results: %v (search id kept %v)\n", r.Total, r.IDs, search.DefaultCacheTTL)
	for off := 2; off < r.Total; off += 2 {
		p, err := x.Page(ctx, r.ID, off, 2)
		if err != nil {
			return err
		}
		fmt.Printf("page %d: %v\n", off/2+1, p.IDs)
	}

	// Re-index a document without the word "redis", then remove another.
	_, replaced, err := x.Add(ctx, search.Document{ID: "a1", Text: "Action: patterns for a key-value store",
		Fields: map[string]string{"updated": "1700000700", "title": "Redis in Action"}})
	if err != nil {
		return err
	}
	removed, err := x.Remove(ctx, "a4")
	if err != nil {
		return err
	}
	fmt.Printf("re-indexed %d, removed %d\n", replaced, removed)
	if err := show("after re-index and remove", "redis"); err != nil {
		return err
	}

	// Malformed queries say where.
	for _, q := range []string{"redis +", "-redis", "the of"} {
		_, err := x.Search(ctx, q)
		fmt.Println("error:", err)
	}
	return nil
}
