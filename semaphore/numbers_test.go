package semaphore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
)

// A grant list value that no release writes (it pushes a seq in decimal,
// or an empty value to wake) is not taken for a handed seq by a holder's re-run:
// Lua's tonumber read 'inf' (a seq of INT64_MIN), '0x10' (16, below the
// seqs minted already), '1e3'. The re-run mints a new seq, as after an empty value.
func TestPermit_reRun_malformedGrant(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		for _, v := range []string{"inf", "-inf", "nan", "0x10", "1e3", " 12", "1.5", "007", "99999999999999999999"} {
			b.Flush()
			p := s.NewPermitForTest("p")
			ok, err := p.AttemptForTest(ctx, 0)
			require.NoError(t, err)
			require.True(t, ok)
			first := p.Seq()
			require.NoError(t, b.Client.RPush(ctx, key(b, "sem", "grant:p"), v).Err())
			ok, err = p.AttemptForTest(ctx, 0)
			require.NoError(t, err, "%q", v)
			assert.True(t, ok, "%q", v)
			assert.Equal(t, first+1, p.Seq(), "%q: a new seq", v)
			assert.Empty(t, b.Keys(key(b, "sem", "grant:p")), "%q: the grant list is cleared", v)
		}
	})
}

// A seq counter beyond 2^53 (an integer INCR takes, but that Lua's numbers
// do not hold exactly) made two permits get the same seq. Such a counter
// is at its maximum: the acquisition is refused, the counter left as it
// was.
func TestSemaphore_seqBeyond2p53(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSem(t, b, b.Client, "sem", 1, time.Minute)
		for _, v := range []string{"9007199254740991", "9007199254740993", "9223372036854775000"} {
			b.Flush()
			require.NoError(t, b.Client.Set(ctx, key(b, "sem", "seq"), v, 0).Err())
			var last int64
			for i := range 3 {
				before := b.Snapshot()
				p, err := s.TryAcquire(ctx)
				if err != nil {
					assert.ErrorIs(t, err, ria.ErrCorrupt, "%s: acquisition %d", v, i)
					assert.Equal(t, before, b.Snapshot(), "%s: acquisition %d: nothing changed", v, i)
					break
				}
				assert.Greater(t, p.Seq(), last, "%s: acquisition %d: a new seq", v, i)
				last = p.Seq()
				require.NoError(t, p.Release(ctx))
			}
		}
	})
}
