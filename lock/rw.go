package lock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/wait"
)

var (
	//go:embed rwsettle.lua
	rwSettleLua string

	//go:embed rwacquire.lua
	rwAcquireLua    string
	rwAcquireScript = script.New("lock rw acquire", wait.GrantLua+placeLua+rwSettleLua+rwAcquireLua)

	//go:embed rwrelease.lua
	rwReleaseLua    string
	rwReleaseScript = script.NewOnce("lock rw release", placeLua+rwSettleLua+rwReleaseLua)
	// rwLeaveScript is the release script run plainly (no reply record):
	// a waiter leaving the queue, whose answer only says whether it was
	// granted meanwhile (and gave it back); a re-run is harmless.
	rwLeaveScript = script.New("lock rw leave", placeLua+rwSettleLua+rwReleaseLua)

	//go:embed rwextend.lua
	rwExtendLua    string
	rwExtendScript = script.New("lock rw extend", rwExtendLua)
)

// RWLock is a read/write lock named name: any number of readers
// ([RWLock.RLock]) or one writer ([RWLock.Lock]) hold it at once. Waiters
// are served first come first served, consecutive readers together, and a
// waiting writer is not starved by later readers (see the package doc,
// "Read/write locks"). An RWLock is a handle: it holds nothing and reaches
// Redis only when called. It is safe for concurrent use.
type RWLock struct {
	lk   *Locker
	name string
	k    rwKeys
	hot  *atomic.Bool
	err  error // a bad name, returned by every call
}

// RW returns the read/write lock name. Its keys are apart from those of
// the exclusive lock of the same name. A bad name (empty, or holding '{'
// or '}') is reported by every call of the RWLock.
func (lk *Locker) RW(name string) *RWLock {
	rw := &RWLock{lk: lk, name: name}
	if err := keys.CheckEntity("lock name", name); err != nil {
		rw.err = fmt.Errorf("lock: %w", err)
		return rw
	}
	rw.k = lk.rwKeys(name)
	rw.hot = lk.hint(name + "\x00rw")
	return rw
}

// Name returns the lock's name.
func (rw *RWLock) Name() string { return rw.name }

// TryRLock takes the lock shared (read) for ttl if no writer holds it and
// nobody waits for it, in one round trip. It returns [ErrNotObtained]
// otherwise. Lost replies are handled as by [Locker.TryAcquire].
func (rw *RWLock) TryRLock(ctx context.Context, ttl time.Duration) (*RWHold, error) {
	return rw.try(ctx, ttl, false)
}

// TryLock takes the lock exclusive (write) for ttl if nobody holds it and
// nobody waits for it, in one round trip. It returns [ErrNotObtained]
// otherwise. Lost replies are handled as by [Locker.TryAcquire].
func (rw *RWLock) TryLock(ctx context.Context, ttl time.Duration) (*RWHold, error) {
	return rw.try(ctx, ttl, true)
}

// RLock takes the lock shared (read) for ttl, waiting as [Locker.Acquire]
// does (the same options and errors) while a writer holds it or anyone
// waits before the caller: a reader that comes after a waiting writer
// waits behind it. Uncontended it costs one round trip.
func (rw *RWLock) RLock(ctx context.Context, ttl time.Duration, opts ...AcquireOption) (*RWHold, error) {
	return rw.acquire(ctx, ttl, false, opts)
}

// Lock takes the lock exclusive (write) for ttl, waiting as
// [Locker.Acquire] does (the same options and errors) while anyone holds
// it or waits before the caller. Uncontended it costs one round trip.
func (rw *RWLock) Lock(ctx context.Context, ttl time.Duration, opts ...AcquireOption) (*RWHold, error) {
	return rw.acquire(ctx, ttl, true, opts)
}

func rwOp(write bool) string {
	if write {
		return "lock"
	}
	return "rlock"
}

func (rw *RWLock) check(ttl time.Duration, write bool) error {
	if rw.err != nil {
		return rw.err
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("lock: %s %q: ttl %v: must be at least 1ms", rwOp(write), rw.name, ttl)
	}
	return nil
}

func (rw *RWLock) try(ctx context.Context, ttl time.Duration, write bool) (*RWHold, error) {
	if err := rw.check(ttl, write); err != nil {
		return nil, err
	}
	op := rwOp(write)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock: %s %q: %w", op, rw.name, errors.Join(ErrNotObtained, err))
	}
	h := rw.newHold(ttl, write)
	ok, _, err := h.attempts().Attempt(ctx, 0)
	switch {
	case err != nil && !script.MayHaveRun(err): // refused, changing nothing
		return nil, fmt.Errorf("lock: %s %q: %w", op, rw.name, err)
	case err != nil:
		rw.giveBack(h)
		return nil, fmt.Errorf("lock: %s %q: %w", op, rw.name, script.Unknown(err))
	case !ok:
		return nil, fmt.Errorf("lock: %s %q: %w", op, rw.name, ErrNotObtained)
	}
	return h, nil
}

func (rw *RWLock) acquire(ctx context.Context, ttl time.Duration, write bool, opts []AcquireOption) (*RWHold, error) {
	if err := rw.check(ttl, write); err != nil {
		return nil, err
	}
	var o acquireOptions
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("lock: %s %q: %w", rwOp(write), rw.name, err)
	}
	op := rwOp(write)
	switch {
	case o.waitSet && o.wait < 0:
		return nil, fmt.Errorf("lock: %s %q: wait %v: must not be negative", op, rw.name, o.wait)
	case o.waitSet && o.wait == 0:
		return rw.try(ctx, ttl, write)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock: %s %q: %w", op, rw.name, errors.Join(ErrNotObtained, err))
	}
	return rw.wait(ctx, rw.newHold(ttl, write), o)
}

// wait is RLock's and Lock's wait for h.
func (rw *RWLock) wait(ctx context.Context, h *RWHold, o acquireOptions) (*RWHold, error) {
	h.queued = true
	a := h.attempts()
	err := rw.lk.waitTurn(ctx, fmt.Sprintf("%s %q", rwOp(h.write), rw.name), rw.hot, o, wait.Turn{
		GrantKey:  h.grant,
		GrantRole: "lock rw grant",
		Lease:     h.lease.TTL(),
		Attempt:   a.Attempt,
		AttemptIn: a.AttemptIn,
		Granted:   h.granted,
		Leave:     h.leave,
		GiveBack:  func() { rw.giveBack(h) },
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// DoRead runs fn while holding the lock shared, as [Locker.Do] does for
// the exclusive lock: it takes it with [RWLock.RLock], keeps it alive with
// [RWHold.KeepAlive] and always releases it; it returns the same errors
// (wrapping [ErrNotHeld] when the hold was lost while fn ran). A nil fn is
// an error.
func (rw *RWLock) DoRead(ctx context.Context, ttl time.Duration, fn func(ctx context.Context, h *RWHold) error, opts ...AcquireOption) error {
	return rw.do(ctx, ttl, false, fn, opts)
}

// DoWrite runs fn while holding the lock exclusive, as [RWLock.DoRead]
// does with [RWLock.Lock].
func (rw *RWLock) DoWrite(ctx context.Context, ttl time.Duration, fn func(ctx context.Context, h *RWHold) error, opts ...AcquireOption) error {
	return rw.do(ctx, ttl, true, fn, opts)
}

func (rw *RWLock) do(ctx context.Context, ttl time.Duration, write bool, fn func(ctx context.Context, h *RWHold) error, opts []AcquireOption) (err error) {
	op := "do read"
	if write {
		op = "do write"
	}
	if fn == nil {
		return fmt.Errorf("lock: %s %q: nil fn", op, rw.name)
	}
	h, err := rw.acquire(ctx, ttl, write, opts)
	if err != nil {
		return err
	}
	return h.run(ctx, fmt.Sprintf("%s %q", op, rw.name), h.Extend, h.Release, func(ctx context.Context) error { return fn(ctx, h) })
}

func (rw *RWLock) newHold(ttl time.Duration, write bool) *RWHold {
	h := &RWHold{rw: rw, write: write, token: uuid.NewString()}
	h.lease.Init(ttl)
	h.grant = rw.k.grant + h.token
	return h
}

// giveBack releases h in the background (leaving the queue too), as the
// Locker's giveBack does for a Lock.
func (rw *RWLock) giveBack(h *RWHold) {
	lk := rw.lk
	lk.bg.Add(1)
	go func() {
		defer lk.bg.Done()
		until := time.Now().Add(h.lease.TTL())
		err := retry(until, h.leave)
		if err != nil {
			lk.log.Warn("lock: could not give back a read/write lock hold whose outcome was unknown; it expires with its TTL",
				"lock", rw.name, "write", h.write, "ttl", h.lease.TTL(), "err", err)
		}
	}()
}

// RWHold is a held read (shared) or write (exclusive) lock of an
// [RWLock], with its own TTL lease. It is safe for concurrent use.
type RWHold struct {
	rw    *RWLock
	write bool
	token string
	grant string
	// queued: an RLock or Lock, whose attempts may have queued it; kept:
	// handed over by a plain wait, which left the fence on the grant key
	// (its release deletes it).
	queued, kept bool

	hold
}

// Name returns the lock's name.
func (h *RWHold) Name() string { return h.rw.name }

// Token returns the random token that identifies this holder.
func (h *RWHold) Token() string { return h.token }

// Write reports whether h is the exclusive (write) hold.
func (h *RWHold) Write() bool { return h.write }

// Fence returns the fencing token minted when h was granted. Every grant of
// the lock, read or write, mints one, strictly greater than every one
// minted before for the same name; so a writer's fence is greater than
// that of every reader and writer granted before it, and readers granted
// together get consecutive ones. (A reader whose acquisition was re-sent
// after a lost reply gets a newer one than its first.) Pass a writer's
// fence to the resource you protect, which should refuse writes carrying a
// fence lower than one it has seen.
func (h *RWHold) Fence() int64 { return h.fence.Load() }

func (h *RWHold) mode() string {
	if h.write {
		return "w"
	}
	return "r"
}

func (h *RWHold) acquireKeys() []string {
	k := h.rw.k
	return []string{k.writer, k.readers, k.fence, k.queue, k.waiters, k.grant, h.grant}
}

func (h *RWHold) attemptArgs(left time.Duration, wake bool) []any {
	return []any{h.token, h.lease.TTL().Milliseconds(), waitMs(left), flag(wake), h.mode(), h.rw.lk.slack.Milliseconds()}
}

// attempts are the acquire script's attempts; left > 0 queues the caller.
func (h *RWHold) attempts() wait.Attempts {
	return wait.Attempts{Rdb: h.rw.lk.rdb, Script: rwAcquireScript, Keys: h.acquireKeys(), Args: h.attemptArgs, Attempted: h.attempted}
}

// attempted reads the acquire script's reply to an attempt sent at sent.
func (h *RWHold) attempted(res []int64, sent time.Time) (bool, time.Duration, error) {
	if len(res) != 2 {
		return false, 0, fmt.Errorf("lock: %s %q: script returned %d values", rwOp(h.write), h.rw.name, len(res))
	}
	if res[0] == 0 {
		switch r := res[1]; {
		case r < 0: // a writer without a TTL (set by hand): wait for a release
			return false, 0, nil
		case r == 0:
			return false, time.Millisecond, nil
		default:
			return false, time.Duration(r) * time.Millisecond, nil
		}
	}
	h.acquired(res[1], sent)
	return true, 0, nil
}

// granted records the hold handed over by a release; the grant carries the
// fence.
func (h *RWHold) granted(fence string, since time.Time, kept bool) error {
	h.queued, h.kept = false, h.kept || kept
	if err := h.setGrant(fence, since); err != nil {
		return fmt.Errorf("lock: %s %q: %w", rwOp(h.write), h.rw.name, err)
	}
	return nil
}

// Release gives the hold up if it is still held, in one round trip, and
// grants the lock to the waiters it lets in (the next writer when the last
// reader leaves; the readers queued together when a writer leaves). It
// returns [ErrNotHeld] if the hold expired or was released already; then
// it changes nothing of anyone else's. It stops a running
// [RWHold.KeepAlive].
//
// A re-send of the release after a lost reply is answered from a record of
// its first reply (kept for the client's retry window). If every re-send
// fails too, the error wraps ria.ErrOutcomeUnknown, and the Locker retries
// the release in the background until it is answered or the hold's TTL
// has passed.
func (h *RWHold) Release(ctx context.Context) error {
	h.lease.Stop()
	ok, err := h.release(ctx, h.queued, h.kept)
	h.lease.MarkReleased()
	op := "runlock"
	if h.write {
		op = "unlock"
	}
	switch {
	case err != nil && !script.MayHaveRun(err): // refused, changing nothing
		return fmt.Errorf("lock: %s %q: %w", op, h.rw.name, err)
	case err != nil:
		h.rw.giveBack(h)
		return fmt.Errorf("lock: %s %q: %w", op, h.rw.name, script.Unknown(err))
	case !ok:
		return fmt.Errorf("lock: %s %q: %w", op, h.rw.name, ErrNotHeld)
	}
	return nil
}

// release runs the release script once (a once-script: a re-send is
// answered from its record); queued also takes the caller out of the
// queue, clear deletes its grant key.
func (h *RWHold) release(ctx context.Context, queued, clear bool) (bool, error) {
	rw := h.rw
	k := rw.k
	v, err := rwReleaseScript.RunOnce(ctx, rw.lk.rdb, rw.lk.keys.Once(rw.name),
		[]string{k.writer, k.readers, k.fence, k.queue, k.waiters, k.grant, h.grant},
		h.token, h.mode(), flag(queued), flag(clear), rw.lk.slack.Milliseconds())
	if err != nil {
		return false, err
	}
	n, err := rwReleaseScript.AsInt64(v)
	return n == 1, err
}

// leave takes the caller out of the queue and gives back what it holds
// (a hold granted meanwhile, or taken by an attempt whose reply was lost),
// with the plain release script: naturally idempotent, it keeps no record.
func (h *RWHold) leave(ctx context.Context) error {
	rw := h.rw
	k := rw.k
	_, err := rwLeaveScript.Int64(ctx, rw.lk.rdb, []string{k.writer, k.readers, k.fence, k.queue, k.waiters, k.grant, h.grant},
		h.token, h.mode(), "1", "1", rw.lk.slack.Milliseconds())
	return err
}

// Extend resets the hold's TTL to ttl if it is still held, in one round
// trip. It returns [ErrNotHeld] if the hold expired or was released. A
// re-send after a lost reply extends again and answers the same; if every
// re-send fails, the error wraps ria.ErrOutcomeUnknown.
func (h *RWHold) Extend(ctx context.Context, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return fmt.Errorf("lock: extend %q: ttl %v: must be at least 1ms", h.rw.name, ttl)
	}
	sent := time.Now()
	k := h.rw.k
	n, err := rwExtendScript.Int64(ctx, h.rw.lk.rdb, []string{k.writer, k.readers}, h.token, h.mode(), ttl.Milliseconds())
	if err != nil {
		return fmt.Errorf("lock: extend %q: %w", h.rw.name, script.Unknown(err))
	}
	if n != 1 {
		return fmt.Errorf("lock: extend %q: %w", h.rw.name, ErrNotHeld)
	}
	h.lease.Extended(sent, ttl)
	return nil
}
