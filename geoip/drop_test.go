package geoip_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/geoip"
	"github.com/ria-go/ria/internal/redistest"
)

const (
	cityLocations = "17,FR,A8,Orleans,45000,47.9167,1.9000\n42,US,CA,San Jose,95141,37.1835,-121.7714\n"
	cityBlocks    = "16777216,16777471,17\n16777472,16778239,42\n" // 1.0.0.0-1.0.0.255, 1.0.1.0-1.0.3.255
)

// assertGone checks that db's data set is gone: no key of it, Version "",
// lookups not found.
func assertGone(t *testing.T, b *redistest.Backend, db *geoip.DB, name string, addrs ...netip.Addr) {
	t.Helper()
	ctx := context.Background()
	assert.Empty(t, dataKeys(b, b.Prefix+"{"+name+"}:*"), "no key of the data set is left")
	v, err := db.Version(ctx)
	require.NoError(t, err)
	assert.Empty(t, v, "Version after Drop")
	for _, a := range addrs {
		_, err := db.Lookup(ctx, a)
		require.ErrorIs(t, err, geoip.ErrNotFound, "%v after Drop", a)
	}
}

// Drop deletes a ranges data set and a GeoLite City one (ranges, version,
// records) in one round trip, is not an error on a dropped or never
// imported data set, and an import after it works.
func TestDrop(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(11, 12))
		ref := genRanges(rng, 200, 200, []string{"US", "FR"})
		db := newDB(t, b, "d")
		other := newDB(t, b, "d2") // another data set, untouched
		_, err := other.ImportRanges(ctx, strings.NewReader(ref.csv(false)))
		require.NoError(t, err)
		_, err = db.ImportRanges(ctx, strings.NewReader(ref.csv(false)))
		require.NoError(t, err)
		require.Zero(t, mismatches(t, db, ref, queries(rng, ref, 500)))
		never := newDB(t, b, "never")
		require.NoError(t, never.Drop(ctx)) // a never imported data set; loads the script
		assertGone(t, b, never, "never", ref[0].start)

		rt, _ := b.Count.Delta(func() { require.NoError(t, db.Drop(ctx)) })
		assert.EqualValues(t, 1, rt, "Drop round trips")
		assertGone(t, b, db, "d", ref[0].start, ref[len(ref)-1].end)
		assert.Zero(t, mismatches(t, other, ref, queries(rng, ref, 500)), "another data set is untouched")

		rt, _ = b.Count.Delta(func() { require.NoError(t, db.Drop(ctx)) })
		assert.EqualValues(t, 1, rt, "Drop of a dropped data set")
		assertGone(t, b, db, "d")

		// An import after a Drop works.
		_, err = db.ImportRanges(ctx, strings.NewReader(ref.csv(true)))
		require.NoError(t, err)
		assert.Zero(t, mismatches(t, db, ref, queries(rng, ref, 500)))

		// GeoLite City: the records go too.
		city := newDB(t, b, "city")
		_, err = city.ImportGeoLiteCity(ctx, strings.NewReader(cityBlocks), strings.NewReader(cityLocations))
		require.NoError(t, err)
		v, err := city.Version(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, b.Keys(b.Prefix+"{city}:records:"+v))
		r, err := city.Lookup(ctx, netip.MustParseAddr("1.0.2.7"))
		require.NoError(t, err)
		require.Equal(t, "San Jose", r.City)
		rt, _ = b.Count.Delta(func() { require.NoError(t, city.Drop(ctx)) })
		assert.EqualValues(t, 1, rt, "Drop round trips (GeoLite City)")
		assertGone(t, b, city, "city", netip.MustParseAddr("1.0.2.7"), netip.MustParseAddr("1.0.0.1"))
		_, err = city.ImportGeoLiteCity(ctx, strings.NewReader(cityBlocks), strings.NewReader(cityLocations))
		require.NoError(t, err)
		r, err = city.Lookup(ctx, netip.MustParseAddr("1.0.0.7"))
		require.NoError(t, err)
		assert.Equal(t, "Orleans", r.City, "a GeoLite City import after a Drop")
	})
}

// Keys of other versions (a crashed import's staged ranges and records, a
// records hash left behind) go too, each version leaving a tombstone that
// expires; keys of other data sets sharing the prefix stay. With a small
// SCAN step Drop takes several round trips and does the same.
func TestDrop_leftovers(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		for _, scan := range []int{1000, 3} {
			b.Flush()
			db := newDB(t, b, "left")
			geoip.SetDropScan(db, scan)
			require.NoError(t, db.Drop(ctx)) // loads the script
			_, err := db.ImportGeoLiteCity(ctx, strings.NewReader(cityBlocks), strings.NewReader(cityLocations))
			require.NoError(t, err)
			k := func(part string) string { return b.Prefix + "{left}:" + part }
			require.NoError(t, b.Client.ZAdd(ctx, k("staging:crashed"), redis.Z{Member: "x"}).Err())
			require.NoError(t, b.Client.PExpire(ctx, k("staging:crashed"), time.Minute).Err())
			require.NoError(t, b.Client.HSet(ctx, k("records:crashed"), "1", "{}").Err())
			require.NoError(t, b.Client.HSet(ctx, k("records:old"), "1", "{}").Err())
			var keep []string // other data sets' keys, some of whose names start alike
			for i := range 20 {
				key := fmt.Sprintf("%s{left%d}:staging:v", b.Prefix, i)
				keep = append(keep, key)
				require.NoError(t, b.Client.Set(ctx, key, "x", 0).Err())
			}
			keep = append(keep, b.Prefix+"left}:staging:v")
			require.NoError(t, b.Client.Set(ctx, b.Prefix+"left}:staging:v", "x", 0).Err())

			rt, _ := b.Count.Delta(func() { require.NoError(t, db.Drop(ctx)) })
			if scan == 1000 {
				assert.EqualValues(t, 1, rt, "Drop round trips")
			} else if b.Real() { // miniredis's SCAN answers all keys at once
				assert.Greater(t, rt, int64(1), "Drop round trips with a SCAN step of %d", scan)
			}
			t.Logf("SCAN step %d: %d round trips", scan, rt)
			assert.ElementsMatch(t, []string{k("dropped:crashed"), k("dropped:old")}, dataKeys(b, b.Prefix+"{left}:*"),
				"only the tombstones are left")
			for _, key := range []string{k("dropped:crashed"), k("dropped:old")} {
				ttl, err := b.Client.PTTL(ctx, key).Result()
				require.NoError(t, err)
				assert.True(t, ttl > 0 && ttl <= 10*time.Minute, "tombstone %s expires: %v", key, ttl)
			}
			for _, key := range keep {
				n, err := b.Client.Exists(ctx, key).Result()
				require.NoError(t, err)
				assert.EqualValues(t, 1, n, "%s stays", key)
			}
			v, err := db.Version(ctx)
			require.NoError(t, err)
			assert.Empty(t, v)
		}
	})
}

// A Drop while an import stages (ranges, or a GeoLite City import's
// records before its ranges) makes that import fail with ErrDropped: its
// commit does not bring a half data set live, and it leaves no key. An
// import after that works.
func TestDrop_duringImport(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(13, 14))
		old := genRanges(rng, 300, 0, []string{"AA"})
		neu := genRanges(rng, 300, 300, []string{"BB"})
		db := newDB(t, b, "busy")
		_, err := db.ImportRanges(ctx, strings.NewReader(old.csv(false)))
		require.NoError(t, err)

		var dropped atomic.Int64
		var dropErr error
		_, err = db.ImportRanges(ctx, strings.NewReader(neu.csv(false)), geoip.WithBatch(50, 1),
			geoip.WithProgress(func(p geoip.Progress) {
				if p.Ranges >= 200 && dropped.Add(1) == 1 { // staged in part: the rest comes after the Drop
					dropErr = db.Drop(ctx)
				}
			}))
		require.NoError(t, dropErr)
		require.Greater(t, dropped.Load(), int64(1), "the import went on after the Drop")
		require.ErrorIs(t, err, geoip.ErrDropped)
		assert.NotErrorIs(t, err, ria.ErrOutcomeUnknown)
		assertGone(t, b, db, "busy", old[0].start, neu[0].start, neu[len(neu)-1].end)

		// GeoLite City: Drop after the locations were staged, before the
		// blocks.
		dropped.Store(0)
		_, err = db.ImportGeoLiteCity(ctx, strings.NewReader(cityBlocks), strings.NewReader(cityLocations),
			geoip.WithBatch(1, 1), geoip.WithProgress(func(p geoip.Progress) {
				if p.Records == 2 && p.Ranges == 0 && dropped.Add(1) == 1 {
					dropErr = db.Drop(ctx)
				}
			}))
		require.NoError(t, dropErr)
		require.EqualValues(t, 1, dropped.Load())
		require.ErrorIs(t, err, geoip.ErrDropped)
		assertGone(t, b, db, "busy", netip.MustParseAddr("1.0.0.1"))

		_, err = db.ImportRanges(ctx, strings.NewReader(neu.csv(false)), geoip.WithBatch(50, 1))
		require.NoError(t, err, "an import after")
		assert.Zero(t, mismatches(t, db, neu, queries(rng, neu, 1000)))
	})
}

// A reader running during a Drop sees the whole data set or nothing in
// every batch.
func TestDrop_atomicForReaders(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(15, 16))
		ref := genRanges(rng, 300, 300, []string{"AA", "BB"})
		db := newDB(t, b, "read")
		_, err := db.ImportRanges(ctx, strings.NewReader(ref.csv(false)))
		require.NoError(t, err)
		addrs := queries(rng, ref, 300)
		var whole, none, mixes atomic.Int64
		var stop atomic.Bool
		var wg sync.WaitGroup
		started := make(chan struct{})
		wg.Go(func() {
			for !stop.Load() {
				got, err := db.LookupMany(ctx, addrs)
				if !assert.NoError(t, err) {
					return
				}
				isWhole, isNone := true, true
				for i, a := range addrs {
					w, ok := ref.lookup(a)
					isWhole = isWhole && ok == (got[i] != nil) && (!ok || got[i].Country == w.cc && got[i].Start == w.start.Unmap())
					isNone = isNone && got[i] == nil
				}
				switch {
				case isNone:
					none.Add(1)
				case isWhole:
					if whole.Add(1) == 1 {
						close(started)
					}
				default:
					mixes.Add(1)
				}
			}
		})
		<-started
		err = db.Drop(ctx)
		stop.Store(true)
		wg.Wait()
		require.NoError(t, err)
		got, err := db.LookupMany(ctx, addrs)
		require.NoError(t, err)
		assert.Equal(t, make([]*geoip.Range, len(addrs)), got, "nothing after the Drop")
		t.Logf("reader batches: whole %d, none %d, mixed %d", whole.Load(), none.Load(), mixes.Load())
		assert.Zero(t, mixes.Load())
	})
}

// A key of the wrong type at the ranges, the version or the live records:
// a *ria.KeyError naming it, and nothing changed.
func TestDrop_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		db := newDB(t, b, "wt")
		setup := func() {
			_, err := db.ImportGeoLiteCity(ctx, strings.NewReader(cityBlocks), strings.NewReader(cityLocations))
			require.NoError(t, err)
		}
		ranges := redistest.KeyRole{Key: b.Prefix + "{wt}:ranges", Type: "zset", Role: "geoip ranges"}
		version := redistest.KeyRole{Key: b.Prefix + "{wt}:version", Type: "string", Role: "geoip version"}
		b.CheckWrongTypes(t, setup, func() error { return db.Drop(ctx) }, ranges, version)
		// The live records' key carries the version: built after setup.
		setup()
		v, err := db.Version(ctx)
		require.NoError(t, err)
		key := b.Prefix + "{wt}:records:" + v
		require.NoError(t, b.Client.Del(ctx, key).Err())
		require.NoError(t, b.Client.Set(ctx, key, "x", 0).Err())
		before := b.Snapshot()
		var kerr *ria.KeyError
		require.ErrorAs(t, db.Drop(ctx), &kerr)
		assert.ErrorIs(t, kerr, ria.ErrWrongType)
		assert.Equal(t, key, kerr.Key)
		assert.Equal(t, "geoip records", kerr.Role)
		assert.Equal(t, before, b.Snapshot(), "nothing changed")
	})
}

// Lost replies: go-redis re-sends the Drop step, which answers nil and the
// data set is gone (a dropped data set included). Replies held past the
// read timeout: the error wraps ria.ErrOutcomeUnknown, the data set is
// gone, and a later Drop answers nil.
func TestDrop_lostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		c, _, f := b.FaultyClient()
		db, err := geoip.New(c, "lost", geoip.WithPrefix(b.Prefix))
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "geoip Drop")
		gone := func() bool {
			v, err := db.Version(ctx)
			_, lerr := db.Lookup(ctx, netip.MustParseAddr("1.0.0.1"))
			return err == nil && v == "" && errors.Is(lerr, geoip.ErrNotFound) && len(dataKeys(b, b.Prefix+"{lost}:*")) == 0
		}
		for i := range 3 {
			if i < 2 {
				_, err := db.ImportGeoLiteCity(ctx, strings.NewReader(cityBlocks), strings.NewReader(cityLocations))
				require.NoError(t, err)
			}
			h.Call(1, redistest.Scripts, func() { err = db.Drop(ctx) })
			h.Check(err == nil, "Drop %d: %v", i, err)
			h.Check(gone(), "Drop %d: the data set is gone", i)
		}

		slow, _, fs := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.ReadTimeout = 100 * time.Millisecond
			o.MaxRetries = 1
		})
		sdb, err := geoip.New(slow, "lost", geoip.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, sdb.Drop(ctx)) // loads the script on the data set's node
		_, err = db.ImportRanges(ctx, strings.NewReader("1.0.0.0,1.0.0.255,AU\n"))
		require.NoError(t, err)
		fs.Delay(300 * time.Millisecond)
		err = sdb.Drop(ctx)
		fs.Delay(0)
		h.Counted()
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "Drop under delay: %v", err)
		h.Check(gone(), "Drop under delay: the data set is gone")
		h.Check(sdb.Drop(ctx) == nil, "Drop again")
	})
}

// Drop's first step runs (the data set is gone), its reply is lost, and an
// import commits before go-redis's re-send arrives: that import committed
// after the Drop and goes live as if it had run after it. A re-run of the
// first step would UNLINK it; the re-send is answered from the record of
// the first reply, and the import's data set stays.
func TestDrop_firstStepResentAfterImport(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		c, f, lose, entered, free := heldResend(t, b)
		db, err := geoip.New(c, "race", geoip.WithPrefix(b.Prefix))
		require.NoError(t, err)
		other, err := geoip.New(b.Client, "race", geoip.WithPrefix(b.Prefix))
		require.NoError(t, err)
		_, err = db.ImportRanges(ctx, strings.NewReader("1.0.0.0,1.0.0.255,AA\n"))
		require.NoError(t, err)
		require.NoError(t, db.Drop(ctx)) // loads the drop script on the data set's node
		_, err = db.ImportRanges(ctx, strings.NewReader("1.0.0.0,1.0.0.255,AA\n"))
		require.NoError(t, err)

		f.LoseReply(1, lose)
		done := make(chan error, 1)
		go func() { done <- db.Drop(ctx) }()
		<-entered // Drop's first step ran, its reply was lost; the re-send is dialling
		_, err = other.ImportRanges(ctx, strings.NewReader("1.0.0.0,1.0.0.255,CC\n"))
		require.NoError(t, err, "an import after the Drop")
		free()
		require.NoError(t, <-done)
		require.EqualValues(t, 1, f.Lost())
		r, err := other.Lookup(ctx, netip.MustParseAddr("1.0.0.7"))
		require.NoError(t, err, "the import that committed after the Drop ran is live")
		assert.Equal(t, "CC", r.Country)
	})
}

// The tombstone of an import a Drop cut lives as long as the import
// stages: an import that goes on for longer than the tombstone's TTL after
// the Drop still fails (miniredis: its clock is moved).
func TestDrop_longImportAfterDrop(t *testing.T) {
	ctx := context.Background()
	b := redistest.New(t, redistest.Mini)
	rng := rand.New(rand.NewPCG(17, 18))
	ref := genRanges(rng, 300, 300, []string{"AA"})
	db := newDB(t, b, "long")
	var reports int
	var dropErr error
	_, err := db.ImportRanges(ctx, strings.NewReader(ref.csv(false)), geoip.WithBatch(50, 1),
		geoip.WithProgress(func(p geoip.Progress) {
			reports++
			switch {
			case reports == 2:
				dropErr = db.Drop(ctx)
			case reports > 2:
				b.FastForward(4 * time.Minute) // 36 minutes in all between the last pipelines
			}
		}))
	require.NoError(t, dropErr)
	require.Greater(t, reports, 5)
	require.ErrorIs(t, err, geoip.ErrDropped)
	assertGone(t, b, db, "long", ref[0].start, ref[len(ref)-1].end)
}

// An import whose staged keys expire while it runs (its process or link
// stalled past their TTL) fails with ErrExpired at its commit, though its
// later pipelines recreated staged keys with the rest of the file: the
// previous data set stays live and nothing staged is left (miniredis: its
// clock is moved).
func TestImport_stagingExpired(t *testing.T) {
	ctx := context.Background()
	b := redistest.New(t, redistest.Mini)
	db := newDB(t, b, "slow")
	old := "1.0.0.0,1.0.0.255,AA\n"
	_, err := db.ImportRanges(ctx, strings.NewReader(old))
	require.NoError(t, err)
	before := dataSnapshot(b)
	neu := "2.0.0.0,2.0.0.255,AU\n3.0.0.0,3.0.0.255,AU\n4.0.0.0,4.0.0.255,AU\n5.0.0.0,5.0.0.255,AU\n"
	var moved bool
	p, err := db.ImportRanges(ctx, strings.NewReader(neu), geoip.WithBatch(1, 1),
		geoip.WithProgress(func(p geoip.Progress) {
			if p.Ranges == 2 && !moved {
				moved = true
				b.FastForward(11 * time.Minute) // the first two ranges expire
			}
		}))
	require.True(t, moved)
	require.ErrorIs(t, err, geoip.ErrExpired)
	assert.NotErrorIs(t, err, ria.ErrOutcomeUnknown)
	assert.EqualValues(t, 4, p.Ranges, "the import read the whole file")
	assert.Equal(t, before, dataSnapshot(b), "the old data set is live, nothing staged is left")
	r, err := db.Lookup(ctx, netip.MustParseAddr("1.0.0.1"))
	require.NoError(t, err)
	assert.Equal(t, "AA", r.Country)
	for _, a := range []string{"2.0.0.1", "5.0.0.1"} {
		_, err := db.Lookup(ctx, netip.MustParseAddr(a))
		assert.ErrorIs(t, err, geoip.ErrNotFound, a)
	}
}

// A running import keeps its staged keys and a Drop's tombstone alive
// while its reader stalls: a Drop during a stall longer than their TTL
// still ends the import with ErrDropped, leaving nothing (miniredis: its
// clock is moved; the keep-alive's ticker is the test's).
func TestDrop_stalledImport(t *testing.T) {
	ctx := context.Background()
	b := redistest.New(t, redistest.Mini)
	db := newDB(t, b, "stall")
	tick, kept := make(chan time.Time), make(chan struct{})
	geoip.SetKeepAlive(db, tick, func() { kept <- struct{}{} })
	refresh := func() {
		select {
		case tick <- time.Time{}:
		case <-time.After(time.Minute): // a guard: the keep-alive takes each tick at once
			t.Error("no keep-alive")
			return
		}
		<-kept
	}
	rows := "2.0.0.0,2.0.0.255,AU\n3.0.0.0,3.0.0.255,AU\n4.0.0.0,4.0.0.255,AU\n5.0.0.0,5.0.0.255,AU\n"
	var dropErr error
	var dropped bool
	_, err := db.ImportRanges(ctx, strings.NewReader(rows), geoip.WithBatch(1, 1),
		geoip.WithProgress(func(p geoip.Progress) {
			if p.Ranges == 2 && !dropped {
				dropped = true
				dropErr = db.Drop(ctx)
				for range 3 { // the reader stalls 12 minutes
					b.FastForward(4 * time.Minute)
					refresh()
				}
			}
		}))
	require.NoError(t, dropErr)
	require.True(t, dropped)
	require.ErrorIs(t, err, geoip.ErrDropped)
	assertGone(t, b, db, "stall", netip.MustParseAddr("2.0.0.1"), netip.MustParseAddr("5.0.0.1"))

	// Without a Drop, a stall longer than the TTL does not fail an import
	// whose keep-alive runs.
	var stalled bool
	_, err = db.ImportRanges(ctx, strings.NewReader(rows), geoip.WithBatch(1, 1),
		geoip.WithProgress(func(p geoip.Progress) {
			if p.Ranges == 2 && !stalled {
				stalled = true
				for range 3 {
					b.FastForward(4 * time.Minute)
					refresh()
				}
			}
		}))
	require.NoError(t, err)
	for _, a := range []string{"2.0.0.1", "5.0.0.1"} {
		r, err := db.Lookup(ctx, netip.MustParseAddr(a))
		require.NoError(t, err, a)
		assert.Equal(t, "AU", r.Country)
	}
	keys := dataKeys(b, b.Prefix+"{stall}:*")
	assert.ElementsMatch(t, []string{b.Prefix + "{stall}:ranges", b.Prefix + "{stall}:version"}, keys)
	ttl, err := b.Client.PTTL(ctx, b.Prefix+"{stall}:ranges").Result()
	require.NoError(t, err)
	assert.Equal(t, time.Duration(-1), ttl, "the live ranges do not expire")
}
