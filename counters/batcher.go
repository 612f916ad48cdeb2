package counters

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

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
// flush, with the same reply record, so it counts once; after the record's
// lifetime (the client's retry window plus 1 min) a flush that may have
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

	flushMu sync.Mutex
	retry   []*pending // flushes that failed without a reply, oldest first

	counted, dropped, unknown atomic.Int64
}

type shard struct {
	mu sync.Mutex
	m  map[string]int64
	_  [48]byte // keep shards on their own cache lines
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
	b := &Batcher{c: c, o: o, closing: make(chan struct{}),
		ttl: min(script.ReplayWindow(c.rdb), 5*time.Minute) + time.Minute}
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
	sum := s.m[name] + n
	if sum > MaxDelta || sum < -MaxDelta {
		return fmt.Errorf("counters: add %q: %w", name, ErrOverflow)
	}
	s.m[name] = sum
	return nil
}

// Stats returns the counts of increments by outcome so far.
func (b *Batcher) Stats() BatcherStats {
	var p int64
	for i := range b.shards {
		s := &b.shards[i]
		s.mu.Lock()
		for _, n := range s.m {
			p += abs(n)
		}
		s.mu.Unlock()
	}
	b.flushMu.Lock()
	for _, r := range b.retry {
		p += abs(r.n)
	}
	b.flushMu.Unlock()
	return BatcherStats{Counted: b.counted.Load(), Dropped: b.dropped.Load(), Unknown: b.unknown.Load(), Pending: p}
}

func abs(n int64) int64 { return max(n, -n) }

// Flush writes what was added so far, and the updates of failed flushes,
// in one pipeline. It returns an error if some could not be written: one
// that retrying cannot mend (a *ria.KeyError, [ErrOverflow]: those
// increments are dropped) or one wrapping ria.ErrOutcomeUnknown (those are
// kept and sent again, with their reply records, by the next flush).
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
	for i := range b.shards {
		s := &b.shards[i]
		s.mu.Lock()
		m := s.m
		if len(m) == 0 {
			s.mu.Unlock()
			continue
		}
		s.m = make(map[string]int64, len(m))
		s.mu.Unlock()
		for name, n := range m {
			if n == 0 {
				continue
			}
			if p := fresh[name]; p != nil {
				p.n, p.call = p.n+n, nil
				continue
			}
			p := &pending{name: name, n: n}
			fresh[name] = p
			batch = append(batch, p)
		}
	}
	if len(batch) == 0 {
		return nil
	}
	now := time.Now()
	var errs []error
	kept := batch[:0]
	for _, p := range batch {
		if p.maybeRan && now.After(p.until) {
			// Its reply record may be gone: sending it again could count twice.
			b.unknown.Add(abs(p.n))
			errs = append(errs, fmt.Errorf("counters: add %q: %w: gave up after %v", p.name, ria.ErrOutcomeUnknown, b.ttl))
			continue
		}
		kept = append(kept, p)
	}
	batch = kept
	calls := make([]*script.Call, len(batch))
	for i, p := range batch {
		if p.call == nil || now.After(p.until) {
			k, args, err := b.c.updateCall("add", p.name, p.n, "")
			if err != nil {
				return err
			}
			p.call = updateScript.Prepare(b.c.keys.Once(p.name), b.ttl, k, args...)
			p.until = now.Add(b.ttl - time.Second)
		}
		calls[i] = p.call
	}
	script.Send(ctx, b.c.rdb, calls)
	for i, p := range batch {
		err := calls[i].Err
		if err == nil {
			if _, err = updateScript.AsInt64(calls[i].Val); err == nil {
				b.counted.Add(abs(p.n))
				continue
			}
		}
		err = b.c.updateErr("add", p.name, err)
		if !transient(err) {
			b.dropped.Add(abs(p.n))
			errs = append(errs, err)
			continue
		}
		p.maybeRan = p.maybeRan || mayHaveRun(err)
		b.retry = append(b.retry, p)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// mayHaveRun reports whether a call that failed with err may have reached
// the server: not when the connection could not be made, nor when the
// server refused it (LOADING, TRYAGAIN...: a redis.Error).
func mayHaveRun(err error) bool {
	var rerr redis.Error
	var oerr *net.OpError
	if errors.As(err, &rerr) || (errors.As(err, &oerr) && oerr.Op == "dial") {
		return false
	}
	return true
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
