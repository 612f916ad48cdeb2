package cache

import (
	"context"
	"fmt"
	"time"

	"github.com/ria-go/ria/internal/keys"
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
// in one round trip (SET NX PX). The window is not extended by refused
// calls. It must be at least 1ms.
func (g *Guard) Allow(ctx context.Context, key string, window time.Duration) (bool, error) {
	if err := checkKey("guard allow", key); err != nil {
		return false, err
	}
	if window < time.Millisecond {
		return false, fmt.Errorf("cache: guard %s allow %q: window %v: must be at least 1ms", g.name, key, window)
	}
	ok, err := g.rdb.SetNX(ctx, g.guardKey(key), "1", window.Truncate(time.Millisecond)).Result()
	if err != nil {
		return false, fmt.Errorf("cache: guard %s allow %q: %w", g.name, key, err)
	}
	return ok, nil
}
