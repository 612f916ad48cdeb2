package shard

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
	"strings"
)

// ErrUnknownCode is wrapped by the error of [Codes.Encode] and
// [Locations.Set] for a country or state the code table does not hold.
var ErrUnknownCode = errors.New("shard: unknown code")

// Codes is a code table for [Locations]: countries, and the states of some
// of them, each stored as its position in the table plus one (0: none), in
// one byte when the table has at most 255 of them, else two. It is
// immutable and safe for concurrent use.
type Codes struct {
	countries []string
	cIndex    map[string]int
	states    [][]string // by country index; nil: no states
	sIndex    []map[string]int
	cw, sw    int   // bytes per country and per state code
	sum       int64 // checksum of the table, kept with the records (see checksums)
	legacy    int64 // the checksum earlier versions stored; -1 when it cannot tell this table from others
}

// NewCodes returns the code table of countries (in this order: the order
// is the encoding) and the states of some of them. It returns an error for
// an empty or duplicate name, a state list of a country not listed, or more
// than 65,535 countries or states of one country.
func NewCodes(countries []string, states map[string][]string) (*Codes, error) {
	if len(countries) == 0 {
		return nil, errors.New("shard: codes: no country")
	}
	if len(countries) > 65535 {
		return nil, fmt.Errorf("shard: codes: %d countries, at most 65535", len(countries))
	}
	c := &Codes{countries: slices.Clone(countries), cIndex: map[string]int{}, states: make([][]string, len(countries)),
		sIndex: make([]map[string]int, len(countries)), cw: 1, sw: 1}
	for i, n := range countries {
		if n == "" {
			return nil, fmt.Errorf("shard: codes: country %d: empty name", i)
		}
		if _, dup := c.cIndex[n]; dup {
			return nil, fmt.Errorf("shard: codes: country %q listed twice", n)
		}
		c.cIndex[n] = i
	}
	if len(countries) > 255 {
		c.cw = 2
	}
	names := make([]string, 0, len(states))
	for n := range states {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		i, ok := c.cIndex[n]
		if !ok {
			return nil, fmt.Errorf("shard: codes: states of %q, which is not a listed country", n)
		}
		ss := states[n]
		if len(ss) > 65535 {
			return nil, fmt.Errorf("shard: codes: %d states of %q, at most 65535", len(ss), n)
		}
		if len(ss) > 255 {
			c.sw = 2
		}
		c.states[i] = slices.Clone(ss)
		c.sIndex[i] = map[string]int{}
		for j, s := range ss {
			if s == "" {
				return nil, fmt.Errorf("shard: codes: state %d of %q: empty name", j, n)
			}
			if _, dup := c.sIndex[i][s]; dup {
				return nil, fmt.Errorf("shard: codes: state %q of %q listed twice", s, n)
			}
			c.sIndex[i][s] = j
		}
	}
	c.sum, c.legacy = c.checksums()
	return c, nil
}

// checksums returns the table's checksum and its legacy one. The checksum
// is SHA-256 of an encoding that gives every name with its length (so no
// name can pass for several, whatever bytes it holds) and every country's
// state count, cut to 62 bits with bit 62 set: from 2^62 to 2^63-1, never
// a legacy checksum. The legacy checksum, stored by earlier versions, is
// CRC-32 of the names joined with ':', ';' and ',' unescaped: tables whose
// names hold those characters could collide ({"a,b"} and {"a", "b"}), so
// legacy is -1 for them; for others that encoding is unambiguous, and
// records stored with it keep opening ([NewLocations]).
func (c *Codes) checksums() (sum, legacy int64) {
	h := sha256.New()
	fmt.Fprintf(h, "ria shard codes 2;%d;%d;%d;", len(c.countries), c.cw, c.sw)
	seps := false
	for i, n := range c.countries {
		fmt.Fprintf(h, "%d:%s;%d;", len(n), n, len(c.states[i]))
		seps = seps || strings.ContainsAny(n, ":;,")
		for _, st := range c.states[i] {
			fmt.Fprintf(h, "%d:%s;", len(st), st)
			seps = seps || strings.ContainsAny(st, ":;,")
		}
	}
	sum = int64(binary.BigEndian.Uint64(h.Sum(nil))>>2 | 1<<62)
	if seps {
		return sum, -1
	}
	old := crc32.NewIEEE()
	for i, n := range c.countries {
		fmt.Fprintf(old, "%s:%s;", n, strings.Join(c.states[i], ","))
	}
	fmt.Fprintf(old, "%d%d", c.cw, c.sw)
	return sum, int64(old.Sum32())
}

// Width returns the bytes of one encoded location.
func (c *Codes) Width() int { return c.cw + c.sw }

// Encode returns the record of a location: country's code, then state's
// (0 for ""). It returns an error wrapping [ErrUnknownCode] for a country
// not in the table, a state not among the country's, or a state given for
// a country without states.
func (c *Codes) Encode(country, state string) ([]byte, error) {
	ci, ok := c.cIndex[country]
	if !ok {
		return nil, fmt.Errorf("%w: country %q", ErrUnknownCode, country)
	}
	si := -1
	if state != "" {
		if c.sIndex[ci] == nil {
			return nil, fmt.Errorf("%w: state %q: country %q has no states in the table", ErrUnknownCode, state, country)
		}
		if si, ok = c.sIndex[ci][state]; !ok {
			return nil, fmt.Errorf("%w: state %q of %q", ErrUnknownCode, state, country)
		}
	}
	rec := make([]byte, c.cw+c.sw)
	put(rec[:c.cw], ci+1)
	put(rec[c.cw:], si+1)
	return rec, nil
}

// Decode returns the location of rec (ok false for a record of no known
// country, such as one never written). A state code out of range reads as
// no state, as the book's update_aggregates does.
func (c *Codes) Decode(rec []byte) (country, state string, ok bool) {
	if len(rec) != c.cw+c.sw {
		return "", "", false
	}
	ci, si := get(rec[:c.cw])-1, get(rec[c.cw:])-1
	if ci < 0 || ci >= len(c.countries) {
		return "", "", false
	}
	if ss := c.states[ci]; si >= 0 && si < len(ss) {
		state = ss[si]
	}
	return c.countries[ci], state, true
}

func put(b []byte, v int) {
	if len(b) == 1 {
		b[0] = byte(v)
		return
	}
	b[0], b[1] = byte(v>>8), byte(v)
}

func get(b []byte) int {
	if len(b) == 1 {
		return int(b[0])
	}
	return int(b[0])<<8 | int(b[1])
}

// BookCodes returns the book's table: 249 ISO 3166 country codes and the
// states of Canada (13) and the United States (62).
func BookCodes() *Codes { return bookCodes }

var bookCodes = func() *Codes {
	c, err := NewCodes(strings.Fields(`
ABW AFG AGO AIA ALA ALB AND ARE ARG ARM ASM ATA ATF ATG AUS AUT AZE BDI
BEL BEN BES BFA BGD BGR BHR BHS BIH BLM BLR BLZ BMU BOL BRA BRB BRN BTN
BVT BWA CAF CAN CCK CHE CHL CHN CIV CMR COD COG COK COL COM CPV CRI CUB
CUW CXR CYM CYP CZE DEU DJI DMA DNK DOM DZA ECU EGY ERI ESH ESP EST ETH
FIN FJI FLK FRA FRO FSM GAB GBR GEO GGY GHA GIB GIN GLP GMB GNB GNQ GRC
GRD GRL GTM GUF GUM GUY HKG HMD HND HRV HTI HUN IDN IMN IND IOT IRL IRN
IRQ ISL ISR ITA JAM JEY JOR JPN KAZ KEN KGZ KHM KIR KNA KOR KWT LAO LBN
LBR LBY LCA LIE LKA LSO LTU LUX LVA MAC MAF MAR MCO MDA MDG MDV MEX MHL
MKD MLI MLT MMR MNE MNG MNP MOZ MRT MSR MTQ MUS MWI MYS MYT NAM NCL NER
NFK NGA NIC NIU NLD NOR NPL NRU NZL OMN PAK PAN PCN PER PHL PLW PNG POL
PRI PRK PRT PRY PSE PYF QAT REU ROU RUS RWA SAU SDN SEN SGP SGS SHN SJM
SLB SLE SLV SMR SOM SPM SRB SSD STP SUR SVK SVN SWE SWZ SXM SYC SYR TCA
TCD TGO THA TJK TKL TKM TLS TON TTO TUN TUR TUV TWN TZA UGA UKR UMI URY
USA UZB VAT VCT VEN VGB VIR VNM VUT WLF WSM YEM ZAF ZMB ZWE`), map[string][]string{
		"CAN": strings.Fields(`AB BC MB NB NL NS NT NU ON PE QC SK YT`),
		"USA": strings.Fields(`AA AE AK AL AP AR AS AZ CA CO CT DC DE FL FM GA GU HI IA ID
IL IN KS KY LA MA MD ME MH MI MN MO MP MS MT NC ND NE NH NJ NM NV NY OH
OK OR PA PR PW RI SC SD TN TX UT VA VI VT WA WI WV WY`),
	})
	if err != nil {
		panic(err)
	}
	return c
}()

// Locations keeps each user's country and state packed into strings
// (book 9.3.2, set_location) and counts users per country and state by
// scanning them (aggregate_location) or by reading a list of users
// (aggregate_location_list). It is [Records] of [Codes.Width] bytes. It is
// safe for concurrent use.
type Locations struct {
	rec   *Records
	codes *Codes
}

// NewLocations returns the locations name, encoded with codes (nil:
// [BookCodes]). It takes the options of [NewRecords]. The first
// NewLocations of a name stores a checksum of its code table; later ones
// must use the same table ([ErrMismatch]), since a code is a position in
// it. A checksum stored by an earlier version of this package is still
// accepted for the same table, unless a name of the table holds ':', ';'
// or ',' (that checksum could not tell such a table from another: it fails
// with [ErrMismatch]). Records made by [NewRecords], which have no code
// table, fail with [ErrMismatch] too.
func NewLocations(ctx context.Context, rdb Client, name string, codes *Codes, opts ...Option) (*Locations, error) {
	if codes == nil {
		codes = BookCodes()
	}
	codesParam := param{name: "codes", value: codes.sum, explicit: true, kindMark: true}
	if codes.legacy >= 0 {
		codesParam.also = []int64{codes.legacy}
	}
	r, err := newRecords(ctx, rdb, "locations", name, codes.Width(), []param{codesParam}, opts)
	if err != nil {
		return nil, err
	}
	return &Locations{rec: r, codes: codes}, nil
}

// Records returns the packed records the locations are kept in.
func (l *Locations) Records() *Records { return l.rec }

// Set records that user is in country and state ("" for none): one
// SETRANGE of the user's bytes (see [Records.Put] for the round trips). It
// returns an error wrapping [ErrUnknownCode], having written nothing, for a
// location the code table does not hold.
func (l *Locations) Set(ctx context.Context, user int64, country, state string) error {
	rec, err := l.codes.Encode(country, state)
	if err != nil {
		return fmt.Errorf("shard: locations %q: set %d: %w", l.rec.name, user, err)
	}
	return l.rec.Put(ctx, user, rec)
}

// Get returns the location of user (ok false if none was set).
func (l *Locations) Get(ctx context.Context, user int64) (country, state string, ok bool, err error) {
	rec, err := l.rec.Get(ctx, user)
	if err != nil {
		return "", "", false, err
	}
	country, state, ok = l.codes.Decode(rec)
	return country, state, ok, nil
}

// Aggregate is a count of users per country and per state.
type Aggregate struct {
	Countries map[string]int64            // users per country
	States    map[string]map[string]int64 // users per state, by country
}

// Aggregate counts the users of every location by scanning all the packed
// records (see [Records.Scan] for the round trips and the block size).
func (l *Locations) Aggregate(ctx context.Context) (Aggregate, error) {
	t := l.newTally()
	if err := l.rec.Scan(ctx, func(_ int64, block []byte) error { t.add(block); return nil }); err != nil {
		return Aggregate{}, err
	}
	return t.result(), nil
}

// AggregateUsers counts the locations of users (see [Records.GetMany] for
// the round trips).
func (l *Locations) AggregateUsers(ctx context.Context, users ...int64) (Aggregate, error) {
	recs, err := l.rec.GetMany(ctx, users...)
	if err != nil {
		return Aggregate{}, err
	}
	t := l.newTally()
	for _, r := range recs {
		t.add(r)
	}
	return t.result(), nil
}

// tally counts records by their code. Two-byte records (the book's table)
// count into a flat array, which keeps the scan fast.
type tally struct {
	c     *Codes
	flat  []int64          // 2-byte records: by the record as a uint16
	other map[string]int64 // wider records: by the record's bytes
}

func (l *Locations) newTally() *tally {
	t := &tally{c: l.codes}
	if l.codes.cw+l.codes.sw == 2 {
		t.flat = make([]int64, 1<<16)
	} else {
		t.other = map[string]int64{}
	}
	return t
}

func (t *tally) add(block []byte) {
	if t.flat != nil {
		flat := t.flat
		for i := 0; i+1 < len(block); i += 2 {
			flat[uint16(block[i])<<8|uint16(block[i+1])]++
		}
		return
	}
	w := t.c.cw + t.c.sw
	for i := 0; i+w <= len(block); i += w {
		t.other[string(block[i:i+w])]++
	}
}

func (t *tally) result() Aggregate {
	a := Aggregate{Countries: map[string]int64{}, States: map[string]map[string]int64{}}
	count := func(rec []byte, n int64) {
		c, s, ok := t.c.Decode(rec)
		if !ok {
			return
		}
		a.Countries[c] += n
		if s != "" {
			if a.States[c] == nil {
				a.States[c] = map[string]int64{}
			}
			a.States[c][s] += n
		}
	}
	for code, n := range t.flat {
		if n > 0 {
			count([]byte{byte(code >> 8), byte(code)}, n)
		}
	}
	for rec, n := range t.other {
		count([]byte(rec), n)
	}
	return a
}
