package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// subscriber is what a near cache needs of the client besides [Client]:
// every go-redis client has it.
type subscriber interface {
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

// nearPing is how long the invalidation subscriber waits for a message
// before it pings its connection, and then for the pong before it counts
// the connection dead (flush, subscribe again).
const nearPing = 5 * time.Second

// nearOriginLen is the length of a near cache's origin id, the first bytes
// of each invalidation it publishes (16 hex digits), followed by the key.
const nearOriginLen = 16

// near is the in-process near cache of a Cache: at most size entries, each
// the encoded value of a key as read from Redis, served without a round
// trip until its deadline (at most maxStale after the read began, and never
// past the entry's fresh time in Redis as known then), or until an
// invalidation for its key arrives. Eviction is CLOCK (second chance): a
// hit sets the entry's reference bit under the read lock; an insertion
// into a full cache sweeps the ring, clearing bits, to the first entry
// without one (or expired). It is safe for concurrent use.
type near struct {
	size     int
	maxStale time.Duration
	channel  string // the cache's invalidation channel
	origin   string // this near cache's id: its own messages are skipped
	logger   func() *slog.Logger

	ping       atomic.Int64     // ns: nearPing (a test hook may shorten it)
	now        func() time.Time // test hook: the clock of deadlines
	beforeFill func(key string) // test hook: called before a fill takes the lock

	mu      sync.RWMutex
	m       map[string]*nearEntry
	ring    []*nearEntry // CLOCK ring; nil slots are free
	hand    int
	pending map[string]*nearPending // keys with a fill in progress
	epoch   uint64                  // bumped by every flush: fills begun before are dropped
	ready   bool                    // subscribed: the near cache may serve and fill

	invalidations atomic.Int64 // invalidations heard from other caches (tests)
	flushes       atomic.Int64 // flushes: subscription lost or (re)made, Close (tests)
	evictions     atomic.Int64 // entries evicted to make room (tests)

	stopMu  sync.Mutex
	stopped bool
	cancel  context.CancelFunc
	cur     *redis.PubSub // the subscription in use, closed by stop
	done    chan struct{} // closed when the subscriber goroutine has returned
}

// nearEntry is one cached value.
type nearEntry struct {
	key     string
	payload string
	until   time.Time // served while now is before it
	slot    int       // index in the ring
	ref     atomic.Bool
}

// nearPending is the version of a key with fills in progress: an
// invalidation of the key bumps it, and a fill that began under another
// version is dropped. It lives while refs fills of the key are in progress.
type nearPending struct {
	version uint64
	refs    int
}

// nearTicket is what a fill began with.
type nearTicket struct {
	p       *nearPending
	version uint64
	epoch   uint64
	start   time.Time
}

func newNear(size int, maxStale time.Duration, channel string, logger func() *slog.Logger) *near {
	b := make([]byte, nearOriginLen/2)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	n := &near{
		size: size, maxStale: maxStale, channel: channel, origin: hex.EncodeToString(b), logger: logger,
		now: time.Now, m: map[string]*nearEntry{}, pending: map[string]*nearPending{},
		done: make(chan struct{}),
	}
	n.ping.Store(int64(nearPing))
	return n
}

// message returns the invalidation of key this near cache publishes.
func (n *near) message(key string) string { return n.origin + key }

// lookup returns the payload cached for key, if any and still valid.
func (n *near) lookup(key string) (string, bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if !n.ready {
		return "", false
	}
	e := n.m[key]
	if e == nil || !n.now().Before(e.until) {
		return "", false
	}
	if !e.ref.Load() {
		e.ref.Store(true)
	}
	return e.payload, true
}

// begin registers a fill of key about to read Redis.
func (n *near) begin(key string) nearTicket {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.pending[key]
	if p == nil {
		p = &nearPending{}
		n.pending[key] = p
	}
	p.refs++
	return nearTicket{p: p, version: p.version, epoch: n.epoch, start: n.now()}
}

// finish ends the fill t of key: with ok, payload (read at t.start or
// later) is cached until fresh (its fresh end in Redis, as known; zero:
// unknown, not cached) or t.start+maxStale, whichever comes first, unless
// an invalidation of key or a flush came after t began, or the deadline
// has passed.
func (n *near) finish(key string, t nearTicket, payload string, fresh time.Time, ok bool) {
	if n.beforeFill != nil && ok {
		n.beforeFill(key)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	t.p.refs--
	if t.p.refs == 0 && n.pending[key] == t.p {
		delete(n.pending, key)
	}
	if !ok || !n.ready || t.epoch != n.epoch || t.p.version != t.version || fresh.IsZero() {
		return
	}
	until := t.start.Add(n.maxStale)
	if fresh.Before(until) {
		until = fresh
	}
	if !n.now().Before(until) {
		return
	}
	if e := n.m[key]; e != nil {
		e.payload, e.until = payload, until
		return
	}
	e := &nearEntry{key: key, payload: payload, until: until}
	n.place(e)
	n.m[key] = e
}

// place puts e in a free slot of the ring, or evicts an entry (CLOCK).
// Called with n.mu held.
func (n *near) place(e *nearEntry) {
	if len(n.ring) < n.size {
		e.slot = len(n.ring)
		n.ring = append(n.ring, e)
		return
	}
	now := n.now()
	for {
		i := n.hand
		n.hand = (n.hand + 1) % n.size
		old := n.ring[i]
		if old != nil {
			if old.ref.Load() && now.Before(old.until) {
				old.ref.Store(false) // second chance
				continue
			}
			delete(n.m, old.key)
			if now.Before(old.until) {
				n.evictions.Add(1)
			}
		}
		e.slot = i
		n.ring[i] = e
		return
	}
}

// drop removes key and makes the fills of key in progress stale: an
// invalidation, or a write of this process.
func (n *near) drop(key string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.m[key]; e != nil {
		delete(n.m, key)
		n.ring[e.slot] = nil
	}
	if p := n.pending[key]; p != nil {
		p.version++
	}
}

// reset empties the cache, makes every fill in progress stale, and sets
// whether it may serve and fill.
func (n *near) reset(ready bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.m)
	clear(n.ring) // keep no payload reachable
	n.ring = n.ring[:0]
	n.hand = 0
	n.epoch++
	n.ready = ready
	n.flushes.Add(1)
}

// start runs the subscriber in a goroutine until stop.
func (n *near) start(sub subscriber) {
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go n.run(ctx, sub)
}

// stop ends the subscriber and waits for it; the near cache is emptied
// and no longer used. Idempotent.
func (n *near) stop() {
	n.cancel() // first: a Subscribe dialling under stopMu returns
	n.stopMu.Lock()
	if !n.stopped {
		n.stopped = true
		if n.cur != nil {
			_ = n.cur.Close() // unblocks its Receive
		}
	}
	n.stopMu.Unlock()
	<-n.done
	n.reset(false)
}

// run subscribes to the invalidation channel and applies what it hears,
// until ctx ends. A subscription that fails or breaks is replaced (with
// a backoff of 10ms doubling to 1s); the near cache is emptied and unused
// from the moment it breaks until the new one is confirmed, since
// invalidations may have been missed meanwhile.
func (n *near) run(ctx context.Context, sub subscriber) {
	defer close(n.done)
	backoff := 10 * time.Millisecond
	for {
		n.stopMu.Lock()
		if n.stopped {
			n.stopMu.Unlock()
			return
		}
		ps := sub.Subscribe(ctx, n.channel)
		n.cur = ps
		n.stopMu.Unlock()

		heard, err := n.listen(ctx, ps)
		_ = ps.Close()
		n.reset(false)
		if ctx.Err() != nil {
			return
		}
		if heard {
			backoff = 10 * time.Millisecond
		}
		n.logger().Warn("cache: near cache invalidations lost; near cache emptied, subscribing again",
			"channel", n.channel, "err", err)
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

// listen reads ps until it fails. heard reports whether the subscription
// was confirmed.
func (n *near) listen(ctx context.Context, ps *redis.PubSub) (heard bool, err error) {
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, time.Duration(n.ping.Load()))
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
			if m.Kind == "subscribe" && m.Channel == n.channel {
				heard = true
				n.reset(true)
			}
		case *redis.Message:
			if len(m.Payload) > nearOriginLen && m.Payload[:nearOriginLen] != n.origin {
				n.invalidations.Add(1)
				n.drop(m.Payload[nearOriginLen:])
			}
		}
	}
}

// nearSubscriber returns the subscriber of a near cache's client, or why
// it cannot have one.
func nearSubscriber(rdb Client) (subscriber, error) {
	if _, ok := rdb.(*redis.Ring); ok {
		// A script publishes on its key's shard only, and a subscriber
		// hears one shard.
		return nil, errors.New("WithNear: a *redis.Ring is not supported (an invalidation reaches the subscribers of one shard only)")
	}
	sub, ok := rdb.(subscriber)
	if !ok {
		return nil, fmt.Errorf("WithNear: client %T has no Subscribe method", rdb)
	}
	return sub, nil
}

// nearChannel is the Pub/Sub channel of the cache's invalidations:
// <prefix>{<name>}:near (a channel, not a key; no entry's hash tag is
// {<name>}).
func (c *Cache[T]) nearChannel() string { return c.keys.Key(c.name, "near") }

// nearArgs returns the last two arguments of the write scripts: the
// invalidation channel and message of key, or two empty strings when the
// cache has no near cache (nothing is published).
func (c *Cache[T]) nearArgs(key string) (channel, message string) {
	if c.near == nil {
		return "", ""
	}
	return c.near.channel, c.near.message(key)
}

// NearReady reports whether c's near cache ([WithNear]) is in use: its
// subscription to invalidations is confirmed. It is false until the first
// subscription is confirmed (shortly after New), while a lost one is being
// made again, after [Cache.Close], and without WithNear; Gets then read
// Redis.
func (c *Cache[T]) NearReady() bool {
	if c.near == nil {
		return false
	}
	c.near.mu.RLock()
	defer c.near.mu.RUnlock()
	return c.near.ready
}

// Close stops the near cache ([WithNear]): its subscriber goroutine ends
// (Close waits for it) and Gets no longer use it. The Cache still works
// without it and its writes still publish invalidations. It returns nil;
// calling it again, or on a Cache without a near cache, does nothing.
func (c *Cache[T]) Close() error {
	if c.near != nil {
		c.near.stop()
	}
	return nil
}
