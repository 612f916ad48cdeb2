package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/lock"
)

// ttl is the lock TTL (redsync: expiry) of every contender, and wait the
// longest one acquisition may wait in the contended scenario.
const (
	ttl  = 10 * time.Second
	wait = 10 * time.Second
)

// errNotObtained is what a session returns, wrapped, when the lock was held
// by another and the library gave up (its retries or wait ran out).
var errNotObtained = errors.New("not obtained")

// session is one goroutine's handle on the benchmark's lock.
type session interface {
	lock(ctx context.Context) error
	unlock(ctx context.Context) error
}

// counters are the per-run counts every goroutine of a run adds to.
type counters struct {
	acquired   atomic.Int64 // successful acquisitions
	failed     atomic.Int64 // failed attempts, where the library lets us see them
	errors     atomic.Int64 // calls that returned an error (not a failed attempt)
	violations atomic.Int64 // a goroutine entered the critical section while another was in it
	// holdNs and holds add up the work actually done under the lock (a
	// block.For of the scenario's hold time lasts longer on a busy machine).
	holdNs, holds atomic.Int64
	// sessions counts the sessions made for the run (the hand-off ring
	// numbers its members with it), and stopped tells them the run is over.
	sessions atomic.Int64
	stopped  atomic.Bool
}

// errStopped is what a hand-off session returns when the run ended while
// it waited: the token stopped at a goroutine that had finished.
var errStopped = errors.New("run over")

// contender is one library in one configuration.
type contender struct {
	name string
	// attempts tells whether failed attempts are observable, so that ops/s
	// counts them; if not, ops/s counts successful acquisitions.
	attempts bool
	// note explains the configuration in the output.
	note string
	// limit marks the physical limit's row: no lock, so neither mutual
	// exclusion nor the scenario's work applies to it.
	limit bool
	// handoff marks the hand-off limit's row: a token passed round the
	// goroutines, the least a hand-over through Redis costs.
	handoff bool
	// shared marks a contender whose holders share the lock (readers of a
	// read/write lock): mutual exclusion is not checked.
	shared     bool
	newSession func(rdb *redis.Client, prefix, name string, cnt *counters) session
}

// ---- the physical limit ----

// pingSession is no lock: a plain go-redis PING per "acquisition", what one
// round trip costs at the scenario's concurrency on this machine and server.
type pingSession struct{ rdb *redis.Client }

func physicalLimit() contender {
	return contender{
		name:  "limit",
		limit: true,
		note: "the physical limit: a plain go-redis PING loop at the same concurrency (goroutines, clients), " +
			"no lock and no work; its ops/s is one round trip each",
		newSession: func(rdb *redis.Client, _, _ string, _ *counters) session { return pingSession{rdb} },
	}
}

func (s pingSession) lock(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }

func (pingSession) unlock(context.Context) error { return nil }

// ---- the hand-off limit ----

// handoffSession is the fastest a lock can pass from one holder to the
// next through Redis, with no lock logic: a token goes round a ring of the
// run's goroutines. lock blocks on the goroutine's own list (BLPOP) until
// the token arrives; unlock pushes it to the next goroutine's list (RPUSH).
// From a release to the next holder it costs what a lock's hand-over
// costs at least: one command to the server, and the server's reply to a
// client blocked on it.
type handoffSession struct {
	rdb       *redis.Client
	own, next string
	first     bool // the first session starts with the token
	stopped   *atomic.Bool
}

func handoffLimit(goroutines int) contender {
	return contender{
		name:    "limit-handoff",
		handoff: true,
		note: "the hand-off limit: no lock, a token passed round the goroutines in a fixed order through Redis " +
			"lists (BLPOP on its own, RPUSH to the next one's), with the scenario's work; one round trip from a " +
			"release to the next holder",
		newSession: func(rdb *redis.Client, prefix, name string, cnt *counters) session {
			i := int(cnt.sessions.Add(1) - 1)
			key := func(j int) string { return fmt.Sprintf("%shandoff:%s:%d", prefix, name, j) }
			return &handoffSession{rdb: rdb, own: key(i), next: key((i + 1) % goroutines), first: i == 0, stopped: &cnt.stopped}
		},
	}
}

func (s *handoffSession) lock(ctx context.Context) error {
	if s.first {
		s.first = false
		return nil
	}
	for {
		err := s.rdb.BLPop(ctx, time.Second, s.own).Err()
		if err != redis.Nil {
			return err
		}
		if s.stopped.Load() {
			return errStopped
		}
	}
}

func (s *handoffSession) unlock(ctx context.Context) error {
	return s.rdb.RPush(ctx, s.next, "token").Err()
}

// ---- ria ----

type riaSession struct {
	lk     *lock.Locker
	name   string
	wait   bool
	failed *atomic.Int64
	l      *lock.Lock
}

func ria(waiting bool) contender {
	c := contender{
		name: "ria",
		newSession: func(rdb *redis.Client, prefix, name string, cnt *counters) session {
			lk, err := lock.New(rdb, lock.WithPrefix(prefix+"ria:"))
			if err != nil {
				panic(err) // the prefix is ours
			}
			return &riaSession{
				lk: lk, name: name,
				wait: waiting, failed: &cnt.failed,
			}
		},
	}
	if waiting {
		c.note = fmt.Sprintf("Acquire(ttl %v, WithWait(%v)): blocks on the wake list, no polling", ttl, wait)
	} else {
		c.attempts = true
		c.note = fmt.Sprintf("TryAcquire(ttl %v)", ttl)
	}
	return c
}

func (s *riaSession) lock(ctx context.Context) error {
	var err error
	if s.wait {
		s.l, err = s.lk.Acquire(ctx, s.name, ttl, lock.WithWait(wait))
	} else {
		s.l, err = s.lk.TryAcquire(ctx, s.name, ttl)
	}
	if errors.Is(err, lock.ErrNotObtained) {
		if !s.wait {
			s.failed.Add(1)
		}
		return fmt.Errorf("%w: %w", errNotObtained, err)
	}
	return err
}

func (s *riaSession) unlock(ctx context.Context) error { return s.l.Release(ctx) }

// ---- ria's read/write lock, read side ----

type riaReadSession struct {
	rw *lock.RWLock
	h  *lock.RWHold
}

// riaRead is ria's RWLock taken shared: RLock waits like Acquire, but
// readers do not exclude each other.
func riaRead() contender {
	return contender{
		name:   "ria-rwlock-read",
		shared: true,
		note:   fmt.Sprintf("RW(name).RLock(ttl %v, WithWait(%v)): readers share the lock, each with its own lease", ttl, wait),
		newSession: func(rdb *redis.Client, prefix, name string, _ *counters) session {
			lk, err := lock.New(rdb, lock.WithPrefix(prefix+"ria:"))
			if err != nil {
				panic(err) // the prefix is ours
			}
			return &riaReadSession{rw: lk.RW(name)}
		},
	}
}

func (s *riaReadSession) lock(ctx context.Context) error {
	var err error
	s.h, err = s.rw.RLock(ctx, ttl, lock.WithWait(wait))
	if errors.Is(err, lock.ErrNotObtained) {
		return fmt.Errorf("%w: %w", errNotObtained, err)
	}
	return err
}

func (s *riaReadSession) unlock(ctx context.Context) error { return s.h.Release(ctx) }

// ---- bsm/redislock ----

type redislockSession struct {
	client *redislock.Client
	key    string
	retry  func() redislock.RetryStrategy
	failed *atomic.Int64
	l      *redislock.Lock
}

// redislockContender retries with the strategy that retry returns, a new
// one per Obtain: ExponentialBackoff keeps its retry count in the strategy,
// so sharing one across calls would leave every call at the maximum delay.
func redislockContender(name, note string, retry func() redislock.RetryStrategy) contender {
	return contender{
		name:     name,
		attempts: true,
		note:     note,
		newSession: func(rdb *redis.Client, prefix, name string, cnt *counters) session {
			return &redislockSession{
				client: redislock.New(rdb), key: prefix + "redislock:" + name,
				retry: retry, failed: &cnt.failed,
			}
		},
	}
}

// countingRetry counts failed attempts: redislock asks its strategy for the
// next backoff after each one.
type countingRetry struct {
	redislock.RetryStrategy
	failed *atomic.Int64
}

func (r countingRetry) NextBackoff() time.Duration {
	r.failed.Add(1)
	return r.RetryStrategy.NextBackoff()
}

func (s *redislockSession) lock(ctx context.Context) error {
	var err error
	opt := &redislock.Options{RetryStrategy: countingRetry{s.retry(), s.failed}}
	s.l, err = s.client.Obtain(ctx, s.key, ttl, opt)
	if errors.Is(err, redislock.ErrNotObtained) { // the failed attempt was counted by NextBackoff
		return fmt.Errorf("%w: %w", errNotObtained, err)
	}
	return err
}

func (s *redislockSession) unlock(ctx context.Context) error { return s.l.Release(ctx) }

// ---- go-redsync/redsync ----

type redsyncSession struct {
	m      *redsync.Mutex
	once   bool
	failed *atomic.Int64
}

func redsyncContender(name, note string, retryDelay time.Duration) contender {
	once := retryDelay == 0
	return contender{
		name:     name,
		attempts: true,
		note:     note,
		newSession: func(rdb *redis.Client, prefix, name string, cnt *counters) session {
			opts := []redsync.Option{redsync.WithExpiry(ttl)}
			if !once {
				opts = append(opts,
					redsync.WithTries(math.MaxInt32), // never gives up within a run
					// WithRetryDelay(retryDelay), counting the retries: redsync
					// calls it before every attempt but the first.
					redsync.WithRetryDelayFunc(func(int) time.Duration {
						cnt.failed.Add(1)
						return retryDelay
					}))
			}
			rs := redsync.New(goredis.NewPool(rdb))
			return &redsyncSession{m: rs.NewMutex(prefix+"redsync:"+name, opts...), once: once, failed: &cnt.failed}
		},
	}
}

func (s *redsyncSession) lock(ctx context.Context) error {
	var err error
	if s.once {
		err = s.m.TryLockContext(ctx)
	} else {
		err = s.m.LockContext(ctx)
	}
	var taken *redsync.ErrTaken
	if errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken) {
		if s.once { // with retries, the retry delay function counted it
			s.failed.Add(1)
		}
		return fmt.Errorf("%w: %w", errNotObtained, err)
	}
	return err
}

func (s *redsyncSession) unlock(ctx context.Context) error {
	ok, err := s.m.UnlockContext(ctx)
	if err == nil && !ok {
		err = errors.New("redsync: unlock: not held")
	}
	return err
}
