package lock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/wait"
)

var (
	// ErrNotObtained is returned when an acquisition ended without the
	// lock: another held it until the call's wait (or ctx) ended, or, joined
	// with the cause, Redis kept failing until then. Either way this call
	// holds nothing: an error that wraps ErrNotObtained is never returned
	// for a lock the call took.
	ErrNotObtained = errors.New("lock: not obtained")
	// ErrNotHeld is returned by Release and Extend when the lock is no longer
	// ours: its TTL passed (and maybe another holder took it) or it was
	// released already. A context cancelled by KeepAlive carries it as
	// cause, and [Locker.Do] wraps it when the lock was lost while fn ran.
	ErrNotHeld = errors.New("lock: not held")
)

var (
	//go:embed acquire.lua
	acquireLua    string
	acquireScript = script.New("lock acquire", script.MintLua+wait.GrantLua+acquireLua)

	// placeLua defines live_place, the one reading of a waiter's place
	// that the release scripts and State share.
	//
	//go:embed place.lua
	placeLua string

	//go:embed release.lua
	releaseLua    string
	releaseScript = script.New("lock release", script.MintLua+placeLua+releaseLua)

	//go:embed extend.lua
	extendLua    string
	extendScript = script.New("lock extend", extendLua)
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

// Option configures a [Locker].
type Option func(*options)

type options struct {
	prefix string
	log    *slog.Logger
}

// WithPrefix sets the key prefix. Default: "lock:". It must not contain
// '{' or '}'.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithLogger sets where the Locker logs the give-backs it could not
// complete in the background (see the package doc, "Lost replies").
// Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// placeSlack is how long a waiter's place outlives the wait it was kept
// for: the time a waiter may take between its attempt and its blocking
// wait before a release skips it (and wakes it).
const placeSlack = 2 * time.Second

// hotSlots is the size of a Locker's contention hint table.
const hotSlots = 64

// Locker acquires locks. It is safe for concurrent use.
type Locker struct {
	rdb  Client
	keys keys.Space
	log  *slog.Logger

	// hot[slot(name)] says that the last attempt on a lock of that slot
	// found it taken: Acquire then pipelines its first attempt with its
	// blocking wait. A hint only: a wrong guess costs a round trip (or a
	// BLPOP command), never correctness.
	seed maphash.Seed
	hot  [hotSlots]atomic.Bool

	slack time.Duration // placeSlack; tests shorten it
	bg    sync.WaitGroup
	// hook, if set (tests), is called at points of an Acquire.
	hook func(event string)
}

// New returns a Locker backed by rdb. It returns an error if the prefix
// holds '{' or '}'. A nil rdb is a programmer error and panics. Nothing
// reaches Redis.
func New(rdb Client, opts ...Option) (*Locker, error) {
	if rdb == nil {
		panic("lock: New with nil client")
	}
	o := options{prefix: "lock:"}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("lock: new: %w", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("lock: new: %w", err)
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	return &Locker{rdb: rdb, keys: keys.New(o.prefix), log: o.log, seed: maphash.MakeSeed(), slack: placeSlack}, nil
}

func (lk *Locker) hint(name string) *atomic.Bool {
	return &lk.hot[maphash.String(lk.seed, name)%hotSlots]
}

// AcquireOption configures [Locker.Acquire].
type AcquireOption func(*acquireOptions)

type acquireOptions struct {
	wait    time.Duration
	waitSet bool
}

// WithWait bounds how long Acquire waits for the lock: it gives up after d
// with [ErrNotObtained]. WithWait(0) makes a single attempt, as
// [Locker.TryAcquire] does. A negative d is an error. Without WithWait,
// Acquire waits until its ctx ends.
func WithWait(d time.Duration) AcquireOption {
	return func(o *acquireOptions) { o.wait, o.waitSet = d, true }
}

// TryAcquire takes the lock name for ttl if it is free, in one round trip.
// It returns [ErrNotObtained] if another holds it.
//
// A re-send of its script after a lost reply recognises the lock it took
// and answers with it. If every re-send fails too, the error wraps
// ria.ErrOutcomeUnknown (never ErrNotObtained), and the Locker gives back
// the lock the script may have taken, in the background, until it
// succeeds or the lock's TTL has passed.
func (lk *Locker) TryAcquire(ctx context.Context, name string, ttl time.Duration) (*Lock, error) {
	if err := check(name, ttl); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock: acquire %q: %w", name, errors.Join(ErrNotObtained, err))
	}
	l := lk.newLock(name, ttl)
	ok, _, err := l.attempts().Attempt(ctx, 0)
	switch {
	case err != nil && !script.MayHaveRun(err): // refused, changing nothing
		return nil, fmt.Errorf("lock: acquire %q: %w", name, err)
	case err != nil:
		lk.giveBack(l)
		return nil, fmt.Errorf("lock: acquire %q: %w", name, script.Unknown(err))
	case !ok:
		return nil, fmt.Errorf("lock: acquire %q: %w", name, ErrNotObtained)
	}
	return l, nil
}

// Acquire takes the lock name for ttl, waiting while another holds it until
// it is handed over, ctx ends, or the [WithWait] time passes. Waiters queue
// first come first served and do not poll: a release hands the lock directly
// to the first live waiter, which was blocked on a list of its own. If the
// holder never releases (it crashed), waiters try again when its TTL ends.
// Transient errors (a restarting server) are retried with backoff while the
// wait lasts.
//
// It returns [ErrNotObtained] when the wait ends, joined with ctx.Err() when
// ctx ended (and with the last Redis error if one cut the wait short). If
// the waiter could not confirm that it left the queue (Redis kept failing),
// the error wraps ria.ErrOutcomeUnknown instead, and the Locker gives back
// what it may hold in the background. A key of the wrong type gives a
// *ria.KeyError. Uncontended, Acquire costs one round trip; contended, one
// for "queue and block" (see the package doc).
func (lk *Locker) Acquire(ctx context.Context, name string, ttl time.Duration, opts ...AcquireOption) (*Lock, error) {
	if err := check(name, ttl); err != nil {
		return nil, err
	}
	var o acquireOptions
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("lock: acquire %q: %w", name, err)
	}
	switch {
	case o.waitSet && o.wait < 0:
		return nil, fmt.Errorf("lock: acquire %q: wait %v: must not be negative", name, o.wait)
	case o.waitSet && o.wait == 0:
		return lk.TryAcquire(ctx, name, ttl)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock: acquire %q: %w", name, errors.Join(ErrNotObtained, err))
	}
	return lk.acquire(ctx, lk.newLock(name, ttl), o)
}

// acquire is Acquire's wait for l.
func (lk *Locker) acquire(ctx context.Context, l *Lock, o acquireOptions) (*Lock, error) {
	l.queued = true
	a := l.attempts()
	err := lk.waitTurn(ctx, fmt.Sprintf("acquire %q", l.name), lk.hint(l.name), o, wait.Turn{
		GrantKey:  l.grantKey(),
		GrantRole: "lock grant",
		Lease:     l.lease.TTL(),
		Attempt:   a.Attempt,
		AttemptIn: a.AttemptIn,
		Granted:   l.granted,
		Leave: func(ctx context.Context) error {
			_, err := l.release(ctx, true, true, "")
			return err
		},
		GiveBack: func() { lk.giveBack(l) },
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// waitTurn waits in a lock's FIFO queue (wait.Queue) for the turn t, with
// the Locker's events and the lock's contention hint hot; what names the
// call in errors. It returns nil once the lock is held.
func (lk *Locker) waitTurn(ctx context.Context, what string, hot *atomic.Bool, o acquireOptions, t wait.Turn) error {
	var deadline time.Time
	if o.waitSet {
		deadline = time.Now().Add(o.wait)
	}
	t.Hint, t.Event = hot, lk.event
	ok, err := wait.Queue(ctx, lk.rdb, deadline, t)
	switch {
	case ok:
		return nil
	case errors.Is(err, ria.ErrOutcomeUnknown):
		return fmt.Errorf("lock: %s: %w", what, err)
	case ctx.Err() != nil:
		return fmt.Errorf("lock: %s: %w", what, errors.Join(ErrNotObtained, err))
	case err != nil && !wait.Transient(err):
		return fmt.Errorf("lock: %s: %w", what, err)
	default:
		return fmt.Errorf("lock: %s: %w", what, errors.Join(ErrNotObtained, err))
	}
}

func (lk *Locker) event(e string) {
	if lk.hook != nil {
		lk.hook(e)
	}
}

// Do runs fn while holding the lock name: it acquires it as [Locker.Acquire]
// does, keeps it alive with [Lock.KeepAlive] (fn's ctx is cancelled, with
// cause [ErrNotHeld], if the lock is lost) and always releases it, even if
// fn panics. fn gets the held [Lock], whose [Lock.Fence] it should pass to
// the resource it protects.
//
// Do returns the acquisition's error, or fn's error; when the lock was lost
// before fn returned (KeepAlive found it taken, or could not extend it
// before its TTL ran out, say through a Redis outage), the error wraps
// [ErrNotHeld] too, and Do does not try to release a lock it knows lost.
// The release is bounded by the lock's TTL; if it fails, its error is
// joined (and the Locker gives the lock back in the background, see
// [Lock.Release]). A nil fn is an error.
func (lk *Locker) Do(ctx context.Context, name string, ttl time.Duration, fn func(ctx context.Context, l *Lock) error, opts ...AcquireOption) (err error) {
	if fn == nil {
		return fmt.Errorf("lock: do %q: nil fn", name)
	}
	l, err := lk.Acquire(ctx, name, ttl, opts...)
	if err != nil {
		return err
	}
	return l.run(ctx, fmt.Sprintf("do %q", name), l.Extend, l.Release, func(ctx context.Context) error { return fn(ctx, l) })
}

func check(name string, ttl time.Duration) error {
	if err := keys.CheckEntity("lock name", name); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("lock: acquire %q: ttl %v: must be at least 1ms", name, ttl)
	}
	return nil
}

func (lk *Locker) newLock(name string, ttl time.Duration) *Lock {
	l := &Lock{lk: lk, name: name, token: uuid.NewString()}
	l.lease.Init(ttl)
	l.owner = lk.ownerKey(name)
	l.grant = lk.grantPrefix(name) + l.token
	// acquire: owner, fence, queue, waiters, grant; release adds the grant
	// prefix, the grant and the release record
	l.keys = []string{l.owner, lk.fenceKey(name), lk.queueKey(name), lk.waitersKey(name), l.grant,
		lk.grantPrefix(name), l.grant, lk.recordKey(name, l.token)}
	return l
}

// giveBack releases l in the background: it retries with backoff until the release is answered, or l's TTL
// has passed since (the lock, if it was ever ours, has expired), or the
// release meets an error that retrying cannot mend. It logs when it could
// not complete.
func (lk *Locker) giveBack(l *Lock) {
	lk.bg.Add(1)
	go func() {
		defer lk.bg.Done()
		until := time.Now().Add(l.lease.TTL())
		err := retry(until, func(ctx context.Context) error {
			_, err := l.release(ctx, true, true, "")
			return err
		})
		if err != nil {
			lk.log.Warn("lock: could not give back a lock whose acquisition outcome was unknown; it expires with its TTL",
				"lock", l.name, "ttl", l.lease.TTL(), "err", err)
		}
	}()
}

// retry runs fn until it succeeds, fails with an error that retrying cannot
// mend, or until passes; each try gets the time left. It returns the last
// error.
func retry(until time.Time, fn func(ctx context.Context) error) error {
	var backoff time.Duration
	for {
		ctx, cancel := context.WithDeadline(context.Background(), until)
		err := fn(ctx)
		cancel()
		if err == nil || !script.MayHaveRun(err) && !wait.Transient(err) {
			return err
		}
		backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
		d := wait.Jitter(backoff)
		if time.Until(until) < d {
			return err
		}
		time.Sleep(d)
	}
}

// Lock is a held lock. It is safe for concurrent use.
type Lock struct {
	lk    *Locker
	name  string
	token string
	owner string
	grant string
	keys  []string // see newLock

	// queued: an Acquire, whose attempts may have queued it (its release
	// leaves the queue); kept: handed over by a plain wait, which left the
	// fence on the grant key (its release deletes it).
	queued, kept bool

	hold
}

// granted records the lock handed over by a release; the grant carries the
// fence. Its TTL started after since (see setGrant), so since+ttl is a safe
// expiry estimate.
func (l *Lock) granted(fence string, since time.Time, kept bool) error {
	// The release that handed it over took the waiter's place out of the
	// queue; the value stays on the grant key after a plain wait.
	l.queued, l.kept = false, l.kept || kept
	if err := l.setGrant(fence, since); err != nil {
		return fmt.Errorf("lock: acquire %q: %w", l.name, err)
	}
	return nil
}

func (l *Lock) acquireKeys() []string { return l.keys[:5:5] }

func (l *Lock) releaseKeys() []string {
	k := l.keys
	return []string{k[0], k[1], k[2], k[3], k[5], k[6], k[7]}
}

// attemptArgs are the acquire script's arguments; left > 0 queues the
// caller.
func (l *Lock) attemptArgs(left time.Duration, wake bool) []any {
	return []any{l.token, l.lease.TTL().Milliseconds(), waitMs(left), flag(wake), l.lk.slack.Milliseconds()}
}

// attempts are the acquire script's attempts; left > 0 queues the caller.
func (l *Lock) attempts() wait.Attempts {
	return wait.Attempts{Rdb: l.lk.rdb, Script: acquireScript, Keys: l.acquireKeys(), Args: l.attemptArgs, Attempted: l.attempted}
}

// attempted reads the acquire script's reply to an attempt sent at sent.
func (l *Lock) attempted(res []int64, sent time.Time) (bool, time.Duration, error) {
	if len(res) != 2 {
		return false, 0, fmt.Errorf("lock: acquire %q: script returned %d values", l.name, len(res))
	}
	if res[0] == 0 {
		switch pttl := res[1]; {
		case pttl < 0: // held without a TTL (set by hand): wait for a release
			return false, 0, nil
		case pttl == 0: // expires within the millisecond
			return false, time.Millisecond, nil
		default:
			return false, time.Duration(pttl) * time.Millisecond, nil
		}
	}
	l.acquired(res[1], sent)
	return true, 0, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func waitMs(left time.Duration) int64 {
	if left <= 0 {
		return 0
	}
	return max(left.Milliseconds(), 1)
}

// Name returns the lock's name.
func (l *Lock) Name() string { return l.name }

// Token returns the random token that identifies this holder.
func (l *Lock) Token() string { return l.token }

// Fence returns the fencing token minted with this acquisition: strictly
// greater than that of every earlier acquisition of the same name. Pass it to
// the resource you protect, which should refuse writes carrying a fence lower
// than one it has seen.
func (l *Lock) Fence() int64 { return l.fence.Load() }

// Release gives the lock up if this holder still has it, in one round
// trip: it hands it to the first waiter, or deletes it when nobody waits.
// It returns [ErrNotHeld] if the lock expired or was released already;
// then it changes nothing, whoever holds the lock now. It stops a running
// [Lock.KeepAlive].
//
// A re-send of the release after a lost reply answers as the first run
// did: a successful release leaves a record of the call for the client's
// retry window. If every re-send fails too, the error wraps
// ria.ErrOutcomeUnknown, and the Locker retries the release in the
// background until it is answered or the lock's TTL has passed.
func (l *Lock) Release(ctx context.Context) error {
	l.lease.Stop()
	ok, err := l.release(ctx, l.queued, l.kept, script.Nonce())
	l.lease.MarkReleased()
	switch {
	case err != nil && !script.MayHaveRun(err): // refused, changing nothing
		return fmt.Errorf("lock: release %q: %w", l.name, err)
	case err != nil:
		l.lk.giveBack(l)
		return fmt.Errorf("lock: release %q: %w", l.name, script.Unknown(err))
	case !ok:
		return fmt.Errorf("lock: release %q: %w", l.name, ErrNotHeld)
	}
	return nil
}

// release runs the release script: queued also takes the caller out of
// the queue, clear deletes its grant key; a non-empty nonce records a
// successful release for the client's retry window (bounded by ctx's
// deadline).
func (l *Lock) release(ctx context.Context, queued, clear bool, nonce string) (bool, error) {
	lk := l.lk
	var recordMs int64
	if nonce != "" {
		w := script.ReplayWindow(lk.rdb)
		if dl, ok := ctx.Deadline(); ok && w > 0 {
			w = min(w, time.Until(dl)+time.Second)
		}
		recordMs = max(w.Milliseconds(), 0)
	}
	n, err := releaseScript.Int64(ctx, lk.rdb,
		l.releaseKeys(),
		l.token, flag(queued), flag(clear), nonce, recordMs, lk.slack.Milliseconds())
	return n == 1, err
}

func (l *Lock) grantKey() string { return l.grant }

// Extend resets the lock's TTL to ttl if this holder still has it, in one
// round trip. It returns [ErrNotHeld] if the lock expired or was released.
// A re-send after a lost reply extends again and answers the same; if
// every re-send fails, the error wraps ria.ErrOutcomeUnknown.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return fmt.Errorf("lock: extend %q: ttl %v: must be at least 1ms", l.name, ttl)
	}
	sent := time.Now()
	n, err := extendScript.Int64(ctx, l.lk.rdb, []string{l.owner}, l.token, ttl.Milliseconds())
	if err != nil {
		return fmt.Errorf("lock: extend %q: %w", l.name, script.Unknown(err))
	}
	if n != 1 {
		return fmt.Errorf("lock: extend %q: %w", l.name, ErrNotHeld)
	}
	l.lease.Extended(sent, ttl)
	return nil
}
