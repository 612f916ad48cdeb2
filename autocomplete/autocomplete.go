package autocomplete

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

var (
	// ErrEmpty is wrapped by the error for an empty name, contact, user,
	// set or prefix.
	ErrEmpty = errors.New("autocomplete: empty")
	// ErrTooLong is wrapped by the error for a name, contact or prefix of
	// more than [MaxName] bytes, or a user or set name of more than
	// [MaxEntity] bytes.
	ErrTooLong = errors.New("autocomplete: too long")
	// ErrInvalid is wrapped by the error for a name, contact or prefix
	// that is not valid UTF-8 or holds a NUL byte, a user or set name with
	// '{' or '}', and a count out of range.
	ErrInvalid = errors.New("autocomplete: invalid")
)

const (
	// DefaultRecent is how many contacts a user's recent list keeps
	// unless [WithRecent] says otherwise (the book's 100).
	DefaultRecent = 100
	// MaxRecent is the largest [WithRecent].
	MaxRecent = 10000
	// MaxCompletions is the largest n of [Completer.Complete] and
	// [Completer.Members].
	MaxCompletions = 1000
	// MaxBatch is the most names one [Completer.Join] or
	// [Completer.Leave] takes.
	MaxBatch = 1000
	// MaxEntity is the longest user or set name, in bytes.
	MaxEntity = 512
)

var (
	//go:embed touch.lua
	touchLua string
	//go:embed remove.lua
	removeLua string
	//go:embed join.lua
	joinLua string
	//go:embed leave.lua
	leaveLua string

	// Every write is a once-script: a re-send after a lost reply is
	// answered from the first run's record instead of running again over
	// what other clients wrote in between (see Lost replies in doc.go).
	touchScript  = script.NewOnce("autocomplete touch", touchLua)
	removeScript = script.NewOnce("autocomplete remove", removeLua)
	joinScript   = script.NewOnce("autocomplete join", joinLua)
	leaveScript  = script.NewOnce("autocomplete leave", leaveLua)
)

// Client is the subset of go-redis this package uses: scripts for the
// writes, and one plain read per query (TYPE only to name the type of a
// key that a read found of the wrong type). *redis.Client,
// *redis.ClusterClient and *redis.Ring satisfy it.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd

	ZRangeByLex(ctx context.Context, key string, opt *redis.ZRangeBy) *redis.StringSliceCmd
	LRange(ctx context.Context, key string, start, stop int64) *redis.StringSliceCmd
	Do(ctx context.Context, args ...any) *redis.Cmd // TYPE, to name a key of another type
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// Option configures a [Completer].
type Option func(*options)

type options struct {
	prefix string
	recent int
}

// WithPrefix sets the key prefix. Default: "autocomplete:". It must not
// contain '{' or '}'.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithRecent sets how many contacts a recent list keeps: adding one more
// drops the least recent. Default: [DefaultRecent]; 1 to [MaxRecent].
// Every process sharing the prefix should use the same value.
func WithRecent(n int) Option { return func(o *options) { o.recent = n } }

// Completer holds recent-contact lists and named member sets, and
// completes prefixes over them. It is safe for concurrent use.
type Completer struct {
	rdb    Client
	keys   keys.Space
	recent int
}

// New returns a Completer backed by rdb. It returns an error for a prefix
// that holds '{' or '}' or a [WithRecent] out of range. A nil rdb is a
// programmer error and panics. Nothing reaches Redis.
func New(rdb Client, opts ...Option) (*Completer, error) {
	if rdb == nil {
		panic("autocomplete: New with nil client")
	}
	o := options{prefix: "autocomplete:", recent: DefaultRecent}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("autocomplete: new: %w", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("autocomplete: new: %w", err)
	}
	if o.recent < 1 || o.recent > MaxRecent {
		return nil, fmt.Errorf("autocomplete: new: WithRecent(%d): want 1 to %d: %w", o.recent, MaxRecent, ErrInvalid)
	}
	return &Completer{rdb: rdb, keys: keys.New(o.prefix), recent: o.recent}, nil
}

// checkEntity reports whether s can name a user or a set.
func checkEntity(kind, s string) error {
	if err := keys.CheckEntity(kind, s); err != nil {
		if errors.Is(err, keys.ErrEmpty) {
			return fmt.Errorf("%s: %w", kind, ErrEmpty)
		}
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	if len(s) > MaxEntity {
		return fmt.Errorf("%s of %d bytes: %w", kind, len(s), ErrTooLong)
	}
	return nil
}
