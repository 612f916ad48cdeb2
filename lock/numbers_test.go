package lock_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
)

// places returns waiter places that the scripts never write: a TTL that
// SET PX refuses ('0100', beyond 64 bits) or beyond 2^53, an expiry beyond
// 2^53, bytes after the last field. suffix follows the TTL in each (" w"
// for the read/write lock).
func places(suffix string) []string {
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	return []string{
		future + " 0100" + suffix,
		future + " 99999999999999999999" + suffix,
		future + " 9007199254740993" + suffix,
		"99999999999999999999 60000" + suffix,
		"0" + future + " 60000" + suffix,
		future + " 60000" + suffix + " x",
		future + " 60000" + suffix + "x",
	}
}

// A waiter place whose numbers the lock never writes is malformed: a
// release skips (and wakes) that waiter, as it does an expired one, and
// deletes the lock; it used to mint a fence, trim the queue and then fail
// at SET PX, leaving the lock held and the waiter out of the queue. State
// does not count that waiter (it used to count a place with bytes after
// its TTL, which it matched unanchored).
func TestLock_Release_State_malformedPlace(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		for _, place := range places("") {
			b.Flush()
			holder, err := locker.TryAcquire(ctx, "job", time.Minute)
			require.NoError(t, err)
			w := locker.NewLockForTest("job", time.Minute)
			ok, err := w.AttemptForTest(ctx, 10*time.Second)
			require.NoError(t, err)
			require.False(t, ok)
			require.NoError(t, b.Client.HSet(ctx, keyOf(b, "job", "waiters"), w.Token(), place).Err())
			st, err := locker.State(ctx, "job")
			require.NoError(t, err)
			assert.Zero(t, st.Waiters, "%q: State counts no live waiter", place)
			f := fence(t, b, "job")
			assert.NoError(t, holder.Release(ctx), "%q", place)
			assert.Equal(t, "", owner(t, b, "job"), "%q: released, not handed over", place)
			assert.Equal(t, f, fence(t, b, "job"), "%q: no fence minted", place)
			n, err := b.Client.Exists(ctx, keyOf(b, "job", "queue"), keyOf(b, "job", "waiters")).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "%q: the waiter left the queue", place)
			wake, err := b.Client.LRange(ctx, keyOf(b, "job", "grant:"+w.Token()), 0, -1).Result()
			require.NoError(t, err)
			assert.Equal(t, []string{""}, wake, "%q: the waiter is woken", place)
		}
	})
}

// The same for the read/write lock: a release (a writer's, handing over
// to the head of the queue) skips a malformed place, whatever its mode,
// and State does not count it (it used to count a place whose mode is
// neither r nor w, or with bytes after it).
func TestRWLock_Release_State_malformedPlace(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("doc")
		future := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
		for _, mode := range []string{"r", "w", "x"} {
			all := places(" " + mode)
			if mode == "x" { // a mode no acquire writes
				all = append(all, future+" 60000 x", future+" 60000", future+" 60000 ")
			}
			for _, place := range all {
				b.Flush()
				holder, err := rw.TryLock(ctx, time.Minute)
				require.NoError(t, err)
				w := rw.NewHoldForTest(time.Minute, mode == "w")
				ok, err := w.AttemptForTest(ctx, 10*time.Second)
				require.NoError(t, err)
				require.False(t, ok)
				require.NoError(t, b.Client.HSet(ctx, keyOf(b, "doc", "rw:waiters"), w.Token(), place).Err())
				before, err := b.Client.Get(ctx, keyOf(b, "doc", "rw:fence")).Result()
				require.NoError(t, err)
				msg := fmt.Sprintf("%q", place)
				st, err := rw.State(ctx)
				require.NoError(t, err)
				assert.Zero(t, st.Waiters, "%s: State counts no live waiter", msg)
				assert.NoError(t, holder.Release(ctx), msg)
				n, err := b.Client.Exists(ctx, keyOf(b, "doc", "rw:writer"), keyOf(b, "doc", "rw:readers"),
					keyOf(b, "doc", "rw:queue"), keyOf(b, "doc", "rw:waiters")).Result()
				require.NoError(t, err)
				assert.Zero(t, n, "%s: released, nobody granted, the waiter out of the queue", msg)
				after, err := b.Client.Get(ctx, keyOf(b, "doc", "rw:fence")).Result()
				require.NoError(t, err)
				assert.Equal(t, before, after, "%s: no fence minted", msg)
				wake, err := b.Client.LRange(ctx, keyOf(b, "doc", "rw:grant:"+w.Token()), 0, -1).Result()
				require.NoError(t, err)
				assert.Equal(t, []string{""}, wake, "%s: the waiter is woken", msg)
			}
		}
	})
}

// A grant key value that no release writes (a fence in decimal, or an empty value to
// wake) is not taken for a handed fence by a holder's re-run: Lua's
// tonumber read 'inf' (a fence of INT64_MIN), '0x10' (16, below the fences
// minted already). A reader's re-run mints a new fence, as after an empty value.
func TestRWLock_reRun_malformedGrant(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("doc")
		for _, v := range []string{"inf", "-inf", "nan", "0x10", "1e3", " 12", "1.5", "007", "99999999999999999999"} {
			b.Flush()
			h := rw.NewHoldForTest(time.Minute, false)
			ok, err := h.AttemptForTest(ctx, 0)
			require.NoError(t, err)
			require.True(t, ok)
			first := h.Fence()
			g := keyOf(b, "doc", "rw:grant:"+h.Token())
			require.NoError(t, b.Client.RPush(ctx, g, v).Err())
			ok, err = h.AttemptForTest(ctx, 0)
			require.NoError(t, err, "%q", v)
			assert.True(t, ok, "%q", v)
			assert.Equal(t, first+1, h.Fence(), "%q: a new fence", v)
			assert.Empty(t, b.Keys(g), "%q: the grant key is cleared", v)
		}
	})
}

// A fence counter beyond 2^53 (an integer INCR takes, but that Lua's
// numbers do not hold exactly) made two acquisitions mint the same fence
// (2^53+3 and 2^53+4 both became 2^53+4), which fencing must never do.
// Such a counter is at its maximum: the acquisition is refused, the
// counter left as it was.
func TestLock_fenceBeyond2p53(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locker := newLocker(b)
		for _, v := range []string{"9007199254740991", "9007199254740993", "9223372036854775000"} {
			b.Flush()
			require.NoError(t, b.Client.Set(ctx, keyOf(b, "job", "fence"), v, 0).Err())
			var last int64
			for i := range 3 {
				before := b.Snapshot()
				l, err := locker.TryAcquire(ctx, "job", time.Minute)
				if err != nil {
					assert.ErrorIs(t, err, ria.ErrCorrupt, "%s: acquisition %d", v, i)
					assert.Equal(t, before, b.Snapshot(), "%s: acquisition %d: nothing changed", v, i)
					break
				}
				assert.Greater(t, l.Fence(), last, "%s: acquisition %d: a new fence", v, i)
				last = l.Fence()
				require.NoError(t, l.Release(ctx))
			}
		}
	})
}

// The same for the read/write lock's fence counter.
func TestRWLock_fenceBeyond2p53(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rw := newLocker(b).RW("doc")
		for _, v := range []string{"9007199254740991", "9007199254740993", "9223372036854775000"} {
			b.Flush()
			require.NoError(t, b.Client.Set(ctx, keyOf(b, "doc", "rw:fence"), v, 0).Err())
			var last int64
			for i := range 3 {
				before := b.Snapshot()
				h, err := rw.TryLock(ctx, time.Minute)
				if err != nil {
					assert.ErrorIs(t, err, ria.ErrCorrupt, "%s: acquisition %d", v, i)
					assert.Equal(t, before, b.Snapshot(), "%s: acquisition %d: nothing changed", v, i)
					break
				}
				assert.Greater(t, h.Fence(), last, "%s: acquisition %d: a new fence", v, i)
				last = h.Fence()
				require.NoError(t, h.Release(ctx))
			}
		}
	})
}
