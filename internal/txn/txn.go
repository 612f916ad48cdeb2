// Package txn holds the two transaction shapes the book uses everywhere: the
// optimistic WATCH/MULTI/EXEC retry loop, and pipelines chunked so that a large
// fan-out neither builds one huge request nor pays one round trip per item.
package txn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/wait"
)

// Watcher is the subset of go-redis that [Watch] needs. *redis.Client,
// *redis.ClusterClient and *redis.Ring satisfy it; on a cluster all watched
// keys must share a slot (use a hash tag).
type Watcher interface {
	Watch(ctx context.Context, fn func(*redis.Tx) error, keys ...string) error
}

var (
	_ Watcher = (*redis.Client)(nil)
	_ Watcher = (*redis.ClusterClient)(nil)
	_ Watcher = (*redis.Ring)(nil)
)

// ErrContended is returned (wrapped) by [Watch] when the watched keys kept
// changing until the deadline.
var ErrContended = errors.New("txn: watched keys kept changing")

// Watch runs fn inside WATCH keys and retries it while EXEC aborts because a
// watched key changed (redis.TxFailedErr), until ctx ends or timeout passes
// (timeout <= 0: until ctx ends). Between attempts it backs off briefly with
// jitter so that contending clients spread out. Any other error from fn or
// from Redis is returned at once. fn must queue its writes with tx.TxPipelined
// so that they run in MULTI/EXEC.
func Watch(ctx context.Context, c Watcher, timeout time.Duration, fn func(*redis.Tx) error, keys ...string) error {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	pause := time.Millisecond
	for attempt := 1; ; attempt++ {
		err := c.Watch(ctx, fn, keys...)
		if !errors.Is(err, redis.TxFailedErr) {
			return err
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return fmt.Errorf("%w after %d attempts", ErrContended, attempt)
		}
		if err := wait.Sleep(ctx, wait.Jitter(pause)); err != nil {
			return errors.Join(fmt.Errorf("%w after %d attempts", ErrContended, attempt), err)
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Pipeliner is the subset of go-redis that [Chunked] needs.
type Pipeliner interface {
	Pipeline() redis.Pipeliner
}

// Chunked queues add(p, item) for each item and executes the pipeline every
// size items, so n items cost ceil(n/size) round trips. It stops at the
// first chunk with a failed command and returns that command's error; a
// missing key (redis.Nil) is not a failure.
// On a cluster, go-redis splits each chunk by node.
func Chunked[T any](ctx context.Context, c Pipeliner, items []T, size int, add func(p redis.Pipeliner, item T)) error {
	if size < 1 {
		return fmt.Errorf("txn: chunk size %d: must be at least 1", size)
	}
	for start := 0; start < len(items); start += size {
		p := c.Pipeline()
		for _, it := range items[start:min(start+size, len(items))] {
			add(p, it)
		}
		cmds, err := p.Exec(ctx)
		if err == redis.Nil {
			// Exec reports the first command error, and a missing key is
			// not one; look for a real failure further on.
			err = nil
			for _, c := range cmds {
				if cerr := c.Err(); cerr != nil && cerr != redis.Nil {
					err = cerr
					break
				}
			}
		}
		if err != nil {
			return fmt.Errorf("txn: pipeline of items %d..%d: %w", start, min(start+size, len(items))-1, err)
		}
	}
	return nil
}
