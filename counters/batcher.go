package counters

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

// ErrClosed is returned by [Batcher.Add] after [Batcher.Close].
var ErrClosed = errors.New("counters: batcher closed")

// nShards is the number of independently locked maps a Batcher sums in.
const nShards = 32

// Batcher sums increments in memory and writes them as counter updates
// every interval (what statsd does for a process): Add costs no round trip
// and takes a lock shared by 1/32 of the names; a flush sends one update
// per counter that changed, all in one pipeline, which is one round trip
// per node (per master of a Cluster). Updates are counted at the server's
// time of the flush, so an increment lands in the slice of the flush that
// carries it, at most one interval after it happened.
//
// A process that crashes loses what it added since its last flush: at most
// one interval of increments (plus those of flushes that failed and were
// being retried). A flush whose reply is lost is sent again, at the next
// flush, with the same reply record, so it counts once; 1 min after it was
// first sent (its record lives for the client's retry window plus 1 min,
// and a re-send may take a retry window to arrive) a flush that may have
// run is given up and its increments are counted in [BatcherStats.Unknown].
//
// It is safe for concurrent use.
type Batcher struct {
	c       *Counters
	o       loopOptions
	ttl     time.Duration // of the reply records
	shards  [nShards]shard
	closed  atomic.Bool
	closing chan struct{}
	once    sync.Once

	window time.Duration // how long go-redis may re-send one flush
	now    func() time.Time

	flushMu sync.Mutex // one flush at a time
	retry   []*pending // flushes that failed without a reply, oldest first

	// mu guards the outcome totals. A flush moves amounts from the shards
	// to flushing, and from flushing to an outcome, under it (and Stats
	// reads them under it), so each increment is in one outcome at a time.
	mu                        sync.Mutex
	counted, dropped, unknown int64
	flushing                  int64 // taken from the shards, not yet settled (retries included)
}

type shard struct {
	mu    sync.Mutex
	m     map[string]int64
	total int64    // the sum of |n| over m
	_     [40]byte // keep shards on their own cache lines
}

// pending is one counter update a flush sent and must send again.
type pending struct {
	name     string
	n        int64
	call     *script.Call
	until    time.Time // a re-send after this may count twice
	maybeRan bool      // an attempt may have reached the server
}

// BatcherStats counts the increments a [Batcher] has handled, by outcome.
type BatcherStats struct {
	Counted int64 // written to Redis
	Dropped int64 // refused by Redis (a key of the wrong type, an overflow): not counted
	Unknown int64 // given up without knowing whether they were written
	Pending int64 // summed or being retried, not yet written
}

// Batcher returns a [Batcher] of c's counters. Options: [WithInterval]
// (default 1 s), [WithLogger]. Start its [Batcher.Run] and [Batcher.Close]
// it when done. A bad option is an error wrapping [ErrInvalid].
func (c *Counters) Batcher(opts ...LoopOption) (*Batcher, error) {
	o, err := loopOpts("batcher", time.Second, []string{"WithInterval", "WithLogger"}, opts)
	if err != nil {
		return nil, err
	}
	w := min(script.ReplayWindow(c.rdb), 5*time.Minute)
	b := &Batcher{c: c, o: o, closing: make(chan struct{}), window: w, ttl: w + time.Minute, now: time.Now}
	for i := range b.shards {
		b.shards[i].m = map[string]int64{}
	}
	return b, nil
}

// Add adds n to counter name at the next flush. It returns an error
// wrapping [ErrInvalid] for a bad name or n, [ErrOverflow] if the sum
// waiting for the flush would leave ±[MaxDelta] (n is not added), and
// [ErrClosed] after Close.
func (b *Batcher) Add(name string, n int64) error {
	if err := keys.CheckEntity("counter name", name); err != nil {
		return fmt.Errorf("counters: add: %w: %w", err, ErrInvalid)
	}
	if n > MaxDelta || n < -MaxDelta {
		return invalid("add", "counter %q: n %d: must be within ±%d", name, n, int64(MaxDelta))
	}
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	s := &b.shards[h%nShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.closed.Load() {
		return ErrClosed
	}
	old := s.m[name]
	sum := old + n
	if sum > MaxDelta || sum < -MaxDelta {
		return fmt.Errorf("counters: add %q: %w", name, ErrOverflow)
	}
	s.m[name] = sum
	s.total += abs(sum) - abs(old)
	return nil
}

// Stats returns the counts of increments by outcome so far. Each increment
// is in exactly one outcome at any instant, and Stats does not wait for a
// flush in progress (its increments are Pending until it ends).
func (b *Batcher) Stats() BatcherStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.flushing
	for i := range b.shards {
		s := &b.shards[i]
		s.mu.Lock()
		p += s.total
		s.mu.Unlock()
	}
	return BatcherStats{Counted: b.counted, Dropped: b.dropped, Unknown: b.unknown, Pending: p}
}

func abs(n int64) int64 { return max(n, -n) }

// Flush writes what was added so far, and the updates of failed flushes,
// in one pipeline. It returns an error if some could not be written: one
// that retrying cannot mend (a *ria.KeyError, [ErrOverflow]: those
// increments are dropped) or one wrapping ria.ErrOutcomeUnknown (those are
// kept and sent again, with their reply records, by the next flush). The
// failure of one update never keeps the others from being sent.
func (b *Batcher) Flush(ctx context.Context) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	batch := b.retry
	b.retry = nil
	fresh := map[string]*pending{} // retried updates that never reached Redis take new increments
	for _, p := range batch {
		if !p.maybeRan {
			fresh[p.name] = p
		}
	}
	var taken [nShards]map[string]int64
	b.mu.Lock()
	for i := range b.shards {
		s := &b.shards[i]
		s.mu.Lock()
		if len(s.m) > 0 {
			taken[i] = s.m
			s.m = make(map[string]int64, len(s.m))
			b.flushing += s.total
			s.total = 0
		}
		s.mu.Unlock()
	}
	b.mu.Unlock()
	var cancelled int64 // increments of opposite signs that cancel out
	for _, m := range taken {
		for name, n := range m {
			if n == 0 {
				continue
			}
			// Merge only while the sum stays a valid update.
			if p := fresh[name]; p != nil && abs(p.n+n) <= MaxDelta {
				cancelled += abs(p.n) + abs(n) - abs(p.n+n)
				p.n, p.call = p.n+n, nil
				continue
			}
			p := &pending{name: name, n: n}
			fresh[name] = p
			batch = append(batch, p)
		}
	}
	if cancelled != 0 {
		b.mu.Lock()
		b.flushing -= cancelled
		b.mu.Unlock()
	}
	if len(batch) == 0 {
		return nil
	}
	// One update per counter in flight: while one may have run (its
	// outcome rests on its reply record), the counter's new increments
	// wait beside it, so that an outage keeps one update per counter, not
	// one per flush. They go in a second round trip once it is settled.
	busy := map[string]bool{}
	for _, p := range batch {
		if p.maybeRan {
			busy[p.name] = true
		}
	}
	var first, held []*pending
	for _, p := range batch {
		if !p.maybeRan && busy[p.name] {
			held = append(held, p)
		} else {
			first = append(first, p)
		}
	}
	errs := b.send(ctx, first)
	if len(held) > 0 {
		for name := range busy {
			busy[name] = false
		}
		for _, p := range b.retry {
			if p.maybeRan {
				busy[p.name] = true
			}
		}
		var next []*pending
		for _, p := range held {
			if busy[p.name] {
				b.retry = append(b.retry, p)
			} else {
				next = append(next, p)
			}
		}
		if len(next) > 0 {
			errs = append(errs, b.send(ctx, next)...)
		}
	}
	return errors.Join(errs...)
}

// send writes batch in one pipeline, settles what it can and keeps in
// b.retry the updates to send again.
func (b *Batcher) send(ctx context.Context, batch []*pending) []error {
	now := b.now()
	var (
		errs                      []error
		counted, dropped, unknown int64
		sent                      = batch[:0]
	)
	for _, p := range batch {
		if p.maybeRan && now.After(p.until) {
			// Its reply record may be gone: sending it again could count twice.
			unknown += abs(p.n)
			errs = append(errs, fmt.Errorf("counters: add %q: %w: gave up after %v", p.name, ria.ErrOutcomeUnknown, b.ttl-b.window))
			continue
		}
		if p.call == nil || now.After(p.until) {
			k, args, err := b.c.updateCall("add", p.name, p.n, "")
			if err != nil {
				dropped += abs(p.n)
				errs = append(errs, err)
				continue
			}
			p.call = updateScript.Prepare(b.c.keys.Once(p.name), b.ttl, k, args...)
			// The record lives ttl from its write, at or after now; a
			// re-send started before until, and re-sent by go-redis for up
			// to its retry window, still finds it.
			p.until = now.Add(b.ttl - b.window - time.Second)
		}
		sent = append(sent, p)
	}
	calls := make([]*script.Call, len(sent))
	for i, p := range sent {
		calls[i] = p.call
	}
	if len(calls) > 0 {
		script.Send(ctx, b.c.rdb, calls)
	}
	for i, p := range sent {
		err := calls[i].Err
		if err == nil {
			if _, err = updateScript.AsInt64(calls[i].Val); err == nil {
				counted += abs(p.n)
				continue
			}
		}
		err = b.c.updateErr("add", p.name, err)
		errs = append(errs, err)
		if !transient(err) {
			dropped += abs(p.n)
			continue
		}
		p.maybeRan = p.maybeRan || script.MayHaveRun(err)
		b.retry = append(b.retry, p)
	}
	b.mu.Lock()
	b.flushing -= counted + dropped + unknown
	b.counted += counted
	b.dropped += dropped
	b.unknown += unknown
	b.mu.Unlock()
	return errs
}

// Run flushes every interval ([WithInterval]: 1 s) until ctx ends or
// [Batcher.Close] is called; when ctx ends it flushes once more (bounded
// by 30 s). Transient errors are logged ([WithLogger]) and their updates
// retried at the next flush. Run returns nil when it stops, or the error
// of a flush that retrying cannot mend (a *ria.KeyError: those increments
// were dropped; the others were written).
func (b *Batcher) Run(ctx context.Context) error {
	err := run(ctx, "batcher", b.o, b.closing, func(context.Context) error {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), inFlight)
		defer cancel()
		return b.Flush(fctx)
	})
	if err != nil || b.closed.Load() {
		return err
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), inFlight)
	defer cancel()
	if err := b.Flush(fctx); err != nil && !transient(err) {
		return fmt.Errorf("counters: batcher: %w", err)
	}
	return nil
}

// Close stops [Batcher.Run], refuses further increments ([ErrClosed]) and
// flushes everything pending, waiting for a flush in flight first. It
// returns the error of that last flush; increments it could not write
// (ria.ErrOutcomeUnknown) are still in [BatcherStats.Pending], and a later
// Flush may retry them.
func (b *Batcher) Close(ctx context.Context) error {
	b.closed.Store(true)
	b.once.Do(func() { close(b.closing) })
	return b.Flush(ctx)
}
