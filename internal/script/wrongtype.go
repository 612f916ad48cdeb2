package script

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
)

// Doer is what [WrongType] needs of a client.
type Doer interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// WrongType turns the WRONGTYPE reply of a plain command on key (scripts
// check their keys themselves) into a *ria.KeyError naming key, its role
// and the type found there, read with TYPE: one more round trip, on this
// path only. Other errors, nil, and a WRONGTYPE reply while key holds the
// wanted type (the command failed on another key) come back as they are.
func WrongType(ctx context.Context, rdb Doer, err error, key, role, want string) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) || !strings.HasPrefix(rerr.Error(), "WRONGTYPE") {
		return err
	}
	got := "another type"
	if t, terr := rdb.Do(ctx, "type", key).Text(); terr == nil && t != "none" {
		if t == want {
			return err
		}
		got = "a " + t
	}
	return &ria.KeyError{Role: role, Key: key, Got: got, Want: "a " + want, Err: ria.ErrWrongType}
}
