// Package script runs the embedded Lua scripts of ria packages.
//
// A Script wraps redis.NewScript: EVALSHA first, EVAL when the server answers
// NOSCRIPT, so a script costs one round trip once the server has cached it.
// Every key a script touches is passed in KEYS; scripts never build keys
// (except from a declared prefix key and an ID read in the same script,
// which shares its hash tag). The helpers check the reply type, so a script
// that returns something unexpected gives an error naming the script
// instead of a panic.
//
// Every script gets the checks of check.lua (check_types, check_int,
// check_hint) prepended; their error replies come back from [Script.Run]
// as a *ria.KeyError. check.lua also defines to_number, which reads a
// number as Redis's own Lua does on miniredis too (whose tonumber is nil
// for "2e+09", as Go's strconv.FormatFloat 'g' and miniredis's score
// replies write numbers): use it for every float a script reads. A state-changing script whose second run would change
// its effect or answer is built with [NewOnce] and run with
// [Script.RunOnce], which records its reply for the client's retry window
// so that a re-send is answered from the record (see the ria package doc).
package script

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
)

// MintLua defines the Lua function mint(key), which returns the next value of
// a counter that stays strictly increasing even if Redis loses it (fencing
// tokens, permit sequence numbers). Prepend it to a script's source:
// New(name, MintLua+src). Check the counter first with check_int.
//
//go:embed mint.lua
var MintLua string

// BytesLua defines BYTE_ORDER (Lua's string < is byte order on this
// server) and bless(x, y), x < y by bytes whatever the server's locale:
// for scripts that order strings as ZSETs do. Prepend it to a script's
// source: New(name, BytesLua+src).
//
//go:embed bytes.lua
var BytesLua string

var (
	//go:embed check.lua
	checkLua string
	//go:embed once.lua
	onceLua string
)

// Script is one embedded Lua script. It is safe for concurrent use.
type Script struct {
	name string
	s    *redis.Script
	once bool
}

// New returns a Script named name (used in errors) with source src, after
// the checks of check.lua.
func New(name, src string) *Script {
	return &Script{name: name, s: redis.NewScript(checkLua + src)}
}

// NewOnce returns a state-changing Script whose re-sent runs are answered
// from a record of its first reply; run it with [Script.RunOnce]. The body
// src sees its own KEYS and ARGV and returns as usual; an error reply is
// not recorded, so it must fail before its first write.
func NewOnce(name, src string) *Script {
	head, tail, ok := strings.Cut(strings.SplitN(onceLua, "--@head\n", 2)[1], "--@tail\n")
	if !ok {
		panic("script: once.lua has no --@tail marker")
	}
	return &Script{name: name, s: redis.NewScript(head + checkLua + src + "\n" + tail), once: true}
}

// Name returns the script's name.
func (s *Script) Name() string { return s.name }

// Run runs the script and returns its raw reply. A nil Lua reply (false or
// nil) comes back as (nil, nil): redis.Nil never escapes. A check.lua error
// comes back as a *ria.KeyError.
func (s *Script) Run(ctx context.Context, c redis.Scripter, keys []string, args ...any) (any, error) {
	if s.once {
		panic("script " + s.name + ": a once script runs with RunOnce")
	}
	return s.run(ctx, c, keys, args)
}

// RunOnce runs a [NewOnce] script with record, a key of this call alone
// (see [Nonce]) in the slot of the script's other keys. A re-send of the
// call that finds the record gets the first run's reply. The record lives
// for the client's retry window ([ReplayWindow]), bounded by ctx's
// deadline; a client that never re-sends keeps none. An error that is not
// a reply of the server wraps ria.ErrOutcomeUnknown.
func (s *Script) RunOnce(ctx context.Context, c redis.Scripter, record string, keys []string, args ...any) (any, error) {
	if !s.once {
		panic("script " + s.name + ": RunOnce of a script not built with NewOnce")
	}
	ttl := ReplayWindow(c)
	if dl, ok := ctx.Deadline(); ok && ttl > 0 {
		ttl = min(ttl, time.Until(dl)+time.Second)
	}
	k := make([]string, 0, len(keys)+1)
	k = append(append(k, keys...), record)
	a := make([]any, 0, len(args)+1)
	a = append(append(a, args...), max(ttl.Milliseconds(), 0))
	v, err := s.run(ctx, c, k, a)
	return v, Unknown(err)
}

func (s *Script) run(ctx context.Context, c redis.Scripter, keys []string, args []any) (any, error) {
	v, err := s.s.Run(ctx, c, keys, args...).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		if kerr := keyError(err); kerr != nil {
			return nil, kerr
		}
		return nil, fmt.Errorf("script %s: %w", s.name, err)
	}
	return v, nil
}

// Int64 runs the script and returns its integer reply.
func (s *Script) Int64(ctx context.Context, c redis.Scripter, keys []string, args ...any) (int64, error) {
	v, err := s.Run(ctx, c, keys, args...)
	if err != nil {
		return 0, err
	}
	return s.AsInt64(v)
}

// Int64s runs the script and returns its reply, an array of integers.
func (s *Script) Int64s(ctx context.Context, c redis.Scripter, keys []string, args ...any) ([]int64, error) {
	v, err := s.Run(ctx, c, keys, args...)
	if err != nil {
		return nil, err
	}
	return s.AsInt64s(v)
}

// AsInt64 checks that v, a reply of s, is an integer.
func (s *Script) AsInt64(v any) (int64, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("script %s: want an integer reply, got %T", s.name, v)
	}
	return n, nil
}

// AsStrings checks that v, a reply of s, is an array of strings; a nil
// reply (Lua nil or false) is an empty one.
func (s *Script) AsStrings(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("script %s: want an array reply, got %T", s.name, v)
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		if out[i], ok = e.(string); !ok {
			return nil, fmt.Errorf("script %s: want a string at %d, got %T", s.name, i, e)
		}
	}
	return out, nil
}

// AsInt64s checks that v, a reply of s, is an array of integers.
func (s *Script) AsInt64s(v any) ([]int64, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("script %s: want an array reply, got %T", s.name, v)
	}
	out := make([]int64, len(arr))
	for i, e := range arr {
		n, ok := e.(int64)
		if !ok {
			return nil, fmt.Errorf("script %s: want integer at %d, got %T", s.name, i, e)
		}
		out[i] = n
	}
	return out, nil
}

// keyError turns the error reply of a check.lua check into a *ria.KeyError,
// or returns nil.
func keyError(err error) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return nil
	}
	msg := rerr.Error()
	code, rest, ok := strings.Cut(msg, " ria ")
	var sentinel error
	switch code {
	case "WRONGTYPE":
		sentinel = ria.ErrWrongType
	case "CORRUPT":
		sentinel = ria.ErrCorrupt
	}
	if !ok || sentinel == nil {
		return nil
	}
	e := &ria.KeyError{Err: sentinel}
	// role=..;got=..;want=..;key=.. (the key last: it may hold anything)
	for _, f := range []*string{&e.Role, &e.Got, &e.Want} {
		var field string
		field, rest, ok = strings.Cut(rest, ";")
		if !ok {
			return nil
		}
		_, *f, _ = strings.Cut(field, "=")
	}
	if !strings.HasPrefix(rest, "key=") {
		return nil
	}
	e.Key = rest[len("key="):]
	return e
}

// Unknown wraps err with ria.ErrOutcomeUnknown unless the call is known to
// have changed nothing, or to have answered: err is nil, a *ria.KeyError
// (a script's check, before its first write), or a reply of the server
// that go-redis does not re-send on (the script ran and answered, or the
// server refused the call's only attempt). Any other error may end a call
// whose request reached Redis: a network error, a timeout, a dial error
// (an earlier attempt may have run before the connection broke), and a
// refusal that may answer the re-send of an attempt that ran and lost its
// reply: one go-redis re-sends on (LOADING, READONLY, TRYAGAIN,
// CLUSTERDOWN, MASTERDOWN, NOREPLICAS, max clients: a restarted or
// failed-over server), and BUSY (a server running a long script: the
// attempt before timed out waiting behind it, and may run after it;
// go-redis does not re-send on BUSY itself, so a BUSY answering a first
// attempt is reported unknown too). The errors an errors.Join holds (calls sent together) are
// classified one by one. Use it for the errors of state-changing calls
// whose request may have reached Redis.
func Unknown(err error) error {
	if err == nil || errors.Is(err, ria.ErrOutcomeUnknown) {
		return err
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts := j.Unwrap()
		out := make([]error, len(parts))
		for i, e := range parts {
			out[i] = Unknown(e)
		}
		return errors.Join(out...)
	}
	var rerr redis.Error
	var kerr *ria.KeyError
	if errors.As(err, &kerr) || errors.As(err, &rerr) && !resent(rerr) {
		return err
	}
	return fmt.Errorf("%w: %w", ria.ErrOutcomeUnknown, err)
}

// MayHaveRun reports whether a state-changing call that failed with err
// may have run on the server (see [Unknown]).
func MayHaveRun(err error) bool {
	return errors.Is(Unknown(err), ria.ErrOutcomeUnknown)
}

// resent reports whether err is a server refusal that may answer the
// re-send of an attempt that ran: one go-redis re-sends a command on, or
// BUSY (see [Unknown]).
func resent(err error) bool {
	return redis.IsLoadingError(err) || redis.IsReadOnlyError(err) || redis.IsTryAgainError(err) ||
		redis.IsClusterDownError(err) || redis.IsMasterDownError(err) || redis.IsNoReplicasError(err) ||
		redis.IsMaxClientsError(err) || strings.HasPrefix(err.Error(), "BUSY ")
}

// ReplayWindow returns how long after a command first reached the server
// the client c may still re-send it: its retries times what one attempt may
// take (waiting for a connection, writing, reading, backing off), read from
// c's options, plus a second. It is 0 for a client that never re-sends
// (MaxRetries -1; on a Cluster, MaxRedirects -1 too), and 60 s for a client
// whose options it cannot read. A timeout that is off (negative) counts as
// 10 s, and the window is at most 5 min.
func ReplayWindow(c any) time.Duration {
	var (
		retries                    int
		pool, write, read, backoff time.Duration
	)
	switch c := c.(type) {
	case *redis.Client:
		o := c.Options()
		retries = max(o.MaxRetries, 0)
		pool, write, read, backoff = o.PoolTimeout, o.WriteTimeout, o.ReadTimeout, o.MaxRetryBackoff
	case *redis.ClusterClient:
		o := c.Options()
		// Each of MaxRedirects+1 tries of the cluster client is one node
		// client call of MaxRetries+1 attempts.
		retries = (max(o.MaxRedirects, 0)+1)*(max(o.MaxRetries, 0)+1) - 1
		pool, write, read, backoff = o.PoolTimeout, o.WriteTimeout, o.ReadTimeout, o.MaxRetryBackoff
	case *redis.Ring:
		o := c.Options()
		retries = max(o.MaxRetries, 0)
		pool, write, read, backoff = o.PoolTimeout, o.WriteTimeout, o.ReadTimeout, o.MaxRetryBackoff
	default:
		return time.Minute
	}
	if retries == 0 {
		return 0
	}
	for _, d := range []*time.Duration{&pool, &write, &read} {
		if *d <= 0 {
			*d = 10 * time.Second
		}
	}
	return min(time.Duration(retries)*(pool+write+read+max(backoff, 0))+time.Second, 5*time.Minute)
}

var (
	noncePrefix = func() string {
		b := make([]byte, 8)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		return hex.EncodeToString(b)
	}()
	nonceSeq atomic.Uint64
)

// Nonce returns a string no other call of any process returns (a random
// prefix of this process and a sequence number): the name of a call's reply
// record.
func Nonce() string {
	return noncePrefix + "." + strconv.FormatUint(nonceSeq.Add(1), 36)
}
