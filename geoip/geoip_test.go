package geoip_test

import (
	"context"
	"fmt"
	"math/big"
	mrand "math/rand"
	"math/rand/v2"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/geoip"
	"github.com/ria-go/ria/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// dataKeys returns the keys of b that match pattern, but for the reply
// records of once-scripts (<prefix>{<name>}:once:<nonce>), which outlive
// a call by the client's retry window.
func dataKeys(b *redistest.Backend, pattern string) []string {
	var out []string
	for _, k := range b.Keys(pattern) {
		if !strings.Contains(k, "}:once:") {
			out = append(out, k)
		}
	}
	return out
}

// dataSnapshot returns b.Snapshot() but for the reply records of
// once-scripts (see dataKeys).
func dataSnapshot(b *redistest.Backend) map[string]string {
	s := b.Snapshot()
	for k := range s {
		if strings.Contains(k, "}:once:") {
			delete(s, k)
		}
	}
	return s
}

// heldResend returns a client of b (one connection) whose next script's
// reply will be lost once armed with f.LoseReply(1, lose): entered is
// closed when go-redis's re-send of that script dials a new connection,
// and the dial waits until free is called (the test's cleanup calls it
// too), so that the test acts between the first run and its re-send.
func heldResend(t *testing.T, b *redistest.Backend) (c redis.UniversalClient, f *redistest.Faults, lose func([]string) bool, entered <-chan struct{}, free func()) {
	t.Helper()
	var (
		lostSeen atomic.Bool
		once     sync.Once
		in       = make(chan struct{})
		release  = make(chan struct{})
		freeOnce sync.Once
	)
	free = func() { freeOnce.Do(func() { close(release) }) }
	t.Cleanup(free) // never leave the dial blocked
	c, _, f = b.FaultyClient(func(o *redis.UniversalOptions) {
		o.PoolSize = 1 // the re-send must dial a new connection
		inner := o.Dialer
		o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if lostSeen.Load() {
				once.Do(func() { close(in); <-release })
			}
			return inner(ctx, network, addr)
		}
	})
	lose = func(cmd []string) bool {
		if redistest.Scripts(cmd) {
			lostSeen.Store(true)
			return true
		}
		return false
	}
	return c, f, lose, in, free
}

// refRange is a range of the in-memory reference.
type refRange struct {
	start, end netip.Addr
	cc         string
}

// reference answers lookups by binary search over sorted ranges.
type reference []refRange

func (ref reference) lookup(a netip.Addr) (refRange, bool) {
	a16 := netip.AddrFrom16(a.As16())
	i := sort.Search(len(ref), func(i int) bool { return netip.AddrFrom16(ref[i].start.As16()).Compare(a16) > 0 })
	if i == 0 {
		return refRange{}, false
	}
	r := ref[i-1]
	if netip.AddrFrom16(r.end.As16()).Less(a16) {
		return refRange{}, false
	}
	return r, true
}

func (ref reference) csv(header bool) string {
	var b strings.Builder
	if header {
		b.WriteString("start_ip,end_ip,country_code\n")
	}
	for _, r := range ref {
		fmt.Fprintf(&b, "%s,%s,%s\n", r.start, r.end, r.cc)
	}
	return b.String()
}

// genRanges makes n4 IPv4 and n6 IPv6 ranges, sorted, not overlapping,
// with gaps and adjacent ranges (a third of them), codes drawn from ccs.
func genRanges(rng *rand.Rand, n4, n6 int, ccs []string) reference {
	var ref reference
	one := big.NewInt(1)
	r1 := mrand.New(mrand.NewSource(int64(rng.Uint64()))) // big.Int.Rand takes a math/rand v1 generator
	walk := func(n int, from *big.Int, span *big.Int, to func(*big.Int) netip.Addr) {
		cur := new(big.Int).Set(from)
		step := new(big.Int).Div(span, big.NewInt(int64(2*n+1)))
		for range n {
			length := new(big.Int).Rand(r1, step)
			length.Add(length, one)
			end := new(big.Int).Add(cur, length)
			end.Sub(end, one)
			ref = append(ref, refRange{start: to(cur), end: to(end), cc: ccs[rng.IntN(len(ccs))]})
			cur = new(big.Int).Add(end, one)
			if rng.IntN(3) != 0 { // a gap
				gap := new(big.Int).Rand(r1, step)
				cur.Add(cur, gap.Add(gap, one))
			}
		}
	}
	v4 := func(x *big.Int) netip.Addr {
		var b [4]byte
		x.FillBytes(b[:])
		return netip.AddrFrom4(b)
	}
	v6 := func(x *big.Int) netip.Addr {
		var b [16]byte
		x.FillBytes(b[:])
		return netip.AddrFrom16(b)
	}
	walk(n4, big.NewInt(1<<24), big.NewInt(1<<32-1<<25), v4)
	from := new(big.Int).Lsh(big.NewInt(0x2000), 112)
	walk(n6, from, new(big.Int).Lsh(big.NewInt(0x1000), 112), v6)
	return ref
}

// queries draws addresses: random IPv4 and IPv6, range edges and their
// neighbours, and IPv4-mapped IPv6 forms.
func queries(rng *rand.Rand, ref reference, n int) []netip.Addr {
	out := make([]netip.Addr, 0, n)
	for len(out) < n {
		switch rng.IntN(6) {
		case 0:
			out = append(out, netip.AddrFrom4([4]byte{byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())}))
		case 1:
			var b [16]byte
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			if rng.IntN(2) == 0 {
				b[0] = 0x20 | b[0]&0x0f
			}
			out = append(out, netip.AddrFrom16(b))
		default:
			r := ref[rng.IntN(len(ref))]
			a := r.start
			switch rng.IntN(4) {
			case 1:
				a = r.end
			case 2:
				if p := r.start.Prev(); p.IsValid() {
					a = p
				}
			case 3:
				if nx := r.end.Next(); nx.IsValid() {
					a = nx
				}
			}
			if a.Is4() && rng.IntN(4) == 0 {
				a = netip.AddrFrom16(a.As16()) // IPv4-mapped IPv6
			}
			out = append(out, a)
		}
	}
	return out
}

func newDB(t *testing.T, b *redistest.Backend, name string) *geoip.DB {
	t.Helper()
	db, err := geoip.New(b.Client, name, geoip.WithPrefix(b.Prefix))
	require.NoError(t, err)
	return db
}

// mismatches looks addrs up in batches and counts answers that differ from
// the reference.
func mismatches(t *testing.T, db *geoip.DB, ref reference, addrs []netip.Addr) int {
	t.Helper()
	ctx := context.Background()
	bad := 0
	for i := 0; i < len(addrs); i += 1000 {
		batch := addrs[i:min(i+1000, len(addrs))]
		got, err := db.LookupMany(ctx, batch)
		require.NoError(t, err)
		for j, a := range batch {
			want, ok := ref.lookup(a)
			switch {
			case !ok && got[j] != nil:
				bad++
				t.Logf("%v: got %+v, want not found", a, *got[j])
			case ok && (got[j] == nil || got[j].Country != want.cc || got[j].Start != want.start.Unmap() || got[j].End != want.end.Unmap()):
				bad++
				t.Logf("%v: got %+v, want %+v", a, got[j], want)
			}
		}
	}
	return bad
}

// Lookups of random addresses agree with a binary search over the same
// ranges: IPv4, IPv6, gaps, range edges, IPv4-mapped forms.
func TestLookup_matchesReference(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(1, 2))
		n, q := 20_000, 100_000
		if b.Kind == redistest.Mini {
			n, q = 500, 20_000 // miniredis sorts a ZSET on every range query
		}
		ref := genRanges(rng, n/2, n/2, []string{"US", "FR", "JP", "BR", "ZA"})
		db := newDB(t, b, "world")
		var reports atomic.Int64
		p, err := db.ImportRanges(ctx, strings.NewReader(ref.csv(true)), geoip.WithProgress(func(geoip.Progress) { reports.Add(1) }))
		require.NoError(t, err)
		v, err := db.Version(ctx)
		require.NoError(t, err)
		assert.NotEmpty(t, v)
		assert.EqualValues(t, len(ref), p.Ranges)
		assert.EqualValues(t, len(ref)+1, p.Lines)
		assert.Positive(t, reports.Load())

		addrs := queries(rng, ref, q)
		bad := mismatches(t, db, ref, addrs)
		t.Logf("%d ranges, %d lookups, %d mismatches", len(ref), len(addrs), bad)
		assert.Zero(t, bad)

		// One round trip each.
		rt, _ := b.Count.Delta(func() {
			_, err := db.LookupMany(ctx, addrs[:500])
			require.NoError(t, err)
		})
		assert.EqualValues(t, 1, rt, "LookupMany round trips")
		rt, _ = b.Count.Delta(func() { _, _ = db.Lookup(ctx, ref[0].start) })
		assert.EqualValues(t, 1, rt, "Lookup round trips")

		r, err := db.Lookup(ctx, ref[0].start)
		require.NoError(t, err)
		assert.Equal(t, ref[0].cc, r.Country)
		_, err = db.Lookup(ctx, netip.MustParseAddr("0.0.0.1"))
		require.ErrorIs(t, err, geoip.ErrNotFound)
	})
}

// A reader running during an import sees the old data set or the new one
// in every batch, never a mix; after the import, the new one.
func TestImport_atomicReplace(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(3, 4))
		old := genRanges(rng, 500, 500, []string{"AA"})
		neu := genRanges(rng, 700, 300, []string{"BB"})
		db := newDB(t, b, "swap")
		_, err := db.ImportRanges(ctx, strings.NewReader(old.csv(false)))
		require.NoError(t, err)
		addrs := append(queries(rng, old, 200), queries(rng, neu, 200)...)

		var stop atomic.Bool
		var batches, sawNew, mixes atomic.Int64
		var wg sync.WaitGroup
		wg.Go(func() {
			for !stop.Load() || sawNew.Load() == 0 {
				got, err := db.LookupMany(ctx, addrs)
				if !assert.NoError(t, err) {
					return
				}
				batches.Add(1)
				isOld, isNew := true, true
				for i, a := range addrs {
					wo, oko := old.lookup(a)
					wn, okn := neu.lookup(a)
					isOld = isOld && (oko == (got[i] != nil)) && (!oko || got[i].Country == wo.cc && got[i].Start == wo.start.Unmap())
					isNew = isNew && (okn == (got[i] != nil)) && (!okn || got[i].Country == wn.cc && got[i].Start == wn.start.Unmap())
				}
				switch {
				case isNew:
					sawNew.Add(1)
				case !isOld:
					mixes.Add(1)
				}
			}
		})
		_, err = db.ImportRanges(ctx, strings.NewReader(neu.csv(false)), geoip.WithBatch(50, 2))
		stop.Store(true)
		wg.Wait()
		require.NoError(t, err)
		t.Logf("reader batches %d, mixed %d", batches.Load(), mixes.Load())
		assert.Zero(t, mixes.Load())
		assert.Zero(t, mismatches(t, db, neu, addrs))
		assert.ElementsMatch(t, []string{b.Prefix + "{swap}:ranges", b.Prefix + "{swap}:version"}, dataKeys(b, b.Prefix+"*"), "the old data set is gone")
	})
}

// Batches are sent while the next is read (one in flight): the commit
// waits for the last, also when the ranges fill the batches exactly (the
// final flush then has nothing left to send), and the last progress
// report counts every range.
func TestImport_everyBatchBeforeCommit(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(7, 8))
		ref := genRanges(rng, 120, 120, []string{"AA", "BB"})
		for _, bd := range [][2]int{{1, 1}, {3, 2}, {len(ref), 1}} {
			db := newDB(t, b, fmt.Sprint("exact", bd[0], "-", bd[1]))
			var last geoip.Progress
			p, err := db.ImportRanges(ctx, strings.NewReader(ref.csv(false)), geoip.WithBatch(bd[0], bd[1]),
				geoip.WithProgress(func(p geoip.Progress) { last = p }))
			require.NoError(t, err)
			assert.EqualValues(t, len(ref), p.Ranges)
			assert.Equal(t, p, last, "batch %d, depth %d: the last report", bd[0], bd[1])
			assert.Zero(t, mismatches(t, db, ref, queries(rng, ref, 2000)), "batch %d, depth %d", bd[0], bd[1])
		}
	})
}

// A cancelled or failed import leaves the old data set answering and no
// staged keys behind.
func TestImport_cancelAndFailureKeepOld(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(5, 6))
		old := genRanges(rng, 300, 300, []string{"AA"})
		neu := genRanges(rng, 3000, 0, []string{"BB"})
		db := newDB(t, b, "keep")
		_, err := db.ImportRanges(ctx, strings.NewReader(old.csv(false)))
		require.NoError(t, err)
		before := b.Snapshot()
		addrs := queries(rng, old, 2000)

		cctx, cancel := context.WithCancel(ctx)
		_, err = db.ImportRanges(cctx, strings.NewReader(neu.csv(false)), geoip.WithBatch(100, 1),
			geoip.WithProgress(func(p geoip.Progress) {
				if p.Ranges >= 1000 {
					cancel()
				}
			}))
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, mismatches(t, db, old, addrs), "old data after a cancelled import")
		assert.Equal(t, before, b.Snapshot(), "nothing staged is left")

		bad := neu.csv(false)
		lines := strings.Split(bad, "\n")
		lines[1500] = lines[1500] + "\nnot-an-ip,1.2.3.4,XX"
		_, err = db.ImportRanges(ctx, strings.NewReader(strings.Join(lines, "\n")), geoip.WithBatch(100, 1))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "line 1502")
		assert.Contains(t, err.Error(), `"not-an-ip"`)
		assert.Zero(t, mismatches(t, db, old, addrs), "old data after a failed import")
		assert.Equal(t, before, b.Snapshot())
	})
}

func TestImport_badRows(t *testing.T) {
	ctx := context.Background()
	b := redistest.New(t, redistest.Mini)
	db := newDB(t, b, "bad")
	for name, tc := range map[string]struct{ csv, want string }{
		"start after end": {"1.0.0.9,1.0.0.1,US\n", "line 1: start 1.0.0.9 after end 1.0.0.1"},
		"overlap":         {"1.0.0.1,1.0.0.9,US\n1.0.0.5,1.0.0.20,FR\n", "line 2: range 1.0.0.5-1.0.0.20 overlaps"},
		"unsorted":        {"2.0.0.1,2.0.0.9,US\n1.0.0.1,1.0.0.20,FR\n", "line 2: range 1.0.0.1-1.0.0.20 overlaps or precedes"},
		"mixed families":  {"1.0.0.1,2001:db8::1,US\n", "mixed IPv4 and IPv6"},
		"bad end":         {"1.0.0.1,1.0.0.300,US\n", `line 1: address "1.0.0.300"`},
		"too few fields":  {"1.0.0.1,1.0.0.3\n", "line 1: 2 fields"},
		"empty code":      {"1.0.0.1,1.0.0.3,\n", `record key ""`},
		"non-ASCII code":  {"1.0.0.1,1.0.0.3,Ü\n", "printable ASCII"},
		"zone":            {"fe80::1%eth0,fe80::2,US\n", "zoned"},
		"empty file":      {"", "no ranges"},
		"header only":     {"start_ip,end_ip,country_code\n", "no ranges"},
		"bad quote":       {"1.0.0.1,\"1.0.0.3,US\n", "ranges"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := db.ImportRanges(ctx, strings.NewReader(tc.csv))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "geoip: import: "), err.Error())
			assert.Empty(t, b.Keys("*"), "nothing written")
		})
	}
	_, err := db.ImportRanges(ctx, strings.NewReader("1.0.0.1,1.0.0.3,US\n"), geoip.WithBatch(0, 1))
	require.Error(t, err)
	_, err = db.Lookup(ctx, netip.MustParseAddr("1.0.0.2"))
	require.ErrorIs(t, err, geoip.ErrNotFound, "nothing imported")
	v, err := db.Version(ctx)
	require.NoError(t, err)
	assert.Empty(t, v)
	_, err = db.Lookup(ctx, netip.Addr{})
	require.Error(t, err)
	_, err = db.LookupMany(ctx, make([]netip.Addr, geoip.MaxBatch+1))
	require.Error(t, err)
	for _, name := range []string{"", "a{b"} {
		_, err := geoip.New(b.Client, name)
		require.Error(t, err)
	}
	_, err = geoip.New(b.Client, "x", geoip.WithPrefix("p}"))
	require.Error(t, err)
	_, err = geoip.New(nil, "x")
	require.Error(t, err)
}

// The book's GeoLite City pair: locations (ISO-8859-1) and blocks of
// integer IPv4 addresses, with their copyright and header lines.
func TestImportGeoLiteCity(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		locations := "Copyright (c) 2012 MaxMind LLC.  All Rights Reserved.\n" +
			"locId,country,region,city,postalCode,latitude,longitude,metroCode,areaCode\n" +
			"1,\"O1\",\"\",\"\",\"\",0.0000,0.0000,,\n" +
			"17,\"FR\",\"A8\",\"Orl\xe9ans\",\"45000\",47.9167,1.9000,,\n" +
			"42,\"US\",\"CA\",\"San Jos\xe9\",\"95141\",37.1835,-121.7714,807,408\n"
		blocks := "Copyright (c) 2011 MaxMind Inc.  All Rights Reserved.\n" +
			"startIpNum,endIpNum,locId\n" +
			"\"16777216\",\"16777471\",\"17\"\n" + // 1.0.0.0 - 1.0.0.255
			"\"16777472\",\"16778239\",\"42\"\n" + // 1.0.1.0 - 1.0.3.255
			"\"16778496\",\"16778751\",\"99\"\n" // 1.0.5.0 - 1.0.5.255, no location
		db := newDB(t, b, "city")
		p, err := db.ImportGeoLiteCity(ctx, strings.NewReader(blocks), strings.NewReader(locations))
		require.NoError(t, err)
		assert.EqualValues(t, 3, p.Ranges)
		assert.EqualValues(t, 3, p.Records)

		r, err := db.Lookup(ctx, netip.MustParseAddr("1.0.2.7"))
		require.NoError(t, err)
		assert.Equal(t, geoip.Record{Country: "US", Region: "CA", City: "San José", PostalCode: "95141", Latitude: 37.1835, Longitude: -121.7714}, r.Record)
		assert.Equal(t, netip.MustParseAddr("1.0.1.0"), r.Start)
		assert.Equal(t, netip.MustParseAddr("1.0.3.255"), r.End)
		r, err = db.Lookup(ctx, netip.MustParseAddr("1.0.0.255"))
		require.NoError(t, err)
		assert.Equal(t, "Orléans", r.City)
		_, err = db.Lookup(ctx, netip.MustParseAddr("1.0.4.1")) // the book answers San José here
		require.ErrorIs(t, err, geoip.ErrNotFound)
		r, err = db.Lookup(ctx, netip.MustParseAddr("1.0.5.1"))
		require.NoError(t, err)
		assert.Equal(t, geoip.Record{}, r.Record, "a block without location")

		_, err = db.ImportGeoLiteCity(ctx, strings.NewReader("\"5\",\"x\",\"1\"\n"), strings.NewReader(locations))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `blocks: line 1: IPv4 number "x"`)
		_, err = db.ImportGeoLiteCity(ctx, strings.NewReader(blocks), strings.NewReader("3,FR,A8,Paris,,91,0\n"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "locations: line 1: latitude")
	})
}

// Keys of the wrong type: a clear error naming the key, and nothing
// changed.
func TestWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		db := newDB(t, b, "wt")
		csv := "1.0.0.1,1.0.0.9,US\n"
		setup := func() {
			_, err := db.ImportRanges(ctx, strings.NewReader(csv))
			require.NoError(t, err)
		}
		setup()
		ranges := redistest.KeyRole{Key: b.Prefix + "{wt}:ranges", Type: "zset", Role: "geoip ranges"}
		version := redistest.KeyRole{Key: b.Prefix + "{wt}:version", Type: "string", Role: "geoip version"}
		lookup := func() error { _, err := db.Lookup(ctx, netip.MustParseAddr("1.0.0.2")); return err }
		b.CheckWrongTypes(t, setup, lookup, ranges)
		b.CheckWrongTypes(t, setup, func() error {
			_, err := db.LookupMany(ctx, []netip.Addr{netip.MustParseAddr("1.0.0.2"), netip.MustParseAddr("1.0.0.3")})
			return err
		}, ranges)
		b.CheckWrongTypes(t, setup, func() error { _, err := db.Version(ctx); return err }, version)
		b.CheckWrongTypes(t, setup, func() error { _, err := db.ImportRanges(ctx, strings.NewReader(csv)); return err }, ranges, version)
		// The records of a GeoLite City data set carry its version: put
		// the wrong type at the live one by hand.
		b.Flush()
		_, err := db.ImportGeoLiteCity(ctx, strings.NewReader("16777216,16777471,17\n"), strings.NewReader("17,FR,A8,Paris\n"))
		require.NoError(t, err)
		v, err := b.Client.Get(ctx, version.Key).Result()
		require.NoError(t, err)
		key := b.Prefix + "{wt}:records:" + v
		require.NoError(t, b.Client.Del(ctx, key).Err())
		require.NoError(t, b.Client.SAdd(ctx, key, "x").Err())
		before := b.Snapshot()
		var kerr *ria.KeyError
		require.ErrorAs(t, lookup(), &kerr)
		assert.Equal(t, key, kerr.Key)
		assert.Equal(t, "geoip records", kerr.Role)
		assert.Equal(t, before, b.Snapshot())
	})
}

// Lost replies during an import (a pipeline, the commit) and a lookup:
// go-redis re-sends, and the answers and the data are right.
func TestLostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		c, _, f := b.FaultyClient()
		db, err := geoip.New(c, "lost", geoip.WithPrefix(b.Prefix))
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(7, 8))
		disagreements, calls := 0, 0
		for i := range 4 {
			ref := genRanges(rng, 200, 200, []string{fmt.Sprint("C", i)})
			if i%2 == 0 {
				f.LoseReply(1, redistest.Commands("zadd"))
			} else {
				f.LoseReply(1, redistest.Scripts)
			}
			_, err := db.ImportRanges(ctx, strings.NewReader(ref.csv(false)), geoip.WithBatch(50, 2))
			calls++
			if err != nil || mismatches(t, db, ref, queries(rng, ref, 500)) != 0 {
				disagreements++
				t.Logf("import %d: %v", i, err)
			}
			f.LoseReply(1, redistest.Commands("zrevrangebylex"))
			calls++
			if mismatches(t, db, ref, queries(rng, ref, 200)) != 0 {
				disagreements++
			}
		}
		require.EqualValues(t, calls, f.Lost())
		t.Logf("fault harness: geoip Import/Lookup: calls=%d lost=%d disagreements=%d", calls, f.Lost(), disagreements)
		assert.Zero(t, disagreements)
		assert.Len(t, dataKeys(b, b.Prefix+"*"), 2)
	})
}

// The commit of an import runs (the import goes live), its reply is lost,
// and another import commits before go-redis's re-send arrives. A re-run
// would find neither its version live nor its marker and answer EXPIRED
// ("nothing of it went live", a refusal for something it did): the
// re-send is answered from the record of the first reply, and the import
// succeeds.
func TestImport_commitResentAfterAnotherImport(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		c, f, lose, entered, free := heldResend(t, b)
		db, err := geoip.New(c, "race", geoip.WithPrefix(b.Prefix))
		require.NoError(t, err)
		other, err := geoip.New(b.Client, "race", geoip.WithPrefix(b.Prefix))
		require.NoError(t, err)
		// Load the commit script on the data set's node.
		_, err = db.ImportRanges(ctx, strings.NewReader("1.0.0.0,1.0.0.255,AA\n"))
		require.NoError(t, err)

		f.LoseReply(1, lose)
		done := make(chan error, 1)
		go func() {
			_, err := db.ImportRanges(ctx, strings.NewReader("1.0.0.0,1.0.0.255,BB\n"))
			done <- err
		}()
		<-entered // the commit ran, its reply was lost; the re-send is dialling
		_, err = other.ImportRanges(ctx, strings.NewReader("1.0.0.0,1.0.0.255,CC\n"))
		require.NoError(t, err, "another process imports meanwhile")
		free()
		err = <-done
		require.EqualValues(t, 1, f.Lost())
		assert.NoError(t, err, "the import went live: its commit's re-send answers as its first run")
		r, err := db.Lookup(ctx, netip.MustParseAddr("1.0.0.7"))
		require.NoError(t, err)
		assert.Equal(t, "CC", r.Country, "the later import is live")
	})
}

// A commit whose reply never comes (the client does not re-send) went
// live, and its error wraps ria.ErrOutcomeUnknown, not a refusal.
func TestImport_commitReplyLost(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		c, _, f := b.FaultyClient(func(o *redis.UniversalOptions) { o.MaxRetries = -1; o.MaxRedirects = -1 })
		db, err := geoip.New(c, "unknown", geoip.WithPrefix(b.Prefix))
		require.NoError(t, err)
		_, err = db.ImportRanges(ctx, strings.NewReader("1.0.0.0,1.0.0.255,AA\n")) // loads the script
		require.NoError(t, err)
		before, err := db.Version(ctx)
		require.NoError(t, err)
		f.LoseReply(1, redistest.Scripts)
		_, err = db.ImportRanges(ctx, strings.NewReader("1.0.0.0,1.0.0.255,BB\n"))
		require.EqualValues(t, 1, f.Lost())
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		after, err := db.Version(ctx)
		require.NoError(t, err)
		assert.NotEqual(t, before, after, "the commit ran")
		r, err := db.Lookup(ctx, netip.MustParseAddr("1.0.0.7"))
		require.NoError(t, err)
		assert.Equal(t, "BB", r.Country)
	})
}

// A quote in a row's first field is a parse error naming its line, for
// both formats: the import fails (it used to panic in csv.Reader.FieldPos)
// and writes nothing.
func TestImport_quoteInFirstField(t *testing.T) {
	ctx := context.Background()
	b := redistest.New(t, redistest.Mini)
	db := newDB(t, b, "quote")
	_, err := db.ImportRanges(ctx, strings.NewReader("1.0.0.0\",1.0.0.255,AU\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "geoip: import: ranges: ")
	assert.Contains(t, err.Error(), "line 1")
	_, err = db.ImportGeoLiteCity(ctx, strings.NewReader(cityBlocks), strings.NewReader("17,FR,A8,Orleans\n4\"2,US,CA,San Jose\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "geoip: import: locations: ")
	assert.Contains(t, err.Error(), "line 2")
	_, err = db.ImportGeoLiteCity(ctx, strings.NewReader("16777216\",16777471,17\n"), strings.NewReader(cityLocations))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "geoip: import: blocks: ")
	assert.Empty(t, b.Keys("*"), "nothing written")
}
