// Package script runs the embedded Lua scripts of ria packages.
//
// A Script wraps redis.NewScript: EVALSHA first, EVAL when the server answers
// NOSCRIPT, so a script costs one round trip once the server has cached it.
// Every key a script touches is passed in KEYS; scripts never build keys.
// The helpers check the reply type, so a script that returns something
// unexpected gives an error naming the script instead of a panic.
package script

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// MintLua defines the Lua function mint(key), which returns the next value of
// a counter that stays strictly increasing even if Redis loses it (fencing
// tokens, permit sequence numbers). Prepend it to a script's source:
// New(name, MintLua+src).
//
//go:embed mint.lua
var MintLua string

// Script is one embedded Lua script. It is safe for concurrent use.
type Script struct {
	name string
	s    *redis.Script
}

// New returns a Script named name (used in errors) with source src.
func New(name, src string) *Script {
	return &Script{name: name, s: redis.NewScript(src)}
}

// Name returns the script's name.
func (s *Script) Name() string { return s.name }

// Run runs the script and returns its raw reply. A nil Lua reply (false or
// nil) comes back as (nil, nil): redis.Nil never escapes.
func (s *Script) Run(ctx context.Context, c redis.Scripter, keys []string, args ...any) (any, error) {
	v, err := s.s.Run(ctx, c, keys, args...).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
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
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("script %s: want an integer reply, got %T", s.name, v)
	}
	return n, nil
}

// Int64s runs the script and returns its reply, an array of integers.
func (s *Script) Int64s(ctx context.Context, c redis.Scripter, keys []string, args ...any) ([]int64, error) {
	v, err := s.Run(ctx, c, keys, args...)
	if err != nil {
		return nil, err
	}
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
