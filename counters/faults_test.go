package counters_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

// dayCount returns counter name's count at the 1-day precision.
func dayCount(t *testing.T, c *counters.Counters, name string) int64 {
	t.Helper()
	s, err := c.Get(t.Context(), name, 24*time.Hour)
	require.NoError(t, err)
	return sum(s)
}

// Every state-changing call, its reply lost after it ran: go-redis sends
// it again, and the answer matches the state (counts exact).
func TestFaults_lostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		c, _ := newCounters(t, b, rdb)
		check, _ := newCounters(t, b, b.Client)
		const calls = 5

		// Update runs in MULTI/EXEC, which go-redis does not re-send: the
		// reply of an EXEC that ran is lost, the call says its outcome is
		// unknown, and it counted once.
		require.NoError(t, c.Update(ctx, "hits", 1)) // caches the script, learns the layout
		lost, bad := f.Lost(), 0
		for i := range calls {
			f.LoseReply(1, redistest.Commands("exec"))
			if err := c.Update(ctx, "hits", 1); !errors.Is(err, ria.ErrOutcomeUnknown) {
				t.Errorf("update %d: %v, want an unknown outcome", i, err)
				bad++
			}
			if dayCount(t, check, "hits") != int64(2+i) {
				bad++
			}
		}
		assert.Equal(t, int64(calls), f.Lost()-lost, "the faults happened")
		t.Logf("fault harness: counters update: calls=%d lost=%d disagreements=%d", calls, f.Lost()-lost, bad)
		assert.Zero(t, bad)

		// UpdateAt, the same at explicit times: unknown, counted once, and
		// the next call counts once and reports no skipped precision. (The
		// proxy loses the EXEC's reply, which the server sends after it ran
		// the transaction: a cut before it would leave the outcome landing
		// at a time the test cannot see.)
		lost, bad = f.Lost(), 0
		for i := range calls {
			at := t0.Add(-time.Duration(i) * time.Second)
			before := dayCount(t, check, "at")
			f.LoseReply(1, redistest.Commands("exec"))
			if _, err := c.UpdateAt(ctx, "at", 1, at); !errors.Is(err, ria.ErrOutcomeUnknown) {
				t.Errorf("update at %d: %v, want an unknown outcome", i, err)
				bad++
			}
			if d := dayCount(t, check, "at") - before; d != 1 {
				t.Errorf("update at %d: counted %d times, want once", i, d)
				bad++
			}
			before = dayCount(t, check, "at")
			skipped, err := c.UpdateAt(ctx, "at", 1, at)
			require.NoError(t, err)
			if len(skipped) != 0 || dayCount(t, check, "at")-before != 1 {
				bad++
			}
		}
		assert.Equal(t, int64(calls), f.Lost()-lost, "the faults happened")
		t.Logf("fault harness: counters update at: calls=%d lost=%d disagreements=%d", calls, f.Lost()-lost, bad)
		assert.Zero(t, bad)

		// Stats.Update
		st, err := c.Stats("T")
		require.NoError(t, err)
		_, err = st.Update(ctx, "/p", 1)
		require.NoError(t, err)
		// In MULTI/EXEC, as Update: the reply of an EXEC that ran is lost,
		// the call says its outcome is unknown, and it counted once.
		lost, bad = f.Lost(), 0
		for i := range calls {
			f.LoseReply(1, redistest.Commands("exec"))
			if _, err := st.Update(ctx, "/p", 1); !errors.Is(err, ria.ErrOutcomeUnknown) {
				t.Errorf("stats update %d: %v, want an unknown outcome", i, err)
				bad++
			}
		}
		cur, _, err := st.Get(ctx, "/p")
		require.NoError(t, err)
		if cur.Count != 1+calls || cur.Sum != 1+calls {
			bad++
		}
		assert.Equal(t, int64(calls), f.Lost()-lost)
		t.Logf("fault harness: counters stats update: calls=%d lost=%d disagreements=%d", calls, f.Lost()-lost, bad)
		assert.Zero(t, bad)

		// Stats.Record: the same, with the ranking.
		lost, bad = f.Lost(), 0
		for i := range calls {
			f.LoseReply(1, redistest.Commands("exec"))
			if err := st.Record(ctx, "/r", time.Second); !errors.Is(err, ria.ErrOutcomeUnknown) {
				t.Errorf("stats record %d: %v, want an unknown outcome", i, err)
				bad++
			}
		}
		cur, _, err = st.Get(ctx, "/r")
		require.NoError(t, err)
		slow, err := st.Slowest(ctx, 10)
		require.NoError(t, err)
		if cur.Count != calls || len(slow) != 1 || slow[0].Mean != 1 {
			bad++
		}
		assert.Equal(t, int64(calls), f.Lost()-lost)
		t.Logf("fault harness: counters stats record: calls=%d lost=%d disagreements=%d", calls, f.Lost()-lost, bad)
		assert.Zero(t, bad)

		// Batcher.Flush: the pipeline loses one reply; go-redis re-sends.
		bt, err := c.Batcher()
		require.NoError(t, err)
		lost, bad = f.Lost(), 0
		for i := range calls {
			for j := range 10 {
				require.NoError(t, bt.Add(fmt.Sprintf("b%d", j), int64(i+1)))
			}
			f.LoseReply(1, redistest.Scripts)
			require.NoError(t, bt.Flush(ctx))
		}
		for j := range 10 {
			if dayCount(t, check, fmt.Sprintf("b%d", j)) != 1+2+3+4+5 {
				bad++
			}
		}
		if st := bt.Stats(); st.Counted != 10*(1+2+3+4+5) || st.Pending != 0 {
			bad++
		}
		assert.Equal(t, int64(calls), f.Lost()-lost)
		t.Logf("fault harness: counters batcher flush: calls=%d lost=%d disagreements=%d", calls, f.Lost()-lost, bad)
		assert.Zero(t, bad)

		// Cleaner.Clean: the counts it reports match what it deleted.
		cw, clk := newCounters(t, b, rdb, counters.WithPrefix(b.Prefix+"clean:")) // alone under its prefix
		cl, err := cw.Cleaner()
		require.NoError(t, err)
		lost, bad = f.Lost(), 0
		var reported int64
		fields := map[string]bool{}
		for i := range calls {
			clk.now = t0.Add(time.Duration(i) * 200 * time.Second)
			require.NoError(t, cw.Update(ctx, "old", 1))
			for _, p := range cw.Precisions() {
				fields[fmt.Sprint(p.Step, slice(clk.now, p.Step))] = true
			}
			f.LoseReply(1, redistest.Scripts)
			st, err := cl.Clean(ctx)
			require.NoError(t, err)
			reported += st.Deleted
		}
		var left int64
		for _, p := range cw.Precisions() {
			s, err := cw.Get(ctx, "old", p.Step)
			require.NoError(t, err)
			left += int64(len(s))
		}
		if reported != int64(len(fields))-left || reported == 0 {
			bad++
		}
		assert.Equal(t, int64(calls), f.Lost()-lost)
		t.Logf("fault harness: counters clean: calls=%d lost=%d disagreements=%d (deleted %d)", calls, f.Lost()-lost, bad, reported)
		assert.Zero(t, bad)
	})
}

// A stalled server: every attempt times out after the script ran. The
// call reports an unknown outcome, and the update counted exactly once.
func TestFaults_delay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 50 * time.Millisecond })
		c, _ := newCounters(t, b, rdb)
		check, _ := newCounters(t, b, b.Client)
		require.NoError(t, c.Update(ctx, "hits", 1))
		f.Delay(120 * time.Millisecond)
		err := c.Update(ctx, "hits", 1)
		f.Delay(0)
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		bad := 0
		if dayCount(t, check, "hits") != 2 {
			bad++
		}
		t.Logf("fault harness: counters update (delayed replies): calls=1 lost=0 disagreements=%d", bad)
		assert.Zero(t, bad)
		var kerr *ria.KeyError
		assert.False(t, errors.As(err, &kerr))
	})
}
