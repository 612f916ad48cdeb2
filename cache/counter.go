package cache

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed incr.lua
	incrLua string
	// incrScript adds n != 0: a re-send is answered from a record.
	incrScript = script.NewOnce("cache incr", incrLua)
	// peekScript adds 0 (Get), naturally idempotent.
	peekScript = script.New("cache incr", incrLua)

	//go:embed restored.lua
	restoredLua    string
	restoredScript = script.NewOnce("cache restored", restoredLua)

	//go:embed unlease.lua
	unleaseLua    string
	unleaseScript = script.New("cache unlease", unleaseLua)
)

// ErrOverflow is returned (wrapped) by [Counter.Incr] when adding n would
// take the counter beyond the range of an int64; nothing was added.
var ErrOverflow = errors.New("cache: counter would overflow")

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

	beforeBlock func() // test hook: called between a waiter's registration and its BLMOVE
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
// hangs or dies, a waiter takes over when the lease ends. A restore that
// outlasts its lease still adds its n, but not its restored value if
// another restore was first.
//
// An Incr counts exactly once even when go-redis re-sends it after a lost
// reply: the first run records its reply for the client's retry window
// (see the package doc, "Lost replies") and a re-send is answered from the
// record. If every attempt lost its reply, the error wraps
// [ria.ErrOutcomeUnknown]: it may or may not have counted. A sum beyond
// the int64 range returns [ErrOverflow], and a counter key that holds
// something else than an integer a [*ria.KeyError]; neither adds anything.
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
// does (Get is Incr of 0, which needs no record to answer a re-send);
// reading a counter renews its TTL. Round trips as for Incr.
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

// run runs incr.lua once: as a once-script for n != 0, plainly for n = 0.
func (c *Counter) run(ctx context.Context, k counterKeys, n int64, token string) (step, error) {
	ks := []string{k.count, k.lease, k.wake}
	var (
		v   any
		err error
	)
	if n == 0 {
		v, err = peekScript.Run(ctx, c.rdb, ks, n, ms(c.ttl), token, ms(c.lease))
	} else {
		v, err = incrScript.RunOnce(ctx, c.rdb, c.keys.Once(k.entity), ks, n, ms(c.ttl), token, ms(c.lease))
	}
	if err != nil {
		return step{}, counterError(script.Unknown(err))
	}
	if arr, ok := v.([]any); ok && len(arr) == 2 {
		if s, ok := arr[1].(string); ok { // a value beyond 2^53
			num, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil {
				return step{}, fmt.Errorf("script %s: counter %q: %w", incrScript.Name(), s, perr)
			}
			arr[1] = num
		}
	}
	return parseStep(incrScript.Name(), v)
}

// counterError maps the overflow reply of incr.lua and restored.lua to
// ErrOverflow.
func counterError(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) && strings.Contains(rerr.Error(), "ERANGE ria counter") {
		return fmt.Errorf("%w: %w", ErrOverflow, err)
	}
	return err
}

func (c *Counter) incr(ctx context.Context, key string, n int64) (int64, error) {
	k := c.counterKeys(key)
	token := ""
	if c.restore != nil {
		token = script.Nonce()
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
		st, err := c.run(ctx, k, n, token)
		if err != nil {
			if token != "" && !isKeyError(err) && !errors.Is(err, ErrOverflow) {
				// The script may have taken the lease before its reply
				// was lost (the error wraps ria.ErrOutcomeUnknown): give
				// it back so that nobody waits for it.
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
			if err := c.awaitRestore(ctx, key, k.wake+st.token, blockFor(st.num, c.lease)); err != nil {
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
func (c *Counter) restoreShared(ctx context.Context, key string, k counterKeys, token string, n int64) (int64, error) {
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
// waits already, else in a blocking read of wake, the wake list of the
// restorer's lease, on which incr.lua registered this caller.
func (c *Counter) awaitRestore(ctx context.Context, key, wake string, d time.Duration) error {
	p, mine := c.begin(key, d)
	if !mine {
		return c.follow(ctx, key, p)
	}
	defer c.end(key, p)
	if c.beforeBlock != nil {
		c.beforeBlock()
	}
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	_, _, err := await(ctx, c.rdb, wake, d)
	return err
}

// restoreAndAdd calls restore as the lease holder and sets the counter.
func (c *Counter) restoreAndAdd(ctx context.Context, key string, k counterKeys, token string, n int64) (int64, error) {
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
	v, err := c.restored(ctx, k, token, base, n)
	if err != nil {
		// Give the lease back, so that the waiters look again at once (and
		// meet the same error, if it is the counter's). If restored.lua
		// did run (its outcome is unknown), the lease is gone already and
		// this changes nothing.
		c.release(ctx, k, token)
	}
	return v, err
}

// restored runs restored.lua: the counter set to base + n (or n added to
// it if it exists by now), the lease ended and its waiters woken.
func (c *Counter) restored(ctx context.Context, k counterKeys, token string, base, n int64) (int64, error) {
	sum := base + n
	if (n > 0 && sum < base) || (n < 0 && sum > base) {
		return 0, fmt.Errorf("%w: restored %d plus %d", ErrOverflow, base, n)
	}
	v, err := restoredScript.RunOnce(ctx, c.rdb, c.keys.Once(k.entity), []string{k.count, k.lease, k.wake + token},
		n, ms(c.ttl), token, strconv.FormatInt(sum, 10), ms(c.lease))
	if err != nil {
		return 0, counterError(err)
	}
	switch v := v.(type) {
	case int64:
		return v, nil
	case string:
		num, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("script %s: counter %q: %w", restoredScript.Name(), v, err)
		}
		return num, nil
	}
	return 0, fmt.Errorf("script %s: want an integer reply, got %T", restoredScript.Name(), v)
}

// release gives the restore lease back and tells the waiters to look again
// (best effort, at most one second, whatever ctx says).
func (c *Counter) release(ctx context.Context, k counterKeys, token string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_, _ = unleaseScript.Int64(rctx, c.rdb, []string{k.lease, k.wake + token}, token, ms(c.lease))
}
