package cache

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed incr.lua
	incrLua    string
	incrScript = script.New("cache incr", incrLua)

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
	return &Counter{rdb: rdb, name: name, keys: keys.New(o.prefix), ttl: o.ttl, lease: o.lease, restore: restore}, nil
}

// Name returns the counters' name.
func (c *Counter) Name() string { return c.name }

// Incr adds n (which may be negative) to the counter key and returns its new
// value; the counter then lives for the TTL. If the counter is missing, one
// caller (in any process) restores it from the system of record and sets it
// to the restored value plus its n, atomically; concurrent callers wait for
// the restore without polling and then add theirs, so the restore runs once
// and no increment is lost. If the restore fails, its caller gets the error
// (its n is not added) and a waiter takes over; if the restorer hangs or
// dies, a waiter takes over when the lease ends. A restore that outlasts its
// lease still adds its n, but not its restored value if another restore
// was first. An Incr that fails with a network error may or may not have
// counted.
//
// Round trips: 1 when the counter exists; 2 for the restorer (look, set),
// 3 for a waiter (look, wait, add).
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
			return c.restoreAndAdd(ctx, key, k, token, n)
		case stateWait:
			if _, _, err := await(ctx, c.rdb, k[2], blockFor(st.num, c.lease)); err != nil {
				return 0, fmt.Errorf("wait for restore: %w", err)
			}
			// Restored, abandoned, or the lease ended: look again.
		default:
			return 0, fmt.Errorf("script %s: unexpected state %d", incrScript.Name(), st.state)
		}
	}
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
