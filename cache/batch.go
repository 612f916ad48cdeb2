package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
)

// fillConcurrency bounds the loads and restores a [Batch.Exec] runs at once
// for the items its pipeline found missing.
const fillConcurrency = 8

// Batch reads cache entries, counters, latest lists and rankings, of any
// types, in one pipeline: the blog's get_cache, which shows a user's session
// with the view counts of a page of jobs. Queue reads with [Cache.Read],
// [Counter.Read], [Latest.Read] and [Top.Read], run them with [Batch.Exec],
// then take each value from its [Result]. A Batch is not safe for
// concurrent use and runs once.
type Batch struct {
	rdb   Client
	items []batchItem
	ran   bool
}

// NewBatch returns an empty Batch that will run on rdb. A nil rdb panics.
func NewBatch(rdb Client) *Batch {
	if rdb == nil {
		panic("cache: NewBatch with nil client")
	}
	return &Batch{rdb: rdb}
}

// Len returns the number of reads queued.
func (b *Batch) Len() int { return len(b.items) }

// Result is the outcome of one read queued in a [Batch].
type Result[T any] struct {
	val  T
	ok   bool
	err  error
	done bool
}

// Value returns the value read, whether it was found, and the read's error.
// Before the Batch ran it returns [ErrNotExecuted].
func (r *Result[T]) Value() (T, bool, error) {
	if !r.done {
		var zero T
		return zero, false, ErrNotExecuted
	}
	return r.val, r.ok, r.err
}

func (r *Result[T]) set(v T, ok bool, err error) { r.val, r.ok, r.err, r.done = v, ok, err, true }

// batchItem is one queued read.
type batchItem interface {
	// queue adds the item's commands to the pipeline (none for an invalid
	// read, whose result is set already).
	queue(ctx context.Context, p redis.Pipeliner)
	// settle reads the replies into the result, or returns a function that
	// completes the item by its own path (a load, a restore).
	settle(ctx context.Context) (fill func(ctx context.Context))
	// err returns the item's error once settled (and filled).
	err() error
}

// Exec runs the queued reads in one pipeline, then completes the items it
// found missing: a cache entry read with a loader goes through
// [Cache.Get] (stampede protection included) and a counter with a restore
// function through [Counter.Get], concurrently (at most 8 at once); an
// entry due for refresh is refreshed in the background, as by Get. It
// returns the items' errors joined (each is also in its Result).
//
// A loader or restore function that panics in one of Exec's goroutines
// gives its lease back, as in [Cache.Get], and the panic reaches the
// caller: once the other completions have ended, Exec panics with the same
// value.
//
// Round trips: 1 when nothing is missing (on Redis Cluster go-redis splits
// the pipeline by node and sends the parts in parallel: one round trip per
// node holding a key), plus what each completion costs.
func (b *Batch) Exec(ctx context.Context) error {
	if b.ran {
		return errors.New("cache: batch executed already")
	}
	b.ran = true
	p := b.rdb.Pipeline()
	for _, it := range b.items {
		it.queue(ctx, p)
	}
	if p.Len() > 0 {
		// Each command carries its own error (redis.Nil for a missing key,
		// the network error for all): the items read them.
		_, _ = p.Exec(ctx)
	}
	var fills []func(context.Context)
	for _, it := range b.items {
		if f := it.settle(ctx); f != nil {
			fills = append(fills, f)
		}
	}
	if len(fills) > 0 {
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			panicked bool
			pv       any // the first panic's value
		)
		sem := make(chan struct{}, fillConcurrency)
		for _, f := range fills {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				defer func() {
					if r := recover(); r != nil {
						mu.Lock()
						if !panicked {
							panicked, pv = true, r
						}
						mu.Unlock()
					}
				}()
				f(ctx)
			})
		}
		wg.Wait()
		if panicked {
			panic(pv)
		}
	}
	var errs []error
	for _, it := range b.items {
		if err := it.err(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// invalid is a read rejected when it was queued.
type invalid[T any] struct{ r *Result[T] }

func (invalid[T]) queue(context.Context, redis.Pipeliner)       {}
func (invalid[T]) settle(context.Context) func(context.Context) { return nil }
func (it invalid[T]) err() error                                { return it.r.err }

func reject[T any](b *Batch, err error) *Result[T] {
	r := &Result[T]{}
	r.set(*new(T), false, err)
	b.items = append(b.items, invalid[T]{r})
	return r
}

// ---- cache entries ----

type entryRead[T any] struct {
	c    *Cache[T]
	key  string
	load func(context.Context) (T, error)
	get  *redis.StringCmd
	pttl *redis.DurationCmd
	r    *Result[T]
}

// Read queues, in b, a read of the entry key. After [Batch.Exec], the
// Result holds the value and true on a hit. On a miss (or an undecodable
// entry) with a non-nil load, Exec loads it as [Cache.Get] does; with a nil
// load the Result holds false (or an error wrapping [ErrDecode]). A hit due
// for refresh ([WithRefreshAhead], [WithStaleGrace]) is returned and, given
// a load, refreshed in the background.
func (c *Cache[T]) Read(b *Batch, key string, load func(ctx context.Context) (T, error)) *Result[T] {
	if err := checkKey("read", key); err != nil {
		return reject[T](b, fmt.Errorf("%w (cache %s)", err, c.name))
	}
	it := &entryRead[T]{c: c, key: key, load: load, r: &Result[T]{}}
	b.items = append(b.items, it)
	return it.r
}

func (it *entryRead[T]) queue(ctx context.Context, p redis.Pipeliner) {
	k := it.c.valKey(it.key)
	it.get = p.Get(ctx, k)
	if it.c.refresh+it.c.grace > 0 {
		it.pttl = p.PTTL(ctx, k)
	}
}

func (it *entryRead[T]) settle(ctx context.Context) func(context.Context) {
	c := it.c
	var zero T
	payload, err := it.get.Result()
	if _, _, lease := parseMark(payload); err == nil && lease {
		err = redis.Nil // a caller is loading it: a miss
	}
	switch {
	case err == redis.Nil && it.load == nil:
		it.r.set(zero, false, nil)
		return nil
	case err == redis.Nil:
		return func(ctx context.Context) {
			v, err := c.shared(ctx, it.key, it.load)
			it.r.set(v, err == nil, err)
		}
	case err != nil:
		err = script.WrongType(ctx, c.rdb, err, c.valKey(it.key), "cache entry", "string")
		it.r.set(zero, false, fmt.Errorf("cache: read %q (cache %s): %w", it.key, c.name, err))
		return nil
	}
	v, err := c.decode(payload)
	if err != nil {
		if it.load == nil {
			it.r.set(zero, false, fmt.Errorf("cache: read %q (cache %s): %w", it.key, c.name, err))
			return nil
		}
		c.log().WarnContext(ctx, "cache: undecodable entry treated as a miss", "cache", c.name, "key", it.key, "err", err)
		return func(ctx context.Context) {
			v, _, err := c.get(ctx, it.key, it.load, &payload)
			it.r.set(v, err == nil, err)
		}
	}
	it.r.set(v, true, nil)
	if it.pttl != nil && it.load != nil {
		if left, err := it.pttl.Result(); err == nil && c.isDue(left) {
			c.checkDue(ctx, it.key, it.load)
		}
	}
	return nil
}

func (it *entryRead[T]) err() error { return it.r.err }

// ---- counters ----

type counterRead struct {
	c   *Counter
	key string
	get *redis.StringCmd
	r   *Result[int64]
}

// Read queues, in b, a read of the counter key. After [Batch.Exec], the
// Result holds its value and true; a missing counter is restored by Exec as
// [Counter.Get] does, or, without a restore function, gives 0 and false.
// Unlike Get, a counter found by the pipeline does not have its TTL renewed.
func (c *Counter) Read(b *Batch, key string) *Result[int64] {
	if err := checkKey("counter read", key); err != nil {
		return reject[int64](b, fmt.Errorf("%w (counter %s)", err, c.name))
	}
	it := &counterRead{c: c, key: key, r: &Result[int64]{}}
	b.items = append(b.items, it)
	return it.r
}

func (it *counterRead) queue(ctx context.Context, p redis.Pipeliner) {
	it.get = p.Get(ctx, it.c.counterKeys(it.key).count)
}

func (it *counterRead) settle(ctx context.Context) func(context.Context) {
	s, err := it.get.Result()
	switch {
	case err == redis.Nil && it.c.restore == nil:
		it.r.set(0, false, nil)
		return nil
	case err == redis.Nil:
		return func(ctx context.Context) {
			v, err := it.c.Get(ctx, it.key)
			it.r.set(v, err == nil, err)
		}
	case err != nil:
		err = script.WrongType(ctx, it.c.rdb, err, it.c.counterKeys(it.key).count, "cache counter", "string")
		it.r.set(0, false, fmt.Errorf("cache: counter %s read %q: %w", it.c.name, it.key, err))
		return nil
	}
	n, ok := script.ParseInt(s) // as INCRBY reads it (incr.lua, Get)
	if !ok {
		err = &ria.KeyError{Role: "cache counter", Key: it.c.counterKeys(it.key).count, Got: strconv.Quote(s),
			Want: "an integer", Err: ria.ErrCorrupt}
		it.r.set(0, false, fmt.Errorf("cache: counter %s read %q: %w: %w", it.c.name, it.key, ErrDecode, err))
		return nil
	}
	it.r.set(n, true, nil)
	return nil
}

func (it *counterRead) err() error { return it.r.err }

// ---- latest lists ----

type latestRead[T any] struct {
	l   *Latest[T]
	key string
	cmd *redis.StringSliceCmd
	r   *Result[[]T]
}

// Read queues, in b, a read of the list key, newest first. After
// [Batch.Exec], the Result holds the values and whether the list exists.
func (l *Latest[T]) Read(b *Batch, key string) *Result[[]T] {
	if err := checkKey("latest read", key); err != nil {
		return reject[[]T](b, fmt.Errorf("%w (latest %s)", err, l.name))
	}
	it := &latestRead[T]{l: l, key: key, r: &Result[[]T]{}}
	b.items = append(b.items, it)
	return it.r
}

func (it *latestRead[T]) queue(ctx context.Context, p redis.Pipeliner) {
	it.cmd = p.LRange(ctx, it.l.listKey(it.key), 0, int64(it.l.n)-1)
}

func (it *latestRead[T]) settle(ctx context.Context) func(context.Context) {
	raw, err := it.cmd.Result()
	err = script.WrongType(ctx, it.l.rdb, err, it.l.listKey(it.key), "cache latest list", "list")
	if err == nil {
		var vs []T
		if vs, err = it.l.decode(raw); err == nil {
			it.r.set(vs, len(vs) > 0, nil)
			return nil
		}
	}
	it.r.set(nil, false, fmt.Errorf("cache: latest %s read %q: %w", it.l.name, it.key, err))
	return nil
}

func (it *latestRead[T]) err() error { return it.r.err }

// ---- rankings ----

type topRead[T any] struct {
	t   *Top[T]
	key string
	n   int
	cmd *redis.ZSliceCmd
	r   *Result[[]Ranked[T]]
}

// Read queues, in b, a read of the n highest-scored members of the ranking
// key, as [Top.Range] (n at least 1 and at most [MaxN]). After [Batch.Exec], the Result holds them and whether
// the ranking exists.
func (t *Top[T]) Read(b *Batch, key string, n int) *Result[[]Ranked[T]] {
	if err := checkKey("top read", key); err != nil {
		return reject[[]Ranked[T]](b, fmt.Errorf("%w (top %s)", err, t.name))
	}
	if n < 1 || n > MaxN {
		return reject[[]Ranked[T]](b, fmt.Errorf("cache: top %s read %q: n %d: must be at least 1 and at most %d", t.name, key, n, MaxN))
	}
	it := &topRead[T]{t: t, key: key, n: n, r: &Result[[]Ranked[T]]{}}
	b.items = append(b.items, it)
	return it.r
}

func (it *topRead[T]) queue(ctx context.Context, p redis.Pipeliner) {
	it.cmd = p.ZRevRangeWithScores(ctx, it.t.rankKey(it.key), 0, int64(it.n)-1)
}

func (it *topRead[T]) settle(ctx context.Context) func(context.Context) {
	zs, err := it.cmd.Result()
	err = script.WrongType(ctx, it.t.rdb, err, it.t.rankKey(it.key), "cache top ranking", "zset")
	if err == nil {
		var rs []Ranked[T]
		if rs, err = it.t.decode(zs); err == nil {
			it.r.set(rs, len(rs) > 0, nil)
			return nil
		}
	}
	it.r.set(nil, false, fmt.Errorf("cache: top %s read %q: %w", it.t.name, it.key, err))
	return nil
}

func (it *topRead[T]) err() error { return it.r.err }
