package semaphore

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/lease"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/wait"
)

// Client is the subset of go-redis this package uses: scripts, the
// blocking move a waiter blocks on, and pipelines (a contended waiter sends
// its attempt and its blocking pop in one).
type Client interface {
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd
	BLMove(ctx context.Context, source, destination, srcpos, destpos string, timeout time.Duration) *redis.StringCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

var (
	// ErrNoPermit means that no permit was available: the semaphore was
	// full for a [Semaphore.TryAcquire], or stayed full for the whole wait of
	// a [Semaphore.Acquire] (joined with the cause when Redis kept failing
	// until then). Either way the call holds nothing: an error that wraps
	// ErrNoPermit is never returned for a permit the call took.
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
	// placeLua defines queue_head and drop_head, the one reading of which
	// waiters in the queue are live, shared by acquire and release
	//go:embed place.lua
	placeLua string

	acquireScript = script.New("semaphore acquire", script.MintLua+wait.GrantLua+placeLua+acquireLua)
	releaseScript = script.New("semaphore release", script.MintLua+placeLua+releaseLua)
	refreshScript = script.New("semaphore refresh", refreshLua)
	holdersScript = script.New("semaphore holders", holdersLua)
)

// placeSlack is how long a waiter's place outlives the wait it was kept
// for: the time a waiter may take between its attempt and its blocking
// wait before a release skips it (and wakes it).
const placeSlack = 2 * time.Second

// Option configures a [Semaphore].
type Option func(*options)

type options struct {
	prefix string
	log    *slog.Logger
}

// WithPrefix sets the key prefix. Default: "semaphore:". It must not
// contain '{' or '}', which would break the keys' Cluster hash tag.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithLogger sets where the Semaphore logs the give-backs it could not
// complete in the background (see the package doc, "Lost replies").
// Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// AcquireOption configures one [Semaphore.Acquire].
type AcquireOption func(*acquireOptions)

type acquireOptions struct {
	wait    time.Duration
	waitSet bool
}

// WithWait bounds how long [Semaphore.Acquire] waits for a permit: it gives
// up after d, measured from the call, with [ErrNoPermit]. WithWait(0) makes
// a single attempt, as [Semaphore.TryAcquire] does. A negative d is an
// error. Without WithWait, Acquire waits until a permit is free or ctx
// ends.
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
	log     *slog.Logger

	// hot says that the last attempt found the semaphore full: Acquire then
	// pipelines its first attempt with its blocking wait. A hint only.
	hot   atomic.Bool
	slack time.Duration // placeSlack; tests shorten it
	bg    sync.WaitGroup
	// hook, if set (tests), is called at points of an Acquire.
	hook func(event string)
}

// New returns the semaphore called name, of which at most limit permits can
// be held at once, each for timeout unless refreshed. timeout is rounded
// down to whole milliseconds. Every Semaphore of the same name and prefix
// shares the same permits, whatever client or process holds it; they should
// agree on limit and timeout.
//
// New returns an error naming the bad argument if name is empty or holds
// '{' or '}', limit is less than 1, timeout is less than a millisecond or
// the prefix holds '{' or '}'. It panics if rdb is nil. Nothing reaches
// Redis.
func New(rdb Client, name string, limit int, timeout time.Duration, opts ...Option) (*Semaphore, error) {
	if rdb == nil {
		panic("semaphore: New with a nil client")
	}
	o := options{prefix: "semaphore:"}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("semaphore: new: %w", err)
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
	if o.log == nil {
		o.log = slog.Default()
	}
	return &Semaphore{
		rdb:     rdb,
		name:    name,
		limit:   limit,
		timeout: timeout.Milliseconds(),
		keys:    newKeySet(keys.New(o.prefix), name),
		log:     o.log,
		slack:   placeSlack,
	}, nil
}

// TryAcquire takes a permit if one is free, in one round trip. It returns
// [ErrNoPermit] if the semaphore is full, and an error that is both
// [ErrNoPermit] and ctx.Err() if ctx had ended.
//
// A re-send of its script after a lost reply recognises the permit it took
// and answers with it. If every re-send fails too, the error wraps
// ria.ErrOutcomeUnknown (never ErrNoPermit), and the Semaphore gives back
// the permit the script may have taken, in the background, until it
// succeeds or the permit's timeout has passed.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Permit, error) {
	if ctx.Err() != nil {
		return nil, s.noPermit(ctx, nil)
	}
	p := s.newPermit(uuid.NewString())
	ok, _, err := p.attempts().Attempt(ctx, 0)
	switch {
	case err != nil && !script.MayHaveRun(err): // refused, changing nothing
		return nil, fmt.Errorf("semaphore: acquire %q: %w", s.name, err)
	case err != nil:
		s.giveBack(p)
		return nil, fmt.Errorf("semaphore: acquire %q: %w", s.name, script.Unknown(err))
	case !ok:
		s.hot.Store(true)
		return nil, s.noPermit(ctx, nil)
	}
	return p, nil
}

// noPermit is the error of an acquisition that ended without a permit: it
// is [ErrNoPermit], err (the last error, if any) and ctx.Err() (if ctx
// ended), each once.
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
// which was blocked on a list of its own. A holder that never releases (it
// crashed) frees its permit at its deadline, when the waiters blocked until
// then try again. Transient Redis errors (network, server loading or
// restarting) are retried with backoff.
//
// When the wait ends without a permit, the error is [ErrNoPermit], joined
// with ctx.Err() if ctx ended (and with the last Redis error if one cut the
// wait short). A waiter that gives up leaves the queue, and gives back a
// permit it may have been handed meanwhile; if it cannot confirm that
// (Redis kept failing), the error wraps ria.ErrOutcomeUnknown instead of
// ErrNoPermit and the Semaphore gives the permit back in the background. A
// key of the wrong type gives a *ria.KeyError; other Redis errors are
// returned as they are.
func (s *Semaphore) Acquire(ctx context.Context, opts ...AcquireOption) (*Permit, error) {
	var o acquireOptions
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("semaphore: acquire %q: %w", s.name, err)
	}
	switch {
	case o.waitSet && o.wait < 0:
		return nil, fmt.Errorf("semaphore: acquire %q: wait %v: must not be negative", s.name, o.wait)
	case o.waitSet && o.wait == 0:
		return s.TryAcquire(ctx)
	}
	if ctx.Err() != nil {
		return nil, s.noPermit(ctx, nil)
	}
	return s.acquire(ctx, s.newPermit(uuid.NewString()), o)
}

// acquire is Acquire's wait for permit p.
func (s *Semaphore) acquire(ctx context.Context, p *Permit, o acquireOptions) (*Permit, error) {
	var deadline time.Time // the caller's wait budget: the only client clock used
	if o.waitSet {
		deadline = time.Now().Add(o.wait)
	}
	a := p.attempts()
	ok, err := wait.Queue(ctx, s.rdb, deadline, wait.Turn{
		GrantKey:  s.keys.grant + p.id,
		GrantRole: "semaphore grant",
		Lease:     time.Duration(s.timeout) * time.Millisecond,
		Hint:      &s.hot,
		Event:     s.event,
		Attempt:   a.Attempt,
		AttemptIn: a.AttemptIn,
		Granted: func(val string, since time.Time, kept bool) error {
			p.kept = p.kept || kept
			seq, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return fmt.Errorf("semaphore: acquire %q: malformed grant %q: %w", s.name, val, err)
			}
			p.seq = seq
			// The release that handed it over set its deadline after since.
			p.setExpiry(since)
			return nil
		},
		Leave: func(ctx context.Context) error {
			_, err := s.release(ctx, p.id, true, true, "")
			return err
		},
		GiveBack: func() { s.giveBack(p) },
	})
	switch {
	case ok:
		return p, nil
	case errors.Is(err, ria.ErrOutcomeUnknown):
		return nil, fmt.Errorf("semaphore: acquire %q: %w", s.name, err)
	case err == nil || ctx.Err() != nil || wait.Transient(err):
		// Queue returns no error when the wait ran out, and a transient one
		// only when the wait would run out during its backoff.
		return nil, s.noPermit(ctx, err)
	}
	return nil, fmt.Errorf("semaphore: acquire %q: %w", s.name, err)
}

func (s *Semaphore) event(e string) {
	if s.hook != nil {
		s.hook(e)
	}
}

func (p *Permit) acquireKeys() []string {
	k := p.s.keys
	return []string{k.holders, k.seq, k.queue, k.waiters, k.grant + p.id}
}

// attemptArgs are the acquire script's arguments; left > 0 queues the
// caller, and any attempt of a waiting Acquire may find it queued.
func (p *Permit) attemptArgs(left time.Duration, wake bool) []any {
	leftMS := int64(0)
	if left > 0 {
		leftMS = int64((left + time.Millisecond - 1) / time.Millisecond)
	}
	s := p.s
	return []any{p.id, s.limit, s.timeout, leftMS, flag(left > 0), flag(wake), s.slack.Milliseconds()}
}

// attempts are the acquire script's attempts for p. With left > 0 a failed
// attempt queues the caller. An attempt records the permit's sequence
// number, or returns retry, the time until the earliest holder's deadline.
func (p *Permit) attempts() wait.Attempts {
	return wait.Attempts{Rdb: p.s.rdb, Script: acquireScript, Keys: p.acquireKeys(), Args: p.attemptArgs, Attempted: p.attempted}
}

// attempted reads the acquire script's reply to an attempt sent at sent.
func (p *Permit) attempted(r []int64, sent time.Time) (bool, time.Duration, error) {
	switch {
	case len(r) != 2:
		return false, 0, fmt.Errorf("script %s: want 2 integers, got %d", acquireScript.Name(), len(r))
	case r[0] == 1:
		p.seq = r[1]
		p.setExpiry(sent)
		return true, 0, nil
	}
	return false, time.Duration(r[1]) * time.Millisecond, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// giveBack releases p in the background: it retries with backoff until the release is answered, or the
// semaphore's timeout has passed since (the permit, if it was ever held,
// has lapsed), or the release meets an error that retrying cannot mend. It
// logs when it could not complete.
func (s *Semaphore) giveBack(p *Permit) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		until := time.Now().Add(s.lease())
		var backoff time.Duration
		for {
			ctx, cancel := context.WithDeadline(context.Background(), until)
			_, err := s.release(ctx, p.id, true, true, "")
			cancel()
			if err == nil || !script.MayHaveRun(err) && !wait.Transient(err) {
				if err != nil {
					s.log.Warn("semaphore: could not give back a permit whose acquisition outcome was unknown; it lapses at its timeout",
						"semaphore", s.name, "err", err)
				}
				return
			}
			backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
			d := wait.Jitter(backoff)
			if time.Until(until) < d {
				s.log.Warn("semaphore: could not give back a permit whose acquisition outcome was unknown; it lapses at its timeout",
					"semaphore", s.name, "timeout", s.lease(), "err", err)
				return
			}
			time.Sleep(d)
		}
	}()
}

// release runs the release script for permit id: leaving also takes it out
// of the queue, clear deletes its grant list; a non-empty nonce records a
// successful release for the client's retry window (bounded by ctx's
// deadline).
func (s *Semaphore) release(ctx context.Context, id string, leaving, clear bool, nonce string) (bool, error) {
	var recordMs int64
	if nonce != "" {
		w := script.ReplayWindow(s.rdb)
		if dl, ok := ctx.Deadline(); ok && w > 0 {
			w = min(w, time.Until(dl)+time.Second)
		}
		recordMs = max(w.Milliseconds(), 0)
	}
	n, err := releaseScript.Int64(ctx, s.rdb,
		[]string{s.keys.holders, s.keys.seq, s.keys.queue, s.keys.waiters, s.keys.grant, s.keys.grant + id, s.keys.record(id)},
		id, s.timeout, flag(leaving), flag(clear), nonce, recordMs, s.slack.Milliseconds())
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
	// kept: handed over by a plain wait, which left the seq on the grant
	// list (Release deletes it).
	kept bool

	// lease is the permit's local state: its conservative expiry (the
	// send time of the last acquisition or refresh that succeeded, plus the
	// timeout: the server set the deadline after that), whether it was
	// released or found lost (with a cause wrapping ErrNotHeld), and the
	// refresh loop of KeepAlive.
	lease lease.Hold
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
// removed, and the caller must stop the work it guarded. A re-send after a
// lost reply refreshes again and answers the same; if every re-send fails,
// the error wraps ria.ErrOutcomeUnknown. [Permit.KeepAlive] calls it in the
// background.
func (p *Permit) Refresh(ctx context.Context) error {
	sent := time.Now()
	n, err := refreshScript.Int64(ctx, p.s.rdb, []string{p.s.keys.holders}, p.id, p.s.timeout)
	switch {
	case err != nil:
		return fmt.Errorf("semaphore: refresh %q: %w", p.s.name, script.Unknown(err))
	case n == 0:
		return fmt.Errorf("semaphore: refresh %q: %w", p.s.name, ErrNotHeld)
	}
	p.setExpiry(sent)
	return nil
}

// Release gives the permit back, in one round trip, handing it to the first
// waiting [Semaphore.Acquire] if any. It returns [ErrNotHeld] if the permit
// had already timed out or been released. It stops [Permit.KeepAlive]'s
// refreshes first, and cancels the contexts KeepAlive returned.
//
// A re-send of the release after a lost reply answers as the first run
// did: a successful release leaves a record of the call for the client's
// retry window. If every re-send fails too, the error wraps
// ria.ErrOutcomeUnknown, and the Semaphore retries the release in the
// background until it is answered or the timeout has passed.
func (p *Permit) Release(ctx context.Context) error {
	p.lease.Stop()
	held, err := p.s.release(ctx, p.id, false, p.kept, script.Nonce())
	p.lease.MarkReleased()
	switch {
	case err != nil && !script.MayHaveRun(err): // refused, changing nothing
		return fmt.Errorf("semaphore: release %q: %w", p.s.name, err)
	case err != nil:
		p.s.giveBack(p)
		return fmt.Errorf("semaphore: release %q: %w", p.s.name, script.Unknown(err))
	case !held:
		return fmt.Errorf("semaphore: release %q: %w", p.s.name, ErrNotHeld)
	}
	return nil
}
