package shard

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

// Client is the subset of go-redis this package uses: scripts, plain
// commands (through Do), pipelines, and the blocking move a waiting pop
// blocks on. *redis.Client, *redis.ClusterClient (a [Router]'s client
// too) and *redis.Ring satisfy it.
type Client interface {
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
	Pipeline() redis.Pipeliner
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	BLMove(ctx context.Context, source, destination, srcpos, destpos string, timeout time.Duration) *redis.StringCmd
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// ErrMismatch is wrapped by the error of a New given parameters (shard
// size, expected total, record width, code table...) other than those the
// structure was created with: its keys would map elsewhere.
var ErrMismatch = errors.New("shard: parameters differ from the structure's")

// Option configures a structure of this package. Each New documents the
// options it takes; another option is an error.
type Option func(*options)

type options struct {
	prefix   string
	size     int64 // shard size; 0: from the server's limits
	expected int64 // Visitors: daily expected visitors
	perShard int64 // Records: ids per string
	block    int64 // Records: scan block in bytes
	set      map[string]bool
}

func (o *options) mark(name string) {
	if o.set == nil {
		o.set = map[string]bool{}
	}
	o.set[name] = true
}

// WithPrefix sets the key prefix. Default: "shard:". It must not contain
// '{' or '}'.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p; o.mark("WithPrefix") } }

// WithShardSize sets how many elements a shard holds (a [Hash], [Set],
// [Visitors] or [List] shard). Default: the server's compact-encoding limit
// for the structure's type ([ReadLimits]), read when the structure is
// created and kept with it.
func WithShardSize(n int64) Option { return func(o *options) { o.size = n; o.mark("WithShardSize") } }

// WithDailyExpected sets the visitor count a [Visitors] day is sized for
// when the day before has no count (the book's DAILY_EXPECTED). Default:
// 1,000,000. With [Sets], a count whose days would spread over more than
// [MaxShards] shards is refused by NewVisitors ([ErrSize]).
func WithDailyExpected(n int64) Option {
	return func(o *options) { o.expected = n; o.mark("WithDailyExpected") }
}

// WithIDsPerShard sets how many ids one string of a [Records] (or
// [Locations]) holds (the book's USERS_PER_SHARD). Default: 2^20. A string
// holds at most 512 MB.
func WithIDsPerShard(n int64) Option {
	return func(o *options) { o.perShard = n; o.mark("WithIDsPerShard") }
}

// WithBlockSize sets how many bytes [Records.Scan] reads with one GETRANGE
// (rounded down to whole records). Default: 1 MiB.
func WithBlockSize(n int64) Option { return func(o *options) { o.block = n; o.mark("WithBlockSize") } }

// newOptions applies opts, refusing any not named in allowed.
func newOptions(kind string, opts []Option, allowed ...string) (options, keys.Space, error) {
	o := options{prefix: "shard:"}
	if err := option.Apply(&o, opts); err != nil {
		return o, keys.Space{}, fmt.Errorf("shard: %s: %w", kind, err)
	}
	for name := range o.set {
		if name != "WithPrefix" && !strings.Contains(" "+strings.Join(allowed, " ")+" ", " "+name+" ") {
			return o, keys.Space{}, fmt.Errorf("shard: %s does not take %s", kind, name)
		}
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return o, keys.Space{}, fmt.Errorf("shard: %s: %w", kind, err)
	}
	if o.set["WithShardSize"] && o.size < 1 {
		return o, keys.Space{}, fmt.Errorf("shard: %s: %w: shard size %d, want at least 1", kind, ErrSize, o.size)
	}
	return o, keys.New(o.prefix), nil
}

var (
	//go:embed meta.lua
	metaLua    string
	metaScript = script.New("shard meta", metaLua)
)

// param is one parameter of a structure, kept in its meta hash.
type param struct {
	name     string
	value    int64
	explicit bool    // given by the caller: a stored value that differs is an error
	also     []int64 // other stored values an explicit param accepts (a code table's legacy checksum)
	kindMark bool    // a meta hash without it is of another kind of structure: ErrMismatch, not ErrCorrupt
}

// loadMeta returns the structure's parameters: those stored in its meta
// hash by the first New, or, when there is none yet, ps (stored now). A
// stored value that differs from an explicit one is an error wrapping
// [ErrMismatch]. ps values that are 0 and not explicit are computed by
// fill (called only when the meta hash is missing), so that a New of an
// existing structure does not read the server's limits.
func loadMeta(ctx context.Context, rdb Client, kind, name, key string, ps []param, fill func([]param) error) ([]param, error) {
	reply, err := rdb.Do(ctx, "hgetall", key).Result()
	if err != nil {
		return nil, fmt.Errorf("shard: %s %q: read parameters: %w", kind, name, wrongType(ctx, rdb, err, key, "shard meta", "hash"))
	}
	var stored []any
	switch r := reply.(type) {
	case []any: // RESP2
		stored = r
	case map[any]any: // RESP3
		for k, v := range r {
			stored = append(stored, k, v)
		}
	}
	if len(stored) == 0 {
		if err := fill(ps); err != nil {
			return nil, fmt.Errorf("shard: %s %q: %w", kind, name, err)
		}
		args := make([]any, 0, 2*len(ps))
		for _, p := range ps {
			args = append(args, p.name, p.value)
		}
		v, err := metaScript.Run(ctx, rdb, []string{key}, args...)
		if err != nil {
			return nil, fmt.Errorf("shard: %s %q: store parameters: %w", kind, name, err)
		}
		if stored, _ = v.([]any); len(stored) == 0 {
			return nil, fmt.Errorf("shard: %s %q: store parameters: unexpected reply %v", kind, name, v)
		}
	}
	got := map[string]string{}
	for i := 0; i+1 < len(stored); i += 2 {
		got[fmt.Sprint(stored[i])] = fmt.Sprint(stored[i+1])
	}
	out := make([]param, len(ps))
	for i, p := range ps {
		s, ok := got[p.name]
		if !ok && p.kindMark {
			return nil, fmt.Errorf("shard: %s %q: %w: it was created without %s (by another New)", kind, name, ErrMismatch, p.name)
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("shard: %s %q: %w", kind, name, &ria.KeyError{Role: "shard meta", Key: key,
				Got: fmt.Sprintf("%s=%q", p.name, s), Want: "an integer " + p.name, Err: ria.ErrCorrupt})
		}
		if p.explicit && v != p.value && !slices.Contains(p.also, v) {
			return nil, fmt.Errorf("shard: %s %q: %w: it was created with %s %d, not %d", kind, name, ErrMismatch, p.name, v, p.value)
		}
		out[i] = param{name: p.name, value: v, explicit: p.explicit}
	}
	return out, nil
}

// wrongType turns a WRONGTYPE reply to a plain command on key (scripts
// check their keys themselves) into a *ria.KeyError naming the key's role
// and the type it holds: [script.WrongType].
func wrongType(ctx context.Context, rdb Client, err error, key, role, want string) error {
	return script.WrongType(ctx, rdb, err, key, role, want)
}

// batchErr collects the errors of a pipeline's commands on shard keys,
// each named by its key, in an errors.Join (which script.Unknown
// classifies error by error); WRONGTYPE replies become *ria.KeyError.
func batchErr(ctx context.Context, rdb Client, cmds []redis.Cmder, keyOf func(redis.Cmder) string, role, want string) error {
	var errs []error
	for _, c := range cmds {
		if err := c.Err(); err != nil && err != redis.Nil {
			err = wrongType(ctx, rdb, err, keyOf(c), role, want)
			var kerr *ria.KeyError
			if !errors.As(err, &kerr) { // a KeyError names its key
				err = fmt.Errorf("%s %q: %w", role, keyOf(c), err)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// forEachPrimary calls fn on each primary server behind rdb, concurrently:
// the node itself for a *redis.Client, each master of a
// *redis.ClusterClient (a [Router]'s client: each of its servers), each
// shard of a *redis.Ring. A Cluster's replicas are not visited: go-redis's
// ForEachShard visits them too, and a scan there would count their
// primary's keys a second time.
func forEachPrimary(ctx context.Context, rdb Client, fn func(ctx context.Context, c *redis.Client) error) error {
	switch c := rdb.(type) {
	case *redis.Client:
		return fn(ctx, c)
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, fn)
	case *redis.Ring:
		return keys.ForEachRingShard(ctx, c, fn) // a Ring's shards have no replicas
	}
	return fmt.Errorf("shard: a %T does not list its servers (want *redis.Client, *redis.ClusterClient or *redis.Ring)", rdb)
}

// scanSum adds up size (HLEN, SCARD...) over the shards of a structure,
// the keys pre + <decimal id> + suf, on every primary: a SCAN per primary,
// then the sizes of the keys it found in one pipeline per primary.
func scanSum(ctx context.Context, rdb Client, pre, suf, sizeCmd, role, want string) (int64, error) {
	pattern := globEscape(pre) + "*" + globEscape(suf)
	var (
		mu    sync.Mutex
		total int64
	)
	err := forEachPrimary(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		var found []string
		var cursor uint64
		for {
			ks, next, err := c.Scan(ctx, cursor, pattern, 1000).Result()
			if err != nil {
				return err
			}
			for _, k := range ks {
				// The pattern also matches the shards of a structure
				// whose name extends this one's ("a:1" of "a").
				if digits(strings.TrimSuffix(strings.TrimPrefix(k, pre), suf)) {
					found = append(found, k)
				}
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		if len(found) == 0 {
			return nil
		}
		cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range found {
				p.Do(ctx, sizeCmd, k)
			}
			return nil
		})
		if err != nil {
			return batchErr(ctx, rdb, cmds, func(c redis.Cmder) string { return str(c.Args()[1]) }, role, want)
		}
		var sum int64
		for _, cmd := range cmds {
			n, _ := cmd.(*redis.Cmd).Int64()
			sum += n
		}
		mu.Lock()
		total += sum
		mu.Unlock()
		return nil
	})
	return total, err
}

// globEscape escapes the glob characters of s for a SCAN MATCH pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// corrupt is the *ria.KeyError of a key holding a value the package cannot
// parse.
func corrupt(key, role, got, want string) error {
	if len(got) > 40 {
		got = got[:40] + "..."
	}
	return &ria.KeyError{Role: role, Key: key, Got: strconv.Quote(got), Want: want, Err: ria.ErrCorrupt}
}

// sized is what a sharded [Hash] or [Set] knows of itself.
type sized struct {
	rdb               Client
	name              string
	keys              keys.Space
	total, size, nShd int64
}

// newSized checks the arguments of [NewHash] or [NewSet] (kind "hash" or
// "set") and loads (or stores, on first use) the shard size and expected
// total under <prefix>{name}:<kind>:meta: no [WithShardSize] takes the
// server's compact-encoding limit (limit of [ReadLimits]). maxShards > 0
// bounds the shard count (an error wrapping [ErrSize], before anything is
// stored).
func newSized(ctx context.Context, rdb Client, kind, name string, total, maxShards int64, opts []Option, limit func(Limits) int64) (sized, error) {
	if rdb == nil {
		return sized{}, fmt.Errorf("shard: %s %q: nil client", kind, name)
	}
	o, ks, err := newOptions(kind, opts, "WithShardSize")
	if err != nil {
		return sized{}, err
	}
	if err := keys.CheckEntity("shard: "+kind+" name", name); err != nil {
		return sized{}, err
	}
	if total < 0 {
		return sized{}, fmt.Errorf("shard: %s %q: %w: total %d", kind, name, ErrSize, total)
	}
	ps, err := loadMeta(ctx, rdb, kind, name, ks.Key(name, kind+":meta"),
		[]param{{name: "size", value: o.size, explicit: o.size > 0}, {name: "total", value: total, explicit: true}},
		func(ps []param) error {
			if ps[0].value == 0 {
				l, err := ReadLimits(ctx, rdb)
				if err != nil {
					return err
				}
				ps[0].value = limit(l)
			}
			_, err := shardCount(ps[1].value, ps[0].value, maxShards)
			return err
		})
	if err != nil {
		return sized{}, err
	}
	n, err := shardCount(ps[1].value, ps[0].value, maxShards)
	if err != nil {
		return sized{}, fmt.Errorf("shard: %s %q: %w", kind, name, err)
	}
	return sized{rdb: rdb, name: name, keys: ks, size: ps[0].value, total: ps[1].value, nShd: n}, nil
}

// shardCount is [Count], bounded by maxShards when it is > 0.
func shardCount(total, size, maxShards int64) (int64, error) {
	n, err := Count(total, size)
	if err == nil && maxShards > 0 && n > maxShards {
		return 0, fmt.Errorf("%w: expected total %d gives %d shards of size %d (2·total/size), at most %d", ErrSize, total, n, size, maxShards)
	}
	return n, err
}
