package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/script"
)

// Loader loads the current content of a database row for the row cache
// (the book's Inventory.get(row_id).to_dict()). The value is stored as
// JSON: a []byte or json.RawMessage is taken as JSON already and must be
// valid; anything else is encoded with encoding/json.
type Loader func(ctx context.Context, rowID string) (any, error)

// ScheduleRowCache starts, changes or stops the caching of a database
// row (the book's schedule_row_cache), in one round trip (one script).
//
// With a delay > 0, a [RowCacher] caches the row at once and then again
// every delay (rounded down to whole milliseconds; at least 1 ms). With a
// delay <= 0 (the book's -1), the row stops being cached: it leaves the
// schedule and its cached copy is deleted, at once rather than at the
// RowCacher's next pass as in the book; a RowCacher loading it meanwhile
// does not write it back.
//
// A re-send of the call by go-redis (after a lost reply) is answered from
// a record of the first run, so it does not make the row due again after
// a RowCacher cached it. When no reply came at all, the error wraps
// [ria.ErrOutcomeUnknown]: the row may or may not have been (un)scheduled;
// calling again is harmless (at worst the row is loaded once more).
//
// An empty rowID, or a delay between 0 and 1 ms, is an error wrapping
// [ErrInvalid], and nothing is written. A schedule, delay or row
// generations key, (when starting or changing) a generation counter or
// (when stopping) a row key holding something this package did not write
// there is a [*ria.KeyError], and nothing is written.
func (s *Store) ScheduleRowCache(ctx context.Context, rowID string, delay time.Duration) error {
	switch {
	case rowID == "":
		return invalid("schedule row cache", "empty row ID")
	case delay > 0 && delay < time.Millisecond:
		return invalid("schedule row cache", "row %q delay %v: must be at least 1ms, or <= 0 to stop caching", rowID, delay)
	}
	k := s.keys
	_, err := rowScheduleScript.RunOnce(ctx, s.rdb, k.onceKey(),
		[]string{k.scheduleKey(), k.delayKey(), k.rowKey(rowID), k.rowGenKey(), k.rowGenLastKey()},
		rowID, max(delay.Milliseconds(), 0))
	if err != nil {
		return fmt.Errorf("session: schedule row cache %q: %w", rowID, err)
	}
	return nil
}

// Row returns the cached JSON of a row, in one round trip; ok is false if
// the row is not cached (not scheduled, or not cached yet).
func (s *Store) Row(ctx context.Context, rowID string) (data []byte, ok bool, err error) {
	if rowID == "" {
		return nil, false, invalid("row", "empty row ID")
	}
	data, err = s.rdb.Get(ctx, s.keys.rowKey(rowID)).Bytes()
	switch {
	case err == redis.Nil:
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("session: row %q: %w", rowID, script.WrongType(ctx, s.rdb, err, s.keys.rowKey(rowID), "session row", "string"))
	}
	return data, true, nil
}

// RowCacher keeps the scheduled rows of an app cached (the book's
// cache_rows): it loads each row whose time has come and stores it with its
// next due time, and drops rows whose delay is <= 0. It is safe for
// concurrent use. Several RowCachers may run at once: each write checks
// that the row is still the one its loader was called for (the row's
// generation, which every schedule and every store of the row replaces
// with one never given before, is still the one read when the row was
// picked), so a row is written once per due time even if two of them load
// it, and a load that began before the row was scheduled again is never
// written, whatever the RowCachers' clocks.
type RowCacher struct {
	s    *Store
	load Loader
	o    loopOptions
}

// RowCacher returns a [RowCacher] that loads rows with load. It uses the
// [WithClock], [WithInterval] and [WithLogger] options. A nil load or a bad
// option is an error wrapping [ErrInvalid].
func (s *Store) RowCacher(load Loader, opts ...LoopOption) (*RowCacher, error) {
	o, err := loopOpts("row cacher", 50*time.Millisecond, opts)
	if err != nil {
		return nil, err
	}
	if load == nil {
		return nil, invalid("row cacher", "nil loader")
	}
	return &RowCacher{s: s, load: load, o: o}, nil
}

// CacheDue makes one pass over the rows due by the RowCacher's clock
// ([WithClock]), read once at the start: each is loaded and stored, and
// rescheduled at now plus its delay, or dropped (and its cached copy
// deleted) if its delay is <= 0. It returns how many rows it stored or
// dropped. Round trips: one, plus one per row (a script that writes the
// row and reads the next one).
//
// A row whose loader fails, panics (the panic is recovered: the error
// wraps [ErrLoaderPanic] and carries the stack) or returns a value that
// cannot be encoded as JSON keeps its cached copy and is tried again after
// its delay; CacheDue goes on with the other rows and returns the loader
// errors joined, each naming its row. A Redis error ends the pass. It stops
// early if ctx ends.
//
// Storing or dropping a row is re-sent by go-redis after a lost reply and
// answered from a record of the first run, so the count is exact; a store
// run again later finds the row with a new generation and writes nothing,
// so a row is written once per due time. A store with no reply at all ends
// the pass with an error wrapping [ria.ErrOutcomeUnknown]. A schedule,
// delay, row generations, generation counter or row key holding something
// this package did not write there is a [*ria.KeyError], and nothing is
// written.
func (rc *RowCacher) CacheDue(ctx context.Context) (int, error) {
	n, _, loadErr, err := rc.pass(same(ctx), ctx)
	return n, errors.Join(err, loadErr)
}

// Run caches rows until ctx ends (the book's cache_rows loop): it makes a
// pass ([RowCacher.CacheDue]) and then pauses until the next row is due,
// by the RowCacher's clock, or for the interval ([WithInterval]: 50 ms),
// whichever is sooner. The row in flight when ctx ends is finished unless
// its loader gives up on ctx. Loader errors, loader panics (recovered: the
// row keeps its cached copy and is tried again after its delay) and
// transient Redis errors are logged ([WithLogger]: slog.Default() unless
// set); Redis errors are retried with backoff. Run returns nil when ctx
// ends, or the first Redis error that retrying cannot mend, such as a
// *ria.KeyError (a key of the wrong type).
func (rc *RowCacher) Run(ctx context.Context) error {
	return run(ctx, "row cacher", rc.o.logger, func(unit unitFunc, stop context.Context) (time.Duration, error) {
		_, next, loadErr, err := rc.pass(unit, stop)
		if loadErr != nil {
			rc.o.logger.LogAttrs(stop, slog.LevelError, "session: row cacher: load failed", slog.Any("error", loadErr))
		}
		if err != nil {
			return 0, err
		}
		if next == nil {
			return rc.o.interval, nil
		}
		return pauseUntil(next.due, rc.o.now().UnixMilli(), rc.o.interval), nil
	})
}

// pauseUntil is how long Run pauses before the row due at due (Unix ms)
// when it is nowMS: the time left, clamped to 0 and to interval. It works
// in float64 so that a due time centuries away cannot overflow a Duration
// into a negative pause (a busy loop).
func pauseUntil(due float64, nowMS int64, interval time.Duration) time.Duration {
	left := due - float64(nowMS) // ms; +Inf for a row scheduled at +inf
	switch {
	case !(left > 0): // NaN too
		return 0
	case left >= float64(interval)/float64(time.Millisecond):
		return interval
	}
	return time.Duration(left * float64(time.Millisecond))
}

// rowEntry is the row due first, as the row scripts' peek returns it.
type rowEntry struct {
	id       string
	gen      string // the row's generation ("" when it has none)
	due      float64
	delay    float64
	hasDelay bool
}

// pass makes one pass over the rows due at the clock's now, with ctx for
// Redis, stopping between rows when stop ends. The loader gets stop. It
// returns the rows stored or dropped, the next row (nil if none), the
// loader errors joined and the Redis error that ended the pass.
func (rc *RowCacher) pass(unit unitFunc, stop context.Context) (n int, next *rowEntry, loadErr, err error) {
	k := rc.s.keys
	nowMS := rc.o.now().UnixMilli()
	ctx, cancel := unit()
	_, next, err = rowReply(rowDueScript.Run(ctx, rc.s.rdb, []string{k.scheduleKey(), k.delayKey(), k.rowGenKey()}))
	cancel()
	var loadErrs []error
	for err == nil && next != nil && next.due <= float64(nowMS) && stop.Err() == nil {
		ctx, cancel := unit() // one row: its load and its store
		id := next.id
		var code int64
		if !next.hasDelay || next.delay <= 0 {
			code, next, err = rowReply(rowDropScript.RunOnce(ctx, rc.s.rdb, k.onceKey(),
				[]string{k.scheduleKey(), k.delayKey(), k.rowKey(id), k.rowGenKey()}, id, next.gen))
		} else {
			data, lerr := rc.loadRow(stop, id)
			if lerr != nil {
				if stop.Err() != nil {
					cancel()
					break // given up: the row stays due
				}
				loadErrs = append(loadErrs, fmt.Errorf("session: load row %q: %w", id, lerr))
			}
			write := "0"
			if lerr == nil {
				write = "1"
			}
			code, next, err = rowReply(rowStoreScript.RunOnce(ctx, rc.s.rdb, k.onceKey(),
				[]string{k.scheduleKey(), k.delayKey(), k.rowKey(id), k.rowGenKey(), k.rowGenLastKey()},
				id, next.gen, nowMS, write, data))
			if code == 2 {
				code = 0 // rescheduled only
			}
		}
		cancel()
		n += int(code)
	}
	if err != nil {
		err = fmt.Errorf("session: cache rows: %w", err)
	}
	return n, next, errors.Join(loadErrs...), err
}

// ErrLoaderPanic is wrapped by the error reported for a row whose [Loader]
// (or the JSON encoding of its value) panicked. The panic is recovered;
// the error also holds the panic value and the stack.
var ErrLoaderPanic = errors.New("session: loader panicked")

// loadRow calls the loader and encodes its value as JSON, turning a panic
// into an error wrapping ErrLoaderPanic.
func (rc *RowCacher) loadRow(ctx context.Context, id string) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			data, err = nil, fmt.Errorf("%w: %v\n%s", ErrLoaderPanic, p, debug.Stack())
		}
	}()
	v, err := rc.load(ctx, id)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case json.RawMessage:
		return validJSON(v)
	case []byte:
		return validJSON(v)
	}
	return json.Marshal(v)
}

func validJSON(b []byte) ([]byte, error) {
	if !json.Valid(b) {
		return nil, errors.New("loader returned invalid JSON")
	}
	return b, nil
}

// rowReply parses a row script's reply {code, id, due, delay, generation}
// (all but code absent when no row is scheduled; delay empty when the row
// has none, generation empty when it has none).
func rowReply(v any, err error) (int64, *rowEntry, error) {
	if err != nil {
		return 0, nil, err
	}
	r, ok := v.([]any)
	if !ok || (len(r) != 1 && len(r) != 5) {
		return 0, nil, fmt.Errorf("row script: malformed reply %v", v)
	}
	code, ok := r[0].(int64)
	if !ok {
		return 0, nil, fmt.Errorf("row script: malformed reply %v", v)
	}
	if len(r) == 1 {
		return code, nil, nil
	}
	e := &rowEntry{}
	var due, delay string
	var ok1, ok2, ok3, ok4 bool
	e.id, ok1 = r[1].(string)
	due, ok2 = r[2].(string)
	delay, ok3 = r[3].(string)
	e.gen, ok4 = r[4].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return 0, nil, fmt.Errorf("row script: malformed reply %v", v)
	}
	if e.due, err = strconv.ParseFloat(due, 64); err != nil {
		return 0, nil, fmt.Errorf("row script: row %q: malformed due time %q", e.id, due)
	}
	if delay != "" {
		if e.delay, err = strconv.ParseFloat(delay, 64); err != nil {
			return 0, nil, fmt.Errorf("row script: row %q: malformed delay %q", e.id, delay)
		}
		e.hasDelay = true
	}
	return code, e, nil
}
