package logs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

var (
	// ErrInvalid is wrapped by every error about a bad argument: an empty
	// or malformed name or severity, no entries, a message too long, a
	// time out of the range of [Entry.Time] (nothing reached Redis), or an
	// entry of [Logs.LogCommon] more than [MaxAhead] after the server's
	// time (refused by the write's script before it wrote anything).
	ErrInvalid = errors.New("logs: invalid argument")
	// ErrTooOld is returned by [Logs.LogCommon] for an entry whose time
	// falls before the previous hour of its common log. Nothing was
	// written.
	ErrTooOld = errors.New("logs: entry before the previous hour")
)

var (
	//go:embed write.lua
	writeLua    string
	writeScript = script.NewOnce("logs write", writeLua)
)

// The book's severities. Any lower-case word of letters, digits, '_', '-',
// '+' and '.' of at most 32 bytes is a severity.
const (
	Debug    = "debug"
	Info     = "info"
	Warning  = "warning"
	Error    = "error"
	Critical = "critical"
)

// Limits of one write.
const (
	// DefaultRecent is how many messages a recent log keeps (the book's 100).
	DefaultRecent = 100
	// MaxEntries bounds the entries of one LogRecent or LogCommon call.
	MaxEntries = 1000
	// MaxMessage bounds the length in bytes of a message.
	MaxMessage = 64 << 10
	// MaxAhead bounds how far an entry's Time given to [Logs.LogCommon]
	// may be after the Redis server's time (clocks disagree a little); a
	// later one would make a future hour current and every write of the
	// present hour [ErrTooOld].
	MaxAhead = time.Minute
)

// Client is the subset of go-redis this package uses.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd

	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	LRange(ctx context.Context, key string, start, stop int64) *redis.StringSliceCmd
	Do(ctx context.Context, args ...any) *redis.Cmd // TYPE, to name a key of another type
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// Option configures [New].
type Option func(*options)

type options struct {
	prefix string
	recent int
}

// WithPrefix sets the key prefix. Default: "logs:". It must not contain
// '{' or '}'.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithRecent sets how many messages each recent log keeps. Default:
// [DefaultRecent]. It must be between 1 and 100,000.
func WithRecent(n int) Option { return func(o *options) { o.recent = n } }

// Logs writes and reads the recent and common logs of Redis in Action
// 5.1. It is safe for concurrent use.
type Logs struct {
	rdb    Client
	keys   keys.Space
	recent int
}

// New returns Logs backed by rdb. A bad option is an error wrapping
// [ErrInvalid]; a nil rdb panics. Nothing reaches Redis.
func New(rdb Client, opts ...Option) (*Logs, error) {
	if rdb == nil {
		panic("logs: New with nil client")
	}
	o := options{prefix: "logs:", recent: DefaultRecent}
	if err := option.Apply(&o, opts); err != nil {
		return nil, invalid("new", "%v", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("logs: new: %w: %w", err, ErrInvalid)
	}
	if o.recent < 1 || o.recent > 100_000 {
		return nil, invalid("new", "recent %d: must be between 1 and 100000", o.recent)
	}
	return &Logs{rdb: rdb, keys: keys.New(o.prefix), recent: o.recent}, nil
}

// Entry is one message to log.
type Entry struct {
	Severity string // Debug, Info, ... or another severity word
	Message  string // what the recent log shows
	// Common is what the common log counts; empty: Message. (The slog
	// Handler counts a record's message without its attributes, an empty
	// message as empty.)
	Common string
	// emptyCommon makes an empty Common count as empty (the Handler's
	// record with no message), not as Message.
	emptyCommon bool
	// Time is when it happened; zero: the Redis server's time when it is
	// written. It decides the hour of the common log it is counted in.
	// It must be within ±2^53 µs of the Unix epoch (about the years 1685
	// to 2255), which the write stores exactly.
	Time time.Time
}

// LogRecent adds entries to the recent logs of log name (the book's
// log_recent): each severity's log keeps its newest messages ([WithRecent]:
// 100) with their times. One round trip and one atomic step for all
// entries (at most [MaxEntries]). It returns an error wrapping
// [ErrInvalid] for a bad name, severity, message, time or count of
// entries, a *ria.KeyError if a key holds something else, and an error wrapping
// ria.ErrOutcomeUnknown if no reply came back (a re-send by go-redis
// writes the entries once).
func (l *Logs) LogRecent(ctx context.Context, name string, entries ...Entry) error {
	return l.log(ctx, "log recent", name, entries, false)
}

// LogCommon adds entries to the recent logs of log name and counts them in
// its common logs (the book's log_common): per severity, how many times
// each message was logged in the current hour, and in the hour before.
// The hour is the entry's Time's, or the Redis server's: the first entry
// of a new hour moves the current hour to the previous one inside the same
// atomic step, so concurrent writers at a boundary neither lose a count
// nor rotate twice. An entry before the previous hour makes the call
// return [ErrTooOld] and write nothing; one more than [MaxAhead] after the
// server's time, an error wrapping [ErrInvalid] naming its time, and
// nothing is written. One round trip. Other errors as [Logs.LogRecent].
func (l *Logs) LogCommon(ctx context.Context, name string, entries ...Entry) error {
	return l.log(ctx, "log common", name, entries, true)
}

func (l *Logs) log(ctx context.Context, op, name string, entries []Entry, common bool) error {
	k, args, err := l.call(op, name, entries, common)
	if err != nil {
		return err
	}
	v, err := writeScript.RunOnce(ctx, l.rdb, l.keys.Once(name), k, args...)
	return l.result(op, name, v, err)
}

func (l *Logs) result(op, name string, v any, err error) error {
	if err == nil {
		_, err = writeScript.AsInt64(v)
	}
	if err != nil {
		switch redisCode(err) {
		case "TOOOLD":
			err = fmt.Errorf("%w: %w", ErrTooOld, err)
		case "AHEAD":
			err = ahead(err)
		}
		return fmt.Errorf("logs: %s %q: %w", op, name, err)
	}
	return nil
}

// ahead returns the error of the write script's reply err, "AHEAD
// <entry> <time> <now>" (times in Unix µs).
func ahead(err error) error {
	var (
		e, at, now int64
		rerr       redis.Error
	)
	if !errors.As(err, &rerr) {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if _, serr := fmt.Sscanf(rerr.Error(), "AHEAD %d %d %d", &e, &at, &now); serr != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	format := func(us int64) string { return time.UnixMicro(us).UTC().Format(time.RFC3339Nano) }
	return fmt.Errorf("entry %d: time %s is more than %v after the server's time %s: %w",
		e, format(at), MaxAhead, format(now), ErrInvalid)
}

// The times an entry may have: Unix µs within ±2^53, which the write
// script's numbers hold exactly (about the years 1685 to 2255). Beyond,
// the time would be stored rounded, or, past int64 µs, wrapped around.
var (
	minTime = time.UnixMicro(-1 << 53)
	maxTime = time.UnixMicro(1 << 53)
)

// call checks a write and returns the write script's keys and arguments
// (without the record).
func (l *Logs) call(op, name string, entries []Entry, common bool) ([]string, []any, error) {
	if err := keys.CheckEntity("log name", name); err != nil {
		return nil, nil, fmt.Errorf("logs: %s: %w: %w", op, err, ErrInvalid)
	}
	if len(entries) == 0 || len(entries) > MaxEntries {
		return nil, nil, invalid(op, "log %q: %d entries: want 1 to %d", name, len(entries), MaxEntries)
	}
	var sevs []string
	for i, e := range entries {
		if err := checkSeverity(e.Severity); err != nil {
			return nil, nil, invalid(op, "log %q: entry %d: %v", name, i, err)
		}
		if len(e.Message) > MaxMessage || len(e.Common) > MaxMessage {
			return nil, nil, invalid(op, "log %q: entry %d: message of %d bytes: at most %d", name, i, max(len(e.Message), len(e.Common)), MaxMessage)
		}
		if !e.Time.IsZero() && (e.Time.Before(minTime) || e.Time.After(maxTime)) {
			return nil, nil, invalid(op, "log %q: entry %d: time %s: must be between %s and %s", name, i,
				e.Time.UTC().Format(time.RFC3339Nano), minTime.UTC().Format(time.RFC3339Nano), maxTime.UTC().Format(time.RFC3339Nano))
		}
		if !slices.Contains(sevs, e.Severity) {
			sevs = append(sevs, e.Severity)
		}
	}
	k := make([]string, 0, 1+3*len(sevs))
	k = append(k, l.hoursKey(name))
	args := make([]any, 0, 5+len(sevs)+4*len(entries))
	flag := "0"
	if common {
		flag = "1"
	}
	args = append(args, l.recent, "", flag, len(sevs), MaxAhead.Microseconds())
	for _, s := range sevs {
		k = append(k, l.recentKey(name, s), l.commonKey(name, s), l.lastKey(name, s))
		args = append(args, s)
	}
	for _, e := range entries {
		at := ""
		if !e.Time.IsZero() {
			at = strconv.FormatInt(e.Time.UnixMicro(), 10)
		}
		c := e.Common
		if c == "" && !e.emptyCommon {
			c = e.Message
		}
		args = append(args, slices.Index(sevs, e.Severity)+1, at, e.Message, c)
	}
	return k, args, nil
}

func checkSeverity(s string) error {
	if s == "" || len(s) > 32 {
		return fmt.Errorf("severity %q: want 1 to 32 bytes", s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("_-+.", c) >= 0) {
			return fmt.Errorf("severity %q: want lower-case letters, digits, '_', '-', '+' or '.'", s)
		}
	}
	return nil
}

// Message is an entry of a recent log.
type Message struct {
	Time time.Time
	Text string
}

// Recent returns the recent log of name at severity, newest first, in one
// round trip. It returns a *ria.KeyError (ria.ErrCorrupt) for an entry
// this package did not write.
func (l *Logs) Recent(ctx context.Context, name, severity string) ([]Message, error) {
	if err := l.checkRead("recent", name, severity); err != nil {
		return nil, err
	}
	key := l.recentKey(name, severity)
	raw, err := l.rdb.LRange(ctx, key, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("logs: recent %q: %w", name, script.WrongType(ctx, l.rdb, err, key, "logs recent", "list"))
	}
	out := make([]Message, len(raw))
	for i, r := range raw {
		ts, text, ok := strings.Cut(r, " ")
		us, err := strconv.ParseInt(ts, 10, 64)
		if !ok || err != nil {
			return nil, corrupt("logs recent", key, r, "<Unix µs> <text>")
		}
		out[i] = Message{Time: time.UnixMicro(us), Text: text}
	}
	return out, nil
}

// Hour is the common log of one hour.
type Hour struct {
	Start  time.Time // zero when nothing was counted
	Counts []Count   // most common first (ties in reverse byte order)
}

// Count is how many times a message was logged.
type Count struct {
	Message string
	Count   int64
}

// Common returns the n most common messages of log name at severity in its
// current hour (the newest hour counted, which is older than the clock's
// if nothing was logged since) and in the hour before it, in one round
// trip. n must be at least 1.
func (l *Logs) Common(ctx context.Context, name, severity string, n int) (cur, prev Hour, err error) {
	if err := l.checkRead("common", name, severity); err != nil {
		return Hour{}, Hour{}, err
	}
	if n < 1 {
		return Hour{}, Hour{}, invalid("common", "log %q: n %d: must be at least 1", name, n)
	}
	var (
		hour *redis.StringCmd
		c, p *redis.ZSliceCmd
	)
	_, err = l.rdb.Pipelined(ctx, func(pp redis.Pipeliner) error {
		hour = pp.HGet(ctx, l.hoursKey(name), severity)
		c = pp.ZRevRangeWithScores(ctx, l.commonKey(name, severity), 0, int64(n-1))
		p = pp.ZRevRangeWithScores(ctx, l.lastKey(name, severity), 0, int64(n-1))
		return nil
	})
	if err != nil { // the first error, maybe a missing hour (redis.Nil) before a key of another type
		err = script.PipeWrongType(ctx, l.rdb, err,
			script.Read{Cmd: hour, Key: l.hoursKey(name), Role: "logs hours", Want: "hash"},
			script.Read{Cmd: c, Key: l.commonKey(name, severity), Role: "logs common", Want: "zset"},
			script.Read{Cmd: p, Key: l.lastKey(name, severity), Role: "logs common previous hour", Want: "zset"})
		if err != redis.Nil {
			return Hour{}, Hour{}, fmt.Errorf("logs: common %q: %w", name, err)
		}
	}
	if hour.Err() == redis.Nil {
		return Hour{}, Hour{}, nil
	}
	start, err := strconv.ParseInt(hour.Val(), 10, 64)
	if err != nil {
		return Hour{}, Hour{}, corrupt("logs hours", l.hoursKey(name), hour.Val(), "an integer")
	}
	cur = Hour{Start: time.Unix(start, 0), Counts: counts(c.Val())}
	if pc := counts(p.Val()); len(pc) > 0 {
		prev = Hour{Start: time.Unix(start-3600, 0), Counts: pc}
	}
	return cur, prev, nil
}

func counts(zs []redis.Z) []Count {
	out := make([]Count, 0, len(zs))
	for _, z := range zs {
		m, _ := z.Member.(string)
		out = append(out, Count{Message: m, Count: int64(z.Score)})
	}
	return out
}

func (l *Logs) checkRead(op, name, severity string) error {
	if err := keys.CheckEntity("log name", name); err != nil {
		return fmt.Errorf("logs: %s: %w: %w", op, err, ErrInvalid)
	}
	if err := checkSeverity(severity); err != nil {
		return invalid(op, "log %q: %v", name, err)
	}
	return nil
}

func invalid(op, format string, args ...any) error {
	return fmt.Errorf("logs: %s: %s: %w", op, fmt.Sprintf(format, args...), ErrInvalid)
}

// redisCode returns the first word of the Redis error reply err wraps.
func redisCode(err error) string {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return ""
	}
	code, _, _ := strings.Cut(rerr.Error(), " ")
	return code
}

func corrupt(role, key, got, want string) error {
	if len(got) > 40 {
		got = got[:40] + "..."
	}
	return &ria.KeyError{Role: role, Key: key, Got: `"` + got + `"`, Want: want, Err: ria.ErrCorrupt}
}
