package counters

import (
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
)

// redisCode returns the first word of the Redis error reply err wraps
// ("OVERFLOW", "TOOOLD"), or "".
func redisCode(err error) string {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return ""
	}
	code, _, _ := strings.Cut(rerr.Error(), " ")
	return code
}

// corrupt returns the error about a key that holds a value this package
// cannot parse.
func corrupt(role, key, got, want string) error {
	if len(got) > 40 {
		got = got[:40] + "..."
	}
	return &ria.KeyError{Role: role, Key: key, Got: `"` + got + `"`, Want: want, Err: ria.ErrCorrupt}
}
