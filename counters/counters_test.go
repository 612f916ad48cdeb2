package counters_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// The book's scenario: increments at known times, read back at 1 s and
// 5 s precision.
func TestCounters_UpdateAt_get(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		for i, n := range []int64{1, 2, 3, 4, 5, 6, 7} {
			// t0-6 ... t0: 1 2 3 4 5 6 7
			skipped, err := c.UpdateAt(ctx, "hits", n, t0.Add(time.Duration(i-6)*time.Second))
			require.NoError(t, err)
			assert.Empty(t, skipped)
		}
		s1, err := c.Get(ctx, "hits", time.Second)
		require.NoError(t, err)
		require.Len(t, s1, 7)
		for i, s := range s1 {
			assert.Equal(t, t0.Add(time.Duration(i-6)*time.Second), s.Start)
			assert.Equal(t, int64(i+1), s.Count)
		}
		// t0 (...770) is a multiple of 5: slices ...760 (764: 1), ...765
		// (765-769: 2+3+4+5+6) and ...770 (7).
		s5, err := c.Get(ctx, "hits", 5*time.Second)
		require.NoError(t, err)
		assert.Equal(t, []counters.Sample{
			{Start: t0.Add(-10 * time.Second), Count: 1},
			{Start: t0.Add(-5 * time.Second), Count: 2 + 3 + 4 + 5 + 6},
			{Start: t0, Count: 7},
		}, s5)
		day, err := c.Get(ctx, "hits", 24*time.Hour)
		require.NoError(t, err)
		assert.Equal(t, int64(28), sum(day))

		names, err := c.Names(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"hits"}, names)
	})
}

// Update counts at the server's clock; one round trip per update and per
// read, whatever the number of precisions.
func TestCounters_Update_serverTime(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, err := counters.New(b.Client, counters.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, c.Update(ctx, "hits", 1)) // caches the script on the node
		var s []counters.Sample
		rt, cmds := b.Count.Delta(func() { err = c.Update(ctx, "hits", 2) })
		require.NoError(t, err)
		assert.Equal(t, [2]int64{1, 3}, [2]int64{rt, cmds}, "update: round trips, commands (MULTI, EVALSHA, EXEC)")
		rt, _ = b.Count.Delta(func() { s, err = c.Get(ctx, "hits", time.Minute) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "get")
		assert.Equal(t, int64(3), sum(s))
		for _, p := range c.Precisions() {
			s, err := c.Get(ctx, "hits", p.Step)
			require.NoError(t, err)
			assert.Equal(t, int64(3), sum(s), p.Step)
			require.NotEmpty(t, s)
			assert.WithinDuration(t, time.Now(), s[0].Start, p.Step+time.Hour, "server time: %v", p.Step)
		}
	})
}

// Delete removes a counter's samples and its name, in one round trip,
// leaving the others; deleting again or deleting an unknown counter is
// fine; an update starts it again.
// Delete's first run deletes the counter and loses its reply; before
// go-redis re-sends it, another client sees the counter gone and updates
// it. The re-send must delete nothing more (a re-run deleted that update):
// the call succeeds and the update stays.
func TestCounters_Delete_resendAfterLaterUpdate(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		c, _ := newCounters(t, b, rdb)
		other, _ := newCounters(t, b, b.Client)
		require.NoError(t, c.Delete(ctx, "a")) // the script cached
		_, err := other.UpdateAt(ctx, "a", 3, t0)
		require.NoError(t, err)
		var (
			sawGone  bool
			otherErr error
		)
		// The first run deletes; its reply is lost. The re-send: first the
		// other client.
		f.LoseReplyThen(redistest.Scripts, func() {
			var names []string
			names, otherErr = other.Names(ctx)
			sawGone = otherErr == nil && len(names) == 0
			if otherErr == nil {
				_, otherErr = other.UpdateAt(ctx, "a", 5, t0)
			}
		})
		err = c.Delete(ctx, "a")
		f.Disarm()
		require.EqualValues(t, 1, f.Lost(), "the first run's reply was lost")
		require.NoError(t, otherErr)
		require.True(t, sawGone, "the first run deleted the counter")
		require.NoError(t, err)
		s, err := other.Get(ctx, "a", time.Second)
		require.NoError(t, err)
		assert.Equal(t, int64(5), sum(s), "the re-send deleted the update made after the first run")
	})
}

func TestCounters_Delete(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, _ := newCounters(t, b, b.Client)
		for _, name := range []string{"a", "b"} {
			_, err := c.UpdateAt(ctx, name, 3, t0)
			require.NoError(t, err)
		}
		require.NoError(t, c.Delete(ctx, "a")) // caches the script on the node
		_, err := c.UpdateAt(ctx, "a", 3, t0)
		require.NoError(t, err)
		rt, _ := b.Count.Delta(func() { err = c.Delete(ctx, "a") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "delete")
		for _, p := range c.Precisions() {
			s, err := c.Get(ctx, "a", p.Step)
			require.NoError(t, err)
			assert.Empty(t, s, p.Step)
			s, err = c.Get(ctx, "b", p.Step)
			require.NoError(t, err)
			assert.Equal(t, int64(3), sum(s), "the other counter: %v", p.Step)
		}
		names, err := c.Names(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"b"}, names)
		n, err := b.Client.Exists(ctx, key(b, "a", "known"), key(b, "a", "samples")).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "no key of the deleted counter is left")
		require.NoError(t, c.Delete(ctx, "a"), "again")
		require.NoError(t, c.Delete(ctx, "never"))

		_, err = c.UpdateAt(ctx, "a", 2, t0)
		require.NoError(t, err)
		s, err := c.Get(ctx, "a", time.Second)
		require.NoError(t, err)
		assert.Equal(t, int64(2), sum(s), "counted again from zero")
	})
}

// Back-dated samples: older than the newest sample but in the retention
// they count; older than the retention they are skipped at that precision
// and count at the others; a cleaned slice never comes back.
func TestCounters_UpdateAt_backDated(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, clk := newCounters(t, b, b.Client, counters.WithPrecisions(
			counters.Precision{Step: time.Second, Samples: 10},
			counters.Precision{Step: time.Minute, Samples: 10}))
		_, err := c.UpdateAt(ctx, "hits", 1, t0)
		require.NoError(t, err)
		skipped, err := c.UpdateAt(ctx, "hits", 2, t0.Add(-5*time.Second)) // older than the newest, in the retention
		require.NoError(t, err)
		assert.Empty(t, skipped)
		skipped, err = c.UpdateAt(ctx, "hits", 4, t0.Add(-10*time.Second)) // out of 1 s's 10 samples
		require.NoError(t, err)
		assert.Equal(t, []time.Duration{time.Second}, skipped)
		skipped, err = c.UpdateAt(ctx, "hits", 8, t0.Add(-11*time.Minute)) // out of both
		require.NoError(t, err)
		assert.Equal(t, []time.Duration{time.Second, time.Minute}, skipped)

		s1, err := c.Get(ctx, "hits", time.Second)
		require.NoError(t, err)
		assert.Equal(t, []counters.Sample{{t0.Add(-5 * time.Second), 2}, {t0, 1}}, s1)
		s60, err := c.Get(ctx, "hits", time.Minute)
		require.NoError(t, err)
		assert.Equal(t, int64(1+2+4), sum(s60))

		// The clock moves 5 s on: a clean deletes the 1 s slices before t0-4.
		clk.now = t0.Add(5 * time.Second)
		cl, err := c.Cleaner()
		require.NoError(t, err)
		st, err := cl.Clean(ctx)
		require.NoError(t, err)
		assert.Equal(t, counters.CleanStats{Counters: 1, Deleted: 1}, st)
		// A writer whose clock is behind cannot fill the cleaned slice again.
		clk.now = t0
		skipped, err = c.UpdateAt(ctx, "hits", 16, t0.Add(-5*time.Second))
		require.NoError(t, err)
		assert.Equal(t, []time.Duration{time.Second}, skipped)
		s1, err = c.Get(ctx, "hits", time.Second)
		require.NoError(t, err)
		assert.Equal(t, []counters.Sample{{t0, 1}}, s1)
	})
}

// The cleaner keeps at most the retention of every precision, and
// forgets a counter once all its samples are out of it.
func TestCleaner_retention(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ps := []counters.Precision{{Step: time.Second, Samples: 120}, {Step: 5 * time.Second, Samples: 120},
			{Step: time.Minute, Samples: 3}}
		c, clk := newCounters(t, b, b.Client, counters.WithPrecisions(ps...))
		for i := range 300 { // 300 seconds, one update each
			clk.now = t0.Add(time.Duration(i) * time.Second)
			require.NoError(t, c.Update(ctx, "hits", 1))
			require.NoError(t, c.Update(ctx, "other", 1))
		}
		cl, err := c.Cleaner()
		require.NoError(t, err)
		st, err := cl.Clean(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, st.Counters)
		for _, p := range ps {
			s, err := c.Get(ctx, "hits", p.Step)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(s), p.Samples, p.Step)
			cutoff := slice(clk.now, p.Step).Add(-time.Duration(p.Samples-1) * p.Step)
			assert.False(t, s[0].Start.Before(cutoff), "%v: oldest %v, cutoff %v", p.Step, s[0].Start, cutoff)
		}
		s1, _ := c.Get(ctx, "hits", time.Second)
		assert.Len(t, s1, 120)
		assert.Equal(t, int64(120), sum(s1))

		clk.now = clk.now.Add(10 * time.Minute) // everything is out of the retention
		st, err = cl.Clean(ctx)
		require.NoError(t, err)
		assert.Equal(t, counters.CleanStats{Counters: 2, Deleted: 2 * (120 + 60 + 3), Forgotten: 2}, st)
		names, err := c.Names(ctx)
		require.NoError(t, err)
		assert.Empty(t, names)
		assert.Empty(t, b.Keys(b.Prefix+"{hits}:[ks]*"), "no key left")
	})
}

// A cleaner that was stopped for long deletes in bounded steps (1000
// samples per precision per script) and still gets everything.
func TestCleaner_boundedSteps(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, clk := newCounters(t, b, b.Client, counters.WithPrecisions(counters.Precision{Step: time.Second, Samples: 10}))
		cl, err := c.Cleaner()
		require.NoError(t, err)
		const n = 2500
		for i := range n {
			if i == 1 {
				_, err := cl.Clean(ctx) // nothing to delete yet; caches the script
				require.NoError(t, err)
			}
			clk.now = t0.Add(time.Duration(i) * time.Second)
			require.NoError(t, c.Update(ctx, "hits", 1))
		}
		var st counters.CleanStats
		rt, _ := b.Count.Delta(func() { st, err = cl.Clean(ctx) })
		require.NoError(t, err)
		assert.Equal(t, int64(n-10), st.Deleted)
		s, err := c.Get(ctx, "hits", time.Second)
		require.NoError(t, err)
		assert.Len(t, s, 10)
		if b.Kind == redistest.Mini { // alone on its server: one SCAN round trip
			// A SCAN, then 3 scripts: 1000 + 1000 + 490 deletions.
			assert.Equal(t, int64(1+3), rt)
		}
	})
}

// The cleaner racing updates of the slice it deletes: an update either
// lands before the clean (and is deleted with its whole slice) or is
// skipped after it; no slice comes back half-filled, and the precisions
// the clean does not touch count every update.
func TestCleaner_raceWithUpdate(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ps := []counters.Precision{{Step: time.Second, Samples: 5}, {Step: time.Hour, Samples: 5}}
		c, _ := newCounters(t, b, b.Client, counters.WithPrecisions(ps...))
		later, err := counters.New(b.Client, counters.WithPrefix(b.Prefix), counters.WithPrecisions(ps...),
			counters.WithClock(func() time.Time { return t0.Add(10 * time.Second) }))
		require.NoError(t, err)
		cl, err := later.Cleaner() // its clock puts slice t0 out of the retention
		require.NoError(t, err)

		var (
			cleaned  atomic.Bool
			after    atomic.Int64 // updates that started after the clean returned and counted at 1 s
			calls    atomic.Int64
			wg       sync.WaitGroup
			errs     = make(chan error, 4)
			firstRun = make(chan struct{})
			once     sync.Once
		)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					wasCleaned := cleaned.Load()
					skipped, err := c.UpdateAt(ctx, "hits", 1, t0)
					if err != nil {
						errs <- err
						return
					}
					calls.Add(1)
					once.Do(func() { close(firstRun) })
					if wasCleaned && len(skipped) == 0 {
						after.Add(1)
					}
				}
			}()
		}
		<-firstRun
		_, err = cl.Clean(ctx)
		require.NoError(t, err)
		cleaned.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		assert.Zero(t, after.Load(), "no update counted at 1 s after the clean")
		s1, err := c.Get(ctx, "hits", time.Second)
		require.NoError(t, err)
		assert.Empty(t, s1, "the cleaned slice did not come back")
		h, err := c.Get(ctx, "hits", time.Hour)
		require.NoError(t, err)
		assert.Equal(t, calls.Load(), sum(h), "every update counted at 1 h")
	})
}

// 16 goroutines × 1000 increments across a 5 s and an hour boundary with 2
// cleaners running, while the clock moves on 50 s and takes, second by
// second, 50 older samples of the same counter out of the 1 s retention:
// the cleaners delete them from the HASH the updates write. At every
// precision the samples add up to what is in the retention, nothing lost
// or counted twice.
func TestCounters_concurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var now atomic.Int64
		start := hourEnd.Add(8 * time.Second)
		now.Store(start.Unix())
		clock := func() time.Time { return time.Unix(now.Load(), 0) }
		c, err := counters.New(b.Client, counters.WithPrefix(b.Prefix), counters.WithClock(clock))
		require.NoError(t, err)
		type upd struct {
			at time.Time
			n  int64
		}
		var all []upd
		// Older samples, in the 1 s retention (120 s) now; the clock moves
		// them out during the run.
		for i := range 50 {
			u := upd{at: start.Add(time.Duration(-119+i) * time.Second), n: 3}
			skipped, err := c.UpdateAt(ctx, "hits", u.n, u.at)
			require.NoError(t, err)
			require.Empty(t, skipped)
			all = append(all, u)
		}
		runCtx, stop := context.WithCancel(ctx)
		var cleaners sync.WaitGroup
		cleanErrs := make(chan error, 2)
		for range 2 {
			cl, err := c.Cleaner(counters.WithInterval(20 * time.Millisecond))
			require.NoError(t, err)
			cleaners.Add(1)
			go func() { defer cleaners.Done(); cleanErrs <- cl.Run(runCtx) }()
		}
		const goroutines, each = 16, 1000
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					// 17 seconds around the hour boundary: hourEnd-8s ... hourEnd+8s
					at := hourEnd.Add(time.Duration((g*each+i)%17-8) * time.Second)
					if skipped, err := c.UpdateAt(ctx, "hits", 1, at); err != nil || len(skipped) > 0 {
						errs <- errorOr(err, "skipped %v", skipped)
						return
					}
					if g == 0 && i%20 == 19 { // 50 s over the run
						now.Add(1)
						if b.Mini != nil {
							// Let the reply records expire as they would on a
							// server: miniredis keeps them until told, and its
							// SCAN costs O(keys) per page.
							b.FastForward(time.Minute)
						}
					}
				}
			}()
		}
		wg.Wait()
		stop()
		cleaners.Wait()
		close(errs)
		close(cleanErrs)
		for err := range errs {
			require.NoError(t, err)
		}
		for err := range cleanErrs {
			require.NoError(t, err)
		}
		require.Equal(t, start.Add(50*time.Second), clock())
		for g := range goroutines {
			for i := range each {
				all = append(all, upd{at: hourEnd.Add(time.Duration((g*each+i)%17-8) * time.Second), n: 1})
			}
		}
		cl, err := c.Cleaner()
		require.NoError(t, err)
		st, err := cl.Clean(ctx) // whatever the running cleaners had not reached yet
		require.NoError(t, err)
		t.Logf("left for the last clean: %d samples", st.Deleted)
		for _, p := range c.Precisions() {
			cutoff := slice(clock(), p.Step).Add(-time.Duration(p.Samples-1) * p.Step)
			var want int64
			for _, u := range all {
				if !slice(u.at, p.Step).Before(cutoff) {
					want += u.n
				}
			}
			s, err := c.Get(ctx, "hits", p.Step)
			require.NoError(t, err)
			assert.Equal(t, want, sum(s), "precision %v", p.Step)
			if p.Step == time.Second {
				assert.Equal(t, int64(goroutines*each), want, "the old samples are out at 1s")
			}
		}
		h, err := c.Get(ctx, "hits", time.Hour)
		require.NoError(t, err)
		require.Len(t, h, 2, "both sides of the hour boundary")
		assert.Equal(t, hourEnd, h[1].Start)
	})
}
