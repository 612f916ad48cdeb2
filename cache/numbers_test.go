package cache_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// A TAT that the limiter never writes (it writes a canonical integer of
// microseconds) is refused as corrupt, changing nothing: Lua's tonumber
// read '1e300' as a TAT that denied every request with a RetryAfter that
// overflowed to a negative duration, and '0x10' or ' 12' as numbers.
func TestLimiter_corruptTAT(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l := newLimiter(t, b, b.Client)
		k := b.Prefix + "{api:k}:rate"
		for _, v := range []string{"1e300", "inf", "-inf", "nan", "0x10", " 12", "12 ", "1.5", "007", "-0", "+5",
			"99999999999999999999", "9007199254740993"} {
			b.Flush()
			require.NoError(t, b.Client.Set(ctx, k, v, 0).Err())
			before := b.Snapshot()
			r, err := l.Allow(ctx, "k", cache.PerHour(5))
			assert.ErrorIs(t, err, ria.ErrCorrupt, "%q: %+v", v, r)
			var ke *ria.KeyError
			assert.True(t, errors.As(err, &ke), "%q: a key error: %v", v, err)
			assert.Equal(t, before, b.Snapshot(), "%q: nothing changed", v)
		}
	})
}

// A counter value that INCRBY refuses ('+5', '007', '-0') is corrupt to a
// batched read too, as it is to Get and Incr on Redis: the batch parsed it with
// strconv.ParseInt, which reads it as 5, 7, 0.
func TestCounter_Read_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		views, err := cache.NewCounter(b.Client, "views", nil, cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		for _, v := range []string{"+5", "007", "-0", "-007"} {
			require.NoError(t, b.Client.Set(ctx, key(b, "views", "j", "count"), v, 0).Err())
			if b.Real() { // miniredis's INCRBY reads them
				_, err := views.Get(ctx, "j")
				assert.ErrorIs(t, err, ria.ErrCorrupt, "Get %q", v)
			}
			bt := cache.NewBatch(b.Client)
			r := views.Read(bt, "j")
			assert.ErrorIs(t, bt.Exec(ctx), ria.ErrCorrupt, "Exec %q", v)
			n, ok, err := r.Value()
			assert.ErrorIs(t, err, ria.ErrCorrupt, "Read %q: %d %v", v, n, ok)
			var ke *ria.KeyError
			assert.True(t, errors.As(err, &ke), "Read %q: a key error: %v", v, err)
		}
	})
}
