package cache

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
)

// Defaults of the options.
const (
	// DefaultTTL is how long a [Cache] entry stays fresh.
	DefaultTTL = time.Hour
	// DefaultCounterTTL is how long a [Counter] lives after its last use.
	DefaultCounterTTL = 24 * time.Hour
	// DefaultLease bounds one load or restore: past it, a waiter takes over.
	DefaultLease = 10 * time.Second
	// DefaultPrefix is the key prefix.
	DefaultPrefix = "cache:"
	// MaxDuration bounds every duration the package takes (TTLs, leases,
	// windows, grace): 10 years.
	MaxDuration = 10 * 365 * 24 * time.Hour
	// MaxN bounds the length of a [Latest] list, the members a [Top]
	// read returns, and the size of a near cache ([WithNear]).
	MaxN = 1 << 20
)

// inlineMax is the largest payload that a loader hands to its waiters in the
// wake list; waiters re-read larger ones from the entry (one more round trip)
// rather than have Redis hold a second copy of a large value.
const inlineMax = 64 << 10

// Option configures a [Cache], [Counter], [Guard], [Latest] or [Top]. Each
// option's doc says which of them it applies to; giving one to a constructor
// that does not use it is an error.
type Option func(*options)

type options struct {
	prefix  string
	ttl     time.Duration
	ttlSet  bool
	codec   Codec
	lease   time.Duration
	refresh time.Duration
	grace   time.Duration
	logger  *slog.Logger
	// near cache (WithNear): size 0 is off
	nearSize  int
	nearStale time.Duration
	given     []string // names of the options given, to reject those that do not apply
}

func (o *options) mark(name string) { o.given = append(o.given, name) }

// WithPrefix sets the key prefix of every kind. Default: "cache:". It must
// not contain '{' or '}', which would move the keys' Cluster hash tag.
func WithPrefix(p string) Option {
	return func(o *options) { o.prefix = p; o.mark("WithPrefix") }
}

// WithTTL sets how long a value lives. [Cache]: how long an entry is fresh
// (default [DefaultTTL]). [Counter]: how long a counter lives after its last
// Incr or Get (default [DefaultCounterTTL]). [Latest] and [Top]: how long a
// list or ranking lives after its last write (default: no expiry). It must be
// at least 1ms.
func WithTTL(d time.Duration) Option {
	return func(o *options) { o.ttl, o.ttlSet = d, true; o.mark("WithTTL") }
}

// WithCodec sets how values are encoded ([Cache], [Latest], [Top]: members).
// Default: [JSON]. Every process sharing a name must use the same codec.
func WithCodec(c Codec) Option {
	return func(o *options) { o.codec = c; o.mark("WithCodec") }
}

// WithLease bounds one load ([Cache]) or restore ([Counter]): while it runs,
// other callers wait for it; when the lease ends before the loader has
// stored its value (it hangs or died), one waiter takes over and loads in
// its place. A load that outlasts its lease is returned to its caller but
// not stored. Default: [DefaultLease]; at least 1ms.
func WithLease(d time.Duration) Option {
	return func(o *options) { o.lease = d; o.mark("WithLease") }
}

// WithRefreshAhead makes a [Cache] refresh entries before they expire: a Get
// that finds an entry within window of the end of its TTL returns the value
// at once and lets one caller (in any process) reload it in the background.
// Default: 0 (off). It must be shorter than the TTL.
func WithRefreshAhead(window time.Duration) Option {
	return func(o *options) { o.refresh = window; o.mark("WithRefreshAhead") }
}

// WithStaleGrace keeps [Cache] entries for grace after their TTL: a Get in
// that time returns the stale value at once and lets one caller reload it in
// the background (stale-while-revalidate). Default: 0 (off).
func WithStaleGrace(grace time.Duration) Option {
	return func(o *options) { o.grace = grace; o.mark("WithStaleGrace") }
}

// WithLogger sets where a [Cache] reports what no caller can
// be told: failed background refreshes, values loaded but not stored,
// undecodable entries that were replaced. Default: [slog.Default], as it is
// when the Cache logs.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l; o.mark("WithLogger") }
}

// WithNear gives a [Cache] a near cache: an in-process cache of at most
// size entries in front of Redis, so that a Get of a key read lately costs
// no round trip. An entry is served for at most maxStale after it was read
// from Redis, and never past the end of its fresh time there (its TTL, less
// the refresh window and stale grace) as known when it was read. Every
// write through a Cache of the same name (Set, Delete, a loader's store, a
// background refresh) publishes an invalidation in its own script, and
// every near cache of that name drops the key when it hears it; see "Near
// cache" in the package doc for the staleness bound. Every process that
// shares the name must give WithNear (sizes may differ): the writes of one
// that does not publish nothing. size is at least 1 and at most [MaxN];
// maxStale at least 1ms. Call [Cache.Close] when done with the Cache: it
// stops the subscriber goroutine. The client must not be a *redis.Ring.
func WithNear(size int, maxStale time.Duration) Option {
	return func(o *options) { o.nearSize, o.nearStale = size, maxStale; o.mark("WithNear") }
}

// build applies opts for the constructor kind, which accepts the options
// named in allowed, and checks the common ones.
func build(kind string, allowed []string, opts []Option) (options, error) {
	o := options{prefix: DefaultPrefix, codec: JSON, lease: DefaultLease}
	if err := option.Apply(&o, opts); err != nil {
		return o, fmt.Errorf("cache: %s: %w", kind, err)
	}
	for _, g := range o.given {
		if !slices.Contains(allowed, g) {
			return o, fmt.Errorf("cache: %s: option %s does not apply", kind, g)
		}
	}
	var errs []error
	if err := keys.CheckPrefix(o.prefix); err != nil {
		errs = append(errs, err)
	}
	if o.ttlSet {
		errs = appendRange(errs, "ttl", o.ttl, time.Millisecond)
	}
	if o.codec == nil {
		errs = append(errs, errors.New("nil codec"))
	}
	errs = appendRange(errs, "lease", o.lease, time.Millisecond)
	errs = appendRange(errs, "refresh window", o.refresh, 0)
	errs = appendRange(errs, "stale grace", o.grace, 0)
	if slices.Contains(o.given, "WithNear") {
		if o.nearSize < 1 || o.nearSize > MaxN {
			errs = append(errs, fmt.Errorf("near cache size %d: must be 1 to %d", o.nearSize, MaxN))
		}
		errs = appendRange(errs, "near cache max staleness", o.nearStale, time.Millisecond)
	}
	if o.logger == nil && slices.Contains(o.given, "WithLogger") {
		errs = append(errs, errors.New("nil logger"))
	}
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("cache: %s: %w", kind, err)
	}
	return o, nil
}

// appendRange appends to errs an error if d, the option named what, is
// below least or above [MaxDuration].
func appendRange(errs []error, what string, d, least time.Duration) []error {
	switch {
	case d < least && least == 0:
		return append(errs, fmt.Errorf("%s %v: must not be negative", what, d))
	case d < least:
		return append(errs, fmt.Errorf("%s %v: must be at least %v", what, d, least))
	case d > MaxDuration:
		return append(errs, fmt.Errorf("%s %v: must be at most %v", what, d, MaxDuration))
	}
	return errs
}

// checkName checks the name of a Cache, Counter, Guard, Latest or Top. Names
// are constants chosen by the programmer; they become the first half of the
// keys' hash tag, so they must be non-empty and free of '{', '}' and ':'
// (the separator between name and key).
func checkName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("cache: %s name: empty", kind)
	}
	if strings.ContainsAny(name, "{}:") {
		return fmt.Errorf("cache: %s name %q: must not contain '{', '}' or ':'", kind, name)
	}
	return nil
}

// checkKey checks a key given to a call. Any non-empty string will do.
func checkKey(op, key string) error {
	if key == "" {
		return fmt.Errorf("cache: %s: key: empty", op)
	}
	return nil
}

func ms(d time.Duration) int64 { return max(d.Milliseconds(), 1) }
