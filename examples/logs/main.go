// Command logs runs a simulated web service that logs to Redis (Redis in
// Action 5.1): its requests log through a log/slog handler that never
// makes them wait for Redis, and a batch job back-fills an hour of
// warnings across an hour boundary. It prints the recent log and the most
// common messages of the current and the previous hour.
//
//	go run ./examples/logs                       # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/logs
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/logs"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "logs example:", err)
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
	const prefix = "example:logs:"
	for _, part := range []string{"hours", "recent:info", "recent:warning", "recent:error", "common:info",
		"common:warning", "common:error", "last:info", "last:warning", "last:error"} {
		if err := rdb.Del(ctx, prefix+"{shop}:"+part, prefix+"{batch}:"+part).Err(); err != nil {
			return err
		}
	}
	l, err := logs.New(rdb, logs.WithPrefix(prefix), logs.WithRecent(5))
	if err != nil {
		return err
	}

	// The service: slog records go to Redis in the background.
	h, err := l.Handler("shop")
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	log := slog.New(h).With("svc", "shop")
	for i := range 200 {
		page := []string{"/", "/item/42", "/cart"}[i%3]
		log.Info("request served", "page", page, "n", i)
		if i%25 == 0 {
			log.Warn("slow upstream", "upstream", "inventory", "ms", 200+i)
		}
		if i%60 == 59 {
			log.Error("payment declined", "order", 1000+i)
		}
	}
	if err := h.Close(ctx); err != nil { // writes what is still buffered
		return err
	}
	stop()
	if err := <-done; err != nil {
		return err
	}
	st := h.Stats()
	fmt.Printf("handler: %d records written, %d dropped\n", st.Written, st.Dropped)
	for _, sev := range []string{logs.Info, logs.Warning, logs.Error} {
		recent, err := l.Recent(ctx, "shop", sev)
		if err != nil {
			return err
		}
		fmt.Printf("recent %s (%d): %s\n", sev, len(recent), recent[0].Text)
	}
	cur, _, err := l.Common(ctx, "shop", logs.Info, 3)
	if err != nil {
		return err
	}
	fmt.Println("common info this hour:", cur.Counts)

	// A batch job back-fills its warnings of 10:30-11:30 (explicit times):
	// the common log rotates at 11:00 inside the write that crosses it.
	t := time.Date(2024, 3, 1, 10, 30, 0, 0, time.UTC)
	for i := range 60 {
		msg := []string{"retrying row", "row skipped", "retrying row"}[i%3]
		at := t.Add(time.Duration(i) * time.Minute)
		if err := l.LogCommon(ctx, "batch", logs.Entry{Severity: logs.Warning, Message: msg, Time: at}); err != nil {
			return err
		}
	}
	cur, prev, err := l.Common(ctx, "batch", logs.Warning, 3)
	if err != nil {
		return err
	}
	fmt.Printf("batch warnings %s: %v\n", cur.Start.UTC().Format("15:04"), cur.Counts)
	fmt.Printf("batch warnings %s: %v\n", prev.Start.UTC().Format("15:04"), prev.Counts)
	return nil
}
