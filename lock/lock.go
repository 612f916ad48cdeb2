package lock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/wait"
)

var (
	// ErrNotObtained is returned when the lock is held by another and the
	// call's wait (if any) ended before it was released.
	ErrNotObtained = errors.New("lock: not obtained")
	// ErrNotHeld is returned by Release and Extend when the lock is no longer
	// ours: its TTL passed (and maybe another holder took it) or it was
	// released already. Context cancelled by KeepAlive carries it as cause.
	ErrNotHeld = errors.New("lock: not held")
)

var (
	//go:embed acquire.lua
	acquireLua    string
	acquireScript = script.New("lock acquire", script.MintLua+acquireLua)

	//go:embed release.lua
	releaseLua    string
	releaseScript = script.New("lock release", script.MintLua+releaseLua)

	//go:embed extend.lua
	extendLua    string
	extendScript = script.New("lock extend", extendLua)
)

// Client is the subset of go-redis this package uses.
type Client interface {
	redis.Scripter
	wait.Client
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// Option configures a [Locker].
type Option func(*options)

type options struct{ prefix string }

// WithPrefix sets the key prefix. Default: "lock:". It must not contain
// '{' or '}'.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// Locker acquires locks. It is safe for concurrent use.
type Locker struct {
	rdb  Client
	keys keys.Space
}

// New returns a Locker backed by rdb. It returns an error if the prefix
// holds '{' or '}'. A nil rdb is a programmer error and panics. Nothing
// reaches Redis.
func New(rdb Client, opts ...Option) (*Locker, error) {
	if rdb == nil {
		panic("lock: New with nil client")
	}
	o := options{prefix: "lock:"}
	for _, opt := range opts {
		opt(&o)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("lock: new: %w", err)
	}
	return &Locker{rdb: rdb, keys: keys.New(o.prefix)}, nil
}

// AcquireOption configures [Locker.Acquire].
type AcquireOption func(*acquireOptions)

type acquireOptions struct{ wait time.Duration }

// WithWait makes Acquire give up after d, returning [ErrNotObtained].
// Without it, Acquire waits until its ctx ends.
func WithWait(d time.Duration) AcquireOption {
	return func(o *acquireOptions) { o.wait = d }
}

// TryAcquire takes the lock name for ttl if it is free, in one round trip.
// It returns [ErrNotObtained] if another holds it. If the call fails (the
// reply may have been lost), it releases the lock the script may have taken,
// at the cost of one more round trip.
func (lk *Locker) TryAcquire(ctx context.Context, name string, ttl time.Duration) (*Lock, error) {
	if err := check(name, ttl); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock: acquire %q: %w", name, errors.Join(ErrNotObtained, err))
	}
	l := lk.newLock(name, ttl)
	ok, _, err := l.attempt(ctx, 0, false)
	if err != nil {
		l.leave(ctx) // the script may have run before the reply was lost
		return nil, fmt.Errorf("lock: acquire %q: %w", name, err)
	}
	if !ok {
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
// ctx ended. Uncontended, it costs one round trip; a waiter pays one more to
// queue, one per blocking wait, and one to leave the queue if it gives up.
func (lk *Locker) Acquire(ctx context.Context, name string, ttl time.Duration, opts ...AcquireOption) (*Lock, error) {
	if err := check(name, ttl); err != nil {
		return nil, err
	}
	var o acquireOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.wait < 0 {
		return nil, fmt.Errorf("lock: acquire %q: wait %v: must not be negative", name, o.wait)
	}
	var deadline time.Time
	if o.wait > 0 {
		deadline = time.Now().Add(o.wait)
	}
	l := lk.newLock(name, ttl)
	ok, err := wait.Queue(ctx, lk.rdb, deadline, wait.Turn{
		GrantKey: l.grantKey(),
		Attempt:  l.attempt,
		Granted:  l.granted,
		Leave:    l.leave,
	})
	switch {
	case ok:
		return l, nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("lock: acquire %q: %w", name, errors.Join(ErrNotObtained, ctx.Err(), err))
	case err != nil && !wait.Transient(err):
		return nil, fmt.Errorf("lock: acquire %q: %w", name, err)
	default:
		return nil, fmt.Errorf("lock: acquire %q: %w", name, errors.Join(ErrNotObtained, err))
	}
}

// Do runs fn while holding the lock name: it acquires it as [Locker.Acquire]
// does, keeps it alive with [Lock.KeepAlive] (fn's ctx is cancelled if the
// lock is lost) and always releases it, even if fn panics. fn gets the held
// [Lock], whose [Lock.Fence] it should pass to the resource it protects. Do
// returns fn's error joined with [ErrNotHeld] if the lock was lost before
// fn returned.
func (lk *Locker) Do(ctx context.Context, name string, ttl time.Duration, fn func(ctx context.Context, l *Lock) error, opts ...AcquireOption) (err error) {
	l, err := lk.Acquire(ctx, name, ttl, opts...)
	if err != nil {
		return err
	}
	held := l.KeepAlive(ctx)
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ttl)
		defer cancel()
		if rerr := l.Release(rctx); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	return fn(held, l)
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
	return &Lock{
		lk:    lk,
		name:  name,
		token: uuid.NewString(),
		ttl:   ttl,
		owner: lk.ownerKey(name),
	}
}

// Lock is a held lock. It is safe for concurrent use.
type Lock struct {
	lk    *Locker
	name  string
	token string
	owner string
	fence int64

	mu       sync.Mutex
	ttl      time.Duration
	expiry   time.Time // local, conservative: sent-at + ttl of the last success
	released bool
	alive    *keepAlive
}

// granted records the lock handed over by a release; the grant carries the
// fence. Its TTL started after since, so since+ttl is a safe expiry estimate.
func (l *Lock) granted(fence string, since time.Time) error {
	f, err := strconv.ParseInt(fence, 10, 64)
	if err != nil {
		return fmt.Errorf("lock: malformed grant %q: %w", fence, err)
	}
	l.mu.Lock()
	l.fence, l.expiry = f, since.Add(l.ttl)
	l.mu.Unlock()
	return nil
}

// attempt runs the acquire script once; left > 0 queues the caller.
func (l *Lock) attempt(ctx context.Context, left time.Duration, queued bool) (bool, time.Duration, error) {
	lk := l.lk
	sent := time.Now()
	res, err := acquireScript.Int64s(ctx, lk.rdb,
		[]string{l.owner, lk.fenceKey(l.name), lk.queueKey(l.name), lk.waitersKey(l.name), l.grantKey()},
		l.token, l.ttl.Milliseconds(), waitMs(left), flag(queued))
	if err != nil {
		return false, 0, err
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("lock: acquire script returned %d values", len(res))
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
	l.mu.Lock()
	l.fence = res[1]
	l.expiry = sent.Add(l.ttl)
	l.mu.Unlock()
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

// leave takes the caller out of the queue and releases the lock in case a
// release handed it over (or an attempt cut short by ctx took it): best
// effort, bounded by one second, whatever ctx says.
func (l *Lock) leave(ctx context.Context) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_, _ = l.release(rctx, true)
}

// Name returns the lock's name.
func (l *Lock) Name() string { return l.name }

// Token returns the random token that identifies this holder.
func (l *Lock) Token() string { return l.token }

// Fence returns the fencing token minted with this acquisition: strictly
// greater than that of every earlier acquisition of the same name. Pass it to
// the resource you protect, which should refuse writes carrying a fence lower
// than one it has seen.
func (l *Lock) Fence() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fence
}

// Release gives the lock up if this holder still has it, in one round trip:
// it hands it to the first waiter, or deletes it when nobody waits. It returns [ErrNotHeld] if the lock expired or was
// released already; then it changes nothing, whoever holds the lock now.
// It stops a running [Lock.KeepAlive].
func (l *Lock) Release(ctx context.Context) error {
	l.stopKeepAlive(nil)
	ok, err := l.release(ctx, false)
	if err != nil {
		return fmt.Errorf("lock: release %q: %w", l.name, err)
	}
	l.mu.Lock()
	l.released = true
	l.mu.Unlock()
	if !ok {
		return fmt.Errorf("lock: release %q: %w", l.name, ErrNotHeld)
	}
	return nil
}

func (l *Lock) release(ctx context.Context, leaving bool) (bool, error) {
	lk := l.lk
	n, err := releaseScript.Int64(ctx, lk.rdb,
		[]string{l.owner, lk.fenceKey(l.name), lk.queueKey(l.name), lk.waitersKey(l.name), lk.grantPrefix(l.name), l.grantKey()},
		l.token, flag(leaving))
	return n == 1, err
}

func (l *Lock) grantKey() string { return l.lk.grantPrefix(l.name) + l.token }

// Extend resets the lock's TTL to ttl if this holder still has it, in one
// round trip. It returns [ErrNotHeld] if the lock expired or was released.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return fmt.Errorf("lock: extend %q: ttl %v: must be at least 1ms", l.name, ttl)
	}
	sent := time.Now()
	n, err := extendScript.Int64(ctx, l.lk.rdb, []string{l.owner}, l.token, ttl.Milliseconds())
	if err != nil {
		return fmt.Errorf("lock: extend %q: %w", l.name, err)
	}
	if n != 1 {
		return fmt.Errorf("lock: extend %q: %w", l.name, ErrNotHeld)
	}
	l.mu.Lock()
	l.ttl = ttl
	l.expiry = sent.Add(ttl)
	l.mu.Unlock()
	return nil
}
