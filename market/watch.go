package market

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/txn"
	"github.com/ria-go/ria/internal/wait"
)

// The WATCH/MULTI/EXEC variants ([Market.ListWatch], [Market.BuyWatch],
// [Market.BuyLocked]) share one loop, which also settles a transaction
// whose EXEC reply was lost.
//
// go-redis does not re-send EXEC: a WATCH transaction lives on one
// connection, and once that connection breaks the transaction fails with
// the transport error. The EXEC may or may not have run. So each
// transaction WATCHes a record key of its own (a STRING, new for each
// call) besides its keys, and writes SET record "1" in its MULTI: the
// record exists if and only if the writes happened. When EXEC's reply does
// not come, the loop settles the outcome with SET record "0" NX GET (an
// idempotent command, which go-redis may re-send): it finds "1" if EXEC
// committed; otherwise it writes the record itself, and a watched key
// having changed, that EXEC, should it still reach the server late, aborts.
// Either way the answer is certain: the purchase happened, or it did not
// and never will (the loop then starts over, as a re-send would).

// errExecLost stops txn.Watch when EXEC's reply did not come.
var errExecLost = errors.New("market: EXEC reply lost")

const (
	// maxTries bounds the attempts of one call that a transport error
	// before EXEC, or a lost EXEC settled as not committed, starts over:
	// the first and go-redis's default 3 retries.
	maxTries = 4
	// settleTimeout bounds the settling of a lost EXEC, whatever ctx says:
	// it turns "unknown" into a true answer, so it runs even when ctx has
	// ended.
	settleTimeout = 5 * time.Second
)

// writesFunc queues a transaction's writes.
type writesFunc func(p redis.Pipeliner)

// watched runs one WATCH/MULTI/EXEC operation on keys: check runs the
// reads under the WATCH and returns the writes, or an error (a refusal or
// a failed read); the writes then run in MULTI/EXEC with the record. It
// retries while watched keys change until timeout (then an error wrapping
// ErrContended and txn.ErrContended), and starts over, at most maxTries
// times, after a transport error that left nothing written. It returns
// nil once the writes are committed, and an error wrapping
// ria.ErrOutcomeUnknown only when a lost EXEC could not be settled.
func (m *Market) watched(ctx context.Context, timeout time.Duration, keys []string,
	check func(tx *redis.Tx) (writesFunc, error)) error {
	deadline := time.Now().Add(timeout)
	ttl := recordTTL(m.rdb)
	for try := 1; ; try++ {
		record := m.once()
		var (
			sent    time.Time
			execErr error
		)
		err := txn.Watch(ctx, m.rdb, max(time.Until(deadline), time.Millisecond), func(tx *redis.Tx) error {
			writes, err := check(tx)
			if err != nil {
				return err
			}
			sent = time.Now()
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				writes(p)
				p.Set(ctx, record, "1", ttl)
				return nil
			})
			if err != nil && !errors.Is(err, redis.TxFailedErr) && !isReply(err) {
				execErr = err
				return errExecLost
			}
			return err
		}, append(slices.Clip(keys), record)...)
		var lost error // nothing written, the call may start over
		switch {
		case err == nil:
			return nil
		case execErr != nil:
			committed, serr := m.settle(ctx, record, sent, ttl)
			if serr != nil {
				return fmt.Errorf("%w: EXEC: %w; settling it: %w", ria.ErrOutcomeUnknown, execErr, serr)
			}
			if committed {
				return nil
			}
			lost = execErr
		case errors.Is(err, txn.ErrContended):
			if ctx.Err() != nil { // ctx ended while backing off
				return fmt.Errorf("gave up: %w", context.Cause(ctx))
			}
			return fmt.Errorf("%w: %w", ErrContended, err)
		case ctx.Err() == nil && wait.Transient(err):
			lost = err // before EXEC: only reads were sent
		default:
			return err // a refusal, a *ria.KeyError, ctx's error: nothing written
		}
		if try >= maxTries || !time.Now().Before(deadline) {
			return fmt.Errorf("nothing changed: %w", lost)
		}
		if err := wait.Sleep(ctx, wait.Jitter(time.Duration(try)*10*time.Millisecond)); err != nil {
			return fmt.Errorf("nothing changed: %w", errors.Join(lost, err))
		}
	}
}

// settle finds out whether the transaction that wrote record (sent at
// sent, the record's TTL ttl) committed, in one round trip: SET record "0"
// NX GET finds "1" if it did; else the SET writes "0", a change to a key
// the transaction WATCHes, so that it can no longer commit. The answer
// holds while a commit's record would still be alive, which the elapsed
// time tells.
func (m *Market) settle(ctx context.Context, record string, sent time.Time, ttl time.Duration) (bool, error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	v, err := m.rdb.SetArgs(sctx, record, "0", redis.SetArgs{Mode: "NX", Get: true, TTL: ttl}).Result()
	switch {
	case err != nil && err != redis.Nil:
		return false, err
	case v == "1":
		return true, nil
	case err != redis.Nil && v != "0": // "0": our own SET, re-sent by go-redis
		return false, &ria.KeyError{Role: "market transaction record", Key: record, Got: fmt.Sprintf("%q", clip(v)),
			Want: `"0" or "1"`, Err: ria.ErrCorrupt}
	}
	if time.Since(sent) > ttl-time.Second {
		return false, fmt.Errorf("a commit's record (TTL %v) may have expired before it was read", ttl)
	}
	return false, nil
}

// recordTTL is how long a transaction's record lives: go-redis's retry
// window of c (at least 10 s) plus the settling time. The record must
// outlive the EXEC it marks until the settling has read it.
func recordTTL(c Client) time.Duration {
	return max(script.ReplayWindow(c), 10*time.Second) + settleTimeout
}

// isReply reports whether err is a reply of the server (it answered, so
// the transaction's outcome is known).
func isReply(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr)
}

// keyType is a key a transaction relies on, the Redis type it must hold
// and its role.
type keyType struct{ key, typ, role string }

// readTypes runs, in one pipelined round trip on tx, TYPE of each key of
// want followed by the reads that more queues, and returns the TYPE
// commands. It returns a transport error; the commands' own errors are
// left to the caller, which checks the types first (a read of a key of the
// wrong type fails with WRONGTYPE).
func readTypes(ctx context.Context, tx *redis.Tx, want []keyType, more func(p redis.Pipeliner)) ([]*redis.StatusCmd, error) {
	types := make([]*redis.StatusCmd, len(want))
	_, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range want {
			types[i] = p.Type(ctx, k.key)
		}
		more(p)
		return nil
	})
	if err != nil && err != redis.Nil && !isReply(err) {
		return nil, err
	}
	return types, nil
}

// checkTypes is check.lua's check_types for the replies of readTypes: each
// key is missing or of its type, else a *ria.KeyError naming it.
func checkTypes(types []*redis.StatusCmd, want []keyType) error {
	for i, c := range types {
		t, err := c.Result()
		if err != nil {
			return err
		}
		if t != "none" && t != want[i].typ {
			return &ria.KeyError{Role: want[i].role, Key: want[i].key, Got: "a " + t, Want: "a " + want[i].typ,
				Err: ria.ErrWrongType}
		}
	}
	return nil
}
