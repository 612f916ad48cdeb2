package queue

import (
	"context"
	"errors"
	"expvar"
	"sync"
	"time"
)

// RunResult is how one run of a task ended, as [Metrics] hears of it.
type RunResult string

// The results of a run.
const (
	RunOK        RunResult = "ok"         // the handler returned nil: acknowledged
	RunRetry     RunResult = "retry"      // it failed and will be retried after a backoff
	RunDead      RunResult = "dead"       // it failed for good: sent to the dead letters
	RunGivenBack RunResult = "given_back" // cut short by the worker's shutdown: back in its queue
)

// Metrics hears of every run of a task by a worker ([WithMetrics]): its
// queue and task name, how it ended and how long its handler ran (0 for a
// task sent to the dead letters unrun). It is called from the worker's
// goroutines and must be safe for concurrent use and quick. Export the
// counts with whatever metrics system the service uses; [ExpvarMetrics]
// publishes them with the standard library's expvar. Gauges (tasks ready,
// delayed, in flight, dead) come from [Group.Stats].
type Metrics interface {
	TaskRun(queue, task string, result RunResult, d time.Duration)
}

// report tells the worker's Metrics, if any, of a run.
func (r *run) report(t Task, result RunResult, d time.Duration) {
	if m := r.w.o.metrics; m != nil {
		m.TaskRun(t.Queue, t.Name, result, d)
	}
}

// runResult names an outcome's kind.
func runResult(kind byte) RunResult {
	switch kind {
	case 'a':
		return RunOK
	case 'r':
		return RunRetry
	case 'd':
		return RunDead
	}
	return RunGivenBack
}

// ExpvarMetrics is a [Metrics] that publishes, under one expvar name (so
// at /debug/vars), a map of counters "<queue>.<task>.<result>" and of
// handler seconds "<queue>.<task>.seconds", and, with [ExpvarMetrics.Stats],
// the gauges of a group.
type ExpvarMetrics struct {
	m *expvar.Map
}

// expvarMu makes the check and the publishing of NewExpvarMetrics one step:
// expvar.Publish panics on a name taken in between.
var expvarMu sync.Mutex

// NewExpvarMetrics publishes a new map under name. It returns an error if
// expvar already has that name (expvar names are process-wide). It is safe
// for concurrent use: of two calls with one name, one gets the error.
func NewExpvarMetrics(name string) (*ExpvarMetrics, error) {
	if name == "" {
		return nil, errors.New("queue: expvar metrics: empty name")
	}
	expvarMu.Lock()
	defer expvarMu.Unlock()
	if expvar.Get(name) != nil {
		return nil, errors.New("queue: expvar metrics: " + name + " is published already")
	}
	return &ExpvarMetrics{m: expvar.NewMap(name)}, nil
}

// TaskRun counts a run.
func (e *ExpvarMetrics) TaskRun(queue, task string, result RunResult, d time.Duration) {
	k := queue + "." + task + "."
	e.m.Add(k+string(result), 1)
	e.m.AddFloat(k+"seconds", d.Seconds())
}

// String returns the map as expvar serves it (JSON).
func (e *ExpvarMetrics) String() string { return e.m.String() }

// Stats publishes, in the same map under "stats", the gauges of g's queues
// ([Group.Stats]), read when /debug/vars is served (one round trip, at
// most timeout).
func (e *ExpvarMetrics) Stats(g *Group, timeout time.Duration, queues ...string) {
	e.m.Set("stats", expvar.Func(func() any {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		s, err := g.Stats(ctx, queues...)
		if err != nil {
			return map[string]string{"error": err.Error()}
		}
		return s
	}))
}
