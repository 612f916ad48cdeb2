package shard_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

var bookCountries = strings.Fields(`
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
USA UZB VAT VCT VEN VGB VIR VNM VUT WLF WSM YEM ZAF ZMB ZWE`)

var bookStates = map[string][]string{
	"CAN": strings.Fields(`AB BC MB NB NL NS NT NU ON PE QC SK YT`),
	"USA": strings.Fields(`AA AE AK AL AP AR AS AZ CA CO CT DC DE FL FM GA GU HI IA ID
IL IN KS KY LA MA MD ME MH MI MN MO MP MS MT NC ND NE NH NJ NM NV NY OH
OK OR PA PR PW RI SC SD TN TX UT VA VI VT WA WI WV WY`),
}

// The book's location test (9.3.2): one user per country, and per state of
// the US and Canada (247 + 62 + 13 = 322 users with the book's tables); the
// aggregate over every record, by scanning and by a list of users, equals
// the per-user sums. Small strings and blocks make the users span several
// strings (on several servers of a Cluster) and several blocks each.
func TestLocations_book(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locs := must(shard.NewLocations(ctx, b.Client, "location", nil,
			shard.WithIDsPerShard(100), shard.WithBlockSize(30), shard.WithPrefix(b.Prefix)))
		want := shard.Aggregate{Countries: map[string]int64{}, States: map[string]map[string]int64{}}
		var users []int64
		var id int64
		for _, c := range bookCountries {
			states := bookStates[c]
			if states == nil {
				states = []string{""}
			}
			for _, s := range states {
				rt, _ := b.Count.Delta(func() { require.NoError(t, locs.Set(ctx, id, c, s)) })
				if id%100 != 0 {
					assert.Equal(t, int64(1), rt, "set: one SETRANGE")
				}
				users = append(users, id)
				id++
				want.Countries[c]++
				if s != "" {
					if want.States[c] == nil {
						want.States[c] = map[string]int64{}
					}
					want.States[c][s]++
				}
			}
		}
		require.Equal(t, int64(322), id)
		got, err := locs.Aggregate(ctx)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		got, err = locs.AggregateUsers(ctx, users...)
		require.NoError(t, err)
		assert.Equal(t, want, got)

		c, s, ok, err := locs.Get(ctx, 0)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "ABW", c)
		assert.Empty(t, s)
		_, _, ok, err = locs.Get(ctx, 10_000)
		require.NoError(t, err)
		assert.False(t, ok, "a user never set")

		// A user moves: the aggregate follows.
		require.NoError(t, locs.Set(ctx, 0, "USA", "CA"))
		got, err = locs.Aggregate(ctx)
		require.NoError(t, err)
		assert.Zero(t, got.Countries["ABW"])
		assert.Equal(t, int64(63), got.Countries["USA"])
		assert.Equal(t, int64(2), got.States["USA"]["CA"])

		// A list of users: counts only theirs; a user listed twice counts twice.
		got, err = locs.AggregateUsers(ctx, 0, 0, 1, 999_999)
		require.NoError(t, err)
		assert.Equal(t, shard.Aggregate{Countries: map[string]int64{"USA": 2, "AFG": 1},
			States: map[string]map[string]int64{"USA": {"CA": 2}}}, got)
	})
}

// Records: fixed-width records packed at id·width; unwritten ones read as
// zero bytes; Scan reads every record once, in blocks of whole records.
func TestRecords(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		r := must(shard.NewRecords(ctx, b.Client, "rec", 3, shard.WithIDsPerShard(50), shard.WithBlockSize(32), shard.WithPrefix(b.Prefix)))
		assert.Equal(t, 3, r.Width())
		rec := func(id int64) []byte { return []byte{byte(id >> 16), byte(id >> 8), byte(id)} }
		ids := []int64{0, 1, 49, 50, 99, 120, 257}
		for _, id := range ids {
			require.NoError(t, r.Put(ctx, id, rec(id)))
		}
		// The string of id 0 is a packed array of 50 records.
		assert.Equal(t, int64(150), b.Client.StrLen(ctx, b.Prefix+"{rec:0}:records").Val())
		v, err := r.Get(ctx, 49)
		require.NoError(t, err)
		assert.Equal(t, rec(49), v)
		v, err = r.Get(ctx, 2)
		require.NoError(t, err)
		assert.Equal(t, []byte{0, 0, 0}, v, "never written: zero bytes")
		vs, err := r.GetMany(ctx, 257, 3, 120, 1_000_000)
		require.NoError(t, err)
		assert.Equal(t, [][]byte{rec(257), {0, 0, 0}, rec(120), {0, 0, 0}}, vs)

		var mu sync.Mutex
		seen := map[int64][]byte{}
		var blocks int
		require.NoError(t, r.Scan(ctx, func(first int64, block []byte) error {
			mu.Lock()
			defer mu.Unlock()
			blocks++
			assert.LessOrEqual(t, len(block), 30, "blocks of whole records: 32 bytes round down to 30")
			assert.Zero(t, len(block)%3)
			for i := 0; i < len(block); i += 3 {
				if !bytes.Equal(block[i:i+3], []byte{0, 0, 0}) {
					seen[first+int64(i/3)] = bytes.Clone(block[i : i+3])
				}
			}
			return nil
		}))
		want := map[int64][]byte{}
		for _, id := range ids {
			if id != 0 { // record 0 is all zero bytes: scans as unwritten
				want[id] = rec(id)
			}
		}
		assert.Equal(t, want, seen)
		// Strings 0, 1, 2 (ids up to 150), 5 (id 257, offset 21): 150+150+63+24 bytes in blocks of 30.
		assert.Equal(t, 5+5+3+1, blocks)

		// fn's error stops the scan and comes back as it is.
		stop := fmt.Errorf("stop")
		assert.Equal(t, stop, r.Scan(ctx, func(int64, []byte) error { return stop }))

		// Empty records scan nothing.
		e := must(shard.NewRecords(ctx, b.Client, "empty", 3, shard.WithPrefix(b.Prefix)))
		require.NoError(t, e.Scan(ctx, func(int64, []byte) error { t.Error("called"); return nil }))
	})
}

// Bad input: a clear error and nothing written.
func TestRecords_badInput(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, tc := range []struct {
			name  string
			width int
			opts  []shard.Option
			want  string
		}{
			{"zero width", 0, nil, "record width 0"},
			{"huge width", 1 << 30, nil, "record width"},
			{"ids per string", 2, []shard.Option{shard.WithIDsPerShard(0)}, "ids per string 0"},
			{"string too big", 1024, []shard.Option{shard.WithIDsPerShard(1 << 20)}, "exceed a string's 512 MB"},
			{"block", 4, []shard.Option{shard.WithBlockSize(3)}, "block size 3"},
			{"option", 4, []shard.Option{shard.WithShardSize(3)}, "does not take WithShardSize"},
		} {
			_, err := shard.NewRecords(ctx, b.Client, "r", tc.width, append(tc.opts, shard.WithPrefix(b.Prefix))...)
			assert.ErrorContains(t, err, tc.want, tc.name)
		}
		_, err := shard.NewRecords(ctx, b.Client, "", 2, shard.WithPrefix(b.Prefix))
		assert.Error(t, err)
		assert.Empty(t, b.Keys(""), "nothing written")

		r := must(shard.NewRecords(ctx, b.Client, "r", 2, shard.WithPrefix(b.Prefix)))
		before := b.Snapshot()
		assert.ErrorContains(t, r.Put(ctx, 1, []byte{1, 2, 3}), "record of 3 bytes, want 2", "longer than the width")
		assert.ErrorContains(t, r.Put(ctx, 1, []byte{1}), "record of 1 bytes, want 2")
		assert.ErrorContains(t, r.Put(ctx, -1, []byte{1, 2}), "id -1")
		_, err = r.GetMany(ctx, 1, -5)
		assert.ErrorContains(t, err, "id -5")
		assert.Equal(t, before, b.Snapshot())
		_, err = shard.NewRecords(ctx, b.Client, "r", 3, shard.WithPrefix(b.Prefix))
		assert.ErrorIs(t, err, shard.ErrMismatch, "another width")

		locs := must(shard.NewLocations(ctx, b.Client, "loc", nil, shard.WithPrefix(b.Prefix)))
		before = b.Snapshot()
		assert.ErrorIs(t, locs.Set(ctx, 1, "XXX", ""), shard.ErrUnknownCode)
		assert.ErrorIs(t, locs.Set(ctx, 1, "USA", "ZZ"), shard.ErrUnknownCode)
		assert.ErrorIs(t, locs.Set(ctx, 1, "FRA", "IDF"), shard.ErrUnknownCode, "FRA has no states in the table")
		assert.Equal(t, before, b.Snapshot())
		own := must(shard.NewCodes([]string{"A", "B"}, nil))
		_, err = shard.NewLocations(ctx, b.Client, "loc", own, shard.WithPrefix(b.Prefix))
		assert.ErrorIs(t, err, shard.ErrMismatch, "another code table")
	})
}

// A user's own code table: more than 255 states take two bytes each.
func TestCodes(t *testing.T) {
	many := make([]string, 300)
	for i := range many {
		many[i] = fmt.Sprintf("S%d", i)
	}
	c, err := shard.NewCodes([]string{"X", "Y"}, map[string][]string{"Y": many})
	require.NoError(t, err)
	assert.Equal(t, 3, c.Width())
	rec, err := c.Encode("Y", "S299")
	require.NoError(t, err)
	country, state, ok := c.Decode(rec)
	assert.True(t, ok)
	assert.Equal(t, "Y", country)
	assert.Equal(t, "S299", state)
	_, _, ok = c.Decode(make([]byte, 3))
	assert.False(t, ok, "zero bytes: no location")

	for _, tc := range []struct {
		countries []string
		states    map[string][]string
		want      string
	}{
		{nil, nil, "no country"},
		{[]string{"A", "A"}, nil, "listed twice"},
		{[]string{"A", ""}, nil, "empty name"},
		{[]string{"A"}, map[string][]string{"B": {"x"}}, "not a listed country"},
		{[]string{"A"}, map[string][]string{"A": {"x", "x"}}, "listed twice"},
	} {
		_, err := shard.NewCodes(tc.countries, tc.states)
		assert.ErrorContains(t, err, tc.want)
	}

	// Locations with a user's table on miniredis.
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locs := must(shard.NewLocations(ctx, b.Client, "own", c, shard.WithPrefix(b.Prefix)))
		require.NoError(t, locs.Set(ctx, 5, "Y", "S7"))
		require.NoError(t, locs.Set(ctx, 6, "X", ""))
		require.NoError(t, locs.Set(ctx, 7, "Y", "S7"))
		got, err := locs.Aggregate(ctx)
		require.NoError(t, err)
		assert.Equal(t, shard.Aggregate{Countries: map[string]int64{"X": 1, "Y": 2},
			States: map[string]map[string]int64{"Y": {"S7": 2}}}, got)
	})
}

// Different code tables never pass for one another, whatever bytes their
// names hold: the checksum gives each name with its length. A checksum
// stored by an earlier version (CRC-32 of the names joined with ':', ';'
// and ',') still opens the same table, unless its names hold those
// separators (then that checksum cannot tell it from another).
func TestLocations_codesChecksum(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := shard.WithPrefix(b.Prefix)
		pairs := []struct {
			name string
			a, b *shard.Codes
		}{
			{"comma", must(shard.NewCodes([]string{"X"}, map[string][]string{"X": {"a,b"}})),
				must(shard.NewCodes([]string{"X"}, map[string][]string{"X": {"a", "b"}}))},
			{"colon", must(shard.NewCodes([]string{"A:;B"}, nil)), must(shard.NewCodes([]string{"A", "B"}, nil))},
			{"states", must(shard.NewCodes([]string{"X", "Y"}, map[string][]string{"X": {"a"}})),
				must(shard.NewCodes([]string{"X", "Y"}, map[string][]string{"Y": {"a"}}))},
		}
		for _, c := range pairs {
			must(shard.NewLocations(ctx, b.Client, c.name, c.a, p))
			_, err := shard.NewLocations(ctx, b.Client, c.name, c.b, p)
			assert.ErrorIs(t, err, shard.ErrMismatch, c.name)
			_, err = shard.NewLocations(ctx, b.Client, c.name, c.a, p)
			assert.NoError(t, err, c.name+": the same table")
		}

		// Records stored by an earlier version: 117039501 is the legacy
		// checksum of both {X: a, b} and {X: "a,b"}.
		meta := b.Prefix + "{old}:records:meta"
		require.NoError(t, b.Client.HSet(ctx, meta, "width", 2, "per", 1<<20, "codes", 117039501).Err())
		_, err := shard.NewLocations(ctx, b.Client, "old", pairs[0].b, p)
		assert.NoError(t, err, "the legacy checksum of a table without separators")
		_, err = shard.NewLocations(ctx, b.Client, "old", pairs[0].a, p)
		assert.ErrorIs(t, err, shard.ErrMismatch, "a table with separators never matches a legacy checksum")
	})
}

// NewLocations on records made by NewRecords (no code table) is a
// mismatch of structures, not a corrupt meta hash.
func TestLocations_onRecords(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		must(shard.NewRecords(ctx, b.Client, "r", 2, shard.WithPrefix(b.Prefix)))
		_, err := shard.NewLocations(ctx, b.Client, "r", nil, shard.WithPrefix(b.Prefix))
		assert.ErrorIs(t, err, shard.ErrMismatch)
		assert.NotErrorIs(t, err, ria.ErrCorrupt)
	})
}
