package shard

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

// Method is how [Visitors] counts.
type Method int

const (
	// Sets counts exactly (the book's count_visit): each day's visitor ids
	// go to sharded sets of integers (intsets), sized from the day before.
	// About 9 bytes per visitor (see the package doc).
	Sets Method = iota + 1
	// HyperLogLog estimates (PFADD, PFCOUNT): 12 KB per day whatever the
	// count, with a standard error of 0.81%.
	HyperLogLog
)

func (m Method) String() string {
	switch m {
	case Sets:
		return "sets"
	case HyperLogLog:
		return "hyperloglog"
	}
	return "Method(" + strconv.Itoa(int(m)) + ")"
}

// Visitors counts the unique visitors of each day (book 9.2.3, count_visit),
// by the chosen [Method]. A day is the calendar date of the time.Time given,
// in its own location. It is safe for concurrent use.
type Visitors struct {
	rdb      Client
	name     string
	keys     keys.Space
	method   Method
	size     int64
	expected int64 // daily default

	mu   sync.Mutex
	days map[string]int64 // day -> expected visitors, as stored
}

var (
	//go:embed expected.lua
	expectedLua    string
	expectedScript = script.New("shard visitors expected", expectedLua)
)

// NewVisitors returns the visitor counter name counting by method. It
// takes [WithPrefix], [WithShardSize] and [WithDailyExpected]; the shard
// size defaults to the server's set-max-intset-entries. The first
// NewVisitors of a name stores its method and shard size; later ones must
// agree ([ErrMismatch]). With [Sets], a daily expected count whose days
// would have more than [MaxShards] shards is an error wrapping [ErrSize],
// and nothing is written; a day sized from a day before that large is
// capped at MaxShards shards (its shards then grow past the compact
// limit; counts stay exact).
func NewVisitors(ctx context.Context, rdb Client, name string, method Method, opts ...Option) (*Visitors, error) {
	if rdb == nil {
		return nil, fmt.Errorf("shard: visitors %q: nil client", name)
	}
	o, ks, err := newOptions("visitors", opts, "WithShardSize", "WithDailyExpected")
	if err != nil {
		return nil, err
	}
	if err := keys.CheckEntity("shard: visitors name", name); err != nil {
		return nil, err
	}
	if method != Sets && method != HyperLogLog {
		return nil, fmt.Errorf("shard: visitors %q: unknown method %v", name, method)
	}
	if o.set["WithDailyExpected"] && o.expected < 1 {
		return nil, fmt.Errorf("shard: visitors %q: %w: daily expected %d, want at least 1", name, ErrSize, o.expected)
	}
	if o.expected == 0 {
		o.expected = 1_000_000
	}
	// checkExpected refuses a daily expected whose days would have more
	// than MaxShards shards of size.
	checkExpected := func(size int64) error {
		if method == Sets && sizedFor(o.expected, size) > maxExpected(size) {
			return fmt.Errorf("%w: daily expected %d gives days of more than %d shards (MaxShards) of size %d", ErrSize, o.expected, int64(MaxShards), size)
		}
		return nil
	}
	ps, err := loadMeta(ctx, rdb, "visitors", name, ks.Key(name, "visitors:meta"),
		[]param{{name: "method", value: int64(method), explicit: true}, {name: "size", value: o.size, explicit: o.size > 0}},
		func(ps []param) error {
			if ps[1].value == 0 {
				l, err := ReadLimits(ctx, rdb)
				if err != nil {
					return err
				}
				ps[1].value = l.SetIntEntries
			}
			return checkExpected(ps[1].value)
		})
	if err != nil {
		return nil, err
	}
	if ps[1].value < 1 {
		return nil, fmt.Errorf("shard: visitors %q: %w", name, corrupt(ks.Key(name, "visitors:meta"), "shard meta",
			strconv.FormatInt(ps[1].value, 10), "a positive size"))
	}
	if err := checkExpected(ps[1].value); err != nil {
		return nil, fmt.Errorf("shard: visitors %q: %w", name, err)
	}
	return &Visitors{rdb: rdb, name: name, keys: ks, method: method, size: ps[1].value, expected: o.expected,
		days: map[string]int64{}}, nil
}

// Method returns how v counts.
func (v *Visitors) Method() Method { return v.method }

// SessionID returns the visitor id the book derives from a session UUID:
// its first 15 hex digits as a number (60 bits). It returns an error for a
// string that does not start with 15 hex digits (dashes aside).
func SessionID(session string) (int64, error) {
	h := strings.ReplaceAll(session, "-", "")
	if len(h) < 15 {
		return 0, fmt.Errorf("shard: session %q: want a UUID (at least 15 hex digits)", session)
	}
	id, err := strconv.ParseUint(h[:15], 16, 64) // no sign, unlike ParseInt
	if err != nil {
		return 0, fmt.Errorf("shard: session %q: want a UUID: %w", session, err)
	}
	return int64(id), nil
}

func dayString(day time.Time) string { return day.Format("2006-01-02") }

func (v *Visitors) dayEntity(day string) string { return v.name + ":" + day }

// expectedKey is a STRING: the visitors the day's sets are sized for.
func (v *Visitors) expectedKey(day string) string { return v.keys.Key(v.dayEntity(day), "expected") }

// hllKey is the day's HyperLogLog (a STRING).
func (v *Visitors) hllKey(day string) string { return v.keys.Key(v.dayEntity(day), "hll") }

// shardKey is shard id of the day's sets: a SET of visitor ids.
func (v *Visitors) shardKey(day string, id int64) string {
	return v.keys.Key(v.dayEntity(day)+":"+strconv.FormatInt(id, 10), "set")
}

// shards is the number of set shards of a day sized for expected visitors
// (at most maxExpected(v.size)): 2·expected/size as the book computes it,
// at least 1 (the book divides by zero for a day expected to have fewer
// than size/2 visitors).
func (v *Visitors) shards(expected int64) int64 { return max(1, 2*expected/v.size) }

// maxExpected is the most visitors a day of shards of size may be sized
// for: the most whose 2·expected/size is at most MaxShards.
func maxExpected(size int64) int64 {
	if size > math.MaxInt64/MaxShards {
		return math.MaxInt64 / 2 // 2·expected/size < MaxShards whatever expected
	}
	return MaxShards * size / 2
}

// sizedFor is how many visitors a day is sized for when the day before
// had base (or the daily default): ceil(1.5·base) up to a power of two,
// at most maxExpected(size) (a day past that fills its shards past the
// compact limit: still exact).
func sizedFor(base, size int64) int64 {
	limit := maxExpected(size)
	if base >= limit {
		return limit + 1 // over the limit, without overflowing 1.5·base
	}
	return min(pow2Ceil(base+base/2+base%2), limit+1)
}

// Visit records that visitors ids came on day: for [Sets], one SADD per
// shard they fall in, in one pipeline (one round trip per server); for
// [HyperLogLog], one PFADD (one round trip). Both are idempotent. With
// Sets, the first Visit or Count of a day in this process first reads how
// many visitors the day is sized for (one more round trip), and the first
// of all processes sets it from the day before's count (a few more; see
// [Visitors.Count]).
func (v *Visitors) Visit(ctx context.Context, day time.Time, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	d := dayString(day)
	if v.method == HyperLogLog {
		k := v.hllKey(d)
		args := make([]any, 0, len(ids)+2)
		args = append(args, "pfadd", k)
		for _, id := range ids {
			args = append(args, id)
		}
		if err := v.rdb.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("shard: visitors %q: visit %s: %w", v.name, d, script.Unknown(wrongHLL(ctx, v.rdb, err, k)))
		}
		return nil
	}
	expected, err := v.expectedFor(ctx, day)
	if err != nil {
		return fmt.Errorf("shard: visitors %q: visit %s: %w", v.name, d, script.Unknown(err))
	}
	n := v.shards(expected)
	if err := setCmd(ctx, v.rdb, "sadd", ids, func(id int64) string { return v.shardKey(d, memberShard(id, n)) }); err != nil {
		return fmt.Errorf("shard: visitors %q: visit %s: %w", v.name, d, script.Unknown(err))
	}
	return nil
}

// Count returns the unique visitors of day: for [Sets], the sum of SCARD
// over the day's shards, 10,000 shards per pipeline (one round trip per
// server per pipeline, plus one to read the day's size the first time in
// this process; it stops at the end of ctx between pipelines); for
// [HyperLogLog], PFCOUNT (one round trip). A day's size stored past
// [MaxShards] shards is a *ria.KeyError matching ria.ErrCorrupt.
func (v *Visitors) Count(ctx context.Context, day time.Time) (int64, error) {
	d := dayString(day)
	if v.method == HyperLogLog {
		k := v.hllKey(d)
		n, err := v.rdb.Do(ctx, "pfcount", k).Int64()
		if err != nil {
			return 0, fmt.Errorf("shard: visitors %q: count %s: %w", v.name, d, wrongHLL(ctx, v.rdb, err, k))
		}
		return n, nil
	}
	n, err := v.count(ctx, d)
	if err != nil {
		return 0, fmt.Errorf("shard: visitors %q: count %s: %w", v.name, d, err)
	}
	return n, nil
}

// count counts day d's sets; a day without a size has no visitors.
func (v *Visitors) count(ctx context.Context, d string) (int64, error) {
	expected, ok, err := v.storedExpected(ctx, d)
	if err != nil || !ok {
		return 0, err
	}
	return cardSum(ctx, v.rdb, v.shards(expected), func(id int64) string { return v.shardKey(d, id) })
}

// storedExpected returns day d's size, from this process's memory or the
// day's expected key.
func (v *Visitors) storedExpected(ctx context.Context, d string) (int64, bool, error) {
	v.mu.Lock()
	e, ok := v.days[d]
	v.mu.Unlock()
	if ok {
		return e, true, nil
	}
	k := v.expectedKey(d)
	s, err := v.rdb.Do(ctx, "get", k).Text()
	if err == redis.Nil {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, wrongType(ctx, v.rdb, err, k, "shard visitors expected", "string")
	}
	e, err = strconv.ParseInt(s, 10, 64)
	if err != nil || e < 1 || e > maxExpected(v.size) {
		return 0, false, corrupt(k, "shard visitors expected", s, fmt.Sprintf("an integer from 1 to %d", maxExpected(v.size)))
	}
	v.remember(d, e)
	return e, true, nil
}

// expectedFor returns how many visitors day is sized for, setting it the
// book's way (get_expected) if no process has: the day before's count (or
// the daily default when it has none) times 1.5, rounded up to a power of
// two; the first process to store it wins (SET NX in a script).
func (v *Visitors) expectedFor(ctx context.Context, day time.Time) (int64, error) {
	d := dayString(day)
	if e, ok, err := v.storedExpected(ctx, d); err != nil || ok {
		return e, err
	}
	base := v.expected
	yesterday, err := v.count(ctx, dayString(day.AddDate(0, 0, -1)))
	if err != nil {
		return 0, err
	}
	if yesterday > 0 {
		base = yesterday
	}
	want := min(sizedFor(base, v.size), maxExpected(v.size))
	got, err := expectedScript.Int64(ctx, v.rdb, []string{v.expectedKey(d)}, want)
	if err != nil {
		return 0, err
	}
	if got < 1 || got > maxExpected(v.size) {
		return 0, corrupt(v.expectedKey(d), "shard visitors expected", strconv.FormatInt(got, 10), fmt.Sprintf("an integer from 1 to %d", maxExpected(v.size)))
	}
	v.remember(d, got)
	return got, nil
}

// rememberDays is how many days' sizes a Visitors keeps in memory.
const rememberDays = 8

// remember keeps a day's size in memory: the latest rememberDays days it
// met. A day older than all of those when they are full is not kept (it
// is read again from Redis when needed), so walking days backwards does
// not grow the map.
func (v *Visitors) remember(d string, e int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.days[d]; !ok && len(v.days) >= rememberDays {
		oldest := ""
		for k := range v.days {
			if oldest == "" || k < oldest {
				oldest = k
			}
		}
		if d < oldest {
			return
		}
		delete(v.days, oldest)
	}
	v.days[d] = e
}

// pow2Ceil returns the least power of two >= n (n >= 1).
func pow2Ceil(n int64) int64 {
	if n <= 1 {
		return 1
	}
	if n > math.MaxInt64/2 {
		return math.MaxInt64/2 + 1
	}
	return 1 << bits.Len64(uint64(n-1))
}

// wrongHLL turns a Redis error about a key that is no HyperLogLog (another
// type, or a string that is not one) into a *ria.KeyError.
func wrongHLL(ctx context.Context, rdb Client, err error, key string) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) || !strings.HasPrefix(rerr.Error(), "WRONGTYPE") {
		return err
	}
	const role = "shard visitors hyperloglog"
	if t, terr := rdb.Do(ctx, "type", key).Text(); terr == nil && t == "string" {
		return &ria.KeyError{Role: role, Key: key, Got: "a string that is not a HyperLogLog", Want: "a HyperLogLog string", Err: ria.ErrCorrupt}
	}
	return wrongType(ctx, rdb, err, key, role, "string")
}
