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

// An article hash whose counters or post time are not numbers is a
// *ria.KeyError naming the article key and field (ErrCorrupt) on the reads
// too: Get, Page and GroupPage.
func TestSite_corruptArticleRead(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		id := post(t, s, "alice", "one")
		require.NoError(t, s.UpdateGroups(ctx, id, []string{"g"}, nil))
		for _, field := range []string{"votes", "downvotes", "time"} {
			orig := b.Client.HGet(ctx, key(b, "article:"+id), field).Val()
			require.NoError(t, b.Client.HSet(ctx, key(b, "article:"+id), field, "x1").Err())
			for name, call := range map[string]func() error{
				"Get":       func() error { _, err := s.Get(ctx, id); return err },
				"Page":      func() error { _, err := s.Page(ctx, voting.ByScore, 1, 10); return err },
				"GroupPage": func() error { _, err := s.GroupPage(ctx, "g", voting.ByTime, 1, 10); return err },
			} {
				err := call()
				var kerr *ria.KeyError
				require.ErrorAs(t, err, &kerr, "%s, %s", name, field)
				assert.ErrorIs(t, err, ria.ErrCorrupt)
				assert.Equal(t, key(b, "article:"+id), kerr.Key)
				assert.Equal(t, "voting article", kerr.Role)
				assert.Contains(t, kerr.Got, field+` "x1"`)
			}
			require.NoError(t, b.Client.HSet(ctx, key(b, "article:"+id), field, orig).Err())
		}
	})
}
