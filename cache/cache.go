package cache

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	// ErrDecode is returned (wrapped, with the codec's error) when a stored
	// value cannot be decoded into the type asked for: by [Batch] reads
	// that have no loader, [Latest.List] and [Top.Range]. [Cache.Get]
	// treats such an entry as a miss instead (see there).
	ErrDecode = errors.New("cache: cannot decode stored value")
	// ErrNotExecuted is returned by [Result.Value] before its [Batch] was
	// executed.
	ErrNotExecuted = errors.New("cache: batch not executed")
)

var (
	//go:embed lease.lua
	leaseLua string

	//go:embed get.lua
	getLua    string
	getScript = script.New("cache get", leaseLua+getLua)

	//go:embed store.lua
	storeLua    string
	storeScript = script.New("cache store", storeLua)

	//go:embed release.lua
	releaseLua    string
	releaseScript = script.New("cache release", releaseLua)
)

// Codec encodes and decodes values. Its methods have the signatures of
// encoding/json's Marshal and Unmarshal (and of most encoding packages), so
// a codec is usually a two-line adapter. It must be safe for concurrent use.
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// JSON is the default [Codec]: encoding/json.
var JSON Codec = jsonCodec{}

// Client is the subset of go-redis this package uses.
type Client interface {
	redis.Scripter
	Do(ctx context.Context, args ...any) *redis.Cmd
	Get(ctx context.Context, key string) *redis.StringCmd
	BLMove(ctx context.Context, source, destination, srcpos, destpos string, timeout time.Duration) *redis.StringCmd
	SetNX(ctx context.Context, key string, value any, expiration time.Duration) *redis.BoolCmd
	LRange(ctx context.Context, key string, start, stop int64) *redis.StringSliceCmd
	ZRevRangeWithScores(ctx context.Context, key string, start, stop int64) *redis.ZSliceCmd
	Pipeline() redis.Pipeliner
	TxPipeline() redis.Pipeliner
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// Cache is a typed read-through cache of values of type T under one name,
// with stampede protection across processes. It is safe for concurrent use.
type Cache[T any] struct {
	rdb     Client
	name    string
	keys    keys.Space
	codec   Codec
	ttl     time.Duration
	lease   time.Duration
	refresh time.Duration
	grace   time.Duration
	log     *slog.Logger

	mu         sync.Mutex
	flights    map[string]*flight  // Gets in progress in this process, by key
	refreshing map[string]struct{} // keys this process checks or refreshes in the background
	bgRunning  int                 // background refreshes running
	bgIdle     chan struct{}       // closed when bgRunning drops to 0; nil while it is 0

	following atomic.Int64 // Gets waiting for another Get of this process (read by tests)
}

// flight is one Get in progress that concurrent Gets of the same key in
// this process join: they decode its payload (each its own copy) or get its
// error, or try again themselves if retry is set or the flight went stale.
type flight struct {
	done    chan struct{} // closed when the leader's Get has returned
	stale   chan struct{} // closed by a Set or Delete of the key meanwhile
	payload string
	err     error
	retry   bool // the leader panicked or its own ctx ended
}

// New returns the cache name of values of type T, backed by rdb. Options:
// [WithTTL], [WithCodec], [WithPrefix], [WithLease], [WithRefreshAhead],
// [WithStaleGrace], [WithLogger]. Every process that shares name (and
// prefix) must use the same type, codec and TTL options. It returns an error
// for an invalid name or option; a nil rdb is a programmer error and panics.
func New[T any](rdb Client, name string, opts ...Option) (*Cache[T], error) {
	if rdb == nil {
		panic("cache: New with nil client")
	}
	if err := checkName("cache", name); err != nil {
		return nil, err
	}
	o, err := build("cache "+name, []string{"WithPrefix", "WithTTL", "WithCodec", "WithLease",
		"WithRefreshAhead", "WithStaleGrace", "WithLogger"}, opts)
	if err != nil {
		return nil, err
	}
	if !o.ttlSet {
		o.ttl = DefaultTTL
	}
	if o.refresh >= o.ttl {
		return nil, fmt.Errorf("cache: cache %s: refresh window %v: must be shorter than the ttl %v", name, o.refresh, o.ttl)
	}
	return &Cache[T]{
		rdb: rdb, name: name, keys: keys.New(o.prefix), codec: o.codec,
		ttl: o.ttl, lease: o.lease, refresh: o.refresh, grace: o.grace, log: o.logger,
		flights: map[string]*flight{}, refreshing: map[string]struct{}{},
	}, nil
}

// Name returns the cache's name.
func (c *Cache[T]) Name() string { return c.name }

// Get returns the value cached under key. On a miss, exactly one caller in
// any process (the one that takes the entry's lease) calls load and stores
// its value for the TTL; the others wait for it without polling and receive
// the value it stored. If the loader fails (load returns an error, or its
// ctx ends), its caller gets the error, nothing is stored and a waiter in
// another process takes over at once; if it hangs or its process dies, a
// waiter takes over when the lease ([WithLease]) ends. A waiter waits as
// long as its ctx allows. A value loaded after the loader's ctx ended is
// still stored (within a second) for the waiters.
//
// Concurrent Gets of one key in one process share one Get: the first does
// the work, the others wait for it in memory, each with its own ctx, and
// receive its value, or its error if load failed (they do not call their
// own load then). If the first Get's ctx ended or its load panicked, one of
// them starts over instead. A Get that starts after a [Cache.Set] or
// [Cache.Delete] of the key has returned does not join a Get that started
// before it, and those that had joined one look again at once.
//
// If load panics, the lease is given back (waiters elsewhere take over at
// once) and the panic propagates to Get's caller. A background reload that
// panics or fails is logged ([WithLogger]). [Batch.Exec] re-panics in its
// caller's goroutine.
//
// With [WithRefreshAhead] or [WithStaleGrace], a Get that finds the entry
// near its end or stale returns that value at once and, if no other caller
// is doing so, reloads it in the background, bounded by the lease; a failed
// background reload is logged and tried again by a later Get, one second (or
// the lease, if shorter) later at the earliest.
//
// An entry that cannot be decoded into T (written by another version of the
// program, or by hand) is treated as a miss: it is dropped (unless it
// changed meanwhile), loaded again and overwritten; the decode error is
// logged. load's error is returned wrapped. If encoding the loaded value
// fails, that error is returned; if storing it fails, the value is returned
// and the failure logged. If Redis cannot be reached, Get returns the error
// without calling load (so an outage does not send every request to the
// system of record); fall back yourself if you want otherwise.
//
// A hit is a plain GET (with PTTL in the same round trip when refresh or
// grace is on): no script runs. A miss then runs the script that takes the
// lease or joins the waiters. Round trips: a hit 1 (an entry due for
// refresh: 1, plus 1 in the background to take the lease, and the reload);
// a miss 3 for the loader (read, look, store) and 3 for each waiter (read,
// look, wait), plus 1 for a waiter each time it must look again (the loader
// failed, the value was over 64 KiB, a Delete, the lease ended); a Get that
// joins another Get of its process makes none.
func (c *Cache[T]) Get(ctx context.Context, key string, load func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	if err := checkKey("get", key); err != nil {
		return zero, err
	}
	if load == nil {
		return zero, fmt.Errorf("cache: get %q: nil load function", key)
	}
	return c.shared(ctx, key, load)
}

// shared runs get for key, or joins the one in progress in this process.
func (c *Cache[T]) shared(ctx context.Context, key string, load func(context.Context) (T, error)) (T, error) {
	var zero T
	for {
		c.mu.Lock()
		f, ok := c.flights[key]
		if !ok {
			break // c.mu held: lead
		}
		c.mu.Unlock()
		if err := c.follow(ctx, f); err != nil {
			return zero, fmt.Errorf("cache: get %q: %w", key, err)
		}
		select {
		case <-f.stale: // a Set or Delete came after f read: look again
			continue
		default:
		}
		if f.retry {
			continue
		}
		if f.err != nil {
			return zero, f.err
		}
		return c.decode(f.payload)
	}
	f := &flight{done: make(chan struct{}), stale: make(chan struct{}), retry: true}
	c.flights[key] = f
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.flights[key] == f { // not replaced after a Set or Delete
			delete(c.flights, key)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	v, payload, err := c.get(ctx, key, load, nil)
	f.payload, f.err = payload, err
	f.retry = err != nil && ctx.Err() != nil // not the followers' problem
	return v, err
}

// follow waits until f's leader returns or f goes stale, or ctx ends.
func (c *Cache[T]) follow(ctx context.Context, f *flight) error {
	c.following.Add(1)
	defer c.following.Add(-1)
	select {
	case <-f.done:
	case <-f.stale:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// invalidate makes the Get of key in progress in this process, if any,
// stale after a Set or Delete: Gets that joined it look again, later ones
// do not join it, and its leader does not remove its successor.
func (c *Cache[T]) invalidate(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.flights[key]; ok {
		delete(c.flights, key)
		close(f.stale)
	}
}

// Set stores v under key for the TTL, in one round trip, whether or not the
// entry exists. A load in flight for key (which may have read older data)
// will not store its value, though its own caller still gets it; callers
// waiting for it, in any process, receive v (or a later value): in this
// process they look again, and a Get that starts after Set returns reads v.
func (c *Cache[T]) Set(ctx context.Context, key string, v T) error {
	if err := checkKey("set", key); err != nil {
		return err
	}
	payload, err := c.codec.Marshal(v)
	if err != nil {
		return fmt.Errorf("cache: set %q: encode: %w", key, err)
	}
	k := c.entryKeys(key)
	_, err = storeScript.Int64(ctx, c.rdb, k[:], "", payload, ms(c.ttl+c.grace), ms(c.lease), inlineMax)
	c.invalidate(key) // also on error: the script may have run
	if err != nil {
		return fmt.Errorf("cache: set %q: %w", key, err)
	}
	return nil
}

// Delete removes the entry under key, in one round trip. A load in flight
// for key will not store its value (it may have read the data the Delete
// invalidates), though its own caller still gets it; callers waiting for
// it, in any process, look again, and one of them loads.
func (c *Cache[T]) Delete(ctx context.Context, key string) error {
	if err := checkKey("delete", key); err != nil {
		return err
	}
	k := c.entryKeys(key)
	_, err := releaseScript.Int64(ctx, c.rdb, k[:], "", ms(c.lease), 0)
	c.invalidate(key) // also on error: the script may have run
	if err != nil {
		return fmt.Errorf("cache: delete %q: %w", key, err)
	}
	return nil
}

// Wait blocks until no background refresh of c is running: those running
// when it is called have ended, and so have any that Gets started
// meanwhile (each is bounded by the lease). It may be called concurrently
// with Get, but Gets that keep starting refreshes can keep it waiting: at
// shutdown, call it after the last Get. A Get after Wait returned may start
// another refresh.
func (c *Cache[T]) Wait() {
	c.mu.Lock()
	idle := c.bgIdle
	c.mu.Unlock()
	if idle != nil {
		<-idle
	}
}

// goBackground runs fn in a goroutine that [Cache.Wait] waits for.
func (c *Cache[T]) goBackground(fn func()) {
	c.mu.Lock()
	c.bgRunning++
	if c.bgIdle == nil {
		c.bgIdle = make(chan struct{})
	}
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			c.bgRunning--
			if c.bgRunning == 0 {
				close(c.bgIdle)
				c.bgIdle = nil
			}
			c.mu.Unlock()
		}()
		fn()
	}()
}

// The states get.lua returns.
const (
	stateHit     = 0
	stateRefresh = 1
	stateLoad    = 2
	stateWait    = 3
)

type step struct {
	state   int64
	payload string
	num     int64 // stateWait: the lease's remaining ms; incr.lua's stateHit: the counter
}

// lookup runs get.lua once. bad, if not nil, is a payload the caller could
// not decode, which the script drops. wait says whether the caller will
// wait if another holds the lease (and so counts as a waiter).
func (c *Cache[T]) lookup(ctx context.Context, k entryKeys, token string, bad *string, wait bool) (step, error) {
	flag, badPayload, waits := "0", "", "0"
	if bad != nil {
		flag, badPayload = "1", *bad
	}
	if wait {
		waits = "1"
	}
	v, err := getScript.Run(ctx, c.rdb, k[:], token, ms(c.lease), c.refresh.Milliseconds(), c.grace.Milliseconds(), flag, badPayload, waits)
	if err != nil {
		return step{}, err
	}
	return parseStep(getScript.Name(), v)
}

// parseStep reads the reply of get.lua or incr.lua: {state, payload or
// number}.
func parseStep(name string, v any) (step, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return step{}, fmt.Errorf("script %s: want an array reply, got %T", name, v)
	}
	var s step
	if s.state, ok = arr[0].(int64); !ok {
		return step{}, fmt.Errorf("script %s: want an integer state, got %T", name, arr[0])
	}
	switch {
	case s.state == stateLoad:
		return s, nil
	case len(arr) != 2:
		return step{}, fmt.Errorf("script %s: state %d: want 2 values, got %d", name, s.state, len(arr))
	case s.state == stateHit || s.state == stateRefresh:
		switch p := arr[1].(type) {
		case string:
			s.payload = p
		case int64: // incr.lua's counted value
			s.num = p
		default:
			return step{}, fmt.Errorf("script %s: want a payload, got %T", name, arr[1])
		}
	case s.state == stateWait:
		if s.num, ok = arr[1].(int64); !ok {
			return step{}, fmt.Errorf("script %s: want the lease's pttl, got %T", name, arr[1])
		}
	default:
		return step{}, fmt.Errorf("script %s: unknown state %d", name, s.state)
	}
	return s, nil
}

func (c *Cache[T]) get(ctx context.Context, key string, load func(context.Context) (T, error), bad *string) (T, string, error) {
	var zero T
	if bad == nil { // the fast path: a plain read
		payload, found, due, err := c.read(ctx, c.valKey(key))
		if err != nil {
			return zero, "", fmt.Errorf("cache: get %q: %w", key, err)
		}
		if found {
			v, err := c.decode(payload)
			if err == nil {
				if due {
					c.checkDue(ctx, key, load)
				}
				return v, payload, nil
			}
			c.log.WarnContext(ctx, "cache: undecodable entry treated as a miss", "cache", c.name, "key", key, "err", err)
			bad = &payload
		}
	}
	k := c.entryKeys(key)
	token := uuid.NewString()
	for {
		if err := ctx.Err(); err != nil {
			return zero, "", fmt.Errorf("cache: get %q: %w", key, err)
		}
		st, err := c.lookup(ctx, k, token, bad, true)
		if err != nil {
			// The script may have run (and taken the lease) before the
			// reply was lost: give the lease back so nobody waits for it.
			c.release(ctx, k, token, 0)
			return zero, "", fmt.Errorf("cache: get %q: %w", key, err)
		}
		bad = nil
		switch st.state {
		case stateHit, stateRefresh:
			v, err := c.decode(st.payload)
			if err != nil {
				c.log.WarnContext(ctx, "cache: undecodable entry treated as a miss", "cache", c.name, "key", key, "err", err)
				if st.state == stateRefresh { // we hold the lease: load now
					return c.load(ctx, key, k, token, load)
				}
				bad = &st.payload
				continue
			}
			if st.state == stateRefresh {
				c.goRefresh(ctx, key, k, token, load)
			}
			return v, st.payload, nil
		case stateLoad:
			return c.load(ctx, key, k, token, load)
		case stateWait:
			elem, ok, err := await(ctx, c.rdb, k[2], blockFor(st.num, c.lease))
			if err != nil {
				return zero, "", fmt.Errorf("cache: get %q: wait: %w", key, err)
			}
			if ok && len(elem) > 0 && elem[0] == 'v' {
				payload := elem[1:]
				v, err := c.decode(payload)
				if err == nil {
					return v, payload, nil
				}
				c.log.WarnContext(ctx, "cache: undecodable value from the loader treated as a miss", "cache", c.name, "key", key, "err", err)
				bad = &payload
			}
			// 'r', a timeout (the lease may have ended), or undecodable: look again.
		}
	}
}

// read reads the entry val: its payload, whether it exists, and whether it
// is due for refresh (within the refresh window of its end, or stale). It
// is a GET, plus a PTTL in the same round trip when refresh or grace is on.
func (c *Cache[T]) read(ctx context.Context, val string) (payload string, found, due bool, err error) {
	if c.refresh+c.grace == 0 {
		payload, err = c.rdb.Get(ctx, val).Result()
	} else {
		p := c.rdb.Pipeline()
		get, pttl := p.Get(ctx, val), p.PTTL(ctx, val)
		_, _ = p.Exec(ctx)
		payload, err = get.Result()
		if left, perr := pttl.Result(); err == nil && perr == nil {
			due = c.isDue(left)
		}
	}
	switch {
	case err == redis.Nil:
		return "", false, false, nil
	case err != nil:
		return "", false, false, err
	}
	return payload, true, due, nil
}

// isDue reports whether an entry with pttl left (its TTL includes the
// grace) is due for refresh.
func (c *Cache[T]) isDue(pttl time.Duration) bool {
	return c.refresh+c.grace > 0 && pttl >= 0 && pttl <= c.refresh+c.grace
}

// load runs the loader as the lease holder and stores its value, which it
// returns with its encoding.
func (c *Cache[T]) load(ctx context.Context, key string, k entryKeys, token string, load func(context.Context) (T, error)) (T, string, error) {
	var zero T
	done := false
	defer func() {
		if !done { // load panicked
			c.release(ctx, k, token, 0)
		}
	}()
	v, err := load(ctx)
	done = true
	if err != nil {
		c.release(ctx, k, token, 0)
		return zero, "", fmt.Errorf("cache: get %q: load: %w", key, err)
	}
	payload, err := c.store(ctx, key, k, token, v)
	switch {
	case errors.Is(err, errEncode):
		c.release(ctx, k, token, 0)
		return zero, "", fmt.Errorf("cache: get %q: %w", key, err)
	case err != nil:
		// The store may not have run: give the lease back, so that the
		// waiters look again at once instead of sitting out the lease.
		c.release(ctx, k, token, 0)
		c.log.WarnContext(ctx, "cache: loaded value not stored", "cache", c.name, "key", key, "err", err)
	}
	return v, payload, nil
}

// loadLogged runs load as c.load does, in the background: an error, or a
// panic (after which c.load has given the lease back), is logged.
func (c *Cache[T]) loadLogged(ctx context.Context, key string, k entryKeys, token string, load func(context.Context) (T, error)) {
	var err error
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cache: get %q: load panicked: %v", key, r)
		}
		if err != nil {
			c.log.WarnContext(ctx, "cache: background load failed", "cache", c.name, "key", key, "err", err)
		}
	}()
	_, _, err = c.load(ctx, key, k, token, load)
}

var errEncode = errors.New("encode")

// store stores v as the lease holder token and returns its encoding. A
// lease that is no longer ours (the load outlasted it, or a Set or Delete
// came first) is not an error: the value is just not stored (logged at
// debug level). Like release, it runs for at most a second whatever ctx
// says: the value is loaded, and the waiters are owed it (or a wake-up).
func (c *Cache[T]) store(ctx context.Context, key string, k entryKeys, token string, v T) (string, error) {
	b, err := c.codec.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errEncode, err)
	}
	payload := string(b)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	n, err := storeScript.Int64(sctx, c.rdb, k[:], token, payload, ms(c.ttl+c.grace), ms(c.lease), inlineMax)
	if err != nil {
		return payload, err
	}
	if n == 0 {
		c.log.DebugContext(ctx, "cache: lease lost before the store; value not stored", "cache", c.name, "key", key)
	}
	return payload, nil
}

// release gives the lease token back (best effort, at most one second,
// whatever ctx says); with hold > 0 and nobody waiting it keeps the lease
// that long instead.
func (c *Cache[T]) release(ctx context.Context, k entryKeys, token string, hold time.Duration) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_, _ = releaseScript.Int64(rctx, c.rdb, k[:], token, ms(c.lease), hold.Milliseconds())
}

// refreshHold is how long a failed background refresh keeps the lease when
// nobody waits, so that a failing loader is not called on every Get.
func (c *Cache[T]) refreshHold() time.Duration { return min(c.lease, time.Second) }

// goRefresh reloads key in the background while holding the lease token.
func (c *Cache[T]) goRefresh(ctx context.Context, key string, k entryKeys, token string, load func(context.Context) (T, error)) {
	c.goBackground(func() {
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.lease)
		defer cancel()
		c.refreshHeld(bctx, key, k, token, load)
	})
}

// checkDue starts, in the background, the look that takes the lease of an
// entry due for refresh, if no other caller has it, and then reloads the
// entry. The caller has its value already: the look (one round trip) and
// the reload are off its path. One check at a time per key and process.
func (c *Cache[T]) checkDue(ctx context.Context, key string, load func(context.Context) (T, error)) {
	if !c.startRefresh(key) {
		return
	}
	c.goBackground(func() {
		defer c.endRefresh(key)
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.lease)
		defer cancel()
		k := c.entryKeys(key)
		token := uuid.NewString()
		st, err := c.lookup(bctx, k, token, nil, false)
		switch {
		case err != nil:
			c.release(bctx, k, token, 0)
			c.log.WarnContext(bctx, "cache: background refresh failed", "cache", c.name, "key", key, "err", err)
		case st.state == stateRefresh:
			c.refreshHeld(bctx, key, k, token, load)
		case st.state == stateLoad: // expired meanwhile: we hold the lease, so load
			c.loadLogged(bctx, key, k, token, load)
		}
		// stateHit: fresh again, or another caller refreshes it; stateWait:
		// expired, and another caller loads it (not counted as a waiter).
	})
}

func (c *Cache[T]) startRefresh(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.refreshing[key]; ok {
		return false
	}
	c.refreshing[key] = struct{}{}
	return true
}

func (c *Cache[T]) endRefresh(key string) {
	c.mu.Lock()
	delete(c.refreshing, key)
	c.mu.Unlock()
}

// refreshHeld reloads key while holding the lease token (ctx is bounded by
// the lease). A failure is logged; the lease is then held for
// refreshHold, so that a failing loader is not called on every Get.
func (c *Cache[T]) refreshHeld(ctx context.Context, key string, k entryKeys, token string, load func(context.Context) (T, error)) {
	var (
		v   T
		err error
	)
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("load panicked: %v", r)
			}
		}()
		v, err = load(ctx)
	}()
	if err == nil {
		_, err = c.store(ctx, key, k, token, v)
	}
	if err != nil {
		c.log.WarnContext(ctx, "cache: background refresh failed", "cache", c.name, "key", key, "err", err)
		c.release(ctx, k, token, c.refreshHold())
	}
}

func (c *Cache[T]) decode(payload string) (T, error) {
	var v T
	if err := c.codec.Unmarshal([]byte(payload), &v); err != nil {
		var zero T
		return zero, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	return v, nil
}
