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

// Read is one command of a pipeline of plain reads, with the key it read,
// the key's role and the type it must hold, for [PipeWrongType].
type Read struct {
	Cmd             redis.Cmder
	Key, Role, Want string
}

// PipeWrongType returns, for err, the error of a pipeline of plain reads,
// the *ria.KeyError of the first of reads that failed with a WRONGTYPE
// reply on its key (see [WrongType]), or else err.
func PipeWrongType(ctx context.Context, rdb Doer, err error, reads ...Read) error {
	for _, r := range reads {
		cerr := r.Cmd.Err()
		if cerr == nil || errors.Is(cerr, redis.Nil) {
			continue
		}
		var kerr *ria.KeyError
		if werr := WrongType(ctx, rdb, cerr, r.Key, r.Role, r.Want); errors.As(werr, &kerr) {
			return werr
		}
	}
	return err
}
