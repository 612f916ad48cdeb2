// Command replica writes a value and waits until the primary's replicas
// hold it, with package replica (Redis in Action 4.3, wait_for_sync).
//
// Point REDIS_URL at a primary that has a replica to see the write
// confirmed; on the embedded miniredis (no replica) or a primary without
// one, it shows the timeout a caller gets.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/replica"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeAll, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeAll()
	ctx := context.Background()

	w, err := replica.New(rdb, replica.WithPrefix("example:replica:"), replica.WithTimeout(200*time.Millisecond))
	if err != nil {
		return err
	}
	key := "example:replica:{order-42}"
	if err := rdb.Set(ctx, key, "paid", time.Minute).Err(); err != nil {
		return err
	}
	start := time.Now()
	ack, err := w.Wait(ctx, key)
	switch {
	case err == nil:
		fmt.Printf("%s reached %d replica(s) in %v\n", key, ack.Replicas, time.Since(start).Round(time.Microsecond))
	case errors.Is(err, replica.ErrTimeout):
		fmt.Printf("%s is on the primary only (%d replicas acknowledged): %v\n", key, ack.Replicas, err)
	default:
		return err
	}
	return rdb.Del(ctx, key).Err()
}
