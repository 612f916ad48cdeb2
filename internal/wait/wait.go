// Package wait is the waiting side of ria's blocking primitives (lock,
// semaphore): a first-come-first-served queue with direct hand-off, and no
// polling.
//
// An acquirer that finds the resource taken is queued by the same acquire
// script, then blocks (BLPOP) on a grant list of its own. The holder's
// release script hands the resource directly to the first live waiter and
// pushes a value to that waiter's grant list, which wakes it already
// holding the resource. A holder that crashes never releases, so a waiter
// also wakes when the holder's lease would end (the retryIn its attempt
// returned) and tries again. A waiter that gives up leaves the queue,
// handing on whatever it was granted meanwhile.
//
// It also holds the blocking reads other packages build on ([BLPop],
// [BLMove], [Detached]) and the retry helpers ([Transient], [Jitter],
// [Spread], [Sleep]).
package wait

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client is the subset of go-redis that [Queue] needs.
type Client interface {
	BLPop(ctx context.Context, timeout time.Duration, keys ...string) *redis.StringSliceCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
	TxPipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// MaxBlock caps one blocking wait; the waiter then tries again.
const MaxBlock = 30 * time.Second

// Turn is one acquirer's side of the queue.
type Turn struct {
	// GrantKey is the caller's own grant list.
	GrantKey string
	// Attempt runs the acquire script once. With left > 0 a failed attempt
	// queues the caller, keeping its place for about left; queued says that
	// an earlier attempt may have queued it (and may have been granted the
	// resource since). On failure it returns retryIn, the time after which
	// the resource may free itself (the earliest holder's lease); zero or
	// less means unknown.
	Attempt func(ctx context.Context, left time.Duration, queued bool) (ok bool, retryIn time.Duration, err error)
	// Granted is called with the value a release pushed to GrantKey; the
	// grant happened after since.
	Granted func(val string, since time.Time) error
	// Leave takes the caller out of the queue and gives back anything it
	// was granted meanwhile (best effort; it must not depend on ctx being
	// alive).
	Leave func(ctx context.Context)
}

// Queue waits for t's turn: it calls t.Attempt until it succeeds or the
// resource is handed over (true, nil), deadline passes (false, nil; a zero
// deadline never passes), ctx ends (false, ctx.Err() joined with the last
// error) or an attempt fails with an error that retrying cannot mend
// (false, err). Transient errors (network, server loading or restarting)
// are retried with exponential backoff and jitter; if the deadline passes
// during one, Queue returns (false, err). Whenever it returns false after
// an attempt, it has called t.Leave.
func Queue(ctx context.Context, c Client, deadline time.Time, t Turn) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var (
		queued  bool
		backoff time.Duration
		lastErr error
	)
	giveUp := func(err error) (bool, error) {
		if queued {
			t.Leave(ctx)
		}
		return false, err
	}
	for {
		left := MaxBlock
		if !deadline.IsZero() {
			left = min(left, time.Until(deadline))
		}
		ok, retryIn, err := t.Attempt(ctx, max(left, time.Millisecond), queued)
		queued = true // a failed attempt, or one whose reply was lost, may have queued us
		if err == nil {
			if ok {
				return true, nil
			}
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return giveUp(nil)
			}
			backoff, lastErr = 0, nil
			block := left
			if retryIn > 0 {
				block = min(block, retryIn+Spread(retryIn))
			}
			if !deadline.IsZero() {
				block = min(block, time.Until(deadline))
			}
			since := time.Now()
			var val string
			val, ok, err = Pop(ctx, c, t.GrantKey, max(block, time.Millisecond))
			if ok {
				if err := t.Granted(val, since); err != nil {
					return giveUp(err)
				}
				return true, nil
			}
			if err == nil {
				continue
			}
		}
		if !Transient(err) {
			return giveUp(errors.Join(err, lastErr))
		}
		lastErr = err
		backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
		if !deadline.IsZero() && time.Until(deadline) < backoff {
			return giveUp(err)
		}
		if serr := Sleep(ctx, Jitter(backoff)); serr != nil {
			return giveUp(errors.Join(serr, err))
		}
	}
}

// Spread is the margin to add to a wait bound by a holder's lease d, so
// that the waiters an expiry frees do not all try again in the same
// millisecond: 1ms plus a jitter of up to a tenth of d, at most 20ms (1ms
// for d <= 0).
func Spread(d time.Duration) time.Duration {
	return time.Millisecond + Jitter(min(max(d, 0)/10, 20*time.Millisecond))
}

// Pop waits up to d for a value on key, a list that only this caller reads,
// and returns it (ok false when d passed). If ctx ends first it returns
// ctx.Err() at once: the BLPOP runs in its own goroutine because go-redis
// does not interrupt a blocked read on cancellation. Pop then pushes an
// empty value to key so that the abandoned BLPOP returns and frees its
// connection; a value that BLPOP takes instead is dropped, and the caller
// reconciles that case on the server ([Turn.Leave] also deletes key).
func Pop(ctx context.Context, c Client, key string, d time.Duration) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	type popped struct {
		val string
		ok  bool
	}
	r, err := Detached(ctx, func(ctx context.Context) (popped, error) {
		_, val, ok, err := BLPop(ctx, c, d, key)
		return popped{val, ok}, err
	})
	if err != nil && ctx.Err() != nil {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_, _ = c.TxPipelined(uctx, func(p redis.Pipeliner) error {
			p.RPush(uctx, key, "")
			p.PExpire(uctx, key, MaxBlock)
			return nil
		})
		return "", false, ctx.Err()
	}
	return r.val, r.ok, err
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

// BLPop pops a value from the first non-empty list of keys, waiting at most
// d, and returns the list it came from and the value (ok false when d
// passed). go-redis's BLPop takes whole seconds only (and lengthens the read
// timeout to match); a shorter wait goes through Do with a fractional
// timeout (Redis 6+), as long as the client's read timeout leaves room for
// it ([RoomFor]), else it waits a whole second.
func BLPop(ctx context.Context, c Client, d time.Duration, keys ...string) (key, val string, ok bool, err error) {
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
	return 0, strconv.FormatFloat(max(d.Seconds(), 0.001), 'f', 3, 64)
}

// RoomFor reports whether c's read timeout (go-redis's default: 3s) is
// longer than a d blocking read, with a margin for the reply: whether a
// sub-second blocking command may go through Do, which does not lengthen
// the read timeout as go-redis's own blocking commands do.
func RoomFor(c any, d time.Duration) bool {
	rt := 3 * time.Second
	switch c := c.(type) {
	case *redis.Client:
		rt = c.Options().ReadTimeout
	case *redis.ClusterClient:
		rt = c.Options().ReadTimeout
	case *redis.Ring:
		rt = c.Options().ReadTimeout
	}
	return rt < 0 || rt >= d+250*time.Millisecond
}

// Transient reports whether err may go away if the operation is retried:
// network errors (refused, reset or dropped connections, timeouts), pool
// timeouts, and server replies whose code means "not now" (LOADING, BUSY,
// TRYAGAIN, CLUSTERDOWN, MASTERDOWN, READONLY). Everything else is not:
// context errors, a closed client, other server replies (BUSYGROUP,
// WRONGTYPE...), and errors of our own making.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, redis.ErrClosed) {
		return false
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
	var nerr net.Error
	return errors.As(err, &nerr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, redis.ErrPoolExhausted)
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
