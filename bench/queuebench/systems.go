package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/queue"
)

// system is one task queue library, set up for one run on a queue (ria:
// a group) of its own.
type system interface {
	// enqueue adds one task with payload p.
	enqueue(ctx context.Context, p []byte) error
	// prefill adds n tasks, as fast as the library allows (not measured).
	prefill(ctx context.Context, n int) error
	// start starts processing with a worker of the given concurrency whose
	// no-op handler calls ran after each task.
	start(concurrency int, ran func()) error
	// stop shuts the worker down gracefully and waits for it.
	stop() error
	// left returns the tasks not settled (not acknowledged) after stop.
	left(ctx context.Context) (int64, error)
	// cleanup deletes the run's keys.
	cleanup(ctx context.Context) error
}

// library makes a system for a run called tag.
type library struct {
	name string
	note string
	open func(rdb *redis.Client, prefix, tag string) (system, error)
}

func libraries(prefetch int) []library {
	return []library{
		{
			name: "ria",
			note: "ria/queue (this repository): Enqueue = 1 script; prefill with EnqueueBatch(500); one Worker of Concurrency(c), " +
				"Lease 30s; its fetch loop takes up to min(free slots, 64) tasks per script call, and that call also acknowledges " +
				"the tasks finished since the last one; an idle worker blocks in BLPOP",
			open: openRia(0),
		},
		{
			name: fmt.Sprintf("ria prefetch %d", prefetch),
			note: fmt.Sprintf("the same with Prefetch(%d): a take brings up to free slots + %d tasks (at most 64), kept leased "+
				"until a slot frees, and the worker takes again when half of them have started", prefetch, prefetch),
			open: openRia(prefetch),
		},
		{
			name: "asynq",
			note: "github.com/hibiken/asynq: Client.Enqueue = 1 script; prefill with 8 goroutines calling Enqueue; one Server of " +
				"Concurrency(c) (NewServerFromRedisClient, so the hook counts its round trips; defaults otherwise: " +
				"TaskCheckInterval 1s, DelayedTaskCheckInterval 5s, log level error); it dequeues one task per script call, " +
				"acknowledges each with another script call, and polls (sleeps 0.5-1.5s) when its queues are empty",
			open: openAsynq,
		},
	}
}

// ---- ria ----

type riaSystem struct {
	rdb      *redis.Client
	g        *queue.Group
	prefetch int

	cancel context.CancelFunc
	done   chan error
}

func openRia(prefetch int) func(rdb *redis.Client, prefix, tag string) (system, error) {
	return func(rdb *redis.Client, prefix, tag string) (system, error) {
		g, err := queue.New(rdb, tag, queue.WithPrefix(prefix))
		if err != nil {
			return nil, err
		}
		return &riaSystem{rdb: rdb, g: g, prefetch: prefetch}, nil
	}
}

func (s *riaSystem) enqueue(ctx context.Context, p []byte) error {
	_, err := s.g.Enqueue(ctx, "default", "t", json.RawMessage(p))
	return err
}

func (s *riaSystem) prefill(ctx context.Context, n int) error {
	const chunk = 500
	jobs := make([]queue.Job, 0, chunk)
	for i := range n {
		jobs = append(jobs, queue.Job{Queue: "default", Name: "t", Payload: json.RawMessage(payload(i))})
		if len(jobs) == chunk || i == n-1 {
			if _, err := s.g.EnqueueBatch(ctx, jobs); err != nil {
				return err
			}
			jobs = jobs[:0]
		}
	}
	return nil
}

func (s *riaSystem) start(concurrency int, ran func()) error {
	w, err := queue.NewWorker(s.g, queue.Concurrency(concurrency), queue.Prefetch(s.prefetch))
	if err != nil {
		return err
	}
	if err := w.Handle("t", queue.HandlerFunc(func(context.Context, *queue.Task) error {
		ran()
		return nil
	})); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan error, 1)
	go func() { s.done <- w.Run(ctx) }()
	return nil
}

func (s *riaSystem) stop() error {
	s.cancel()
	return <-s.done
}

func (s *riaSystem) left(ctx context.Context) (int64, error) {
	st, err := s.g.Stats(ctx, "default")
	if err != nil {
		return 0, err
	}
	return st.Ready["default"] + st.InFlight + st.Delayed + st.Dead, nil
}

func (s *riaSystem) cleanup(context.Context) error { return nil } // the prefix's keys go with Env.Close

// ---- asynq ----

type asynqSystem struct {
	rdb    *redis.Client
	queue  string
	client *asynq.Client
	srv    *asynq.Server
}

func openAsynq(rdb *redis.Client, _, tag string) (system, error) {
	return &asynqSystem{rdb: rdb, queue: tag, client: asynq.NewClientFromRedisClient(rdb)}, nil
}

func (s *asynqSystem) enqueue(ctx context.Context, p []byte) error {
	_, err := s.client.EnqueueContext(ctx, asynq.NewTask("t", p), asynq.Queue(s.queue))
	return err
}

func (s *asynqSystem) prefill(ctx context.Context, n int) error {
	const producers = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for p := range producers {
		wg.Go(func() {
			for i := p; i < n; i += producers {
				if err := s.enqueue(ctx, payload(i)); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *asynqSystem) start(concurrency int, ran func()) error {
	s.srv = asynq.NewServerFromRedisClient(s.rdb, asynq.Config{
		Concurrency: concurrency,
		Queues:      map[string]int{s.queue: 1},
		LogLevel:    asynq.ErrorLevel,
	})
	return s.srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		ran()
		return nil
	}))
}

func (s *asynqSystem) stop() error {
	s.srv.Shutdown()
	return nil
}

func (s *asynqSystem) left(context.Context) (int64, error) {
	info, err := asynq.NewInspectorFromRedisClient(s.rdb).GetQueueInfo(s.queue)
	if err != nil {
		return 0, err
	}
	return int64(info.Size), nil
}

func (s *asynqSystem) cleanup(context.Context) error {
	err := asynq.NewInspectorFromRedisClient(s.rdb).DeleteQueue(s.queue, true)
	if errors.Is(err, asynq.ErrQueueNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("asynq: delete queue %s: %w", s.queue, err)
	}
	return nil
}

func payload(i int) []byte { return fmt.Appendf(nil, `{"seller":"17","item":"Item%d","price":97}`, i) }

// waitTimeout bounds one measured run.
const waitTimeout = 5 * time.Minute
