package config_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/config"
	"github.com/ria-go/ria/internal/redistest"
)

// Set's first run stores Rate 1 and loses its reply; before go-redis
// re-sends it, another process reads Rate 1 (the first run's effect) and
// sets Rate 2 (acknowledged). The re-send is answered from the first run's
// reply record (set.lua is a once-script) and writes nothing, so the newer,
// acknowledged Rate 2 stays; Set may only report success or an unknown
// outcome, and since the lost reply was recorded, it reports success.
func TestSet_resendAfterNewerSet(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb, config.WithMaxAge(0))
		other := newStore(t, b, b.Client, config.WithMaxAge(0))          // another process, no faults
		require.NoError(t, s.Set(ctx, "limits", "api", limits{Rate: 0})) // the script cached

		var (
			seen              limits
			seenErr, otherErr error
		)
		f.LoseReplyThen(redistest.Scripts, func() {
			seenErr = other.Get(ctx, "limits", "api", &seen)
			otherErr = other.Set(ctx, "limits", "api", limits{Rate: 2})
		})
		err := s.Set(ctx, "limits", "api", limits{Rate: 1})
		f.Disarm()
		require.EqualValues(t, 1, f.Lost(), "the first attempt's reply was lost")
		require.NoError(t, seenErr)
		require.NoError(t, otherErr)
		require.Equal(t, 1, seen.Rate, "the first attempt ran: the other process saw Rate 1")

		var got limits
		require.NoError(t, other.Get(ctx, "limits", "api", &got))
		assert.True(t, errors.Is(err, ria.ErrOutcomeUnknown) || got.Rate == 2,
			"Set answered %v, and the value is Rate %d: the re-send overwrote the other process's later, acknowledged Set", err, got.Rate)
		// The re-send got the recorded reply: Set succeeds, and the newer
		// value is untouched.
		assert.NoError(t, err, "the re-send is answered from the first run's record")
		assert.Equal(t, 2, got.Rate, "the other process's later Set stays")
	})
}

// Delete's first run deletes the value and loses its reply; before the
// re-send, another process sees it gone and sets a new value
// (acknowledged). The re-send is answered from the first run's reply record
// (del.lua is a once-script) and deletes nothing, so the newer,
// acknowledged value stays; Delete may only report success or an unknown
// outcome, and since the lost reply was recorded, it reports success.
func TestDelete_resendAfterNewerSet(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newStore(t, b, rdb, config.WithMaxAge(0))
		other := newStore(t, b, b.Client, config.WithMaxAge(0))
		require.NoError(t, s.Delete(ctx, "limits", "api")) // the script cached
		require.NoError(t, s.Set(ctx, "limits", "api", limits{Rate: 1}))

		var seenErr, otherErr error
		f.LoseReplyThen(redistest.Scripts, func() {
			var l limits
			seenErr = other.Get(ctx, "limits", "api", &l)
			otherErr = other.Set(ctx, "limits", "api", limits{Rate: 2})
		})
		err := s.Delete(ctx, "limits", "api")
		f.Disarm()
		require.EqualValues(t, 1, f.Lost(), "the first attempt's reply was lost")
		require.ErrorIs(t, seenErr, config.ErrNotFound, "the first attempt ran: the other process saw the value gone")
		require.NoError(t, otherErr)

		var got limits
		gerr := other.Get(ctx, "limits", "api", &got)
		assert.True(t, errors.Is(err, ria.ErrOutcomeUnknown) || gerr == nil && got.Rate == 2,
			"Delete answered %v, and then Get %v: the re-send deleted the other process's later, acknowledged Set", err, gerr)
		// The re-send got the recorded reply: Delete succeeds, and the newer
		// value is untouched.
		assert.NoError(t, err, "the re-send is answered from the first run's record")
		require.NoError(t, gerr, "the other process's later Set stays")
		assert.Equal(t, 2, got.Rate)
	})
}

// A value key of another type refuses Set and Delete with a *ria.KeyError
// before either script's first write: the once-scripts record no reply for
// a refusal, so nothing is written, not even a reply record.
func TestSetDelete_wrongTypeWritesNothing(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		k := s.Key("limits", "api")
		require.NoError(t, b.Client.RPush(ctx, k, "x").Err())
		for name, err := range map[string]error{
			"set":    s.Set(ctx, "limits", "api", limits{Rate: 1}),
			"delete": s.Delete(ctx, "limits", "api"),
		} {
			var kerr *ria.KeyError
			assert.True(t, errors.As(err, &kerr), "%s: %v", name, err)
		}
		assert.Equal(t, []string{k}, b.Keys(b.Prefix+"*"), "nothing written, no reply record")
		assert.Equal(t, []string{"x"}, b.Client.LRange(ctx, k, 0, -1).Val(), "the list untouched")
	})
}
