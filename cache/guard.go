package cache

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed reset.lua
	resetLua string
	// resetScript deletes a Guard's or a Limiter's key: a re-send is
	// answered from a record.
	resetScript = script.NewOnce("cache reset", resetLua)
)

// Guard lets an action through once per window per key: the blog's
// password-reset limiter ("one reset email per user every 5 s"). It is safe
// for concurrent use.
type Guard struct {
	rdb  Client
	name string
	keys keys.Space
}

// NewGuard returns the guard name, backed by rdb. Option: [WithPrefix]. It
// returns an error for an invalid name or option; a nil rdb panics.
func NewGuard(rdb Client, name string, opts ...Option) (*Guard, error) {
	if rdb == nil {
		panic("cache: NewGuard with nil client")
	}
	if err := checkName("guard", name); err != nil {
		return nil, err
	}
	o, err := build("guard "+name, []string{"WithPrefix"}, opts)
	if err != nil {
		return nil, err
	}
	return &Guard{rdb: rdb, name: name, keys: keys.New(o.prefix)}, nil
}

// Name returns the guard's name.
func (g *Guard) Name() string { return g.name }

// Allow reports whether the action on key may go ahead: true for the first
// call, then false until window has passed since that call (Redis's clock),
// in one round trip: SET key <nonce> NX PX window GET, which also tells a
// call that go-redis re-sent after a lost reply that the key holds its own
// nonce, so that it answers true. The window is not extended by refused
// calls. It must be at least 1ms and at most [MaxDuration], and counts in
// whole milliseconds.
//
// A re-send that comes after the window no longer finds its own nonce: if
// another call took the key meanwhile, it would read that call's nonce and
// refuse a call that did get through. So a refusal whose reply took the
// window or longer (from before sending to the reply, as measured by this
// process; only a re-send after the window can take that long) returns an
// error wrapping [ria.ErrOutcomeUnknown] instead of false. With no other
// call meanwhile, such a re-send sets the key again and answers true: the
// window then restarts from the re-send. go-redis re-sends a command whose
// reply a read timeout lost ReadTimeout (3 s by default) after sending it,
// so this matters for windows shorter than that. A [Guard.Reset] of key
// between a call's run and its re-send can still make it answer false (as
// if it came after the Reset).
//
// If every attempt lost its reply, the error wraps [ria.ErrOutcomeUnknown];
// a key that holds another type than a STRING gives a [*ria.KeyError].
// Needs Redis 7.0 or later (SET with both NX and GET).
func (g *Guard) Allow(ctx context.Context, key string, window time.Duration) (bool, error) {
	if err := checkKey("guard allow", key); err != nil {
		return false, err
	}
	if window < time.Millisecond || window > MaxDuration {
		return false, fmt.Errorf("cache: guard %s allow %q: window %v: must be at least 1ms and at most %v", g.name, key, window, MaxDuration)
	}
	k, nonce := g.guardKey(key), script.Nonce()
	px := window.Milliseconds()
	start := time.Now()
	held, err := g.rdb.Do(ctx, "set", k, nonce, "nx", "px", px, "get").Text()
	switch {
	case err == redis.Nil:
		return true, nil
	case err != nil:
		return false, fmt.Errorf("cache: guard %s allow %q: %w", g.name, key, script.Unknown(script.WrongType(ctx, g.rdb, err, k, "cache guard", "string")))
	case held == nonce:
		return true, nil
	}
	// The key this call set (if it ran before) lived px ms from that run: a
	// run that found another call's key this long after sending may be a
	// re-send that came after it ended.
	if took := time.Since(start); took >= time.Duration(px)*time.Millisecond {
		return false, fmt.Errorf("cache: guard %s allow %q: %w: refused after %v, not less than the window %v: a re-send after the window may have found another call's key",
			g.name, key, ria.ErrOutcomeUnknown, took, window)
	}
	return false, nil
}

// Reset forgets key's window, whatever its key holds: the next Allow for
// key is let through. One round trip (a script: DEL); resetting a key that
// is not refused is no error. A Reset that go-redis re-sends after a lost
// reply is answered from a record of its first run instead of deleting
// again, which would free the key of a call another client let through
// between the two runs, and so let a second call through in its window
// (see the package doc, "Lost replies"); if every attempt lost its reply,
// the error wraps [ria.ErrOutcomeUnknown].
func (g *Guard) Reset(ctx context.Context, key string) error {
	if err := checkKey("guard reset", key); err != nil {
		return err
	}
	if _, err := resetScript.RunOnce(ctx, g.rdb, g.keys.Once(g.name+":"+key), []string{g.guardKey(key)}); err != nil {
		return fmt.Errorf("cache: guard %s reset %q: %w", g.name, key, err)
	}
	return nil
}
