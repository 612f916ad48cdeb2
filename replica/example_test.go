package replica_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/replica"
)

// A primary without replicas (here an embedded miniredis) cannot confirm
// the write: Wait says so after its timeout, and the write stays on the
// primary.
func Example() {
	srv, _ := miniredis.Run() // stands in for a real primary
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	w, err := replica.New(rdb, replica.WithReplicas(1), replica.WithTimeout(10*time.Millisecond))
	if err != nil {
		panic(err)
	}
	_ = rdb.Set(ctx, "order:{42}", "paid", 0).Err()
	ack, err := w.Wait(ctx, "order:{42}")
	fmt.Println(ack.Replicas, errors.Is(err, replica.ErrTimeout))
	fmt.Println(rdb.Get(ctx, "order:{42}").Val())
	// Output:
	// 0 true
	// paid
}
