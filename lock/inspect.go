package lock

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed state.lua
	stateLua    string
	stateScript = script.New("lock state", placeLua+stateLua)

	// breakScript is the release script in break mode, run as a
	// once-script: a re-send of a Break is answered from the record of its
	// first run, and never breaks the lock of the holder it handed over to.
	breakScript = script.NewOnce("lock break", script.MintLua+placeLua+releaseLua)
)

// State is what [Locker.State] reads of a lock. It never holds the
// holder's token: the token is what authorises [Lock.Release] and
// [Lock.Extend], so whoever learnt it could release someone else's lock.
type State struct {
	// Held reports whether someone holds the lock.
	Held bool
	// TTL is how long the holder's lease has left: 0 when the lock is
	// free, negative when the owner key has no TTL (set by hand; such a
	// lock is held until someone releases or breaks it).
	TTL time.Duration
	// Fence is the last fencing token minted for the lock name, 0 if none
	// was (or the counter was lost). While the lock is held it is the
	// holder's [Lock.Fence]; the next holder's will be greater.
	Fence int64
	// Waiters is the number of live waiters in the queue: those a release
	// would hand the lock to, whose place has not expired and is as an
	// acquire writes it (State applies the release's own test; a
	// malformed place is not counted). A waiter that died keeps its place,
	// and is counted, until the end of its blocking wait plus 2 s; the
	// holder's own stale place is not counted.
	Waiters int
}

// State reads the state of the lock name in one round trip, changing
// nothing: whether it is held, for how long, its last fencing token and
// its number of live waiters. It is a snapshot: the lock may change hands
// as soon as it is read. A key of the wrong type gives a *ria.KeyError.
func (lk *Locker) State(ctx context.Context, name string) (State, error) {
	if err := keys.CheckEntity("lock name", name); err != nil {
		return State{}, fmt.Errorf("lock: %w", err)
	}
	r, err := lk.state(ctx, []string{lk.ownerKey(name), lk.fenceKey(name), lk.queueKey(name), lk.waitersKey(name)}, "lock")
	if err != nil {
		return State{}, fmt.Errorf("lock: state %q: %w", name, err)
	}
	return State{Held: r.held, TTL: r.ttl, Fence: r.fence, Waiters: r.waiters}, nil
}

// RWState is what [RWLock.State] reads of a read/write lock. It never
// holds the holders' tokens (see [State]).
type RWState struct {
	// Writer reports whether a writer holds the lock.
	Writer bool
	// Readers is the number of readers holding it (whose lease has not
	// ended).
	Readers int
	// TTL is how long until every holder's lease has ended: 0 when nobody
	// holds the lock, negative when the writer key has no TTL (set by
	// hand).
	TTL time.Duration
	// Fence is the last fencing token minted for the lock, 0 if none was
	// (or the counter was lost).
	Fence int64
	// Waiters is the number of live waiters in the queue, counted as for
	// [State.Waiters].
	Waiters int
}

// State reads the state of the read/write lock in one round trip,
// changing nothing: its writer, its number of readers, how long their
// leases last, its last fencing token and its number of live waiters. A
// key of the wrong type gives a *ria.KeyError.
func (rw *RWLock) State(ctx context.Context) (RWState, error) {
	if rw.err != nil {
		return RWState{}, rw.err
	}
	k := rw.k
	r, err := rw.lk.state(ctx, []string{k.writer, k.fence, k.queue, k.waiters, k.readers}, "lock rw")
	if err != nil {
		return RWState{}, fmt.Errorf("lock: state %q: %w", rw.name, err)
	}
	s := RWState{Writer: r.held, Readers: r.readers, TTL: r.ttl, Fence: r.fence, Waiters: r.waiters}
	if s.TTL >= 0 && r.readersTTL > s.TTL {
		s.TTL = r.readersTTL
	}
	return s, nil
}

type stateReply struct {
	held             bool
	ttl, readersTTL  time.Duration
	fence            int64
	waiters, readers int
}

// state runs the state script on keys (owner or writer, fence, queue,
// waiters[, readers]) with the role prefix role.
func (lk *Locker) state(ctx context.Context, keys []string, role string) (stateReply, error) {
	var r stateReply
	v, err := stateScript.Run(ctx, lk.rdb, keys, role)
	if err != nil {
		return r, err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 6 {
		return r, fmt.Errorf("script %s: unexpected reply %T %v", stateScript.Name(), v, v)
	}
	var n [6]int64
	for i, x := range a {
		switch x := x.(type) {
		case int64:
			n[i] = x
		case string:
			if x != "" {
				if n[i], err = strconv.ParseInt(x, 10, 64); err != nil {
					return r, fmt.Errorf("script %s: reply %d: %w", stateScript.Name(), i, err)
				}
			}
		default:
			return r, fmt.Errorf("script %s: reply %d: unexpected %T", stateScript.Name(), i, x)
		}
	}
	r.held = n[0] == 1
	switch pttl := n[1]; {
	case !r.held:
	case pttl == -1:
		r.ttl = -time.Millisecond
	case pttl < 1:
		r.ttl = time.Millisecond // held, expires within the millisecond
	default:
		r.ttl = time.Duration(pttl) * time.Millisecond
	}
	r.fence, r.waiters, r.readers = n[2], int(n[3]), int(n[4])
	r.readersTTL = time.Duration(n[5]) * time.Millisecond
	return r, nil
}

// Break releases the lock name whoever holds it, for an operator clearing
// a stuck lock (a holder that hangs with a long TTL, an owner key set by
// hand without one), in one round trip. It does what the holder's
// [Lock.Release] would: it hands the lock to the first live waiter, with a
// newly minted fence, or deletes it when nobody waits. It returns false if
// the lock was not held (then it changes nothing but its reply record).
//
// The broken holder is not told: it learns from its next [Lock.Extend] or
// [Lock.Release] ([ErrNotHeld]; a running [Lock.KeepAlive] cancels its ctx
// within TTL/3), and until then it may go on acting as holder beside the
// next one. Only the fence protects the resource then: the next holder's
// fence is greater than the broken holder's (see the package doc, "Break").
//
// A re-send of the call after a lost reply is answered from a record of its
// first run (for the client's retry window), so one Break breaks at most
// one holding, never also the waiter it handed the lock to. If every
// re-send fails, the error wraps ria.ErrOutcomeUnknown: the lock may or
// may not have been broken. A key of the wrong type gives a *ria.KeyError,
// having changed nothing.
func (lk *Locker) Break(ctx context.Context, name string) (bool, error) {
	if err := keys.CheckEntity("lock name", name); err != nil {
		return false, fmt.Errorf("lock: %w", err)
	}
	if err := ctx.Err(); err != nil { // nothing sent: nothing broken
		return false, fmt.Errorf("lock: break %q: %w", name, err)
	}
	grants := lk.grantPrefix(name)
	// release.lua's keys; the caller's grant key and release record are
	// unused in break mode
	k := []string{lk.ownerKey(name), lk.fenceKey(name), lk.queueKey(name), lk.waitersKey(name),
		grants, grants, lk.recordKey(name, "")}
	v, err := breakScript.RunOnce(ctx, lk.rdb, lk.keys.Once(name), k,
		"", "0", "0", "", 0, lk.slack.Milliseconds(), "1")
	if err != nil {
		return false, fmt.Errorf("lock: break %q: %w", name, err)
	}
	n, err := breakScript.AsInt64(v)
	if err != nil {
		return false, fmt.Errorf("lock: break %q: %w", name, err)
	}
	return n == 1, nil
}
