// Package wait is the waiting side of ria's blocking primitives (lock,
// semaphore): a first-come-first-served queue with direct hand-off, and no
// polling.
//
// An acquirer that finds the resource taken is queued by the same acquire
// script, and blocks on a grant list of its own. The holder's release
// script hands the resource directly to the first live waiter and pushes a
// value to that waiter's grant list, which wakes it already holding the
// resource. A holder that crashes never releases, so a waiter also wakes
// when the holder's lease would end (the retryIn its attempt returned) and
// tries again. A waiter that gives up leaves the queue, handing on whatever
// it was granted meanwhile.
//
// A contended acquirer sends its attempt and its blocking pop in one
// pipeline (one round trip for "queue and block"): see [Queue].
//
// It also holds the blocking reads other packages build on ([BLPop],
// [BLMove], [Detached]) and the retry helpers ([Transient], [Jitter],
// [Spread], [Sleep]).
package wait

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

// GrantLua defines the Lua functions grant_fail(grant, wake, role, err)
// and grant_give(grant, wake, v, ttl) that an acquire script sent in wake
// mode (Turn.AttemptIn) uses to answer the blocking pop pipelined after
// it: prepend it to the script's source, after script.New's checks.
//
//go:embed grant.lua
var GrantLua string

// Client is the subset of go-redis that [Queue] and [Pop] need.
type Client interface {
	BLMove(ctx context.Context, source, destination, srcpos, destpos string, timeout time.Duration) *redis.StringCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

const (
	// MaxBlock caps one blocking wait; the waiter then tries again.
	MaxBlock = 30 * time.Second
	// BlindCap caps the wait of a pipelined round, which is chosen before
	// the round's attempt tells when the holder's lease ends: a waiter
	// notices a crashed holder's expiry at most this late (or half its
	// own lease, if shorter).
	BlindCap = time.Second
	// minPipe is the least read-timeout room for a pipelined round.
	minPipe = 10 * time.Millisecond
	// JoinWait is how long, after ctx ended and they woke it, Pop waits for
	// its blocking call in flight to come back, and Queue lets go-redis
	// retry its round before telling it to stop.
	JoinWait = 2 * time.Second
	// LeaveTimeout bounds the Leave that Queue runs when it gives up.
	LeaveTimeout = time.Second
)

// Turn is one acquirer's side of the queue.
type Turn struct {
	// GrantKey is the caller's own grant list, and GrantRole its role in
	// the *ria.KeyError of a blocking read that finds another type there.
	GrantKey  string
	GrantRole string
	// Lease is the caller's own lease (a lock's TTL, a permit's timeout).
	// Half of it bounds every blocking wait after an attempt: a grant is
	// dated from the last attempt (the lease a release gives starts at the
	// hand-over, later), so one that came more than a lease after it would
	// reach the caller with its local expiry passed; half a lease leaves
	// the caller time to refresh it. A caller waiting behind a longer
	// holder attempts again every half lease.
	Lease time.Duration
	// Hint, if not nil, is the caller's contention hint: set, it says that
	// the resource is likely taken (recent attempts found it so), and Queue
	// starts with a pipelined round instead of a plain attempt. Queue
	// stores in it whether each attempt found the resource taken.
	Hint *atomic.Bool
	// Event, if not nil, is called with "attempt" before each attempt,
	// "queued" after a plain attempt found the resource taken (and queued
	// the caller), and "leave" before the caller leaves the queue (tests
	// synchronise on them).
	Event func(e string)
	// Attempt runs the acquire script once. With left > 0 a failed attempt
	// queues the caller, keeping its place for about left (plus slack). On
	// failure it returns retryIn, the time after which the resource may
	// free itself (the earliest holder's lease); zero or less means
	// unknown.
	Attempt func(ctx context.Context, left time.Duration) (ok bool, retryIn time.Duration, err error)
	// AttemptIn queues the same attempt on p, in wake mode: when the script
	// takes the resource (or fails a check of its keys) it pushes a value
	// to GrantKey, so that the blocking pop that Queue pipelines after it
	// returns at once. read returns the attempt's outcome once p has run.
	// An attempt the server could not run because it does not know the
	// script (NOSCRIPT) returns that error; Queue then goes on with
	// Attempt, which loads it.
	AttemptIn func(ctx context.Context, p redis.Pipeliner, left time.Duration) (read func() (ok bool, retryIn time.Duration, err error))
	// Granted is called with the value a release pushed to GrantKey; the
	// grant happened after since. kept says that the value is still on
	// GrantKey (a plain wait moves it onto itself; a pipelined pop takes
	// it): the caller deletes it when it is done. An empty value is not a
	// grant but a wake (see [Queue]) and is not passed to Granted.
	Granted func(val string, since time.Time, kept bool) error
	// Leave takes the caller out of the queue and gives back anything it
	// was granted meanwhile, in one try. ctx is not the caller's: it is
	// bounded by [LeaveTimeout].
	Leave func(ctx context.Context) error
	// GiveBack retries Leave in the background until it succeeds or the
	// caller's lease makes it moot. Queue calls it when Leave failed.
	GiveBack func()
}

// Queue waits for t's turn: it attempts until an attempt succeeds or the
// resource is handed over (true, nil), deadline passes (false, nil; a zero
// deadline never passes), ctx ends (false, ctx.Err() joined with the last
// transient error) or an attempt fails with an error that retrying cannot
// mend (false, err). Transient errors (network, server loading or
// restarting) are retried with exponential backoff and jitter; if the
// deadline passes during one, Queue returns (false, err).
//
// Whenever it returns false after an attempt that may have queued the
// caller (or taken the resource), it has called t.Leave; if that failed (or
// a round was still in flight), it has called t.GiveBack and its error
// wraps ria.ErrOutcomeUnknown: the caller may hold the resource until the
// give-back succeeds or its lease ends.
//
// When ctx ends during a round, Queue wakes the round's blocking read and
// returns once the round is back: within a round trip or two, or, when
// Redis does not answer, about JoinWait plus the client's read timeout.
//
// Rounds. A plain round is an attempt (1 round trip) followed, if it
// queued the caller, by a blocking BLMOVE of the grant list onto itself
// (1 round trip) until the holder's lease ends (retryIn, plus [Spread]).
// A pipelined round sends the attempt (in wake mode) and a BLPOP of the
// grant list in one pipeline: one round trip for "queue and block", so a
// contended acquisition costs that and the release. Its BLPOP timeout is
// chosen before the attempt's reply, so it is bounded by [BlindCap], the
// caller's lease and the client's read timeout (go-redis does not lengthen
// the read timeout of a blocking command in a pipeline; see [RoomFor]);
// when it times out, the holder's lease that the attempt reported bounds a
// plain BLMOVE (no new attempt) before the next round. Queue starts with a
// pipelined round when t.Hint is set, else with a plain one, and after the
// first attempt that found the resource taken it pipelines every attempt
// (when the client's read timeout leaves room for it).
//
// An empty value popped from the grant list is a wake, not a grant (a
// release that found the caller's place expired, or Queue's own wake on
// cancellation): the caller attempts again at once.
func Queue(ctx context.Context, c Client, deadline time.Time, t Turn) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	q := &queuer{c: c, t: t.hinted(), deadline: deadline, pipe: t.Hint != nil && t.Hint.Load()}
	return q.run(ctx)
}

// hinted returns t whose attempts and leave report to t.Hint and t.Event.
func (t Turn) hinted() Turn {
	hint, event := t.Hint, t.Event
	if hint == nil {
		hint = new(atomic.Bool)
	}
	if event == nil {
		event = func(string) {}
	}
	if attempt := t.Attempt; attempt != nil {
		t.Attempt = func(ctx context.Context, left time.Duration) (bool, time.Duration, error) {
			event("attempt")
			ok, retry, err := attempt(ctx, left)
			if err == nil && !ok {
				hint.Store(true)
				event("queued")
			}
			return ok, retry, err
		}
	}
	if attemptIn := t.AttemptIn; attemptIn != nil {
		t.AttemptIn = func(ctx context.Context, p redis.Pipeliner, left time.Duration) func() (bool, time.Duration, error) {
			event("attempt")
			read := attemptIn(ctx, p, left)
			return func() (bool, time.Duration, error) {
				ok, retry, err := read()
				if err == nil {
					hint.Store(!ok)
				}
				return ok, retry, err
			}
		}
	}
	if leave := t.Leave; leave != nil {
		t.Leave = func(ctx context.Context) error {
			event("leave")
			return leave(ctx)
		}
	}
	return t
}

// queuer is the state of one Queue.
type queuer struct {
	c        Client
	t        Turn
	deadline time.Time
	pipe     bool // attempt in pipelined rounds
	mayHold  bool // an attempt may have queued the caller or taken the resource
	// attempted is when the last round with an attempt was sent: a grant
	// a plain wait pops was pushed after that attempt ran (had it been
	// pushed before, the attempt would have found the resource its own),
	// maybe before the wait began (the caller paused, or backed off).
	attempted time.Time
	backoff   time.Duration
	lastErr   error
}

// round is what one round trip of Queue brought back.
type round struct {
	ok      bool // the attempt took the resource
	ran     bool // the round had an attempt: retryIn is its
	retryIn time.Duration
	val     string // popped from the grant list, if got
	got     bool
	kept    bool      // a plain wait: the value stays on the grant list
	since   time.Time // before the round was sent
	err     error
	// attemptErr is the attempt's own error (err may also hold the pop's).
	attemptErr error
}

func (q *queuer) left() time.Duration {
	if q.deadline.IsZero() {
		return MaxBlock
	}
	return min(MaxBlock, time.Until(q.deadline))
}

func (q *queuer) passed() bool { return !q.deadline.IsZero() && !time.Now().Before(q.deadline) }

func (q *queuer) run(ctx context.Context) (bool, error) {
	var waitFor time.Duration // > 0: the next round is a plain wait, with no attempt
	for {
		if err := ctx.Err(); err != nil {
			return q.giveUp(ctx, joinNew(err, q.lastErr))
		}
		left := q.left()
		if waitFor > 0 && q.leaseLeft() <= time.Millisecond {
			// Half the caller's lease has passed since its last attempt
			// (a pipelined round blocked that long): attempt again at once,
			// not after a wait that can only time out.
			waitFor = 0
		}
		var r round
		switch {
		case waitFor > 0:
			r = q.plainWait(ctx, max(min(waitFor, left, q.leaseLeft()), time.Millisecond))
			waitFor = 0
		case q.pipe && pipeRoom(q.c) >= minPipe:
			r = q.pipelined(ctx, left)
		default:
			r = q.attempt(ctx, left)
		}
		if r.ok && r.err == nil {
			return true, nil // the attempt took it (a pipelined pop took its wake)
		}
		if r.got && r.val != "" && !isNetErr(r.err) {
			// Handed over (a grant wins over a failed attempt in the same
			// pipeline: it came from an earlier place).
			if err := q.t.Granted(r.val, r.since, r.kept); err != nil {
				return q.giveUp(ctx, err)
			}
			return true, nil
		}
		if r.err != nil {
			if ctx.Err() != nil {
				return q.giveUp(ctx, joinNew(ctx.Err(), q.lastErr))
			}
			if noScript(r.err) {
				q.pipe = false // a plain attempt loads the script
				continue
			}
			if !Transient(r.err) {
				return q.giveUp(ctx, errors.Join(r.err, q.lastErr))
			}
			q.lastErr = r.err
			q.backoff = min(max(2*q.backoff, 10*time.Millisecond), time.Second)
			if !q.deadline.IsZero() && time.Until(q.deadline) < q.backoff {
				return q.giveUp(ctx, r.err)
			}
			if serr := Sleep(ctx, Jitter(q.backoff)); serr != nil {
				return q.giveUp(ctx, errors.Join(serr, r.err))
			}
			continue
		}
		q.backoff, q.lastErr = 0, nil
		if q.passed() {
			return q.giveUp(ctx, nil)
		}
		if r.got || !r.ran {
			continue // woken, or a plain wait timed out: attempt again
		}
		// The attempt found the resource taken and queued the caller; wait
		// until the holder's lease ends (when a release does not hand it
		// over first).
		q.pipe = true
		d := time.Until(q.deadline)
		if q.deadline.IsZero() {
			d = MaxBlock
		}
		if r.retryIn > 0 {
			d = min(d, time.Until(r.since.Add(r.retryIn))+Spread(r.retryIn))
		}
		d = min(d, MaxBlock)
		switch {
		case !r.got && r.retryIn > 0 && d < minPipe && pipeRoom(q.c) >= minPipe:
			// The lease ends about now: attempt again at once.
		default:
			waitFor = max(d, time.Millisecond)
		}
	}
}

// leaseLeft is how long a plain wait may still block: until half the
// caller's lease after the last attempt (see [Turn.Lease]).
func (q *queuer) leaseLeft() time.Duration {
	if q.t.Lease <= 0 || q.attempted.IsZero() {
		return MaxBlock
	}
	return time.Until(q.attempted.Add(q.t.Lease / 2))
}

// attempt is a plain round's attempt.
func (q *queuer) attempt(ctx context.Context, left time.Duration) round {
	r := round{ran: true, since: time.Now()}
	q.attempted = r.since
	r.ok, r.retryIn, r.err = q.t.Attempt(ctx, max(left, time.Millisecond))
	q.sent(r.err)
	return r
}

// sent records that an attempt was sent: unless the server refused it for
// good (a refusal go-redis re-sends on, such as LOADING, may answer the
// re-send of an attempt that ran: script.MayHaveRun), it may have queued
// the caller or taken the resource.
func (q *queuer) sent(err error) {
	if err == nil || script.MayHaveRun(err) {
		q.mayHold = true
	}
}

// plainWait is a plain round's blocking wait on the grant list.
func (q *queuer) plainWait(ctx context.Context, d time.Duration) round {
	// A grant is dated from the last attempt, not from this wait.
	r := round{since: q.attempted, kept: true}
	if r.since.IsZero() {
		r.since = time.Now()
	}
	r.val, r.got, r.err = Pop(ctx, q.c, q.t.GrantKey, d)
	if r.err != nil && ctx.Err() == nil {
		r.err = q.popErr(ctx, r.err)
	}
	if r.err == nil && r.got && r.val == "" {
		// A wake: Pop left it on the list, where every later plain wait
		// would find it at once (a spin until the list expires). A grant
		// pushed meanwhile stays. Should this fail, the next round's
		// attempt meets the same trouble and reports it.
		_ = q.c.Do(ctx, "lrem", q.t.GrantKey, 0, "").Err()
	}
	return r
}

// pipelined is one pipelined round: the attempt in wake mode and a BLPOP of
// the grant list, sent from the caller's goroutine (no hand-off between
// goroutines on the way from the grant to the caller). When ctx ends
// meanwhile, a wake pushed to the grant list ends the BLPOP; the round
// returns once its reply is in, so that a Leave that follows runs after
// the attempt. If Redis does not answer the wake, go-redis is told to stop
// retrying the round JoinWait later (a read in progress still runs to its
// read timeout).
func (q *queuer) pipelined(ctx context.Context, left time.Duration) round {
	block := min(left, pipeRoom(q.c), BlindCap)
	if q.t.Lease > 0 {
		block = min(block, q.t.Lease/2)
	}
	block = max(block, time.Millisecond)
	pctx, pcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer pcancel()
	pushed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		wake(ctx, q.c, q.t.GrantKey)
		close(pushed)
		t := time.NewTimer(JoinWait)
		defer t.Stop()
		select {
		case <-t.C:
			pcancel()
		case <-pctx.Done():
		}
	})
	r := round{ran: true, since: time.Now()}
	q.attempted = r.since
	var (
		read func() (bool, time.Duration, error)
		pop  *redis.Cmd
	)
	_, _ = q.c.Pipelined(pctx, func(p redis.Pipeliner) error {
		read = q.t.AttemptIn(pctx, p, max(left, time.Millisecond))
		pop = p.Do(pctx, "blpop", q.t.GrantKey, seconds(block))
		return nil
	})
	r.ok, r.retryIn, r.err = read()
	r.attemptErr = r.err
	kv, err := pop.StringSlice()
	switch {
	case err == nil && len(kv) == 2:
		r.val, r.got = kv[1], true
	case err == nil:
		r.err = errors.Join(r.err, fmt.Errorf("wait: BLPOP %s: want [key value], got %d values", q.t.GrantKey, len(kv)))
	case err != redis.Nil && r.err == nil:
		r.err = q.popErr(ctx, err)
	}
	if !stop() {
		// ctx ended: the wake may still be on its way; let it land first
		<-pushed
		q.mayHold = true
		return round{ran: true, since: r.since, err: ctx.Err()}
	}
	q.sent(r.attemptErr)
	return r
}

// giveUp ends a Queue that did not get the resource: if an attempt may have
// queued the caller, it leaves (or, failing that, gives back in the
// background).
func (q *queuer) giveUp(ctx context.Context, err error) (bool, error) {
	if !q.mayHold {
		return false, err
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LeaveTimeout)
	lerr := q.t.Leave(lctx)
	cancel()
	if lerr != nil {
		q.t.GiveBack()
		return false, errors.Join(err, fmt.Errorf("%w: leaving the queue (giving back in the background): %w", ria.ErrOutcomeUnknown, lerr))
	}
	return false, err
}

// popErr turns a WRONGTYPE reply to a blocking read of the grant list into
// a *ria.KeyError naming its role.
func (q *queuer) popErr(ctx context.Context, err error) error {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	return script.WrongType(tctx, q.c, err, q.t.GrantKey, q.t.GrantRole, "list")
}

// pipeRoom is the longest wait a BLPOP may have in a pipeline on c: the
// client's read timeout (which go-redis does not lengthen for a blocking
// command in a pipeline) less a margin for the reply; MaxBlock when reads
// have no timeout.
func pipeRoom(c any) time.Duration {
	rt := readTimeout(c)
	if rt <= 0 {
		return MaxBlock
	}
	return rt - replyMargin
}

// replyMargin is what a blocking read leaves of the read timeout for the
// reply to come back.
const replyMargin = 250 * time.Millisecond

func readTimeout(c any) time.Duration {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().ReadTimeout
	case *redis.ClusterClient:
		return c.Options().ReadTimeout
	case *redis.Ring:
		return c.Options().ReadTimeout
	}
	return 3 * time.Second
}

// seconds formats d as a blocking command's timeout in seconds (Redis 6+
// takes fractions).
func seconds(d time.Duration) string {
	return strconv.FormatFloat(max(d.Seconds(), 0.001), 'f', 3, 64)
}

// wake pushes an empty value to key, a grant list, so that a blocking read
// of it returns; the value expires with the key after MaxBlock if nobody
// deletes it.
func wake(ctx context.Context, c Client, key string) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_, _ = c.Pipelined(wctx, func(p redis.Pipeliner) error {
		p.RPush(wctx, key, "")
		p.PExpire(wctx, key, MaxBlock)
		return nil
	})
}

// Spread is the margin to add to a wait bound by a holder's lease d, so
// that the waiters an expiry frees do not all try again in the same
// millisecond: 1ms plus a jitter of up to a tenth of d, at most 20ms (1ms
// for d <= 0).
func Spread(d time.Duration) time.Duration {
	return time.Millisecond + Jitter(min(max(d, 0)/10, 20*time.Millisecond))
}

// Pop waits up to d for a value on key, a list that only this caller reads,
// and returns it (ok false when d passed). It moves the value from the
// list onto itself (BLMOVE), so the value stays: a BLMOVE that go-redis
// re-sends after a lost reply finds it again. The caller deletes key when
// it is done with it.
//
// If ctx ends first it returns ctx.Err(): the BLMOVE runs in its own
// goroutine because go-redis does not interrupt a blocked read on
// cancellation. Pop then pushes an empty value to key so that the BLMOVE
// returns and frees its connection, and waits for it (at most JoinWait).
// A sub-second d that the BLMOVE must round up to a second (c's read
// timeout leaves no room for a fractional one) ends the same way at d,
// with ok false, and Pop then removes its empty value again (two more
// round trips). Otherwise the server times the BLMOVE out: at its next
// event loop tick, up to 1000/hz ms after d (100 ms at the default hz 10).
func Pop(ctx context.Context, c Client, key string, d time.Duration) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	var over <-chan time.Time
	if secs, frac := blockTimeout(c, d); frac == "" && secs > d {
		t := time.NewTimer(max(d, 0))
		defer t.Stop()
		over = t.C
	}
	type popped struct {
		val string
		ok  bool
		err error
	}
	done := make(chan popped, 1) // buffered: an abandoned call still finishes
	go func() {
		val, ok, err := BLMove(context.WithoutCancel(ctx), c, d, key, key, "LEFT", "LEFT")
		done <- popped{val, ok, err}
	}()
	var err error
	select {
	case r := <-done:
		return r.val, r.ok, r.err
	case <-ctx.Done():
		err = ctx.Err()
	case <-over:
	}
	wake(ctx, c, key)
	t := time.NewTimer(JoinWait)
	defer t.Stop()
	select {
	case <-done:
		if err == nil {
			// The wait ended at d, not by a value: the empty value must
			// not end the caller's next wait at once (the last one of the
			// list is ours, or one like it).
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			if lerr := c.Do(lctx, "lrem", key, -1, "").Err(); lerr != nil {
				return "", false, lerr
			}
		}
	case <-t.C:
	}
	return "", false, err
}

// Detached runs a blocking call fn on a context that ctx's cancellation does
// not reach, in its own goroutine, and returns its result, or ctx.Err() as
// soon as ctx ends: go-redis does not interrupt a blocked read on
// cancellation. The abandoned call finishes on its own (bound its blocking
// time) and its result is dropped.
func Detached[T any](ctx context.Context, fn func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned call still finishes
	go func() {
		v, err := fn(context.WithoutCancel(ctx))
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// Popper is the subset of go-redis that [BLPop] needs.
type Popper interface {
	BLPop(ctx context.Context, timeout time.Duration, keys ...string) *redis.StringSliceCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
}

var (
	_ Popper = (*redis.Client)(nil)
	_ Popper = (*redis.ClusterClient)(nil)
	_ Popper = (*redis.Ring)(nil)
)

// BLPop pops a value from the first non-empty list of keys, waiting at most
// d, and returns the list it came from and the value (ok false when d
// passed). go-redis's BLPop takes whole seconds only (and lengthens the read
// timeout to match); a shorter wait goes through Do with a fractional
// timeout (Redis 6+), as long as the client's read timeout leaves room for
// it ([RoomFor]), else it waits a whole second.
func BLPop(ctx context.Context, c Popper, d time.Duration, keys ...string) (key, val string, ok bool, err error) {
	var kv []string
	if secs, frac := blockTimeout(c, d); frac == "" {
		kv, err = c.BLPop(ctx, secs, keys...).Result()
	} else {
		args := make([]any, 0, len(keys)+2)
		args = append(args, "blpop")
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(args, frac)
		kv, err = c.Do(ctx, args...).StringSlice()
	}
	switch {
	case err == redis.Nil:
		return "", "", false, nil
	case err != nil:
		return "", "", false, err
	case len(kv) != 2:
		return "", "", false, fmt.Errorf("wait: BLPOP %v: want [key value], got %d values", keys, len(kv))
	}
	return kv[0], kv[1], true, nil
}

// Mover is the subset of go-redis that [BLMove] needs.
type Mover interface {
	BLMove(ctx context.Context, source, destination, srcpos, destpos string, timeout time.Duration) *redis.StringCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
}

var (
	_ Mover = (*redis.Client)(nil)
	_ Mover = (*redis.ClusterClient)(nil)
	_ Mover = (*redis.Ring)(nil)
)

// BLMove moves an element from the srcPos end ("LEFT" or "RIGHT") of the
// list src to the dstPos end of dst, waiting at most d for one, and returns
// it (ok false when d passed). With src == dst it rotates a shared list: the
// element stays for the next reader. It waits d as [BLPop] does: whole
// seconds through go-redis's BLMove, a sub-second d through Do when the
// client's read timeout leaves room for it.
func BLMove(ctx context.Context, c Mover, d time.Duration, src, dst, srcPos, dstPos string) (val string, ok bool, err error) {
	if secs, frac := blockTimeout(c, d); frac == "" {
		val, err = c.BLMove(ctx, src, dst, srcPos, dstPos, secs).Result()
	} else {
		val, err = c.Do(ctx, "blmove", src, dst, srcPos, dstPos, frac).Text()
	}
	switch {
	case err == redis.Nil:
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return val, true, nil
}

// blockTimeout chooses how a blocking command waits d on c. go-redis's own
// blocking methods take whole seconds (and lengthen the read timeout to
// match): for d of a second or more, or when c's read timeout leaves no
// room for a sub-second wait, it returns secs, d rounded down to a whole
// second (at least one), and frac "". Otherwise it returns frac, the
// fractional timeout argument (Redis 6+) for a call through Do, which does
// not lengthen the read timeout.
func blockTimeout(c any, d time.Duration) (secs time.Duration, frac string) {
	if d >= time.Second || !RoomFor(c, d) {
		return max(d.Truncate(time.Second), time.Second), ""
	}
	return 0, seconds(d)
}

// RoomFor reports whether c's read timeout (go-redis's default: 5s) is
// longer than a d blocking read, with a margin for the reply, or off:
// whether a blocking command of d may go through Do or a pipeline, which do
// not lengthen the read timeout as go-redis's own blocking commands do.
func RoomFor(c any, d time.Duration) bool {
	rt := readTimeout(c)
	return rt <= 0 || rt >= d+replyMargin
}

// Transient reports whether err may go away if the operation is retried:
// network errors (refused, reset or dropped connections, timeouts), pool
// timeouts, a Ring shard marked down ([keys.ErrShardsDown]), and server
// replies whose code means "not now" (LOADING, BUSY, TRYAGAIN,
// CLUSTERDOWN, MASTERDOWN, READONLY). Everything else is not: context
// errors, a closed client, other server replies (BUSYGROUP, WRONGTYPE...),
// and errors of our own making.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, redis.ErrClosed) {
		return false
	}
	if errors.Is(err, keys.ErrShardsDown) {
		return true
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		code, _, _ := strings.Cut(rerr.Error(), " ")
		switch code {
		case "LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY":
			return true
		}
		return false
	}
	return isNetErr(err)
}

// isNetErr reports whether err is a network error (the request or its
// reply may have been lost).
func isNetErr(err error) bool {
	if err == nil {
		return false
	}
	var nerr net.Error
	return errors.As(err, &nerr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, redis.ErrPoolExhausted)
}

// noScript reports whether err is the server's NOSCRIPT reply.
func noScript(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.HasPrefix(rerr.Error(), "NOSCRIPT")
}

// joinNew joins err and also, unless it is err already, more.
func joinNew(err, more error) error {
	if more == nil || errors.Is(err, more) || errors.Is(more, err) {
		return err
	}
	return errors.Join(err, more)
}

// Jitter returns a random duration in [d/2, d], so that clients that failed
// together do not retry together.
func Jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// Sleep waits d or until ctx ends, returning ctx.Err() in that case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Attempts is a Turn's acquire script: Script runs on Rdb with Keys and
// Args(left, wake), and its reply, two integers, goes to Attempted with
// the time the attempt was sent. Its methods are the Turn's Attempt and
// AttemptIn.
type Attempts struct {
	Rdb       redis.Scripter
	Script    *script.Script
	Keys      []string
	Args      func(left time.Duration, wake bool) []any
	Attempted func(res []int64, sent time.Time) (ok bool, retryIn time.Duration, err error)
}

// Attempt runs the script once, not in wake mode (Turn.Attempt; with
// left 0, a single attempt that does not queue).
func (a Attempts) Attempt(ctx context.Context, left time.Duration) (bool, time.Duration, error) {
	sent := time.Now()
	res, err := a.Script.Int64s(ctx, a.Rdb, a.Keys, a.Args(left, false)...)
	if err != nil {
		return false, 0, err
	}
	return a.Attempted(res, sent)
}

// AttemptIn queues the script on p in wake mode (Turn.AttemptIn).
func (a Attempts) AttemptIn(ctx context.Context, p redis.Pipeliner, left time.Duration) func() (bool, time.Duration, error) {
	sent := time.Now()
	read := ScriptIn(ctx, p, func(ctx context.Context, c redis.Scripter) (any, error) {
		return a.Script.Run(ctx, c, a.Keys, a.Args(left, true)...)
	})
	return func() (bool, time.Duration, error) {
		v, err := read()
		if err != nil {
			return false, 0, err
		}
		res, err := a.Script.AsInt64s(v)
		if err != nil {
			return false, 0, err
		}
		return a.Attempted(res, sent)
	}
}

// ScriptIn queues on p the script call that run makes through the
// redis.Scripter it is given (run being a call of an internal/script
// Script, which checks and converts replies), and returns read, which,
// once p has run, hands p's reply to run again, so that run's own reply
// handling applies to it. A NOSCRIPT reply comes back as run returns it: a
// script cannot be loaded (EVAL) within the same pipeline.
func ScriptIn(ctx context.Context, p redis.Pipeliner, run func(ctx context.Context, c redis.Scripter) (any, error)) (read func() (any, error)) {
	c := &capture{Pipeliner: p}
	_, _ = run(ctx, c)
	return func() (any, error) {
		if c.cmd == nil {
			return nil, errors.New("wait: the script call sent no command")
		}
		return run(ctx, replay{c.cmd})
	}
}

// capture is a redis.Scripter that queues script calls on a pipeline and
// keeps the last one.
type capture struct {
	redis.Pipeliner
	cmd *redis.Cmd
}

func (c *capture) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	c.cmd = c.Pipeliner.EvalSha(ctx, sha1, keys, args...)
	return c.cmd
}

func (c *capture) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	c.cmd = c.Pipeliner.Eval(ctx, script, keys, args...)
	return c.cmd
}

// replay is a redis.Scripter whose script calls all answer with the reply
// of cmd.
type replay struct{ cmd *redis.Cmd }

func (r replay) reply(ctx context.Context) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetVal(r.cmd.Val())
	cmd.SetErr(r.cmd.Err())
	return cmd
}

func (r replay) Eval(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return r.reply(ctx)
}

func (r replay) EvalSha(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return r.reply(ctx)
}

func (r replay) EvalRO(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return r.reply(ctx)
}

func (r replay) EvalShaRO(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return r.reply(ctx)
}

func (r replay) ScriptExists(ctx context.Context, _ ...string) *redis.BoolSliceCmd {
	cmd := redis.NewBoolSliceCmd(ctx)
	cmd.SetErr(errors.New("wait: replay: SCRIPT EXISTS"))
	return cmd
}

func (r replay) ScriptLoad(ctx context.Context, _ string) *redis.StringCmd {
	cmd := redis.NewStringCmd(ctx)
	cmd.SetErr(errors.New("wait: replay: SCRIPT LOAD"))
	return cmd
}
