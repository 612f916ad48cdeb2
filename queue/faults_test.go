package queue_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// Workers are cancelled at random, mostly mid-task, with random grace
// periods (often none) while they drain the queue, and new ones replace
// them: every task completes, none is lost, and a graceful cancellation
// never makes a task run twice (its unfinished tasks are given back, the
// finished ones acknowledged). 10,000 tasks on the real servers; 2,000 on
// miniredis, which runs every script in one goroutine and is several times
// slower under -race.
func TestWorker_faults_randomCancel(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		tasks := 10000
		if !b.Real() {
			tasks = 2000
		}
		const (
			workers     = 4
			concurrency = 16
		)
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		jobs := make([]queue.Job, 0, 1000)
		for i := range tasks {
			jobs = append(jobs, queue.Job{Queue: []string{"high", "low"}[i%2], Name: "t", Payload: i})
			if len(jobs) == cap(jobs) || i == tasks-1 {
				_, err := g.EnqueueBatch(ctx, jobs)
				require.NoError(t, err)
				jobs = jobs[:0]
			}
		}

		var (
			completed = make([]atomic.Int32, tasks) // handler returned nil
			done      atomic.Int64                  // tasks completed at least once
			cancelled atomic.Int64                  // handler runs cut short
			restarts  atomic.Int64
			stop      = make(chan struct{})
			wg        sync.WaitGroup
			errs      = make(chan error, workers)
			clients   = make([]queue.Client, workers)
		)
		for i := range clients {
			clients[i], _ = b.NewClient()
		}
		for i := range workers {
			wg.Go(func() {
				gw := newGroup(t, b, clients[i])
				for {
					select {
					case <-stop:
						return
					default:
					}
					w, err := queue.NewWorker(gw, queue.Queues("high", "low"), queue.Concurrency(concurrency),
						queue.Grace([]time.Duration{0, 0, time.Millisecond, 5 * time.Millisecond}[rand.IntN(4)]))
					if err != nil {
						errs <- err
						return
					}
					_ = w.Handle("t", queue.Typed(func(ctx context.Context, n int) error {
						select { // some work, cut short by a cancellation
						case <-time.After(time.Duration(rand.IntN(500)) * time.Microsecond):
						case <-ctx.Done():
							cancelled.Add(1)
							return ctx.Err()
						}
						if completed[n].Add(1) == 1 {
							done.Add(1)
						}
						return nil
					}))
					rctx, cancel := context.WithTimeout(ctx, time.Duration(5+rand.IntN(40))*time.Millisecond)
					err = w.Run(rctx)
					cancel()
					restarts.Add(1)
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		require.Eventually(t, func() bool { return done.Load() == int64(tasks) || len(errs) > 0 },
			120*time.Second, 10*time.Millisecond, "tasks left: %d", int64(tasks)-done.Load())
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}

		var dups int64
		for i := range completed {
			dups += int64(max(completed[i].Load()-1, 0))
		}
		t.Logf("%d tasks: %d worker runs cancelled, %d handler runs cut short, %d duplicate completions",
			tasks, restarts.Load(), cancelled.Load(), dups)
		assert.Zero(t, dups, "a graceful cancellation never duplicates a task")
		assert.Greater(t, cancelled.Load(), int64(0), "some tasks were cut short")
		assertEmpty(t, b, "high", "low")
	})
}

// The environment of a worker process started by TestWorker_sigkill.
const (
	workerProcessEnv = "RIA_QUEUE_TEST_WORKER" // redis address
	workerPrefixEnv  = "RIA_QUEUE_TEST_PREFIX"
)

// workerProcess is the main of a worker process: it serves the test's
// group until it is killed or gets SIGTERM. Its handler works 1-3 ms, then
// logs "<task> <pid>" to the log list, and returns.
func workerProcess() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(workerProcessEnv)})
	defer rdb.Close()
	prefix := os.Getenv(workerPrefixEnv)
	g, err := queue.New(rdb, group, queue.WithPrefix(prefix))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	w, err := queue.NewWorker(g, queue.Concurrency(8), queue.Lease(2*time.Second), queue.Grace(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pid := strconv.Itoa(os.Getpid())
	logKey := prefix + "log"
	_ = w.Handle("t", queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		time.Sleep(time.Duration(1000+rand.IntN(2000)) * time.Microsecond)
		return rdb.RPush(ctx, logKey, task.ID+" "+pid).Err()
	}))
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// Separate worker processes are killed with SIGKILL mid-run and replaced:
// every task completes, none is lost, and every task that completed more
// than once had a run in a killed process (which may have finished the task
// and died before its acknowledgement reached Redis).
func TestWorker_sigkill(t *testing.T) {
	b := redistest.New(t, redistest.Standalone)
	ctx := t.Context()
	const (
		tasks     = 3000
		processes = 3
		kills     = 6
	)
	g := newGroup(t, b, b.Client)
	jobs := make([]queue.Job, tasks)
	for i := range jobs {
		jobs[i] = queue.Job{Queue: "default", Name: "t", Payload: i, Options: []queue.EnqueueOption{queue.MaxRetry(100)}}
	}
	ids, err := g.EnqueueBatch(ctx, jobs)
	require.NoError(t, err)

	var (
		mu     sync.Mutex
		procs  = map[int]*exec.Cmd{}
		output = map[int]*bytes.Buffer{}
		killed = map[string]bool{}
	)
	spawn := func() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerProcessEnv+"="+b.Addrs()[0], workerPrefixEnv+"="+b.Prefix)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		require.NoError(t, cmd.Start())
		mu.Lock()
		procs[cmd.Process.Pid], output[cmd.Process.Pid] = cmd, &out
		mu.Unlock()
	}
	t.Cleanup(func() { // stop everything this test started
		mu.Lock()
		defer mu.Unlock()
		for pid, cmd := range procs {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("worker %d output:\n%s", pid, output[pid])
			}
		}
	})
	logged := func() int64 { return b.Client.LLen(ctx, b.Prefix+"log").Val() }
	for range processes {
		spawn()
	}
	for k := range kills {
		// Let the workers get going (some tasks done since the last kill),
		// then kill one of them mid-run and start a replacement.
		before := logged()
		require.Eventually(t, func() bool { return logged() > before+100 }, 30*time.Second, time.Millisecond,
			"no progress before kill %d", k)
		mu.Lock()
		var victim *exec.Cmd
		for _, cmd := range procs {
			if cmd.ProcessState == nil && !killed[strconv.Itoa(cmd.Process.Pid)] {
				victim = cmd
				break
			}
		}
		require.NotNil(t, victim)
		require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
		_ = victim.Wait()
		killed[strconv.Itoa(victim.Process.Pid)] = true
		mu.Unlock()
		spawn()
	}
	waitSettled(t, b)

	// Stop the survivors gracefully and check that nothing is left.
	mu.Lock()
	for pid, cmd := range procs {
		if !killed[strconv.Itoa(pid)] {
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			assert.NoError(t, cmd.Wait(), "worker %d exit", pid)
		}
	}
	mu.Unlock()
	assertEmpty(t, b, "default")

	entries, err := b.Client.LRange(ctx, b.Prefix+"log", 0, -1).Result()
	require.NoError(t, err)
	runs := map[string][]string{} // task -> pids of its completed runs
	for _, e := range entries {
		id, pid, _ := strings.Cut(e, " ")
		runs[id] = append(runs[id], pid)
	}
	var dups, unexplained int
	for _, id := range ids {
		pids := runs[id]
		if len(pids) == 0 {
			t.Errorf("task %s never completed", id)
			continue
		}
		if len(pids) == 1 {
			continue
		}
		dups += len(pids) - 1
		explained := false
		for _, pid := range pids[:len(pids)-1] {
			explained = explained || killed[pid]
		}
		if !explained {
			unexplained++
			t.Errorf("task %s completed %d times, by %v, none of the earlier runs in a killed worker", id, len(pids), pids)
		}
	}
	assert.Len(t, runs, tasks, "no unknown task logged")
	t.Logf("%d tasks, %d worker processes (%d killed with SIGKILL): %d completions, %d duplicates, all in killed workers: %v",
		tasks, len(procs), len(killed), len(entries), dups, unexplained == 0)
}
