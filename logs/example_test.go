package logs_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/logs"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	l, _ := logs.New(rdb)
	_ = l.LogCommon(ctx, "shop", logs.Entry{Severity: logs.Warning, Message: "cart service slow"})
	_ = l.LogCommon(ctx, "shop", logs.Entry{Severity: logs.Warning, Message: "cart service slow"},
		logs.Entry{Severity: logs.Warning, Message: "disk 90% full"})
	recent, _ := l.Recent(ctx, "shop", logs.Warning)
	cur, _, _ := l.Common(ctx, "shop", logs.Warning, 10)
	fmt.Println(len(recent), recent[0].Text)
	fmt.Println(cur.Counts)
	// Output:
	// 3 disk 90% full
	// [{cart service slow 2} {disk 90% full 1}]
}

func ExampleLogs_LogCommon_hours() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	l, _ := logs.New(rdb)
	hour := time.Unix(1_700_002_800, 0).UTC()
	_ = l.LogCommon(ctx, "shop", logs.Entry{Severity: logs.Error, Message: "timeout", Time: hour.Add(-time.Second)})
	_ = l.LogCommon(ctx, "shop", logs.Entry{Severity: logs.Error, Message: "timeout", Time: hour}) // rotates
	cur, prev, _ := l.Common(ctx, "shop", logs.Error, 10)
	fmt.Println(cur.Start.UTC().Format(time.TimeOnly), cur.Counts)
	fmt.Println(prev.Start.UTC().Format(time.TimeOnly), prev.Counts)
	// Output:
	// 23:00:00 [{timeout 1}]
	// 22:00:00 [{timeout 1}]
}

func ExampleLogs_Handler() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	l, _ := logs.New(rdb)
	h, _ := l.Handler("shop")
	go func() { _ = h.Run(ctx) }()
	log := slog.New(h)
	log.Info("order placed", "id", 42) // returns at once; written in the background
	log.Info("order placed", "id", 43)
	_ = h.Close(ctx) // writes what is buffered
	recent, _ := l.Recent(ctx, "shop", logs.Info)
	cur, _, _ := l.Common(ctx, "shop", logs.Info, 1)
	fmt.Println(recent[0].Text, "|", cur.Counts, "|", h.Stats().Written)
	// Output:
	// order placed id=43 | [{order placed 2}] | 2
}
