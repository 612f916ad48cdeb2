// Package near is a bounded in-process cache of string payloads by string
// key, kept honest across processes by invalidation messages on a Redis
// Pub/Sub channel: the near cache of package cache (WithNear) and the
// status cache of package social (WithStatusCache).
//
// A [Cache] holds at most Size entries, each served without a round trip
// until its deadline (at most MaxStale after the read that filled it
// began, and never past the fresh time its user gives) or until an
// invalidation of its key arrives. Eviction is CLOCK (second chance).
//
// The user's writes publish [Cache.Message](key) on [Cache.Channel]
// (from inside their scripts, so no round trip is added); every Cache
// subscribed to the channel drops the key, except the one whose origin
// the message carries (the writer drops its own keys with [Cache.Drop]).
// A fill runs under a ticket ([Cache.Begin], [Cache.Finish]): an
// invalidation or a flush heard while the fill's read was in flight wins,
// and the payload read is not cached. The cache serves and fills only
// while its subscription is confirmed ([Cache.Ready]): it is emptied when
// the subscription breaks and used again only once it is made again,
// since invalidations may have been missed meanwhile.
//
// On a Cluster, PUBLISH (not SPUBLISH) from a script reaches the
// subscribers of every node; a *redis.Ring is refused ([SubscriberOf]):
// a message reaches one shard's subscribers only.
package near

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Subscriber is what a near cache needs of its client: every go-redis
// client has it.
type Subscriber interface {
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

// Ping is how long the subscriber waits for a message before it pings
// its connection, and then for the pong before it counts the connection
// dead (flush, subscribe again).
const Ping = 5 * time.Second

// OriginLen is the length of a cache's origin id, the first bytes of each
// invalidation it publishes (16 hex digits), followed by the key.
const OriginLen = 16

// MaxSize bounds Config.Size.
const MaxSize = 1 << 24

// Config describes a [Cache].
type Config struct {
	Size     int           // entries, 1 to MaxSize
	MaxStale time.Duration // longest an entry is served, > 0
	Channel  string        // the invalidation channel, not empty
	// Name starts the log lines and errors ("cache", "social").
	Name string
	// Logger returns the logger of the subscriber's warnings (nil:
	// slog.Default).
	Logger func() *slog.Logger
}

// Cache is a near cache. It is safe for concurrent use.
type Cache struct {
	size     int
	maxStale time.Duration
	channel  string
	name     string
	origin   string // this cache's id: its own messages are skipped
	logger   func() *slog.Logger

	ping       atomic.Int64     // ns: Ping (SetPing)
	now        func() time.Time // the clock of deadlines (SetNow)
	beforeFill func(key string) // test hook (SetBeforeFill)

	mu      sync.RWMutex
	m       map[string]*entry
	ring    []*entry // CLOCK ring; nil slots are free
	hand    int
	pending map[string]*pending // keys with a fill in progress
	epoch   uint64              // bumped by every flush: fills begun before are dropped
	ready   bool                // subscribed: the cache may serve and fill

	invalidations atomic.Int64 // invalidations heard from other caches
	flushes       atomic.Int64 // flushes: subscription lost or (re)made, Stop
	evictions     atomic.Int64 // live entries evicted to make room

	stopMu  sync.Mutex
	started bool
	stopped bool
	cancel  context.CancelFunc
	cur     *redis.PubSub // the subscription in use, closed by Stop
	done    chan struct{} // closed when the subscriber goroutine has returned
}

type entry struct {
	key     string
	payload string
	until   time.Time // served while now is before it
	slot    int       // index in the ring
	ref     atomic.Bool
}

// pending is the version of a key with fills in progress: an invalidation
// of the key bumps it, and a fill that began under another version is
// dropped. It lives while refs fills of the key are in progress.
type pending struct {
	version uint64
	refs    int
}

// Ticket is what a fill began with ([Cache.Begin]).
type Ticket struct {
	p       *pending
	version uint64
	epoch   uint64
	start   time.Time
}

// Start returns when the fill's read may have begun (deadlines count from
// it).
func (t Ticket) Start() time.Time { return t.start }

// New returns a cache described by cfg, or an error naming a bad field.
// It serves nothing until [Cache.Start] has confirmed its subscription.
func New(cfg Config) (*Cache, error) {
	name := cfg.Name
	if name == "" {
		name = "near"
	}
	switch {
	case cfg.Size < 1 || cfg.Size > MaxSize:
		return nil, fmt.Errorf("%s: near cache size %d: must be between 1 and %d", name, cfg.Size, MaxSize)
	case cfg.MaxStale <= 0:
		return nil, fmt.Errorf("%s: near cache max stale %v: must be > 0", name, cfg.MaxStale)
	case cfg.Channel == "":
		return nil, fmt.Errorf("%s: near cache channel: empty name", name)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default
	}
	b := make([]byte, OriginLen/2)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	c := &Cache{
		size: cfg.Size, maxStale: cfg.MaxStale, channel: cfg.Channel, name: name,
		origin: hex.EncodeToString(b), logger: logger,
		now: time.Now, m: map[string]*entry{}, pending: map[string]*pending{},
		done: make(chan struct{}),
	}
	c.ping.Store(int64(Ping))
	return c, nil
}

// Channel returns the invalidation channel.
func (c *Cache) Channel() string { return c.channel }

// Origin returns this cache's id, the first [OriginLen] bytes of its
// messages.
func (c *Cache) Origin() string { return c.origin }

// Message returns the invalidation of key this cache publishes.
func (c *Cache) Message(key string) string { return c.origin + key }

// noOrigin is the origin of the invalidations a process without a cache
// publishes ([Message]): origins are hex digits, so no cache has it and
// every cache hears them.
var noOrigin = strings.Repeat("-", OriginLen)

// Message returns the invalidation of key published by a process that
// has no cache of its own.
func Message(key string) string { return noOrigin + key }

// MaxStale returns the longest an entry is served.
func (c *Cache) MaxStale() time.Duration { return c.maxStale }

// Size returns the most entries the cache holds.
func (c *Cache) Size() int { return c.size }

// Now returns the time on the cache's clock.
func (c *Cache) Now() time.Time { return c.now() }

// SetNow sets the cache's clock (tests). Set it before using c.
func (c *Cache) SetNow(now func() time.Time) { c.now = now }

// SetBeforeFill makes every successful [Cache.Finish] call f first (tests:
// an invalidation while a fill is in flight). Set it before using c.
func (c *Cache) SetBeforeFill(f func(key string)) { c.beforeFill = f }

// SetPing sets how long the subscriber waits for a message before it
// pings, and then for the pong.
func (c *Cache) SetPing(d time.Duration) { c.ping.Store(int64(d)) }

// Ready reports whether the cache is in use: its subscription is
// confirmed. It is false before Start's subscription is confirmed, while
// a lost one is being made again, and after Stop.
func (c *Cache) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready
}

// Stats are counters of a cache's life.
type Stats struct {
	Len           int   // entries held (expired ones included, until evicted)
	Invalidations int64 // invalidations heard from other caches
	Flushes       int64 // times emptied: subscription lost or (re)made, Stop
	Evictions     int64 // live entries evicted to make room
	Filling       int   // keys with a fill begun and not finished
}

// Stats returns the cache's counters.
func (c *Cache) Stats() Stats {
	c.mu.RLock()
	l, f := len(c.m), len(c.pending)
	c.mu.RUnlock()
	return Stats{Len: l, Filling: f, Invalidations: c.invalidations.Load(), Flushes: c.flushes.Load(), Evictions: c.evictions.Load()}
}

// Until returns the deadline of key's entry, if it has one.
func (c *Cache) Until(key string) (time.Time, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e := c.m[key]
	if e == nil {
		return time.Time{}, false
	}
	return e.until, true
}

// Lookup returns the payload cached for key, if any and still valid.
func (c *Cache) Lookup(key string) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready {
		return "", false
	}
	e := c.m[key]
	if e == nil || !c.now().Before(e.until) {
		return "", false
	}
	if !e.ref.Load() {
		e.ref.Store(true)
	}
	return e.payload, true
}

// Begin registers a fill of key about to read Redis. Every Begin must be
// followed by one [Cache.Finish] with its ticket.
func (c *Cache) Begin(key string) Ticket {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[key]
	if p == nil {
		p = &pending{}
		c.pending[key] = p
	}
	p.refs++
	return Ticket{p: p, version: p.version, epoch: c.epoch, start: c.now()}
}

// Finish ends the fill t of key: with ok, payload (read at t.Start or
// later) is cached until fresh (its fresh end as known; zero: unknown,
// not cached) or t.Start+MaxStale, whichever comes first, unless an
// invalidation of key or a flush came after t began, or the deadline has
// passed. A payload that never changes but by an invalidation passes
// [Forever] as fresh.
func (c *Cache) Finish(key string, t Ticket, payload string, fresh time.Time, ok bool) {
	if c.beforeFill != nil && ok {
		c.beforeFill(key)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.p.refs--
	if t.p.refs == 0 && c.pending[key] == t.p {
		delete(c.pending, key)
	}
	if !ok || !c.ready || t.epoch != c.epoch || t.p.version != t.version || fresh.IsZero() {
		return
	}
	until := t.start.Add(c.maxStale)
	if fresh.Before(until) {
		until = fresh
	}
	if !c.now().Before(until) {
		return
	}
	if e := c.m[key]; e != nil {
		e.payload, e.until = payload, until
		return
	}
	e := &entry{key: key, payload: payload, until: until}
	c.place(e)
	c.m[key] = e
}

// Forever is the fresh time of a payload that only an invalidation
// changes: its entry lives MaxStale.
var Forever = time.Unix(1<<40, 0)

// place puts e in a free slot of the ring, or evicts an entry (CLOCK).
// Called with c.mu held.
func (c *Cache) place(e *entry) {
	if len(c.ring) < c.size {
		e.slot = len(c.ring)
		c.ring = append(c.ring, e)
		return
	}
	now := c.now()
	for {
		i := c.hand
		c.hand = (c.hand + 1) % c.size
		old := c.ring[i]
		if old != nil {
			if old.ref.Load() && now.Before(old.until) {
				old.ref.Store(false) // second chance
				continue
			}
			delete(c.m, old.key)
			if now.Before(old.until) {
				c.evictions.Add(1)
			}
		}
		e.slot = i
		c.ring[i] = e
		return
	}
}

// Drop removes key and makes the fills of key in progress stale: an
// invalidation, or a write of this process (whose own message it skips).
func (c *Cache) Drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[key]; e != nil {
		delete(c.m, key)
		c.ring[e.slot] = nil
	}
	if p := c.pending[key]; p != nil {
		p.version++
	}
}

// Reset empties the cache, makes every fill in progress stale, and sets
// whether it may serve and fill.
func (c *Cache) Reset(ready bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	clear(c.ring) // keep no payload reachable
	c.ring = c.ring[:0]
	c.hand = 0
	c.epoch++
	c.ready = ready
	c.flushes.Add(1)
}

// Start runs the subscriber ([Cache.Run]) in a goroutine until
// [Cache.Stop]. Call it once.
func (c *Cache) Start(sub Subscriber) {
	ctx, cancel := context.WithCancel(context.Background())
	c.stopMu.Lock()
	c.cancel, c.started = cancel, true
	c.stopMu.Unlock()
	go func() {
		defer close(c.done)
		c.Run(ctx, sub)
	}()
}

// Stop ends the subscriber and waits for it; the cache is emptied and no
// longer used. Idempotent; without Start it only empties the cache.
func (c *Cache) Stop() {
	c.stopMu.Lock()
	started, cancel := c.started, c.cancel
	c.stopMu.Unlock()
	if cancel != nil {
		cancel() // first: a Subscribe dialling under stopMu returns
	}
	c.stopMu.Lock()
	if !c.stopped {
		c.stopped = true
		if c.cur != nil {
			_ = c.cur.Close() // unblocks its Receive
		}
	}
	c.stopMu.Unlock()
	if started {
		<-c.done
	}
	c.Reset(false)
}

// Run subscribes to the invalidation channel and applies what it hears,
// until ctx ends or [Cache.Stop]. A subscription that fails or breaks is
// replaced (with a backoff of 10ms doubling to 1s); the cache is emptied
// and unused from the moment it breaks until the new one is confirmed.
// [Cache.Start] runs it in a goroutine.
func (c *Cache) Run(ctx context.Context, sub Subscriber) {
	backoff := 10 * time.Millisecond
	for {
		c.stopMu.Lock()
		if c.stopped {
			c.stopMu.Unlock()
			return
		}
		ps := sub.Subscribe(ctx, c.channel)
		c.cur = ps
		c.stopMu.Unlock()

		heard, err := c.Listen(ctx, ps)
		_ = ps.Close()
		c.Reset(false)
		if ctx.Err() != nil {
			return
		}
		if heard {
			backoff = 10 * time.Millisecond
		}
		c.logger().Warn(c.name+": near cache invalidations lost; near cache emptied, subscribing again",
			"channel", c.channel, "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// Listen reads ps until it fails: a confirmation of the subscription
// makes the cache ready (emptied first), an invalidation from another
// cache drops its key. heard reports whether the subscription was
// confirmed.
func (c *Cache) Listen(ctx context.Context, ps *redis.PubSub) (heard bool, err error) {
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, time.Duration(c.ping.Load()))
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
				if pinged {
					return heard, errors.New("no reply to ping")
				}
				if err := ps.Ping(ctx); err != nil {
					return heard, fmt.Errorf("ping: %w", err)
				}
				pinged = true
				continue
			}
			return heard, err
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" && m.Channel == c.channel {
				heard = true
				c.Reset(true)
			}
		case *redis.Message:
			if len(m.Payload) > OriginLen && m.Payload[:OriginLen] != c.origin {
				c.invalidations.Add(1)
				c.Drop(m.Payload[OriginLen:])
			}
		}
	}
}

// SubscriberOf returns the subscriber of a near cache's client, or why it
// cannot have one.
func SubscriberOf(rdb any) (Subscriber, error) {
	if _, ok := rdb.(*redis.Ring); ok {
		// A script publishes on its key's shard only, and a subscriber
		// hears one shard.
		return nil, errors.New("a *redis.Ring is not supported (an invalidation reaches the subscribers of one shard only)")
	}
	sub, ok := rdb.(Subscriber)
	if !ok || sub == nil {
		return nil, fmt.Errorf("client %T has no Subscribe method", rdb)
	}
	return sub, nil
}
