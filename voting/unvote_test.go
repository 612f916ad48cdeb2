package voting_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/voting"
)

// state is what a vote changes: the article's counters, its exact score in
// the score index, and the voters' sets.
type state struct {
	votes, downvotes int64
	score            float64
	voted, downvoted []string
}

func stateOf(t *testing.T, b *redistest.Backend, s *voting.Site, id string) state {
	t.Helper()
	ctx := t.Context()
	a := get(t, s, id)
	score, err := b.Client.ZScore(ctx, key(b, "score"), id).Result()
	require.NoError(t, err)
	assert.Equal(t, a.Score, score)
	return state{
		votes: a.Votes, downvotes: a.Downvotes, score: score,
		voted:     sorted(b.Client.SMembers(ctx, key(b, "voted:"+id)).Val()),
		downvoted: sorted(b.Client.SMembers(ctx, key(b, "downvoted:"+id)).Val()),
	}
}

func voteOf(t *testing.T, s *voting.Site, id, user string) voting.Direction {
	t.Helper()
	d, err := s.VoteOf(t.Context(), id, user)
	require.NoError(t, err)
	return d
}

// A vote then its withdrawal leaves the article exactly as it was: the
// counters, the score (to the bit) and the voters' sets; up and down, for
// a new voter, a voter who switched sides, and the poster.
func TestSite_Unvote_restores(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		id := post(t, s, "alice", "t")
		for _, u := range []string{"x1", "x2"} { // some standing votes around
			_, err := s.Vote(ctx, id, u, voting.Up)
			require.NoError(t, err)
		}
		_, err := s.Vote(ctx, id, "x3", voting.Down)
		require.NoError(t, err)
		unvote := func(user string) bool {
			t.Helper()
			ok, err := s.Unvote(ctx, id, user)
			require.NoError(t, err)
			return ok
		}

		for _, d := range []voting.Direction{voting.Up, voting.Down} {
			before := stateOf(t, b, s, id)
			assert.Equal(t, voting.Direction(0), voteOf(t, s, id, "bob"), "no vote yet")
			counted, err := s.Vote(ctx, id, "bob", d)
			require.NoError(t, err)
			require.True(t, counted)
			assert.Equal(t, d, voteOf(t, s, id, "bob"), "bob voted %v", d)
			voted := stateOf(t, b, s, id)
			assert.Equal(t, before.votes-before.downvotes+int64(d), voted.votes-voted.downvotes, "the vote counted")

			assert.True(t, unvote("bob"), "withdrawn %v", d)
			assert.Equal(t, before, stateOf(t, b, s, id), "withdrawing the %v-vote restores everything", d)
			assert.Equal(t, voting.Direction(0), voteOf(t, s, id, "bob"), "no vote after the withdrawal")
			a := get(t, s, id)
			wantScore(t, b, a, a.Votes-a.Downvotes)

			assert.False(t, unvote("bob"), "nothing left to withdraw")
			assert.Equal(t, before, stateOf(t, b, s, id), "a second withdrawal changes nothing")
		}

		// A voter who switched sides withdraws the side they hold.
		before := stateOf(t, b, s, id)
		for _, d := range []voting.Direction{voting.Up, voting.Down} {
			_, err := s.Vote(ctx, id, "carol", d)
			require.NoError(t, err)
		}
		assert.Equal(t, voting.Down, voteOf(t, s, id, "carol"))
		assert.True(t, unvote("carol"))
		assert.Equal(t, before, stateOf(t, b, s, id), "switched, then withdrawn")

		// The poster's own vote can go, and come back.
		assert.Equal(t, voting.Up, voteOf(t, s, id, "alice"), "the poster's own up-vote")
		assert.True(t, unvote("alice"))
		after := stateOf(t, b, s, id)
		assert.Equal(t, before.votes-1, after.votes)
		assert.Equal(t, before.score-voting.VoteScore, after.score)
		assert.Equal(t, voting.Direction(0), voteOf(t, s, id, "alice"))
		counted, err := s.Vote(ctx, id, "alice", voting.Up)
		require.NoError(t, err)
		assert.True(t, counted, "a withdrawn vote can be cast again")
		assert.Equal(t, before, stateOf(t, b, s, id), "the poster voted again")

		// Down to no votes at all: the score is the post time, and the
		// emptied sets are gone.
		for _, u := range []string{"alice", "x1", "x2", "x3"} {
			assert.True(t, unvote(u), u)
		}
		a := get(t, s, id)
		assert.Equal(t, int64(0), a.Votes)
		assert.Equal(t, int64(0), a.Downvotes)
		assert.Equal(t, unix(a.Posted), stateOf(t, b, s, id).score, "no votes: the post time exactly")
		assert.Zero(t, b.Client.Exists(ctx, key(b, "voted:"+id), key(b, "downvoted:"+id)).Val())
		assert.False(t, unvote("alice"))
		assert.Equal(t, voting.Direction(0), voteOf(t, s, id, "alice"))

		// Other articles are untouched by it all.
		other := post(t, s, "dave", "u")
		o := stateOf(t, b, s, other)
		assert.False(t, unvote("dave"), "dave's vote is on the other article")
		ok, err := s.Unvote(ctx, other, "bob")
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, o, stateOf(t, b, s, other))
		assert.Equal(t, voting.Up, voteOf(t, s, other, "dave"))
	})
}

// Withdrawing, like voting, closes a week after posting, by the server's
// clock; so does reading a vote (the voters' sets expire then). Refusals
// write nothing.
func TestSite_Unvote_closed(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		id := post(t, s, "alice", "t")
		_, err := s.Vote(ctx, id, "bob", voting.Down)
		require.NoError(t, err)
		a := get(t, s, id)

		backdate(t, b, a, voting.VotingWindow-time.Minute)
		assert.Equal(t, voting.Down, voteOf(t, s, id, "bob"), "a minute left")
		ok, err := s.Unvote(ctx, id, "bob")
		require.NoError(t, err, "a minute left")
		assert.True(t, ok)
		_, err = s.Vote(ctx, id, "bob", voting.Down)
		require.NoError(t, err)

		backdate(t, b, a, voting.VotingWindow+time.Second)
		before := b.Snapshot()
		for _, user := range []string{"alice", "bob", "carol"} {
			ok, err := s.Unvote(ctx, id, user)
			assert.ErrorIs(t, err, voting.ErrVotingClosed, user)
			assert.ErrorContains(t, err, `voting: unvote on article "`+id+`"`)
			assert.False(t, ok)
			d, err := s.VoteOf(ctx, id, user)
			assert.ErrorIs(t, err, voting.ErrVotingClosed, user)
			assert.ErrorContains(t, err, `voting: vote of "`+user+`" on article "`+id+`"`)
			assert.Zero(t, d)
		}
		assert.Equal(t, before, b.Snapshot(), "closed withdrawals wrote nothing")

		if b.Mini == nil {
			return // a real server's clock cannot be moved from here
		}
		// Let the server's clock run to the end of the window.
		id = post(t, s, "alice", "u")
		_, err = s.Vote(ctx, id, "bob", voting.Up)
		require.NoError(t, err)
		b.FastForward(voting.VotingWindow - time.Second)
		ok, err = s.Unvote(ctx, id, "bob")
		require.NoError(t, err, "a second left")
		assert.True(t, ok)
		b.FastForward(time.Second)
		_, err = s.Unvote(ctx, id, "alice")
		assert.ErrorIs(t, err, voting.ErrVotingClosed, "closed exactly a week after posting")
		_, err = s.VoteOf(ctx, id, "alice")
		assert.ErrorIs(t, err, voting.ErrVotingClosed)
		a = get(t, s, id)
		assert.Equal(t, int64(1), a.Votes, "the poster's vote stays")
		assert.Equal(t, int64(0), a.Downvotes)
		wantScore(t, b, a, 1)
	})
}
