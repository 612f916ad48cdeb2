package cache

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed incr.lua
	incrLua    string
	incrScript = script.New("cache incr", leaseLua+incrLua)

	//go:embed restored.lua
	restoredLua    string
	restoredScript = script.New("cache restored", restoredLua)
)

// RestoreFunc returns the current value of the counter key from the system
// of record (the blog's job-views table), for a counter Redis has lost.
type RestoreFunc func(ctx context.Context, key string) (int64, error)

// Counter is a family of integer counters under one name (the blog's job
// views), kept in Redis with a sliding TTL and restored from the system of
// record when Redis has lost one. It is safe for concurrent use.
type Counter struct {
	rdb     Client
	name    string
	keys    keys.Space
	ttl     time.Duration
	lease   time.Duration
	restore RestoreFunc

	mu      sync.Mutex
	pending map[string]*restoring // missing counters a caller of this process restores or waits for
	waiting atomic.Int64          // callers waiting for a restore (read by tests)
}

// restoring is a restore of a missing counter, or a wait for one, by a
// caller of this process: the other callers of the key wait for it in
// memory, not each in a blocking command holding a pooled connection, then
// look again. They stop waiting for it at until, when its lease (or its
// wait) ends, as waiters in other processes do.
type restoring struct {
	done  chan struct{}
	until time.Time
}

// NewCounter returns the counters name, backed by rdb. restore is called
// when a counter is missing (it expired after its TTL without use, was
// evicted, or Redis restarted empty); nil makes a missing counter start from
// 0. Options: [WithTTL], [WithPrefix], [WithLease]. It returns
// an error for an invalid name or option; a nil rdb panics.
func NewCounter(rdb Client, name string, restore RestoreFunc, opts ...Option) (*Counter, error) {
	if rdb == nil {
		panic("cache: NewCounter with nil client")
	}
	if err := checkName("counter", name); err != nil {
		return nil, err
	}
	o, err := build("counter "+name, []string{"WithPrefix", "WithTTL", "WithLease"}, opts)
	if err != nil {
		return nil, err
	}
	if !o.ttlSet {
		o.ttl = DefaultCounterTTL
	}
	return &Counter{rdb: rdb, name: name, keys: keys.New(o.prefix), ttl: o.ttl, lease: o.lease, restore: restore,
		pending: map[string]*restoring{}}, nil
}

// Name returns the counters' name.
func (c *Counter) Name() string { return c.name }

// Incr adds n (which may be negative) to the counter key and returns its new
// value; the counter then lives for the TTL. If the counter is missing, one
// caller (in any process) restores it from the system of record and sets it
// to the restored value plus its n, atomically; concurrent callers wait for
// the restore without polling and then add theirs, so the restore runs once
// and no increment is lost. If the restore fails, its caller gets the error
// (its n is not added) and a waiter takes over at once (if it panics, the
// same happens, and the panic propagates to its caller); if the restorer
// hangs or dies, a waiter takes over when the lease ends. A restore that outlasts its lease still adds its n,
// but not its restored value if another restore was first. An Incr that
// fails with a network error may or may not have counted.
//
// In one process, while a caller restores a counter or waits for its
// restore, the other callers of that key wait for it in memory, then add
// theirs: one blocking wait (and pooled connection) per key and process.
//
// Round trips: 1 when the counter exists; 2 for the restorer (look, set),
// 3 for a waiter (look, wait, add); 1 or 2 (add, or look and add) for a
// caller that waits for another caller of its process.
func (c *Counter) Incr(ctx context.Context, key string, n int64) (int64, error) {
	if err := checkKey("counter incr", key); err != nil {
		return 0, err
	}
	v, err := c.incr(ctx, key, n)
	if err != nil {
		return 0, fmt.Errorf("cache: counter %s incr %q: %w", c.name, key, err)
	}
	return v, nil
}

// Get returns the counter key, restoring it if it is missing as [Counter.Incr]
// does (Get is Incr of 0); reading a counter renews its TTL. Round trips as
// for Incr.
func (c *Counter) Get(ctx context.Context, key string) (int64, error) {
	if err := checkKey("counter get", key); err != nil {
		return 0, err
	}
	v, err := c.incr(ctx, key, 0)
	if err != nil {
		return 0, fmt.Errorf("cache: counter %s get %q: %w", c.name, key, err)
	}
	return v, nil
}

func (c *Counter) incr(ctx context.Context, key string, n int64) (int64, error) {
	k := c.counterKeys(key)
	token := ""
	if c.restore != nil {
		token = uuid.NewString()
	}
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if token != "" {
			c.mu.Lock()
			p := c.pending[key]
			c.mu.Unlock()
			if p != nil {
				if err := c.follow(ctx, key, p); err != nil {
					return 0, fmt.Errorf("wait for restore: %w", err)
				}
			}
		}
		v, err := incrScript.Run(ctx, c.rdb, k[:], n, ms(c.ttl), token, ms(c.lease))
		var st step
		if err == nil {
			st, err = parseStep(incrScript.Name(), v)
		}
		if err != nil {
			if token != "" {
				c.release(ctx, k, token)
			}
			return 0, err
		}
		switch st.state {
		case stateHit:
			return st.num, nil
		case stateLoad:
			return c.restoreShared(ctx, key, k, token, n)
		case stateWait:
			if err := c.awaitRestore(ctx, key, k, blockFor(st.num, c.lease)); err != nil {
				return 0, fmt.Errorf("wait for restore: %w", err)
			}
			// Restored, abandoned, or the lease ended: look again.
		default:
			return 0, fmt.Errorf("script %s: unexpected state %d", incrScript.Name(), st.state)
		}
	}
}

// begin registers a restore of key, or a wait for one, by this caller,
// which ends within d, and returns it (mine true), unless another caller of
// this process restores or waits already: then it returns that one's.
func (c *Counter) begin(key string, d time.Duration) (p *restoring, mine bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pending[key]; p != nil {
		return p, false
	}
	p = &restoring{done: make(chan struct{}), until: time.Now().Add(d)}
	c.pending[key] = p
	return p, true
}

// restoreShared runs restoreAndAdd; callers of this process that come
// meanwhile wait for it (unless one of them waits already: it is woken by
// the restore as callers in other processes are).
func (c *Counter) restoreShared(ctx context.Context, key string, k entryKeys, token string, n int64) (int64, error) {
	if p, mine := c.begin(key, c.lease); mine {
		defer c.end(key, p)
	}
	return c.restoreAndAdd(ctx, key, k, token, n)
}

// end ends p and wakes the callers waiting for it.
func (c *Counter) end(key string, p *restoring) {
	c.mu.Lock()
	if c.pending[key] == p {
		delete(c.pending, key)
	}
	c.mu.Unlock()
	close(p.done)
}

// follow waits for p, the restore of key or a wait for it, to end, or
// ctx. If p outlasts its lease (a hung restore), it stops waiting and
// unregisters p, so that the callers of this process look again, as
// waiters elsewhere do, and one of them takes over.
func (c *Counter) follow(ctx context.Context, key string, p *restoring) error {
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	t := time.NewTimer(time.Until(p.until))
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		c.mu.Lock()
		if c.pending[key] == p {
			delete(c.pending, key)
		}
		c.mu.Unlock()
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// awaitRestore waits, up to d, for the restore of key that another caller
// (in any process) runs: in memory if a caller of this process restores or
// waits already, else in a blocking read of the wake list.
func (c *Counter) awaitRestore(ctx context.Context, key string, k entryKeys, d time.Duration) error {
	p, mine := c.begin(key, d)
	if !mine {
		return c.follow(ctx, key, p)
	}
	defer c.end(key, p)
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	_, _, err := await(ctx, c.rdb, k[2], d)
	return err
}

// restoreAndAdd calls restore as the lease holder and sets the counter.
func (c *Counter) restoreAndAdd(ctx context.Context, key string, k entryKeys, token string, n int64) (int64, error) {
	done := false
	defer func() {
		if !done { // restore panicked
			c.release(ctx, k, token)
		}
	}()
	base, err := c.restore(ctx, key)
	done = true
	if err != nil {
		c.release(ctx, k, token)
		return 0, fmt.Errorf("restore: %w", err)
	}
	v, err := restoredScript.Int64(ctx, c.rdb, k[:], n, ms(c.ttl), token, strconv.FormatInt(base, 10), ms(c.lease))
	if err != nil {
		c.release(ctx, k, token)
		return 0, err
	}
	return v, nil
}

// release gives the restore lease back and tells the waiters to look again
// (best effort, at most one second, whatever ctx says).
func (c *Counter) release(ctx context.Context, k entryKeys, token string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_, _ = releaseScript.Int64(rctx, c.rdb, k[:], token, ms(c.lease), 0)
}
