package voting_test

import (
	"math"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/voting"
)

// A post time in the time index that is no time Post writes (infinite,
// or so far ahead that its window's end in ms is beyond 2^53) is refused
// as corrupt by Vote, Unvote and VoteOf, which change nothing. Read as a
// double, voting stayed open and the voters' set was given the expiry
// INT64_MIN ms: deleted at once, after the vote was counted, so the same
// user could vote again and again. (A post time in the past, even
// negative or -inf, only closes voting.)
func TestSite_corruptPostTime(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		for _, posted := range []float64{1e20, math.Inf(1)} {
			for name, call := range map[string]func() error{
				"Vote":   func() error { _, err := s.Vote(ctx, "1", "carol", voting.Up); return err },
				"Unvote": func() error { _, err := s.Unvote(ctx, "1", "bob"); return err },
				"VoteOf": func() error { _, err := s.VoteOf(ctx, "1", "bob"); return err },
			} {
				b.Flush()
				post(t, s, "alice", "one") // article 1
				_, err := s.Vote(ctx, "1", "bob", voting.Down)
				require.NoError(t, err)
				require.NoError(t, b.Client.ZAdd(ctx, key(b, "time"), redis.Z{Score: posted, Member: "1"}).Err())
				before := b.Snapshot()
				assert.ErrorIs(t, call(), ria.ErrCorrupt, "%s %v", name, posted)
				assert.Equal(t, before, b.Snapshot(), "%s %v: nothing changed", name, posted)
			}
		}
	})
}
