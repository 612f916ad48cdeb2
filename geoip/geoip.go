package geoip

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

var (
	// ErrNotFound is returned (wrapped, with the address) by Lookup for an
	// address that no range holds: in a gap, or outside every range.
	ErrNotFound = errors.New("geoip: address not in any range")
)

var (
	//go:embed commit.lua
	commitLua    string
	commitScript = script.NewOnce("geoip commit", commitLua)
)

// Client is the subset of go-redis this package uses.
type Client interface {
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd
	Pipeline() redis.Pipeliner
	TxPipeline() redis.Pipeliner
	Del(ctx context.Context, keys ...string) *redis.IntCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
	Get(ctx context.Context, key string) *redis.StringCmd
	ZRevRangeByLex(ctx context.Context, key string, opt *redis.ZRangeBy) *redis.StringSliceCmd
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// Record is what a range maps to. The range format fills Country only;
// the GeoLite City format fills what its locations file gives.
type Record struct {
	Country    string  `json:"country,omitempty"`
	Region     string  `json:"region,omitempty"`
	City       string  `json:"city,omitempty"`
	PostalCode string  `json:"postal_code,omitempty"`
	Latitude   float64 `json:"lat,omitempty"`
	Longitude  float64 `json:"lon,omitempty"`
}

// Range is the range that held a looked-up address, and its record.
type Range struct {
	Start, End netip.Addr
	Record
}

// MaxBatch bounds the addresses of one [DB.LookupMany] call.
const MaxBatch = 10_000

// Option configures a [DB].
type Option func(*options)

type options struct{ prefix string }

// WithPrefix sets the key prefix. Default "geoip:". It must not contain '{'
// or '}'.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// DB is one IP-range data set, named, that imports replace as a whole. It
// is safe for concurrent use.
type DB struct {
	rdb      Client
	name     string
	keys     keys.Space
	ranges   string // rangesKey, built once: a lookup's only key
	dropScan int    // SCAN COUNT of a Drop step (tests set it lower)
	// ticker makes the ticker of an import's keep-alive; kept, if set, is
	// called after each keep-alive round trip (tests set both).
	ticker func() (<-chan time.Time, func())
	kept   func()
}

// New returns the data set name on rdb.
func New(rdb Client, name string, opts ...Option) (*DB, error) {
	if rdb == nil {
		return nil, errors.New("geoip: new: nil client")
	}
	o := options{prefix: "geoip:"}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("geoip: new: %w", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("geoip: new: %w", err)
	}
	if err := keys.CheckEntity("data set name", name); err != nil {
		return nil, fmt.Errorf("geoip: new: %w", err)
	}
	db := &DB{rdb: rdb, name: name, keys: keys.New(o.prefix), dropScan: dropScan, ticker: func() (<-chan time.Time, func()) {
		t := time.NewTicker(keepAliveEvery)
		return t.C, t.Stop
	}}
	db.ranges = db.keys.Key(name, "ranges")
	return db, nil
}

func (db *DB) rangesKey() string            { return db.ranges }
func (db *DB) versionKey() string           { return db.keys.Key(db.name, "version") }
func (db *DB) stagingKey(v string) string   { return db.keys.Key(db.name, "staging:"+v) }
func (db *DB) recordsPrefix() string        { return db.keys.Key(db.name, "records:") }
func (db *DB) tombstoneKey(v string) string { return db.keys.Key(db.name, "dropped:"+v) }
func (db *DB) markerKey(v string) string    { return db.keys.Key(db.name, "staged:"+v) }

// onceKey returns a new reply record key of a once-script call on the
// data set (in its slot): <prefix>{<name>}:once:<nonce>.
func (db *DB) onceKey() string { return db.keys.Once(db.name) }

// Version returns the version of the live data set, "" before any import
// completed (every lookup is then not found). One round trip.
func (db *DB) Version(ctx context.Context) (string, error) {
	v, err := db.rdb.Get(ctx, db.versionKey()).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("geoip: version: %w", script.WrongType(ctx, db.rdb, err, db.versionKey(), "geoip version", "string"))
	}
	return v, nil
}

// Lookup returns the range that holds addr (IPv4, IPv6 or IPv4-mapped
// IPv6) and its record, in one round trip (two for a GeoLite City data
// set, whose records live apart). An address in no range gives an error
// wrapping [ErrNotFound].
func (db *DB) Lookup(ctx context.Context, addr netip.Addr) (Range, error) {
	rs, err := db.LookupMany(ctx, []netip.Addr{addr})
	if err != nil {
		return Range{}, err
	}
	if rs[0] == nil {
		return Range{}, notFound{addr}
	}
	return *rs[0], nil
}

// LookupMany looks up every address in one round trip (two for a GeoLite
// City data set): the data set lives in one hash slot, so on one node of a
// Cluster. The batch runs in MULTI/EXEC, so it sees one data set even when
// an import replaces it meanwhile. Result i is nil when addrs[i] is in no range. At most
// [MaxBatch] addresses.
func (db *DB) LookupMany(ctx context.Context, addrs []netip.Addr) ([]*Range, error) {
	if len(addrs) > MaxBatch {
		return nil, fmt.Errorf("geoip: lookup: %d addresses: more than %d", len(addrs), MaxBatch)
	}
	for i, a := range addrs {
		if !a.IsValid() {
			return nil, fmt.Errorf("geoip: lookup: address %d: invalid", i)
		}
	}
	if len(addrs) == 0 {
		return nil, nil
	}
	// An import may swap data sets between the ranges and the records of
	// a GeoLite City lookup: then the records are gone, and it starts over.
	// go-redis does not re-send a MULTI batch whose reply was lost; a
	// lookup changes nothing, so it is sent again here.
	var err error
	for range 3 {
		var out []*Range
		var swapped bool
		out, swapped, err = db.lookup(ctx, addrs)
		var nerr net.Error
		switch {
		case swapped:
			err = errors.New("geoip: lookup: data set replaced during every try")
		case err == nil || ctx.Err() != nil || !errors.Is(err, io.EOF) && !errors.As(err, &nerr):
			return out, err // an answer, or an error no re-send mends
		}
	}
	return nil, err
}

// notFound is Lookup's error for an address in no range: it wraps
// ErrNotFound and names the address, formatted only when read (a lookup
// that misses is as common as one that hits, and as cheap).
type notFound struct{ addr netip.Addr }

func (e notFound) Error() string {
	return "geoip: lookup " + e.addr.String() + ": " + ErrNotFound.Error()
}
func (e notFound) Unwrap() error { return ErrNotFound }

// top follows an address in a range bound: every member that starts with
// the address sorts before it. After its 16-byte start a member holds its
// 16-byte end, whose bytes may be 0xff, then a reference of printable ASCII
// (see checkRef), which sorts before 0xff.
var top = strings.Repeat("\xff", 17)

func (db *DB) lookup(ctx context.Context, addrs []netip.Addr) ([]*Range, bool, error) {
	key := db.rangesKey()
	cmds := make([]*redis.StringSliceCmd, len(addrs))
	by := func(a netip.Addr) *redis.ZRangeBy {
		b := a.As16()
		return &redis.ZRangeBy{Max: "[" + string(b[:]) + top, Min: "-", Count: 1}
	}
	var err error
	if len(addrs) == 1 {
		cmds[0] = db.rdb.ZRevRangeByLex(ctx, key, by(addrs[0]))
		err = cmds[0].Err()
	} else {
		// Redis may run another client's commands between those of a
		// plain pipeline (an import's commit, say): MULTI makes the batch
		// see one data set.
		pipe := db.rdb.TxPipeline()
		for i, a := range addrs {
			cmds[i] = pipe.ZRevRangeByLex(ctx, key, by(a))
		}
		_, err = pipe.Exec(ctx)
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, false, fmt.Errorf("geoip: lookup: %w", script.WrongType(ctx, db.rdb, err, key, "geoip ranges", "zset"))
	}
	out := make([]*Range, len(addrs))
	var refs map[string][]int // records key -> indexes of out waiting for a record
	var fields map[string][]any
	for i, a := range addrs {
		ms := cmds[i].Val()
		if len(ms) == 0 {
			continue
		}
		m := ms[0]
		if len(m) < 34 {
			return nil, false, fmt.Errorf("geoip: lookup: malformed range member %q", m)
		}
		end := netip.AddrFrom16([16]byte([]byte(m[16:32])))
		if end.Less(netip.AddrFrom16(a.As16())) {
			continue // in the gap after the range
		}
		r := &Range{Start: netip.AddrFrom16([16]byte([]byte(m[:16]))).Unmap(), End: end.Unmap()}
		out[i] = r
		switch ref := m[32:]; ref[0] {
		case '=': // the record is the country code
			r.Country = ref[1:]
		case '#': // #<version>:<record id> in the version's records hash
			v, id, _ := strings.Cut(ref[1:], ":")
			if refs == nil {
				refs, fields = map[string][]int{}, map[string][]any{}
			}
			rk := db.recordsPrefix() + v
			refs[rk] = append(refs[rk], i)
			fields[rk] = append(fields[rk], id)
		default:
			return nil, false, fmt.Errorf("geoip: lookup: malformed range member %q", m)
		}
	}
	if refs == nil {
		return out, false, nil
	}
	// The records, then the live version, on one connection (one slot):
	// when the version the ranges named is still live after the HMGET,
	// the HMGET read its records (an import deletes them only once they
	// are no longer live; a data set without location records has none).
	pipe := db.rdb.Pipeline()
	got := map[string]*redis.SliceCmd{}
	for rk := range refs {
		got[rk] = pipe.HMGet(ctx, rk, anyStrings(fields[rk])...)
	}
	live := pipe.Get(ctx, db.versionKey())
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		for rk := range refs {
			err = script.WrongType(ctx, db.rdb, err, rk, "geoip records", "hash")
		}
		err = script.WrongType(ctx, db.rdb, err, db.versionKey(), "geoip version", "string")
		return nil, false, fmt.Errorf("geoip: lookup: %w", err)
	}
	for rk, idx := range refs {
		if db.recordsPrefix()+live.Val() != rk {
			return nil, true, nil
		}
		for j, v := range got[rk].Val() {
			raw, _ := v.(string)
			if raw == "" {
				continue // a range whose record the file did not have
			}
			if err := json.Unmarshal([]byte(raw), &out[idx[j]].Record); err != nil {
				return nil, false, fmt.Errorf("geoip: lookup: record %v: %w", fields[rk][j], err)
			}
		}
	}
	return out, false, nil
}

func anyStrings(v []any) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = s.(string)
	}
	return out
}
