package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
)

// Client is the subset of go-redis this package uses: scripts and
// pipelines. *redis.Client, *redis.ClusterClient and *redis.Ring satisfy
// it.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd

	// Pipelined carries the scripts of all shards of a call: one round
	// trip per node.
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	Do(ctx context.Context, args ...any) *redis.Cmd // TYPE, to name a key of another type
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// bitmapMin: a term's posting stays a SET up to max(bitmapMin, seq/256)
// documents, then becomes a bitmap (add.lua; the package doc says why).
const bitmapMin = 256

// Defaults and limits.
const (
	// DefaultCacheTTL is how long a search's result set is kept for its
	// later pages unless [WithCacheTTL] says otherwise: the book's 30 s.
	DefaultCacheTTL = 30 * time.Second
	// MaxShards bounds [WithShards].
	MaxShards = 1024
	// MaxTermBytes is the longest term (after analysis) or tag value an
	// index accepts.
	MaxTermBytes = 400
	// MaxIDBytes is the longest document ID.
	MaxIDBytes = 512
	// MaxPageSize bounds the count of [Limit].
	MaxPageSize = 10000
)

// Limits bound what one document may hold; [Index.Add] refuses a
// document over them with [ErrTooLarge], before anything reaches Redis.
type Limits struct {
	// MaxTextBytes bounds Document.Text (default 1 MiB).
	MaxTextBytes int
	// MaxTerms bounds the distinct terms of a document (default
	// 10,000).
	MaxTerms int
}

// DefaultLimits are the limits of an index created without [WithLimits].
var DefaultLimits = Limits{MaxTextBytes: 1 << 20, MaxTerms: 10000}

// FieldKind says how a field sorts: [Numeric] or [Text].
type FieldKind int

const (
	// Numeric fields hold numbers (float64) and sort numerically.
	Numeric FieldKind = iota + 1
	// Text fields hold strings and sort by their bytes (so UTF-8 by code
	// point), not by a locale's collation.
	Text
)

// String returns "numeric" or "text".
func (k FieldKind) String() string {
	switch k {
	case Numeric:
		return "numeric"
	case Text:
		return "text"
	}
	return fmt.Sprintf("FieldKind(%d)", int(k))
}

// Field declares a sort field of an index (see [WithFields]).
type Field struct {
	Name string
	Kind FieldKind
}

// NumericField declares a numeric sort field (the book's "updated",
// "id", "created").
func NumericField(name string) Field { return Field{Name: name, Kind: Numeric} }

// TextField declares a text sort field (the book's alphabetic sort).
func TextField(name string) Field { return Field{Name: name, Kind: Text} }

// Option configures an [Index].
type Option func(*options)

type options struct {
	prefix   string
	shards   int
	analyzer Analyzer
	fields   []Field
	scores   []string
	ttl      time.Duration
	limits   Limits
}

// WithPrefix sets the key prefix. Default: "search:". It must not contain
// '{', '}' or '*' (the last would break the SORT patterns).
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithShards spreads the index over n shards, each in a Cluster slot of
// its own (default 1: the whole index in one slot). See the package doc's
// Sharding section. An index's shard count is part of its layout: open it
// with the same n every time.
func WithShards(n int) Option { return func(o *options) { o.shards = n } }

// WithAnalyzer sets the analyzer of documents and queries (default
// [NewStandard]()).
func WithAnalyzer(a Analyzer) Option { return func(o *options) { o.analyzer = a } }

// WithFields declares the fields documents may store for sorting
// ([ByField]). Names are 1 to 64 letters, digits, '_', '-' or '.'.
func WithFields(fields ...Field) Option {
	return func(o *options) { o.fields = append(o.fields, fields...) }
}

// WithScores declares the score fields documents may have: a ZSET per
// name (and shard) of document scores that [ByScores] weighs, such as the
// book's update time and votes. Names are as for [WithFields].
func WithScores(names ...string) Option {
	return func(o *options) { o.scores = append(o.scores, names...) }
}

// WithCacheTTL sets how long a search's result is kept for its later
// pages (default [DefaultCacheTTL]); each page read or [Index.Refresh]
// sets it again. At least 1ms.
func WithCacheTTL(d time.Duration) Option { return func(o *options) { o.ttl = d } }

// WithLimits sets the document limits (default [DefaultLimits]); a zero
// field keeps its default.
func WithLimits(l Limits) Option { return func(o *options) { o.limits = l } }

// Index is a full-text index of documents: postings, stored sort fields,
// and score ZSETs, in one Cluster slot per shard. It is safe for
// concurrent use, and any number of Indexes (in any number of processes)
// with the same name, prefix and shard count share the same documents.
type Index struct {
	rdb       Client
	name      string
	prefix    string
	analyzer  Analyzer
	fields    map[string]FieldKind
	fieldList []string // sorted
	scores    []string // sorted
	ttl       time.Duration
	limits    Limits
	shards    []shardKeys
	bitmapMin int // a term's SET becomes a bitmap past max(bitmapMin, seq/256) documents
}

// New returns the index called name. Nothing reaches Redis.
//
// It returns an error naming the bad argument, matching [ErrInvalid] or
// [ErrUnknownField], if name is empty or holds '{', '}' or '*', the
// prefix holds one of those, the shard count is outside 1..[MaxShards],
// a field or score name is malformed or repeated, the TTL is below 1ms,
// or a limit is negative. It panics if rdb is nil.
func New(rdb Client, name string, opts ...Option) (*Index, error) {
	if rdb == nil {
		panic("search: New with a nil client")
	}
	o := options{prefix: "search:", shards: 1, ttl: DefaultCacheTTL}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("search: new %q: %w: %w", name, err, ErrInvalid)
	}
	fail := func(format string, args ...any) (*Index, error) {
		return nil, fmt.Errorf("search: new %q: "+format, append([]any{name}, args...)...)
	}
	if err := keys.CheckEntity("index name", name); err != nil {
		return fail("%w: %w", ErrInvalid, err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return fail("%w: %w", ErrInvalid, err)
	}
	if strings.Contains(name, "*") || strings.Contains(o.prefix, "*") {
		return fail("%w: the name and prefix must not contain '*'", ErrInvalid)
	}
	if o.shards < 1 || o.shards > MaxShards {
		return fail("%w: shard count %d: want 1 to %d", ErrInvalid, o.shards, MaxShards)
	}
	if o.ttl < time.Millisecond {
		return fail("%w: cache TTL %v: must be at least 1ms", ErrInvalid, o.ttl)
	}
	if o.limits.MaxTextBytes < 0 || o.limits.MaxTerms < 0 {
		return fail("%w: negative limit %+v", ErrInvalid, o.limits)
	}
	if o.limits.MaxTextBytes == 0 {
		o.limits.MaxTextBytes = DefaultLimits.MaxTextBytes
	}
	if o.limits.MaxTerms == 0 {
		o.limits.MaxTerms = DefaultLimits.MaxTerms
	}
	if o.analyzer == nil {
		o.analyzer = defaultAnalyzer
	}
	x := &Index{
		rdb: rdb, name: name, prefix: o.prefix, analyzer: o.analyzer,
		fields: map[string]FieldKind{}, ttl: o.ttl, limits: o.limits, bitmapMin: bitmapMin,
	}
	for _, f := range o.fields {
		if err := checkName("field", f.Name); err != nil {
			return fail("%w", err)
		}
		if f.Kind != Numeric && f.Kind != Text {
			return fail("%w: field %q: kind %v: want Numeric or Text", ErrInvalid, f.Name, f.Kind)
		}
		if _, dup := x.fields[f.Name]; dup {
			return fail("%w: field %q declared twice", ErrInvalid, f.Name)
		}
		x.fields[f.Name] = f.Kind
		x.fieldList = append(x.fieldList, f.Name)
	}
	slices.Sort(x.fieldList)
	for _, s := range o.scores {
		if err := checkName("score", s); err != nil {
			return fail("%w", err)
		}
		if slices.Contains(x.scores, s) {
			return fail("%w: score %q declared twice", ErrInvalid, s)
		}
		x.scores = append(x.scores, s)
	}
	slices.Sort(x.scores)
	ks := keys.New(o.prefix)
	for i := range o.shards {
		x.shards = append(x.shards, newShardKeys(ks, shardTag(name, i, o.shards)))
	}
	return x, nil
}

// Name returns the index's name.
func (x *Index) Name() string { return x.name }

// Analyzer returns the index's analyzer.
func (x *Index) Analyzer() Analyzer { return x.analyzer }

// Fields returns the declared sort fields, sorted by name.
func (x *Index) Fields() []Field {
	out := make([]Field, len(x.fieldList))
	for i, n := range x.fieldList {
		out[i] = Field{Name: n, Kind: x.fields[n]}
	}
	return out
}

// Scores returns the declared score names, sorted.
func (x *Index) Scores() []string { return slices.Clone(x.scores) }

// checkName checks a field, score or tag field name.
func checkName(kind, name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%w: %s name %q: want 1 to 64 characters", ErrUnknownField, kind, name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("%w: %s name %q: %q is not a letter, digit, '_', '-' or '.'", ErrUnknownField, kind, name, r)
		}
	}
	return nil
}
