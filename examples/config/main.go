// Command config shows package config (Redis in Action 5.4): one process
// changes a value and sets the maintenance flag; another, running the
// change subscription, sees both within milliseconds, and its connection
// registry rebuilds a client when the connection's configuration changes.
//
// It uses the server named by REDIS_URL or REDIS_CLUSTER, or an embedded
// miniredis. Its keys live under a prefix of their own, deleted at the end.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ria-go/ria/config"
	"github.com/ria-go/ria/examples/demo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "config:", err)
		os.Exit(1)
	}
}

type limits struct {
	Rate int `json:"rate"`
}

func run() error {
	rdb, closeAll, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeAll()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prefix := fmt.Sprintf("example:config:%d:", time.Now().UnixNano())

	changed := make(chan string, 16)
	reader, err := config.New(rdb, config.WithPrefix(prefix), config.WithMaxAge(time.Hour),
		config.WithOnChange(func(typ, component string) { changed <- typ + "/" + component }))
	if err != nil {
		return err
	}
	writer, err := config.New(rdb, config.WithPrefix(prefix))
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- reader.Run(ctx) }()
	<-changed // subscribed

	for _, rate := range []int{100, 250} {
		start := time.Now()
		if err := writer.Set(ctx, "limits", "api", limits{Rate: rate}); err != nil {
			return err
		}
		for c := <-changed; c != "limits/api"; c = <-changed {
		}
		var l limits
		if err := reader.Get(ctx, "limits", "api", &l); err != nil {
			return err
		}
		fmt.Printf("rate %d seen by the other Store %v after the change\n", l.Rate, time.Since(start).Round(time.Microsecond))
	}
	if err := writer.SetMaintenance(ctx, true); err != nil {
		return err
	}
	for c := <-changed; c != "ria/maintenance"; c = <-changed {
	}
	down, err := reader.UnderMaintenance(ctx)
	if err != nil {
		return err
	}
	fmt.Println("under maintenance:", down)
	if err := writer.Delete(ctx, "limits", "api"); err != nil {
		return err
	}
	if err := writer.SetMaintenance(ctx, false); err != nil {
		return err
	}
	cancel()
	if err := <-done; err != nil {
		return err
	}
	for _, k := range []string{prefix + "{limits:api}:value", prefix + "{ria:maintenance}:value"} {
		if err := rdb.Del(context.Background(), k).Err(); err != nil {
			return err
		}
	}
	return nil
}
