// Package wait is the waiting side of ria's blocking primitives (lock,
// semaphore): instead of polling, a waiter that failed to acquire blocks on a
// per-resource wake list with BLPOP, and the holder's release pushes one token
// to it, waking exactly one waiter. The wait is bounded by the moment the
// resource frees itself anyway (the holder's TTL), so a crashed holder that
// never releases costs its TTL, not a lost wake-up.
//
// The acquire script of the waiting package marks the resource as waited on
// (a key with a TTL) and the release script pushes a token only when that
// mark exists, so uncontended releases pay nothing for it.
package wait

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client is the subset of go-redis that [Until] needs.
type Client interface {
	BLPop(ctx context.Context, timeout time.Duration, keys ...string) *redis.StringSliceCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
	LPush(ctx context.Context, key string, values ...any) *redis.IntCmd
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// MaxBlock caps one blocking wait; the waiter then tries again.
const MaxBlock = 30 * time.Second

// Attempt tries to acquire once. left is how long the caller may still wait
// (at most [MaxBlock]); the script uses it as the TTL of its "waited on"
// mark. On failure it returns retryIn, the time after which the resource
// frees itself if nobody releases it (e.g. the holder's remaining TTL); zero
// or less means "unknown", and the waiter blocks for left.
type Attempt func(ctx context.Context, left time.Duration) (ok bool, retryIn time.Duration, err error)

// Until calls attempt until it succeeds (true, nil), deadline passes (false,
// nil; a zero deadline never passes), ctx ends (false, ctx.Err() joined with
// the last error) or attempt fails with an error that retrying cannot mend
// (false, err). Between failed attempts it blocks on wakeKey until a release
// wakes it or retryIn (plus a little jitter, so that waiters freed by an
// expiry do not stampede) passes. Transient errors (network, server loading
// or restarting) are retried with exponential backoff and jitter; if the
// deadline passes after one, Until returns (false, err).
func Until(ctx context.Context, c Client, wakeKey string, deadline time.Time, attempt Attempt) (bool, error) {
	var backoff time.Duration
	for {
		left := MaxBlock
		if !deadline.IsZero() {
			left = min(left, time.Until(deadline))
		}
		ok, retryIn, err := attempt(ctx, max(left, time.Millisecond))
		switch {
		case err != nil && !Transient(err):
			return false, err
		case err != nil:
			backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
			if !deadline.IsZero() && time.Until(deadline) < backoff {
				return false, err
			}
			if serr := Sleep(ctx, Jitter(backoff)); serr != nil {
				return false, errors.Join(serr, err)
			}
			continue
		case ok:
			return true, nil
		}
		backoff = 0
		if !deadline.IsZero() {
			left = time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
		}
		block := left
		if retryIn > 0 {
			block = min(block, retryIn+spread(retryIn))
		}
		if err := Block(ctx, c, wakeKey, block); err != nil && !Transient(err) {
			return false, err
		}
	}
}

// spread is the jitter added to an expiry-bound wait: up to a tenth of it,
// at most 20ms.
func spread(d time.Duration) time.Duration {
	j := min(d/10, 20*time.Millisecond)
	if j <= 0 {
		return time.Millisecond
	}
	return time.Millisecond + rand.N(j)
}

// Block waits up to d for a token on key. It returns when a token arrives,
// d passes or ctx ends (with ctx.Err()). The BLPOP runs in its own goroutine
// so that a cancelled ctx returns at once (go-redis does not interrupt a
// blocked read on cancellation); if that abandoned BLPOP later receives a
// token, the token is pushed back so that another waiter gets it.
func Block(ctx context.Context, c Client, key string, d time.Duration) error {
	_, _, err := pop(ctx, c, key, d, true)
	return err
}

// Pop waits up to d for a value on key, a list that only this caller reads,
// and returns it (ok false when d passed). If ctx ends first it returns
// ctx.Err() at once, and a value the abandoned BLPOP receives afterwards is
// dropped: the caller must reconcile that case on the server (the lock's
// leave script does).
func Pop(ctx context.Context, c Client, key string, d time.Duration) (string, bool, error) {
	return pop(ctx, c, key, d, false)
}

func pop(ctx context.Context, c Client, key string, d time.Duration, repush bool) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	type result struct {
		val string
		ok  bool
		err error
	}
	done := make(chan result) // unbuffered: a result nobody takes goes to the abandoned branch
	abandoned := make(chan struct{})
	go func() {
		bctx := context.WithoutCancel(ctx)
		val, ok, err := blpop(bctx, c, key, d)
		select {
		case done <- result{val, ok, err}:
		case <-abandoned:
			if ok && repush {
				pctx, cancel := context.WithTimeout(bctx, 5*time.Second)
				_ = c.LPush(pctx, key, val).Err()
				cancel()
			}
		}
	}()
	select {
	case r := <-done:
		return r.val, r.ok, r.err
	case <-ctx.Done():
		close(abandoned)
		return "", false, ctx.Err()
	}
}

// blpop pops a value from key, waiting at most d. go-redis's BLPop takes
// whole seconds only, so a sub-second wait goes through Do with a fractional
// timeout (Redis 6+).
func blpop(ctx context.Context, c Client, key string, d time.Duration) (string, bool, error) {
	var (
		kv  []string
		err error
	)
	if d >= time.Second {
		kv, err = c.BLPop(ctx, d.Truncate(time.Second), key).Result()
	} else {
		secs := strconv.FormatFloat(max(d.Seconds(), 0.001), 'f', 3, 64)
		kv, err = c.Do(ctx, "blpop", key, secs).StringSlice()
	}
	switch {
	case err == redis.Nil:
		return "", false, nil
	case err != nil:
		return "", false, err
	case len(kv) != 2:
		return "", false, fmt.Errorf("wait: BLPOP %s: want [key value], got %d values", key, len(kv))
	}
	return kv[1], true, nil
}

// Transient reports whether err may go away if the operation is retried:
// network errors, pool timeouts, and server replies that mean "not now"
// (LOADING, BUSY, TRYAGAIN, CLUSTERDOWN, MASTERDOWN, READONLY). Context
// errors, a closed client and other server replies are not transient.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, redis.ErrClosed) {
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, p := range []string{"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	return true
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
