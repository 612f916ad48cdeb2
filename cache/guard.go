package cache

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
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
// calls. It must be at least 1ms and at most [MaxDuration]. If every
// attempt lost its reply, the error wraps [ria.ErrOutcomeUnknown]; a key
// that holds another type than a STRING gives a [*ria.KeyError]. Needs
// Redis 7.0 or later (SET with both NX and GET).
func (g *Guard) Allow(ctx context.Context, key string, window time.Duration) (bool, error) {
	if err := checkKey("guard allow", key); err != nil {
		return false, err
	}
	if window < time.Millisecond || window > MaxDuration {
		return false, fmt.Errorf("cache: guard %s allow %q: window %v: must be at least 1ms and at most %v", g.name, key, window, MaxDuration)
	}
	k, nonce := g.guardKey(key), script.Nonce()
	held, err := g.rdb.Do(ctx, "set", k, nonce, "nx", "px", window.Milliseconds(), "get").Text()
	switch {
	case err == redis.Nil:
		return true, nil
	case err != nil:
		return false, fmt.Errorf("cache: guard %s allow %q: %w", g.name, key, script.Unknown(script.WrongType(ctx, g.rdb, err, k, "cache guard", "string")))
	}
	return held == nonce, nil
}

// Reset forgets key's window, whatever its key holds: the next Allow for
// key is let through. One round trip (DEL); it is idempotent (resetting a
// key that is not refused is no error), so a re-send after a lost reply is
// harmless; if every attempt lost its reply, the error wraps
// [ria.ErrOutcomeUnknown].
func (g *Guard) Reset(ctx context.Context, key string) error {
	if err := checkKey("guard reset", key); err != nil {
		return err
	}
	if err := g.rdb.Do(ctx, "del", g.guardKey(key)).Err(); err != nil {
		return fmt.Errorf("cache: guard %s reset %q: %w", g.name, key, script.Unknown(err))
	}
	return nil
}
