package semaphore

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/wait"
)

// Client is the subset of go-redis this package uses: scripts, plus the
// blocking pop that [Semaphore.Acquire] waits on.
type Client interface {
	redis.Scripter
	wait.Client
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

var (
	// ErrNoPermit means that no permit was available: the semaphore was
	// full for a [Semaphore.TryAcquire], or stayed full for the whole wait of
	// a [Semaphore.Acquire].
	ErrNoPermit = errors.New("semaphore: no permit available")
	// ErrNotHeld means that the permit is no longer held: it timed out or
	// was released already.
	ErrNotHeld = errors.New("semaphore: permit not held")
)

var (
	//go:embed acquire.lua
	acquireLua string
	//go:embed release.lua
	releaseLua string
	//go:embed refresh.lua
	refreshLua string
	//go:embed holders.lua
	holdersLua string

	acquireScript = script.New("semaphore acquire", script.MintLua+acquireLua)
	releaseScript = script.New("semaphore release", script.MintLua+releaseLua)
	refreshScript = script.New("semaphore refresh", refreshLua)
	holdersScript = script.New("semaphore holders", holdersLua)
)

// abandonTimeout bounds the best-effort release of a permit whose acquire
// reply was lost (see [Semaphore.Acquire]).
const abandonTimeout = time.Second

// Option configures a [Semaphore].
type Option func(*options)

type options struct {
	prefix string
}

// WithPrefix sets the key prefix. Default: "semaphore:". It must not
// contain '{' or '}', which would break the keys' Cluster hash tag.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// AcquireOption configures one [Semaphore.Acquire].
type AcquireOption func(*acquireOptions)

type acquireOptions struct {
	wait    time.Duration
	waitSet bool
}

// WithWait makes [Semaphore.Acquire] give up after d, measured from the
// call, with an error that is [ErrNoPermit]. A d of zero or less makes one
// attempt, like [Semaphore.TryAcquire]. Without WithWait, Acquire waits
// until a permit is free or ctx ends.
func WithWait(d time.Duration) AcquireOption {
	return func(o *acquireOptions) { o.wait, o.waitSet = d, true }
}

// Semaphore is a counting semaphore shared by every client of a Redis
// deployment: at most limit permits of the same name are held at once, and
// a permit that is not refreshed or released within timeout lapses. It is
// safe for concurrent use.
type Semaphore struct {
	rdb     Client
	name    string
	limit   int
	timeout int64 // milliseconds
	keys    keySet
}

// New returns the semaphore called name, of which at most limit permits can
// be held at once, each for timeout unless refreshed. timeout is rounded
// down to whole milliseconds. Every Semaphore of the same name and prefix
// shares the same permits, whatever client or process holds it; they should
// agree on limit and timeout.
//
// New returns an error naming the bad argument if name is empty or starts
// with '}', limit is less than 1, timeout is less than a millisecond or the
// prefix holds '{' or '}'. It panics if rdb is nil. Nothing reaches Redis.
func New(rdb Client, name string, limit int, timeout time.Duration, opts ...Option) (*Semaphore, error) {
	if rdb == nil {
		panic("semaphore: New with a nil client")
	}
	o := options{prefix: "semaphore:"}
	for _, opt := range opts {
		opt(&o)
	}
	if err := keys.CheckEntity("semaphore name", name); err != nil {
		return nil, fmt.Errorf("semaphore: new: %w", err)
	}
	if limit < 1 {
		return nil, fmt.Errorf("semaphore: new %q: limit %d: must be at least 1", name, limit)
	}
	if timeout < time.Millisecond {
		return nil, fmt.Errorf("semaphore: new %q: timeout %v: must be at least 1ms", name, timeout)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("semaphore: new %q: %w", name, err)
	}
	return &Semaphore{
		rdb:     rdb,
		name:    name,
		limit:   limit,
		timeout: timeout.Milliseconds(),
		keys:    newKeySet(keys.New(o.prefix), name),
	}, nil
}

// TryAcquire takes a permit if one is free, in one round trip. It returns
// [ErrNoPermit] if the semaphore is full, and an error that is both
// [ErrNoPermit] and ctx.Err() if ctx ended. If the reply is lost, it
// releases the permit the server may have granted, as [Semaphore.Acquire]
// does.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Permit, error) {
	if ctx.Err() != nil {
		return nil, s.noPermit(ctx, nil)
	}
	id := uuid.NewString()
	seq, ok, _, err := s.attempt(ctx, id, 0, false)
	switch {
	case err != nil:
		s.abandon(ctx, id, false)
		if ctx.Err() != nil {
			return nil, s.noPermit(ctx, err)
		}
		return nil, fmt.Errorf("semaphore: acquire %q: %w", s.name, err)
	case !ok:
		return nil, s.noPermit(ctx, nil)
	}
	return &Permit{s: s, id: id, seq: seq}, nil
}

// noPermit is the error of an acquisition that ended without a permit: it
// is [ErrNoPermit], err (the last error, if any) and ctx.Err() (if ctx
// ended).
func (s *Semaphore) noPermit(ctx context.Context, err error) error {
	errs := []error{ErrNoPermit, err}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		errs = append(errs, cerr)
	}
	return fmt.Errorf("semaphore: acquire %q: %w", s.name, errors.Join(errs...))
}

// Acquire takes a permit, waiting until one is free, ctx ends or the
// [WithWait] duration passes. Waiters queue first come first served and do
// not poll: a release hands its permit directly to the first live waiter,
// which was blocked (BLPOP) on a list of its own. A holder that never
// releases (it crashed) frees its permit at its deadline, when the waiters
// blocked until then try again. Transient Redis errors (network, server
// loading or restarting) are retried with backoff.
//
// When the wait ends without a permit, the error is [ErrNoPermit], joined
// with ctx.Err() if ctx ended (and with the last Redis error if one cut the
// wait short). Other Redis errors are returned as they are. A waiter that
// gives up leaves the queue, and gives back a permit it may have been
// handed or granted by an attempt whose reply was lost, on a context
// detached from ctx and bounded by a short timeout, so that no permit leaks.
func (s *Semaphore) Acquire(ctx context.Context, opts ...AcquireOption) (*Permit, error) {
	var o acquireOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.waitSet && o.wait <= 0 {
		return s.TryAcquire(ctx)
	}
	if ctx.Err() != nil {
		return nil, s.noPermit(ctx, nil)
	}
	var deadline time.Time // the caller's wait budget: the only client clock used
	if o.waitSet {
		deadline = time.Now().Add(o.wait)
	}
	p := &Permit{s: s, id: uuid.NewString()}
	ok, err := wait.Queue(ctx, s.rdb, deadline, wait.Turn{
		GrantKey: s.keys.grant + p.id,
		Attempt: func(ctx context.Context, left time.Duration, queued bool) (bool, time.Duration, error) {
			seq, ok, retry, err := s.attempt(ctx, p.id, left, queued)
			p.seq = seq
			return ok, retry, err
		},
		Granted: func(val string, _ time.Time) error {
			seq, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return fmt.Errorf("semaphore: acquire %q: malformed grant %q: %w", s.name, val, err)
			}
			p.seq = seq
			return nil
		},
		Leave: func(ctx context.Context) { s.abandon(ctx, p.id, true) },
	})
	if ok {
		return p, nil
	}
	// Queue returns no error when the wait ran out, and a transient one only
	// when the wait would run out during its backoff.
	if err == nil || ctx.Err() != nil || wait.Transient(err) {
		return nil, s.noPermit(ctx, err)
	}
	return nil, fmt.Errorf("semaphore: acquire %q: %w", s.name, err)
}

// attempt runs the acquire script once for permit id. With left > 0 a
// failed attempt queues the caller; queued says an earlier attempt may have
// queued it. It returns the permit's sequence number, or retry, the time
// until the earliest holder's deadline.
func (s *Semaphore) attempt(ctx context.Context, id string, left time.Duration, queued bool) (seq int64, ok bool, retry time.Duration, err error) {
	leftMS := int64(0)
	if left > 0 {
		leftMS = int64((left + time.Millisecond - 1) / time.Millisecond)
	}
	q := "0"
	if queued {
		q = "1"
	}
	r, err := acquireScript.Int64s(ctx, s.rdb,
		[]string{s.keys.holders, s.keys.seq, s.keys.queue, s.keys.waiters, s.keys.grant + id},
		id, s.limit, s.timeout, leftMS, q)
	switch {
	case err != nil:
		return 0, false, 0, err
	case len(r) != 2:
		return 0, false, 0, fmt.Errorf("script %s: want 2 integers, got %d", acquireScript.Name(), len(r))
	case r[0] == 1:
		return r[1], true, 0, nil
	}
	return 0, false, time.Duration(r[1]) * time.Millisecond, nil
}

// abandon releases permit id, which a lost reply or a hand-over may have
// granted, and with leaving also takes it out of the queue, without
// reporting errors: the permit lapses at its deadline anyway.
func (s *Semaphore) abandon(ctx context.Context, id string, leaving bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	_, _ = s.release(ctx, id, leaving)
}

func (s *Semaphore) release(ctx context.Context, id string, leaving bool) (bool, error) {
	l := "0"
	if leaving {
		l = "1"
	}
	n, err := releaseScript.Int64(ctx, s.rdb,
		[]string{s.keys.holders, s.keys.seq, s.keys.queue, s.keys.waiters, s.keys.grant, s.keys.grant + id},
		id, s.timeout, l)
	return n == 1, err
}

// Holders returns the number of live permits, those whose deadline has not
// passed by the server's clock, in one round trip.
func (s *Semaphore) Holders(ctx context.Context) (int64, error) {
	n, err := holdersScript.Int64(ctx, s.rdb, []string{s.keys.holders})
	if err != nil {
		return 0, fmt.Errorf("semaphore: holders %q: %w", s.name, err)
	}
	return n, nil
}

// Permit is one held permit of a [Semaphore]. It is safe for concurrent use.
type Permit struct {
	s   *Semaphore
	id  string
	seq int64
}

// ID returns the permit's random identifier, its member in the holders set.
func (p *Permit) ID() string { return p.id }

// Seq returns the permit's sequence number: every acquisition of a
// semaphore name gets a larger one than all before it, so Seq orders the
// permits in the order the server granted them.
func (p *Permit) Seq() int64 { return p.seq }

// Refresh extends the permit's deadline to the server's now plus the
// semaphore's timeout, in one round trip. It returns [ErrNotHeld] if the
// permit had already timed out or been released; a timed-out permit is then
// removed, and the caller must stop the work it guarded.
func (p *Permit) Refresh(ctx context.Context) error {
	n, err := refreshScript.Int64(ctx, p.s.rdb, []string{p.s.keys.holders}, p.id, p.s.timeout)
	switch {
	case err != nil:
		return fmt.Errorf("semaphore: refresh %q: %w", p.s.name, err)
	case n == 0:
		return fmt.Errorf("semaphore: refresh %q: %w", p.s.name, ErrNotHeld)
	}
	return nil
}

// Release gives the permit back, in one round trip, handing it to the first
// waiting [Semaphore.Acquire] if any. It returns [ErrNotHeld] if the permit had
// already timed out or been released.
func (p *Permit) Release(ctx context.Context) error {
	held, err := p.s.release(ctx, p.id, false)
	switch {
	case err != nil:
		return fmt.Errorf("semaphore: release %q: %w", p.s.name, err)
	case !held:
		return fmt.Errorf("semaphore: release %q: %w", p.s.name, ErrNotHeld)
	}
	return nil
}
