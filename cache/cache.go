package cache

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/group"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/near"
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
	//go:embed entry.lua
	entryLua string

	//go:embed store.lua
	storeLua    string
	storeScript = script.New("cache store", entryLua+storeLua)

	//go:embed release.lua
	releaseLua    string
	releaseScript = script.New("cache release", entryLua+releaseLua)

	//go:embed wait.lua
	waitLua    string
	waitScript = script.New("cache wait", entryLua+waitLua)

	//go:embed take.lua
	takeLua    string
	takeScript = script.New("cache take", entryLua+takeLua)

	//go:embed refresh.lua
	refreshLua    string
	refreshScript = script.New("cache refresh", entryLua+refreshLua)
)

// markPrefix starts a lease marker, what an entry holds while a caller
// loads it: markPrefix + the loader's token, + ":w" once a waiter has
// registered (entry.lua's MARK). No encoded value may start with it: Set
// and a load refuse one that does.
const markPrefix = "\x00ria:lease:"

var (
	// tokenPrefix starts the lease tokens of this process: random, so that
	// no other process makes the same.
	tokenPrefix = func() string {
		b := make([]byte, 8)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		return hex.EncodeToString(b) + "."
	}()
	tokenSeq atomic.Uint64
)

// newMarker returns a new lease marker: markPrefix and a token no other
// call of any process uses. A Get makes one whether it hits or not (its
// first command carries it), in one allocation.
func newMarker() string {
	var buf [64]byte
	b := append(buf[:0], markPrefix...)
	b = append(b, tokenPrefix...)
	b = strconv.AppendUint(b, tokenSeq.Add(1), 36)
	return string(b)
}

// parseMark returns the token of the lease marker v and whether a waiter
// registered on it; ok is false if v is not a marker (it is a value).
func parseMark(v string) (token string, waited, ok bool) {
	rest, ok := strings.CutPrefix(v, markPrefix)
	if !ok {
		return "", false, false
	}
	if t, w := strings.CutSuffix(rest, ":w"); w {
		return t, true, true
	}
	return rest, false, true
}

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

// Client is the subset of go-redis this package uses. *redis.Client,
// *redis.ClusterClient and *redis.Ring satisfy it.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd

	Do(ctx context.Context, args ...any) *redis.Cmd
	// Scan lists counters (Counter.Keys): on a Cluster or Ring, on every
	// node.
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
	BLMove(ctx context.Context, source, destination, srcpos, destpos string, timeout time.Duration) *redis.StringCmd
	LRange(ctx context.Context, key string, start, stop int64) *redis.StringSliceCmd
	ZRevRangeWithScores(ctx context.Context, key string, start, stop int64) *redis.ZSliceCmd
	Pipeline() redis.Pipeliner
	// Process sends a claim (the first command of a Get) made alone.
	Process(ctx context.Context, cmd redis.Cmder) error
	// TxPipelined runs Limiter.Allow in MULTI/EXEC, which go-redis never
	// re-sends.
	TxPipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
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
	logger  *slog.Logger // nil: slog.Default()

	// flights are the Gets in progress in this process, by key, in shards
	// (by a hash of the key) so that Gets of different keys seldom meet on
	// a lock: every Get registers, a hit too.
	seed    maphash.Seed
	flights [flightShards]flightShard

	mu         sync.Mutex
	refreshing map[string]struct{} // keys this process checks or refreshes in the background
	bgRunning  int                 // background refreshes running
	bgIdle     chan struct{}       // closed when bgRunning drops to 0; nil while it is 0

	leaseArg any // ms(lease), boxed once

	following atomic.Int64 // Gets waiting for another Get of this process (read by tests)
	waiting   atomic.Int64 // Gets blocked on a wake list (read by tests)

	beforeBlock func() // test hook: called between a waiter's registration and its BLMOVE

	near *near.Cache // WithNear; nil: off

	claims *group.Group[*claimCmds] // claims made at the same time share a pipeline
}

// claimCmds is one claim's commands, sent alone or in a pipeline with
// other claims: SET NX PX GET, and the PTTL (nil when not read).
type claimCmds struct {
	set  *redis.Cmd
	pttl *redis.DurationCmd
}

// Claims of one Cache made at the same time share round trips: at most
// claimInflight pipelines on their way, each of at most claimBatch claims
// (see internal/group).
const (
	claimInflight = 2
	claimBatch    = 128
)

// flightShards is the number of shards of Cache.flights.
const flightShards = 64

// flightShard is a shard of the Gets in progress.
type flightShard struct {
	mu sync.Mutex
	m  map[string]*flight // made on first use
}

// flight is one Get in progress that concurrent Gets of the same key in
// this process join: they decode its payload (each its own copy) or get its
// error, or try again themselves if retry is set or the flight went stale.
// Its channels are made by the first Get that joins it (most Gets are
// joined by none), under its shard's lock.
type flight struct {
	done    chan struct{} // closed (if made) when the leader's Get has returned
	stale   chan struct{} // closed (if made) by a Set or Delete of the key meanwhile
	payload string        // written by the leader before done is closed
	err     error
	// retry: the leader panicked, its own ctx ended, or it loaded a value
	// that was not stored (a Set or Delete, maybe of another process, may
	// have ended its lease): look again.
	retry bool
}

// New returns the cache name of values of type T, backed by rdb. Options:
// [WithTTL], [WithCodec], [WithPrefix], [WithLease], [WithRefreshAhead],
// [WithStaleGrace], [WithLogger], [WithNear]. Every process that shares name
// (and prefix) must use the same type, codec and TTL options, and all or
// none of them WithNear. It returns an error for an invalid name or option
// (WithNear with a *redis.Ring, or a client without Subscribe); a nil rdb
// is a programmer error and panics. With WithNear, New starts a goroutine
// that [Cache.Close] stops.
func New[T any](rdb Client, name string, opts ...Option) (*Cache[T], error) {
	if rdb == nil {
		panic("cache: New with nil client")
	}
	if err := checkName("cache", name); err != nil {
		return nil, err
	}
	o, err := build("cache "+name, []string{"WithPrefix", "WithTTL", "WithCodec", "WithLease",
		"WithRefreshAhead", "WithStaleGrace", "WithLogger", "WithNear"}, opts)
	if err != nil {
		return nil, err
	}
	if !o.ttlSet {
		o.ttl = DefaultTTL
	}
	if o.refresh >= o.ttl {
		return nil, fmt.Errorf("cache: cache %s: refresh window %v: must be shorter than the ttl %v", name, o.refresh, o.ttl)
	}
	var sub near.Subscriber
	if o.nearSize > 0 {
		if sub, err = near.SubscriberOf(rdb); err != nil {
			return nil, fmt.Errorf("cache: cache %s: WithNear: %w", name, err)
		}
	}
	c := &Cache[T]{
		rdb: rdb, name: name, keys: keys.New(o.prefix), codec: o.codec,
		ttl: o.ttl, lease: o.lease, refresh: o.refresh, grace: o.grace, logger: o.logger, leaseArg: ms(o.lease),
		seed: maphash.MakeSeed(), refreshing: map[string]struct{}{},
	}
	c.claims = group.New(claimInflight, claimBatch, nil, c.sendClaims)
	if sub != nil {
		c.near, err = near.New(near.Config{Size: o.nearSize, MaxStale: o.nearStale, Channel: c.nearChannel(), Name: "cache", Logger: c.log})
		if err != nil { // cannot happen: the options were checked
			return nil, fmt.Errorf("cache: cache %s: %w", name, err)
		}
		c.near.Start(sub)
	}
	return c, nil
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
// them starts over instead; if its loaded value was not stored (a Set or
// Delete in any process ended its lease, the lease ran out, or the store
// failed), they look again: only the first Get's caller receives that
// value. A Get that starts after a [Cache.Set] or [Cache.Delete] of the
// key by this Cache has returned does not join a Get that started before
// it, and those that had joined one look again at once.
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
// program, or by hand) is treated as a miss: it is replaced by the lease
// (unless it changed meanwhile), loaded again and overwritten; the decode
// error is logged. load's error is returned wrapped. If encoding the loaded
// value fails (or its encoding starts with the bytes that mark a lease,
// "\x00ria:lease:"), that error is returned; if storing it fails, the value
// is returned and the failure logged. If Redis cannot be reached, Get
// returns the error without calling load (so an outage does not send every
// request to the system of record); fall back yourself if you want
// otherwise. A key of another type where the entry should be gives a
// [*ria.KeyError].
//
// With [WithNear], a key held in the near cache is returned from memory,
// decoded, with no round trip (see "Near cache" in the package doc), and
// a Get that reads Redis fills it.
//
// The first round trip both reads the entry and, on a miss, takes its
// lease: SET val <lease marker> NX PX lease GET, which answers a hit with
// the value, like a GET (with PTTL in the same round trip when refresh or
// grace is on); no script runs. Round trips: a hit 1 (an entry due for
// refresh: 1, plus 1 in the background to take the refresh lease, and the
// reload); a miss 2 for the loader (read and lease, store) and 3 for each
// waiter (read, register, wait), 2 if the value was stored by the time it
// registered, plus 2 for a waiter each time it must look again (the loader
// failed, the value was over 64 KiB, a Delete, the lease ended); a Get that
// joins another Get of its process makes none, unless it must look again. Gets of different keys
// made at the same time send their first commands together (see the
// package doc's Round trips).
func (c *Cache[T]) Get(ctx context.Context, key string, load func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	if err := checkKey("get", key); err != nil {
		return zero, err
	}
	if load == nil {
		return zero, fmt.Errorf("cache: get %q: nil load function", key)
	}
	if c.near != nil {
		if payload, ok := c.near.Lookup(key); ok {
			if v, err := c.decode(payload); err == nil {
				return v, nil
			}
			c.near.Drop(key) // cannot happen: it was decoded when cached
		}
	}
	return c.shared(ctx, key, load)
}

// shared runs get for key, or joins the one in progress in this process.
func (c *Cache[T]) shared(ctx context.Context, key string, load func(context.Context) (T, error)) (T, error) {
	var zero T
	sh := c.shard(key)
	for {
		sh.mu.Lock()
		f, ok := sh.m[key]
		if !ok {
			break // sh.mu held: lead
		}
		if f.done == nil {
			f.done, f.stale = make(chan struct{}), make(chan struct{})
		}
		done, stale := f.done, f.stale
		sh.mu.Unlock()
		if err := c.follow(ctx, done, stale); err != nil {
			return zero, fmt.Errorf("cache: get %q: %w", key, err)
		}
		select {
		case <-stale: // a Set or Delete came after f read: look again
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
	f := &flight{retry: true}
	if sh.m == nil {
		sh.m = map[string]*flight{}
	}
	sh.m[key] = f
	sh.mu.Unlock()
	defer func() {
		sh.mu.Lock()
		if sh.m[key] == f { // not replaced after a Set or Delete
			delete(sh.m, key)
		}
		if f.done != nil {
			close(f.done)
		}
		sh.mu.Unlock()
	}()
	var (
		v        T
		payload  string
		fresh    time.Time
		unstored bool
		err      error
		loaded   bool // false: load panicked
	)
	if c.near != nil {
		t := c.near.Begin(key)
		defer func() { c.near.Finish(key, t, payload, fresh, loaded && err == nil) }()
	}
	v, payload, fresh, unstored, err = c.getNear(ctx, key, load, nil)
	loaded = true
	f.payload, f.err = payload, err
	// A ctx that ended is not the followers' problem. A loaded value that
	// was not stored may be what a Set or Delete invalidated: only the
	// leader's caller gets it.
	f.retry = err != nil && ctx.Err() != nil || err == nil && unstored
	return v, err
}

// log returns the logger of WithLogger, or slog.Default().
func (c *Cache[T]) log() *slog.Logger {
	if c.logger != nil {
		return c.logger
	}
	return slog.Default()
}

// shard returns the shard of the Gets in progress of key.
func (c *Cache[T]) shard(key string) *flightShard {
	return &c.flights[maphash.String(c.seed, key)%flightShards]
}

// follow waits until a flight's leader returns (done) or the flight goes
// stale, or ctx ends.
func (c *Cache[T]) follow(ctx context.Context, done, stale <-chan struct{}) error {
	c.following.Add(1)
	defer c.following.Add(-1)
	select {
	case <-done:
	case <-stale:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// invalidate makes the Get of key in progress in this process, if any,
// stale after a Set or Delete: Gets that joined it look again, later ones
// do not join it, and its leader does not remove its successor.
func (c *Cache[T]) invalidate(key string) {
	if c.near != nil {
		c.near.Drop(key)
	}
	sh := c.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if f, ok := sh.m[key]; ok {
		delete(sh.m, key)
		if f.stale != nil {
			close(f.stale)
		}
	}
}

// Set stores v under key for the TTL, in one round trip, whether or not the
// entry exists. A load in flight for key (which may have read older data)
// will not store its value, though its own caller still gets it; callers
// waiting for it, in any process, receive v (or a later value): in this
// process they look again, and a Get that starts after Set returns reads v.
// It is idempotent, so go-redis may re-send it after a lost reply; if every
// attempt lost its reply, the error wraps [ria.ErrOutcomeUnknown]. An
// encoding that starts with the bytes that mark a lease ("\x00ria:lease:")
// is refused.
func (c *Cache[T]) Set(ctx context.Context, key string, v T) error {
	if err := checkKey("set", key); err != nil {
		return err
	}
	payload, err := c.encode(v)
	if err != nil {
		return fmt.Errorf("cache: set %q: %w", key, err)
	}
	k := c.entryKeys(key)
	ch, msg := c.nearArgs(key)
	_, err = storeScript.Int64(ctx, c.rdb, k.keys(), "s", "", payload, ms(c.ttl+c.grace), ms(c.lease), inlineMax, c.refreshFlag(), ch, msg)
	c.invalidate(key) // also on error: the script may have run
	if err != nil {
		return fmt.Errorf("cache: set %q: %w", key, script.Unknown(err))
	}
	return nil
}

// Delete removes the entry under key, in one round trip. A load in flight
// for key will not store its value (it may have read the data the Delete
// invalidates), though its own caller still gets it; callers waiting for
// it, in any process, look again, and one of them loads. It is idempotent;
// if every attempt lost its reply, the error wraps [ria.ErrOutcomeUnknown].
func (c *Cache[T]) Delete(ctx context.Context, key string) error {
	if err := checkKey("delete", key); err != nil {
		return err
	}
	k := c.entryKeys(key)
	ch, msg := c.nearArgs(key)
	_, err := releaseScript.Int64(ctx, c.rdb, k.keys(), "d", "", ms(c.lease), 0, c.refreshFlag(), ch, msg)
	c.invalidate(key) // also on error: the script may have run
	if err != nil {
		return fmt.Errorf("cache: delete %q: %w", key, script.Unknown(err))
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

// keys returns the KEYS of store.lua and release.lua.
func (k entryKeys) keys() []string { return []string{k.val, k.lease, k.wake} }

// refreshFlag tells the scripts whether this cache uses refresh leases.
func (c *Cache[T]) refreshFlag() string {
	if c.refresh+c.grace > 0 {
		return "1"
	}
	return "0"
}

// The states the scripts return (wait.lua, take.lua, incr.lua).
const (
	stateHit   = 0 // a value: wait.lua, take.lua; incr.lua: counted
	stateLoad  = 2 // the caller holds the lease
	stateWait  = 3 // another caller holds it: wait
	stateAgain = 4 // the lease ended without a value: look again
)

type step struct {
	state   int64
	payload string
	num     int64  // stateWait: the lease's remaining ms; incr.lua's stateHit: the counter
	token   string // incr.lua's stateWait: the restorer's token
}

// parseStep reads the reply of wait.lua, take.lua or incr.lua: {state,
// payload or number [, token]}.
func parseStep(name string, v any) (step, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return step{}, fmt.Errorf("script %s: want an array reply, got %T", name, v)
	}
	var s step
	if s.state, ok = arr[0].(int64); !ok {
		return step{}, fmt.Errorf("script %s: want an integer state, got %T", name, arr[0])
	}
	switch s.state {
	case stateLoad, stateAgain:
		return s, nil
	case stateHit:
		if len(arr) != 2 {
			return step{}, fmt.Errorf("script %s: state %d: want 2 values, got %d", name, s.state, len(arr))
		}
		switch p := arr[1].(type) {
		case string:
			s.payload = p
		case int64: // incr.lua's counted value
			s.num = p
		default:
			return step{}, fmt.Errorf("script %s: want a payload, got %T", name, arr[1])
		}
	case stateWait:
		if len(arr) < 2 {
			return step{}, fmt.Errorf("script %s: state %d: want the lease's pttl", name, s.state)
		}
		if s.num, ok = arr[1].(int64); !ok {
			return step{}, fmt.Errorf("script %s: want the lease's pttl, got %T", name, arr[1])
		}
		if len(arr) == 3 {
			if s.token, ok = arr[2].(string); !ok {
				return step{}, fmt.Errorf("script %s: want the lease's token, got %T", name, arr[2])
			}
		}
	default:
		return step{}, fmt.Errorf("script %s: unknown state %d", name, s.state)
	}
	return s, nil
}

func (c *Cache[T]) get(ctx context.Context, key string, load func(context.Context) (T, error), bad *string) (T, string, error) {
	v, payload, _, _, err := c.getNear(ctx, key, load, bad)
	return v, payload, err
}

// getNear is get, and also returns until when the value returned is fresh
// in Redis, as far as is known (zero: unknown or not fresh), for the near
// cache: the time the Get began plus the entry's PTTL read in the same
// round trip as the value, or plus the TTL for a value stored after the
// Get began (by it, or by the loader it waited for), less the refresh
// window and the grace; and unstored: the value (err nil) is this Get's
// own load's, and was not stored (a Set or Delete, maybe of another
// process, or the lease running out ended the lease first; or the store
// failed).
func (c *Cache[T]) getNear(ctx context.Context, key string, load func(context.Context) (T, error), bad *string) (T, string, time.Time, bool, error) {
	var zero T
	var base time.Time
	if c.near != nil {
		base = c.near.Now()
	}
	// loaded is the freshness of a value stored after base.
	loaded := func(stored bool) time.Time {
		if !stored || base.IsZero() {
			return time.Time{}
		}
		return base.Add(c.ttl - c.refresh)
	}
	// A hit needs the val key only: the others are built on a miss.
	var k entryKeys
	k.val = c.valKey(key)
	keys := func() entryKeys {
		if k.wake == "" {
			k = c.entryKeys(key)
		}
		return k
	}
	marker := newMarker()
	token := marker[len(markPrefix):]
	for {
		if err := ctx.Err(); err != nil {
			return zero, "", time.Time{}, false, fmt.Errorf("cache: get %q: %w", key, err)
		}
		var (
			cur        string
			found, due bool
			left       = pttlUnknown
			err        error
		)
		if bad != nil {
			cur, found, err = c.take(ctx, keys(), marker, *bad)
			bad = nil
		} else {
			cur, found, left, err = c.claim(ctx, k.val, marker)
			due = c.isDue(left)
		}
		if err != nil {
			if !isKeyError(err) {
				// The claim may have taken the lease before its reply was
				// lost: give it back so that nobody waits for it.
				c.releaseLease(ctx, keys(), token)
			}
			return zero, "", time.Time{}, false, fmt.Errorf("cache: get %q: %w", key, err)
		}
		var fresh time.Time
		if !found && ctx.Err() != nil { // ended while the claim was on its way
			c.releaseLease(ctx, keys(), token)
			return zero, "", time.Time{}, false, fmt.Errorf("cache: get %q: %w", key, ctx.Err())
		}
		if !found {
			v, payload, stored, err := c.load(ctx, key, keys(), token, load)
			return v, payload, loaded(stored), !stored, err
		}
		if tok, _, ok := parseMark(cur); ok {
			if tok == token { // our own claim, re-sent after a lost reply
				v, payload, stored, err := c.load(ctx, key, keys(), token, load)
				return v, payload, loaded(stored), !stored, err
			}
			payload, ok, err := c.waitFor(ctx, keys(), tok)
			if err != nil {
				return zero, "", time.Time{}, false, fmt.Errorf("cache: get %q: %w", key, err)
			}
			if !ok {
				continue // look again
			}
			cur, due, left = payload, false, pttlUnknown
			fresh = loaded(true)
		}
		v, err := c.decode(cur)
		if err != nil {
			c.log().WarnContext(ctx, "cache: undecodable entry treated as a miss", "cache", c.name, "key", key, "err", err)
			bad = &cur
			continue
		}
		if due {
			c.checkDue(ctx, key, load)
		} else if left > 0 && !base.IsZero() {
			fresh = base.Add(left - c.refresh - c.grace)
		} else if left == -1 && !base.IsZero() { // no TTL: SET by hand
			fresh = base.Add(c.near.MaxStale())
		}
		return v, cur, fresh, false, nil
	}
}

// claim reads the entry val and, if it is missing, takes its lease in the
// same command: SET val marker NX PX lease GET, with PTTL val in the same
// round trip when refresh or grace is on. It returns what val held (found
// false: nothing, and the caller now holds the lease), and for a value
// whether it is due for refresh (within the refresh window of its end, or
// stale).
func (c *Cache[T]) claim(ctx context.Context, val, marker string) (cur string, found bool, left time.Duration, err error) {
	left = pttlUnknown
	cl := &claimCmds{set: redis.NewCmd(ctx, "set", val, marker, "nx", "px", c.leaseArg, "get")}
	if c.refresh+c.grace != 0 || c.near != nil {
		cl.pttl = redis.NewDurationCmd(ctx, time.Millisecond, "pttl", val)
	}
	// A claim that took the lease must come back to its Get, which loads or
	// gives the lease back: once sent, it is waited for whatever ctx (one
	// round trip, bounded by the client's timeouts, as a command alone);
	// one still waiting to be sent when ctx ends is not sent.
	if err := c.claims.DoSent(ctx, cl); err != nil {
		return "", false, pttlUnknown, err // not sent, or its sender panicked
	}
	cur, err = cl.set.Text()
	if cl.pttl != nil {
		if p, perr := cl.pttl.Result(); err == nil && perr == nil {
			left = p // -1ns: no TTL, -2ns: missing (go-redis keeps them)
		}
	}
	switch {
	case err == redis.Nil:
		return "", false, pttlUnknown, nil
	case err != nil:
		return "", false, pttlUnknown, script.WrongType(ctx, c.rdb, err, val, "cache entry", "string")
	}
	return cur, true, left, nil
}

// sendClaims sends claims: one alone as one command (or a pipeline with
// its PTTL), several in one pipeline (one round trip per node).
func (c *Cache[T]) sendClaims(ctx context.Context, claims []*claimCmds) {
	if len(claims) == 1 && claims[0].pttl == nil {
		_ = c.rdb.Process(ctx, claims[0].set)
		return
	}
	p := c.rdb.Pipeline()
	for _, cl := range claims {
		_ = p.Process(ctx, cl.set)
		if cl.pttl != nil {
			_ = p.Process(ctx, cl.pttl)
		}
	}
	_, _ = p.Exec(ctx)
}

// pttlUnknown is claim's answer when it did not read the entry's PTTL.
const pttlUnknown = time.Duration(-3)

// take runs take.lua: it replaces the undecodable payload bad by the
// caller's lease marker, unless the entry changed meanwhile. It returns
// what the entry holds then, as claim does.
func (c *Cache[T]) take(ctx context.Context, k entryKeys, marker, bad string) (cur string, found bool, err error) {
	v, err := takeScript.Run(ctx, c.rdb, []string{k.val}, bad, marker, ms(c.lease))
	if err != nil {
		return "", false, err
	}
	st, err := parseStep(takeScript.Name(), v)
	if err != nil {
		return "", false, err
	}
	if st.state == stateLoad {
		return "", false, nil
	}
	return st.payload, true, nil
}

// waitFor waits for the lease tok on the entry k to end: it registers the
// caller as a waiter (wait.lua), then blocks on the lease's wake list. It
// returns the payload handed over or stored meanwhile (ok), or ok false:
// look again (the loader failed or its value is large, a Delete, the lease
// ended, the wait timed out).
func (c *Cache[T]) waitFor(ctx context.Context, k entryKeys, tok string) (payload string, ok bool, err error) {
	wake := k.wake + tok
	v, err := waitScript.Run(ctx, c.rdb, []string{k.val, wake}, tok)
	if err != nil {
		return "", false, err
	}
	st, err := parseStep(waitScript.Name(), v)
	if err != nil {
		return "", false, err
	}
	switch st.state {
	case stateHit:
		return st.payload, true, nil
	case stateAgain:
		return "", false, nil
	}
	if c.beforeBlock != nil {
		c.beforeBlock()
	}
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	elem, ok, err := await(ctx, c.rdb, wake, blockFor(st.num, c.lease))
	if err != nil {
		return "", false, fmt.Errorf("wait: %w", err)
	}
	if ok && len(elem) > 0 && elem[0] == 'v' {
		return elem[1:], true, nil
	}
	return "", false, nil
}

// isDue reports whether an entry with pttl left (its TTL includes the
// grace) is due for refresh.
func (c *Cache[T]) isDue(pttl time.Duration) bool {
	return c.refresh+c.grace > 0 && pttl >= 0 && pttl <= c.refresh+c.grace
}

// load runs the loader as the lease holder and stores its value, which it
// returns with its encoding and whether it was stored.
func (c *Cache[T]) load(ctx context.Context, key string, k entryKeys, token string, load func(context.Context) (T, error)) (T, string, bool, error) {
	var zero T
	done := false
	defer func() {
		if !done { // load panicked
			c.releaseLease(ctx, k, token)
		}
	}()
	v, err := load(ctx)
	done = true
	if err != nil {
		c.releaseLease(ctx, k, token)
		return zero, "", false, fmt.Errorf("cache: get %q: load: %w", key, err)
	}
	payload, stored, err := c.store(ctx, key, k, "l", token, v)
	switch {
	case errors.Is(err, errEncode):
		c.releaseLease(ctx, k, token)
		return zero, "", false, fmt.Errorf("cache: get %q: %w", key, err)
	case err != nil:
		// The store may not have run: give the lease back (if the store
		// ran, the entry holds the value and this changes nothing), so
		// that the waiters look again at once instead of sitting out the
		// lease.
		c.releaseLease(ctx, k, token)
		c.log().WarnContext(ctx, "cache: loaded value not stored", "cache", c.name, "key", key, "err", err)
	}
	return v, payload, stored, nil
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
			c.log().WarnContext(ctx, "cache: background load failed", "cache", c.name, "key", key, "err", err)
		}
	}()
	_, _, _, err = c.load(ctx, key, k, token, load)
}

var errEncode = errors.New("encode")

// encode encodes v, refusing an encoding that would read as a lease marker.
func (c *Cache[T]) encode(v T) (string, error) {
	b, err := c.codec.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errEncode, err)
	}
	payload := string(b)
	if strings.HasPrefix(payload, markPrefix) {
		return "", fmt.Errorf("%w: the encoded value starts with %q, which marks a lease", errEncode, markPrefix)
	}
	return payload, nil
}

// store stores v as the holder of the lease (mode "l") or refresh lease
// ("r") token and returns its encoding and whether it was stored (the
// store publishes the near cache invalidation of key). A lease that is no longer ours (the
// load outlasted it, or a Set or Delete came first) is not an error: the
// value is just not stored (logged at debug level). The value is loaded and
// the waiters are owed it (or a wake-up), so ctx ending does not stop it:
// if ctx has ended before or during the store, the store runs (again: it
// is idempotent) for at most a second, as the releases do. While ctx lasts
// it runs under ctx, which costs no timer on this hot path.
func (c *Cache[T]) store(ctx context.Context, key string, k entryKeys, mode, token string, v T) (string, bool, error) {
	payload, err := c.encode(v)
	if err != nil {
		return "", false, err
	}
	ch, msg := c.nearArgs(key)
	args := []any{mode, token, payload, ms(c.ttl + c.grace), ms(c.lease), inlineMax, c.refreshFlag(), ch, msg}
	var n int64
	err = ctx.Err()
	if err == nil {
		n, err = storeScript.Int64(ctx, c.rdb, k.keys(), args...)
	}
	if err != nil && ctx.Err() != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		n, err = storeScript.Int64(sctx, c.rdb, k.keys(), args...)
	}
	if err != nil {
		return payload, false, script.Unknown(err)
	}
	if n == 0 {
		c.log().DebugContext(ctx, "cache: lease lost before the store; value not stored", "cache", c.name, "key", key)
	}
	return payload, n == 1, nil
}

// releaseLease gives the entry's lease token back (best effort, at most
// one second, whatever ctx says): the waiters registered on it look again.
func (c *Cache[T]) releaseLease(ctx context.Context, k entryKeys, token string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_, _ = releaseScript.Int64(rctx, c.rdb, k.keys(), "l", token, ms(c.lease), 0, c.refreshFlag())
}

// releaseRefresh gives the refresh lease token back, or with hold > 0
// keeps it that long instead (best effort, at most one second).
func (c *Cache[T]) releaseRefresh(ctx context.Context, k entryKeys, token string, hold time.Duration) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_, _ = releaseScript.Int64(rctx, c.rdb, k.keys(), "r", token, ms(c.lease), hold.Milliseconds(), c.refreshFlag())
}

// refreshHold is how long a failed background refresh keeps the lease, so
// that a failing loader is not called on every Get.
func (c *Cache[T]) refreshHold() time.Duration { return min(c.lease, time.Second) }

// The answers of refresh.lua.
const (
	refreshNone = 0 // nothing to do
	refreshHeld = 1 // the caller holds the refresh lease
	refreshLoad = 2 // the entry expired: the caller holds its lease
)

// checkDue starts, in the background, the check that takes the refresh
// lease of an entry due for refresh, if no other caller has it, and then
// reloads the entry. The caller has its value already: the check (one
// round trip) and the reload are off its path. One check at a time per key
// and process.
func (c *Cache[T]) checkDue(ctx context.Context, key string, load func(context.Context) (T, error)) {
	if !c.startRefresh(key) {
		return
	}
	c.goBackground(func() {
		defer c.endRefresh(key)
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.lease)
		defer cancel()
		k := c.entryKeys(key)
		token := script.Nonce()
		n, err := refreshScript.Int64(bctx, c.rdb, []string{k.val, k.lease}, token, markPrefix+token,
			ms(c.lease), (c.refresh + c.grace).Milliseconds())
		switch {
		case err != nil:
			if !isKeyError(err) { // it may have taken either lease
				c.releaseRefresh(bctx, k, token, 0)
				c.releaseLease(bctx, k, token)
			}
			c.log().WarnContext(bctx, "cache: background refresh failed", "cache", c.name, "key", key, "err", err)
		case n == refreshHeld:
			c.refreshHeld(bctx, key, k, token, load)
		case n == refreshLoad: // expired meanwhile: we hold its lease, so load
			c.loadLogged(bctx, key, k, token, load)
		}
		// refreshNone: fresh again, or another caller refreshes or loads it.
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

// refreshHeld reloads key while holding the refresh lease token (ctx is
// bounded by the lease). A failure is logged; the lease is then held for
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
		_, _, err = c.store(ctx, key, k, "r", token, v)
		if c.near != nil { // its own invalidation is not heard: drop the key here
			c.near.Drop(key)
		}
	}
	if err != nil {
		c.log().WarnContext(ctx, "cache: background refresh failed", "cache", c.name, "key", key, "err", err)
		c.releaseRefresh(ctx, k, token, c.refreshHold())
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

// isKeyError reports whether err is a *ria.KeyError: a key of the wrong
// type or value, found before anything was written.
func isKeyError(err error) bool {
	var kerr *ria.KeyError
	return errors.As(err, &kerr)
}
