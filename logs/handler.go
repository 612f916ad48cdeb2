package logs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/wait"
)

// Defaults of a [Handler].
const (
	DefaultBuffer   = 10_000
	DefaultBatch    = 500
	DefaultInterval = 200 * time.Millisecond
)

// HandlerOption configures [Logs.Handler].
type HandlerOption func(*handlerOptions)

type handlerOptions struct {
	level    slog.Leveler
	buffer   int
	batch    int
	interval time.Duration
	common   bool
	logger   *slog.Logger
}

// WithLevel sets the lowest level the handler takes. Default: slog.LevelInfo.
func WithLevel(l slog.Leveler) HandlerOption { return func(o *handlerOptions) { o.level = l } }

// WithBuffer sets how many records wait for Redis at most (buffered and
// being written); more are dropped and counted. Default: [DefaultBuffer].
// It must be between 1 and 10,000,000.
func WithBuffer(n int) HandlerOption { return func(o *handlerOptions) { o.buffer = n } }

// WithBatch sets how many records one write carries at most. Default:
// [DefaultBatch]; between 1 and [MaxEntries]. A full batch wakes Run.
func WithBatch(n int) HandlerOption { return func(o *handlerOptions) { o.batch = n } }

// WithInterval sets how often Run writes what is buffered. Default:
// [DefaultInterval]. It must be at least 1 ms.
func WithInterval(d time.Duration) HandlerOption { return func(o *handlerOptions) { o.interval = d } }

// WithCommon sets whether records are also counted in the common logs
// (LogCommon) or only kept in the recent logs (LogRecent). Default: true.
func WithCommon(on bool) HandlerOption { return func(o *handlerOptions) { o.common = on } }

// WithLogger sets where the handler reports that Redis became unreachable
// or came back. Default: slog.Default(); do not pass a logger that writes
// to this handler.
func WithLogger(l *slog.Logger) HandlerOption { return func(o *handlerOptions) { o.logger = l } }

// Handler is a slog.Handler that sends records to the recent and common
// logs of one log name without making the caller wait for Redis.
//
// Handle formats the record (its message, then its attributes as
// key=value, groups as group.key) and appends it to a bounded buffer: it
// waits for no I/O, only for a mutex that is held to append one record,
// to take a batch of them (a slice operation) or to count outcomes, so it
// returns in microseconds even while Redis is down. When the buffer is
// full ([WithBuffer]) the record is dropped and counted
// ([HandlerStats.Dropped]). [Handler.Run] writes the buffer in batches
// ([WithBatch]) every interval ([WithInterval]) or as soon as a batch is
// full, one round trip per batch. A batch that fails without a reply is
// sent again, with its reply record, until it is written (for 5 min), so
// it is written once; while it waits, the buffer fills. Records are
// stamped with the Redis server's time when written (at most an interval
// after they were logged, or within a second of the end of an outage),
// and their common-log hour is that one; the severity is the book's for
// the record's level (see [Logs.Handler]). The common log counts the
// record's message without its attributes.
//
// Handlers made by WithAttrs and WithGroup share the buffer. It is safe
// for concurrent use.
type Handler struct {
	core  *core
	group string // prefix of the next attributes' keys: "g1.g2."
	attrs string // formatted attributes added by WithAttrs
}

type core struct {
	l      *Logs
	name   string
	o      handlerOptions
	ttl    time.Duration    // of a write's reply record
	resend time.Duration    // how long after its first try a batch may be sent again
	now    func() time.Time // the clock of resend (a test's own)

	mu       sync.Mutex
	buf      []Entry
	inflight int // records taken by a write not yet done
	closed   bool
	wake     chan struct{}
	closing  chan struct{}
	once     sync.Once
	// Outcomes, changed with inflight under mu so that Stats adds up.
	written, dropped, unknown int64

	flushMu sync.Mutex
	retry   *batch
	outage  bool
}

// batch is one write of records, kept until it succeeds.
type batch struct {
	entries  []Entry
	call     *script.Call
	until    time.Time // a re-send started after this may write twice
	maybeRan bool      // an attempt may have reached the server
}

// HandlerStats counts the records a [Handler] has handled, by outcome.
// Every record Handle took is in exactly one of them, in every snapshot.
type HandlerStats struct {
	Written  int64 // written to Redis
	Dropped  int64 // the buffer was full, the handler closed, or Redis refused the batch
	Unknown  int64 // given up without knowing whether they were written
	Buffered int64 // waiting or being written
}

// Handler returns a [Handler] that writes to log name. Severities: below
// slog.LevelInfo [Debug], below Warn [Info], below Error [Warning], below
// Error+4 [Error], from Error+4 [Critical]. Start its [Handler.Run], and
// [Handler.Close] it to flush. A bad name or option is an error wrapping
// [ErrInvalid].
func (l *Logs) Handler(name string, opts ...HandlerOption) (*Handler, error) {
	if err := checkName("handler", name); err != nil {
		return nil, err
	}
	o := handlerOptions{level: slog.LevelInfo, buffer: DefaultBuffer, batch: DefaultBatch,
		interval: DefaultInterval, common: true}
	if err := option.Apply(&o, opts); err != nil {
		return nil, invalid("handler", "%v", err)
	}
	switch {
	case o.level == nil:
		return nil, invalid("handler", "nil level")
	case o.buffer < 1 || o.buffer > 10_000_000:
		return nil, invalid("handler", "buffer %d: must be between 1 and 10000000", o.buffer)
	case o.batch < 1 || o.batch > MaxEntries:
		return nil, invalid("handler", "batch %d: must be between 1 and %d", o.batch, MaxEntries)
	case o.interval < time.Millisecond:
		return nil, invalid("handler", "interval %v: must be at least 1ms", o.interval)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	// go-redis may go on re-sending a write for its retry window after the
	// handler sent it: the handler sends a batch again for 5 min (less a
	// second of margin) after its first try, and its record lives for the
	// window plus 5 min, so that no re-send can reach the server after the
	// record expired and write the batch twice.
	window := min(script.ReplayWindow(l.rdb), 5*time.Minute)
	c := &core{l: l, name: name, o: o, wake: make(chan struct{}, 1), closing: make(chan struct{}),
		ttl: window + 5*time.Minute, resend: 5*time.Minute - time.Second, now: time.Now}
	return &Handler{core: c}, nil
}

// Enabled reports whether level is at least the handler's [WithLevel].
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.core.o.level.Level()
}

// Handle buffers r for [Handler.Run] to write. It never waits for Redis
// and always returns nil: a record that does not fit is counted in
// [HandlerStats.Dropped].
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.group, a)
		return true
	})
	msg, common := truncate(b.String()), truncate(r.Message)
	e := Entry{Severity: severity(r.Level), Message: msg, Common: common, emptyCommon: common == ""}
	c := h.core
	c.mu.Lock()
	if c.closed || len(c.buf)+c.inflight >= c.o.buffer {
		c.dropped++
		c.mu.Unlock()
		return nil
	}
	c.buf = append(c.buf, e)
	full := len(c.buf) >= c.o.batch
	c.mu.Unlock()
	if full {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// WithAttrs returns a handler that adds attrs to every record; it shares
// h's buffer.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range attrs {
		appendAttr(&b, h.group, a)
	}
	return &Handler{core: h.core, group: h.group, attrs: b.String()}
}

// WithGroup returns a handler that puts the keys of later attributes in
// group name; it shares h's buffer.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &Handler{core: h.core, group: h.group + name + ".", attrs: h.attrs}
}

// Stats returns the counts of records by outcome so far.
func (h *Handler) Stats() HandlerStats {
	c := h.core
	c.mu.Lock()
	defer c.mu.Unlock()
	return HandlerStats{Written: c.written, Dropped: c.dropped, Unknown: c.unknown, Buffered: int64(len(c.buf) + c.inflight)}
}

// Flush writes the batch being retried, if any, then what is buffered, in
// batches, one round trip each, and stops at the first batch that fails:
// an error wrapping ria.ErrOutcomeUnknown (the batch is kept and sent
// again by the next Flush), or one that retrying cannot mend (a
// *ria.KeyError: its records are dropped and counted).
func (h *Handler) Flush(ctx context.Context) error {
	c := h.core
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	rounds := len(c.buf)/c.o.batch + 1
	c.mu.Unlock()
	for range rounds + 1 {
		if c.retry == nil {
			c.mu.Lock()
			n := min(len(c.buf), c.o.batch)
			if n == 0 {
				c.mu.Unlock()
				return nil
			}
			c.retry = &batch{entries: c.buf[:n:n]}
			c.buf = c.buf[n:]
			c.inflight += n
			c.mu.Unlock()
		}
		if err := c.write(ctx, c.retry); err != nil {
			return err
		}
	}
	return nil
}

// write sends b (c.retry) and settles it unless it is to be sent again.
func (c *core) write(ctx context.Context, b *batch) error {
	now := c.now()
	if b.maybeRan && now.After(b.until) {
		c.settle(&c.unknown)
		return fmt.Errorf("logs: handler %q: %d records: %w: gave up after %v", c.name, len(b.entries), ria.ErrOutcomeUnknown, c.resend)
	}
	if b.call == nil || now.After(b.until) {
		k, args, err := c.l.call("handler", c.name, b.entries, c.o.common)
		if err != nil {
			c.settle(&c.dropped)
			return err
		}
		b.call = writeScript.Prepare(c.l.keys.Once(c.name), c.ttl, k, args...)
		b.until = now.Add(c.resend)
	}
	script.Send(ctx, c.l.rdb, []*script.Call{b.call})
	op := "log recent"
	if c.o.common {
		op = "log common"
	}
	err := c.l.result(op, c.name, b.call.Val, b.call.Err)
	switch {
	case err == nil:
		c.settle(&c.written)
		return nil
	case !transient(err):
		c.settle(&c.dropped)
		return err
	}
	b.maybeRan = b.maybeRan || script.MayHaveRun(err)
	return err
}

// settle counts the records of c.retry in n (a counter of c's, changed
// under c.mu) and forgets the batch.
func (c *core) settle(n *int64) {
	k := len(c.retry.entries)
	c.mu.Lock()
	*n += int64(k)
	c.inflight -= k
	c.mu.Unlock()
	c.retry = nil
}

// Run writes the buffer until ctx ends or [Handler.Close] is called: every
// interval, or at once when a batch is full. While Redis is unreachable it
// retries the batch in hand with backoff (at most 1 s between tries,
// however many records come meanwhile), logging once when writing stops
// and once when it resumes ([WithLogger]). When ctx ends it writes what is buffered once more
// (bounded by 5 s). Run returns nil when it stops, or the error of a batch
// that retrying cannot mend (a key of the wrong type: its records were
// dropped); the handler then buffers until [Handler.Close].
func (h *Handler) Run(ctx context.Context) error {
	c := h.core
	var backoff time.Duration
	for {
		pause, wake := c.o.interval, c.wake
		if backoff > 0 {
			// Wait out the backoff whatever is logged meanwhile: a wake
			// (a full batch) waits in c.wake for after the next try.
			pause, wake = wait.Jitter(backoff), nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = h.Flush(fctx)
			return nil
		case <-c.closing:
			t.Stop()
			return nil
		case <-wake:
			t.Stop()
		case <-t.C:
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		err := h.Flush(fctx)
		cancel()
		switch {
		case err == nil:
			if c.outage {
				c.outage = false
				c.o.logger.LogAttrs(ctx, slog.LevelInfo, "logs: handler: writing again", slog.String("log", c.name))
			}
			backoff = 0
		case transient(err):
			if !c.outage {
				c.outage = true
				c.o.logger.LogAttrs(ctx, slog.LevelWarn, "logs: handler: cannot write, buffering", slog.String("log", c.name), slog.Any("error", err))
			}
			backoff = min(max(2*backoff, 50*time.Millisecond), time.Second)
		default:
			return fmt.Errorf("logs: handler: %w", err)
		}
	}
}

// Close stops [Handler.Run], drops later records and writes what is
// buffered, waiting for a write in flight first. It returns the error of
// that last write; records it could not write stay counted as buffered.
func (h *Handler) Close(ctx context.Context) error {
	c := h.core
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.once.Do(func() { close(c.closing) })
	return h.Flush(ctx)
}

// transient reports whether a write may succeed if tried again.
func transient(err error) bool {
	return wait.Transient(err) || errors.Is(err, ria.ErrOutcomeUnknown) || errors.Is(err, context.DeadlineExceeded)
}

func checkName(op, name string) error {
	if err := keys.CheckEntity("log name", name); err != nil {
		return fmt.Errorf("logs: %s: %w: %w", op, err, ErrInvalid)
	}
	return nil
}

var _ slog.Handler = (*Handler)(nil)

// truncate cuts s to at most MaxMessage bytes, at the start of a character
// when one starts in the last utf8.UTFMax-1 bytes before the cut (bytes
// that are not UTF-8 are cut where they stand: stepping back over all of
// them could cut a binary message to nothing).
func truncate(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	n := MaxMessage
	for n > MaxMessage-utf8.UTFMax+1 && !utf8.RuneStart(s[n]) {
		n--
	}
	if !utf8.RuneStart(s[n]) {
		n = MaxMessage
	}
	return s[:n]
}
