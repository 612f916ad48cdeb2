package geoip

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

// ImportOption configures an import.
type ImportOption func(*importOptions)

type importOptions struct {
	batch    int
	depth    int
	progress func(Progress)
}

// Progress is what an import reports after each pipeline it sends.
type Progress struct {
	Lines   int64 // CSV lines read so far (of the file being read)
	Ranges  int64 // ranges staged so far
	Records int64 // records staged so far
}

// WithProgress sets a function called, from the importing goroutine, after
// each pipeline reached Redis.
func WithProgress(fn func(Progress)) ImportOption {
	return func(o *importOptions) { o.progress = fn }
}

// WithBatch sets how many ranges go in one ZADD (1 to 10,000; default
// 1,000) and how many ZADDs go in one pipeline (1 to 64; default 8).
func WithBatch(size, depth int) ImportOption {
	return func(o *importOptions) { o.batch, o.depth = size, depth }
}

// stagingTTL is how long a staged data set outlives the last pipeline or
// keep-alive of an import that stopped without cleaning up (a crashed
// process).
const stagingTTL = 10 * time.Minute

// keepAliveEvery is how often a running import refreshes the TTLs of its
// staged keys, so that a slow reader does not let them expire.
const keepAliveEvery = stagingTTL / 4

// ErrExpired is returned (wrapped) by an import whose staged data expired
// before its commit (the importing process or its link to Redis stalled
// for longer than 10 minutes): nothing of it went live.
var ErrExpired = errors.New("geoip: staged data expired during the import")

// maxRef bounds a record reference (country code, location ID).
const maxRef = 64

// importer stages one data set.
type importer struct {
	db       *DB
	o        importOptions
	version  string
	ranges   string
	records  string
	tomb     string // tombstone key: set by a Drop that deleted staged keys of this import
	marker   string // set by the first pipeline, never recreated: gone if the staging expired
	started  bool   // the first pipeline is built
	p        Progress
	members  []any           // ZADD arguments: score, member, ...
	fields   []any           // HSET arguments: field, value, ...
	pending  int             // commands queued in pipe
	pipe     redis.Pipeliner // nil until the first command
	inflight chan error      // the pipeline being sent while the next fills; nil: none
	sent     Progress        // what will have been sent when inflight answers
	seenRefs map[string]bool
	prevEnd  [16]byte
	havePrev bool
}

func (db *DB) newImporter(opts []ImportOption) (*importer, error) {
	o := importOptions{batch: 1000, depth: 8}
	if err := option.Apply(&o, opts); err != nil {
		return nil, err
	}
	if o.batch < 1 || o.batch > 10_000 || o.depth < 1 || o.depth > 64 {
		return nil, fmt.Errorf("batch %d, depth %d: want 1 to 10000 and 1 to 64", o.batch, o.depth)
	}
	v := script.Nonce()
	return &importer{db: db, o: o, version: v, ranges: db.stagingKey(v), records: db.recordsPrefix() + v,
		tomb: db.tombstoneKey(v), marker: db.markerKey(v), seenRefs: map[string]bool{}}, nil
}

// keepAlive refreshes the TTLs of the staged keys every keepAliveEvery
// until stop is called, so that they expire only after the importing
// process stopped, whatever the pace of its reader. The marker comes first
// in each refresh, as in each pipeline: it never outlives the staged data.
func (im *importer) keepAlive(ctx context.Context) (stop func()) {
	tick, stopTick := im.db.ticker()
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		defer stopTick()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick:
			}
			p := im.db.rdb.Pipeline()
			for _, k := range []string{im.marker, im.ranges, im.records, im.tomb} {
				p.PExpire(ctx, k, stagingTTL)
			}
			_, _ = p.Exec(ctx) // best effort: the commit checks the marker
			if im.db.kept != nil {
				im.db.kept()
			}
		}
	}()
	return func() { close(done); <-exited }
}

// ImportRanges replaces the data set with the ranges of r, a CSV file of
// rows start_ip,end_ip,country_code (IPv4 or IPv6 addresses; further
// columns are ignored), as the ip-location-db packages publish them. Rows
// must be sorted by start address and must not overlap (IPv4 rows count as
// IPv4-mapped IPv6 addresses, so all IPv4 rows sort before 2000::/3). A
// first row whose start is not an address is taken as a header.
//
// The file is streamed (memory bounded whatever its size) into a staged
// data set in pipelined batches; readers keep using the previous data set
// until the last batch is in, and then see the new one at once. An error
// or a cancelled ctx deletes the staged data and leaves the previous one in
// place. A [DB.Drop] that deletes staged data of the import makes it fail
// with [ErrDropped], staged data that expired (the import stalled for more
// than 10 minutes between two keep-alives) with [ErrExpired]; both leave
// nothing.
func (db *DB) ImportRanges(ctx context.Context, r io.Reader, opts ...ImportOption) (Progress, error) {
	im, err := db.newImporter(opts)
	if err != nil {
		return Progress{}, fmt.Errorf("geoip: import: %w", err)
	}
	stop := im.keepAlive(ctx)
	err = im.ranges3(ctx, r)
	return im.finish(ctx, err, stop)
}

// ImportGeoLiteCity replaces the data set with the GeoLite City legacy
// pair the book imports: locations (locId,country,region,city,postalCode,
// latitude,longitude,...; ISO-8859-1 text) and blocks
// (startIpNum,endIpNum,locId; IPv4 addresses as integers, sorted, not
// overlapping). Lines whose first field is not a number (the copyright and
// header lines) are skipped, as the book does. A block whose location is
// missing from locations looks up to an empty record. Streaming,
// atomicity and cancellation as for [DB.ImportRanges].
func (db *DB) ImportGeoLiteCity(ctx context.Context, blocks, locations io.Reader, opts ...ImportOption) (Progress, error) {
	im, err := db.newImporter(opts)
	if err != nil {
		return Progress{}, fmt.Errorf("geoip: import: %w", err)
	}
	stop := im.keepAlive(ctx)
	err = im.locations(ctx, locations)
	if err == nil {
		im.p.Lines = 0
		err = im.blocks(ctx, blocks)
	}
	return im.finish(ctx, err, stop)
}

func newCSV(r io.Reader) *csv.Reader {
	c := csv.NewReader(r)
	c.FieldsPerRecord = -1
	c.ReuseRecord = true
	return c
}

// rows calls fn for each CSV row of r with its line number.
func (im *importer) rows(ctx context.Context, r io.Reader, what string, fn func(line int, row []string) error) error {
	c := newCSV(r)
	for {
		row, err := c.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil { // a *csv.ParseError names its line; FieldPos is for rows read
			return fmt.Errorf("%s: %w", what, err)
		}
		line, _ := c.FieldPos(0)
		im.p.Lines++
		if err := fn(line, row); err != nil {
			return fmt.Errorf("%s: line %d: %w", what, line, err)
		}
		if err := im.maybeFlush(ctx, false); err != nil {
			return err
		}
	}
}

func (im *importer) ranges3(ctx context.Context, r io.Reader) error {
	first := true
	return im.rows(ctx, r, "ranges", func(line int, row []string) error {
		if first {
			first = false
			if len(row) > 0 {
				if _, err := netip.ParseAddr(strings.TrimSpace(row[0])); err != nil {
					return nil // a header
				}
			}
		}
		if len(row) < 3 {
			return fmt.Errorf("%d fields, want start_ip,end_ip,country_code", len(row))
		}
		start, err := parseAddr(row[0])
		if err != nil {
			return err
		}
		end, err := parseAddr(row[1])
		if err != nil {
			return err
		}
		if start.Is4() != end.Is4() {
			return fmt.Errorf("start %v and end %v: mixed IPv4 and IPv6", start, end)
		}
		cc := strings.TrimSpace(row[2])
		if err := checkRef(cc); err != nil {
			return err
		}
		return im.add(start, end, "="+cc) // the record is the code: kept in the range
	})
}

func (im *importer) locations(ctx context.Context, r io.Reader) error {
	return im.rows(ctx, r, "locations", func(line int, row []string) error {
		if len(row) == 0 || !isDigits(row[0]) {
			return nil // copyright and header lines, as the book skips them
		}
		if len(row) < 4 {
			return fmt.Errorf("%d fields, want locId,country,region,city and more", len(row))
		}
		rec := Record{Country: latin1(row[1]), Region: latin1(row[2]), City: latin1(row[3])}
		if len(row) > 4 {
			rec.PostalCode = latin1(row[4])
		}
		if len(row) > 6 {
			var err error
			if rec.Latitude, err = parseFloat(row[5], 90); err != nil {
				return fmt.Errorf("latitude: %w", err)
			}
			if rec.Longitude, err = parseFloat(row[6], 180); err != nil {
				return fmt.Errorf("longitude: %w", err)
			}
		}
		return im.record(row[0], rec)
	})
}

func (im *importer) blocks(ctx context.Context, r io.Reader) error {
	return im.rows(ctx, r, "blocks", func(line int, row []string) error {
		if len(row) == 0 || !isDigits(row[0]) {
			return nil
		}
		if len(row) < 3 {
			return fmt.Errorf("%d fields, want startIpNum,endIpNum,locId", len(row))
		}
		start, err := parseIPv4Num(row[0])
		if err != nil {
			return err
		}
		end, err := parseIPv4Num(row[1])
		if err != nil {
			return err
		}
		if !isDigits(row[2]) || len(row[2]) > maxRef {
			return fmt.Errorf("locId %q: not a number", row[2])
		}
		return im.add(start, end, "#"+im.version+":"+row[2])
	})
}

// record stages ref's record once per import (refs seen are remembered up
// to a bound; past it a repeated ref is written again, which is harmless).
func (im *importer) record(ref string, rec Record) error {
	if err := checkRef(ref); err != nil {
		return err
	}
	if im.seenRefs[ref] {
		return nil
	}
	if len(im.seenRefs) < 100_000 {
		im.seenRefs[ref] = true
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	im.fields = append(im.fields, ref, raw)
	im.p.Records++
	return nil
}

// add stages one range, checking that it follows the previous one.
func (im *importer) add(start, end netip.Addr, ref string) error {
	s, e := start.As16(), end.As16()
	if bytes.Compare(s[:], e[:]) > 0 {
		return fmt.Errorf("start %v after end %v", start, end)
	}
	if im.havePrev && bytes.Compare(s[:], im.prevEnd[:]) <= 0 {
		return fmt.Errorf("range %v-%v overlaps or precedes the previous one: rows must be sorted by start and not overlap", start, end)
	}
	im.prevEnd, im.havePrev = e, true
	m := make([]byte, 0, 32+len(ref))
	m = append(append(append(m, s[:]...), e[:]...), ref...)
	im.members = append(im.members, 0, string(m))
	im.p.Ranges++
	return nil
}

// maybeFlush queues a full batch of ranges or records, and sends the
// pipeline when it holds depth commands; final queues and sends the rest.
func (im *importer) maybeFlush(ctx context.Context, final bool) error {
	if len(im.members) >= 2*im.o.batch || final && len(im.members) > 0 {
		im.queue(ctx, append([]any{"zadd", im.ranges}, im.members...))
		im.members = make([]any, 0, 2*im.o.batch)
	}
	if len(im.fields) >= 2*im.o.batch || final && len(im.fields) > 0 {
		im.queue(ctx, append([]any{"hset", im.records}, im.fields...))
		im.fields = make([]any, 0, 2*im.o.batch)
	}
	if im.pending == 0 || im.pending < im.o.depth && !final {
		return ctx.Err()
	}
	// Staged keys expire unless committed: a crashed import leaves nothing
	// for long.
	im.pipe.PExpire(ctx, im.ranges, stagingTTL)
	im.pipe.PExpire(ctx, im.records, stagingTTL)
	// A Drop's tombstone of this import lives as long as its staged keys
	// (expired last), so its commit fails whenever it finds them.
	im.pipe.PExpire(ctx, im.tomb, stagingTTL)
	// One pipeline in flight while the next is parsed and filled: the
	// server and the parsing overlap, and memory stays two pipelines.
	if err := im.wait(); err != nil {
		return err
	}
	pipe, done := im.pipe, make(chan error, 1)
	im.pipe, im.pending, im.sent, im.inflight = nil, 0, im.p, done
	go func() {
		_, err := pipe.Exec(ctx)
		done <- err
	}()
	return ctx.Err()
}

// wait waits for the pipeline in flight, if any, and reports the progress
// it made.
func (im *importer) wait() error {
	if im.inflight == nil {
		return nil
	}
	err := <-im.inflight
	im.inflight = nil
	if err == nil && im.o.progress != nil {
		im.o.progress(im.sent)
	}
	return err
}

func (im *importer) queue(ctx context.Context, args []any) {
	if im.pipe == nil {
		im.pipe = im.db.rdb.Pipeline()
		// The marker leads each pipeline: created by the first one (NX: a
		// re-send does not recreate it), only refreshed by the others, so
		// its TTL ends no later than the staged keys' and staged data that
		// expired and came back leaves it gone.
		if !im.started {
			im.started = true
			im.pipe.SetNX(ctx, im.marker, 1, stagingTTL)
		} else {
			im.pipe.PExpire(ctx, im.marker, stagingTTL)
		}
	}
	im.pipe.Do(ctx, args...)
	im.pending++
}

// finish sends what is left and commits, or, after an error, deletes the
// staged data (best effort: it expires anyway). stop ends the keep-alive.
func (im *importer) finish(ctx context.Context, err error, stop func()) (Progress, error) {
	if err == nil {
		err = im.maybeFlush(ctx, true)
	}
	// Every batch is in (or has failed) before the commit or the delete.
	if werr := im.wait(); err == nil {
		err = werr
	}
	// No refresh after this: the commit persists the records key.
	stop()
	if err == nil && im.p.Ranges == 0 {
		err = errors.New("no ranges")
	}
	if err == nil {
		// A once-script: a re-send after a lost reply is answered from
		// the first run's record, even if another import committed since
		// (its version is no longer live, its marker is gone: a re-run
		// would answer EXPIRED for data that went live).
		_, err = commitScript.RunOnce(ctx, im.db.rdb, im.db.onceKey(),
			[]string{im.db.rangesKey(), im.ranges, im.db.versionKey(), im.tomb, im.marker},
			im.db.recordsPrefix(), im.version)
		var rerr redis.Error
		if errors.As(err, &rerr) {
			switch {
			case strings.HasPrefix(rerr.Error(), "DROPPED "):
				err = ErrDropped
			case strings.HasPrefix(rerr.Error(), "EXPIRED "):
				err = ErrExpired
			}
		}
	}
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if !errors.Is(err, ria.ErrOutcomeUnknown) {
			_ = im.db.rdb.Del(cctx, im.ranges, im.records, im.tomb, im.marker).Err()
		}
		return im.p, fmt.Errorf("geoip: import: %w", err)
	}
	return im.p, nil
}

func parseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("address %q: %w", s, err)
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("address %q: zoned addresses are not ranges", s)
	}
	return a, nil
}

func parseIPv4Num(s string) (netip.Addr, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("IPv4 number %q: %w", s, err)
	}
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), nil
}

func parseFloat(s string, limit float64) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < -limit || f > limit {
		return 0, fmt.Errorf("%q: want a number from %v to %v", s, -limit, limit)
	}
	return f, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkRef accepts 1 to maxRef printable ASCII bytes: a record key or
// country code follows the addresses in a ZSET member, whose lookup bound
// assumes bytes below 0xff.
func checkRef(ref string) error {
	if ref == "" || len(ref) > maxRef {
		return fmt.Errorf("record key %q: want 1 to %d characters", ref, maxRef)
	}
	for i := 0; i < len(ref); i++ {
		if ref[i] < 0x20 || ref[i] > 0x7e {
			return fmt.Errorf("record key %q: want printable ASCII", ref)
		}
	}
	return nil
}

// latin1 turns ISO-8859-1 text (GeoLite legacy files) into UTF-8; text that
// is valid UTF-8 already is kept.
func latin1(s string) string {
	s = strings.TrimSpace(s)
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}
