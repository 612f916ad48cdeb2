package voting_test

import (
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/voting"
)

// UpdateGroups' first run adds the article to "go" and loses its reply;
// before go-redis re-sends it, another client sees the article in the group
// and removes it (an acknowledged removal). The re-send must change nothing
// more (it added the article back when the script was only naturally
// idempotent): the call succeeds and the article stays out.
func TestSite_UpdateGroups_resendAfterLaterRemoval(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newSite(t, b, rdb)
		other := newSite(t, b, b.Client) // another process, no faults
		id := post(t, other, "alice", "t")
		require.NoError(t, s.UpdateGroups(ctx, id, []string{"warm"}, nil)) // the script cached

		var (
			sawMember bool
			otherErr  error
		)
		// The first attempt runs, its reply is lost; the re-send reaches the
		// proxy: before it goes on to the server, the other client removes
		// the article from the group.
		f.LoseReplyThen(redistest.Scripts, func() {
			sawMember = b.Client.SIsMember(ctx, key(b, "group:go"), id).Val()
			otherErr = other.UpdateGroups(ctx, id, nil, []string{"go"})
		})
		err := s.UpdateGroups(ctx, id, []string{"go"}, nil)
		f.Disarm()
		require.EqualValues(t, 1, f.Lost(), "the first attempt's reply was lost")
		require.NoError(t, otherErr)
		require.True(t, sawMember, "the first attempt ran: the other client saw the article in the group")

		member := b.Client.SIsMember(ctx, key(b, "group:go"), id).Val()
		assert.True(t, errors.Is(err, ria.ErrOutcomeUnknown) || !member,
			"UpdateGroups answered %v, and the article is back in the group after the later acknowledged removal (member=%v)", err, member)
	})
}

// fetch (Page, GroupPage) turns a WRONGTYPE on an article's hash into a
// *ria.KeyError, except when an earlier command of its pipeline answered
// redis.Nil (an article of the time index no longer in the score index):
// pipe.Exec then reports redis.Nil first, the key-error path is skipped,
// and the raw WRONGTYPE reply escapes.
func TestSite_Page_wrongTypeArticleAfterMissingScore(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		id1 := post(t, s, "alice", "one")
		id2 := post(t, s, "alice", "two")
		// Article 2 is gone but for its time index entry (fetch skips such
		// an article); article 1's hash was overwritten by another program.
		require.NoError(t, b.Client.ZRem(ctx, key(b, "score"), id2).Err())
		require.NoError(t, b.Client.Del(ctx, key(b, "article:"+id2)).Err())
		require.NoError(t, b.Client.Set(ctx, key(b, "article:"+id1), "x", 0).Err())

		_, err := s.Page(ctx, voting.ByTime, 1, 10) // [id2, id1]
		var kerr *ria.KeyError
		assert.True(t, errors.As(err, &kerr) && errors.Is(err, ria.ErrWrongType),
			"want a *ria.KeyError matching ria.ErrWrongType, got %v", err)

		// Control: without the missing score, the same wrong type is a KeyError.
		require.NoError(t, b.Client.ZAdd(ctx, key(b, "score"), redis.Z{Score: 1, Member: id2}).Err())
		_, err = s.Page(ctx, voting.ByTime, 1, 10)
		assert.ErrorAs(t, err, &kerr, "control")
	})
}

// Get says an article whose hash is gone (its time index entry left) does
// not exist, but Vote decides existence by the time index alone: it counts
// the vote and writes a partial hash ({votes: 1}) and a score entry, after
// which Get reports a corrupt article instead of ErrNoArticle. The doc says
// an unknown article gets ErrNoArticle and nothing is written.
func TestSite_Vote_articleHashMissing(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		id := post(t, s, "alice", "one")
		require.NoError(t, b.Client.Del(ctx, key(b, "article:"+id)).Err())
		require.NoError(t, b.Client.ZRem(ctx, key(b, "score"), id).Err())
		_, err := s.Get(ctx, id)
		require.ErrorIs(t, err, voting.ErrNoArticle, "Get: no such article")

		before := b.Snapshot()
		counted, err := s.Vote(ctx, id, "bob", voting.Up)
		assert.ErrorIs(t, err, voting.ErrNoArticle, "Vote on an article Get says does not exist (counted=%v)", counted)
		assert.Equal(t, before, b.Snapshot(), "Vote wrote something")
		_, err = s.Get(ctx, id)
		assert.ErrorIs(t, err, voting.ErrNoArticle, "Get after the vote")
	})
}
