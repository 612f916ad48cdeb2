package social_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// The book's chapter 8 scenarios: users, statuses, follows and counts.
func TestNetwork_users(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client)
		alice := mustUser(t, n, "Alice")
		assert.Equal(t, "alice", alice)
		before := b.Snapshot()
		for _, login := range []string{"alice", "ALICE", "aLiCe"} {
			_, err := n.CreateUser(ctx, login, "x")
			assert.ErrorIs(t, err, social.ErrLoginTaken, login)
		}
		assert.Equal(t, before, b.Snapshot(), "a refused login wrote something")
		u := user(t, n, "alice")
		assert.Equal(t, "Alice", u.Login)
		assert.Equal(t, "Alice name", u.Name)
		assert.False(t, u.Signup.IsZero())

		mustPost(t, n, alice, "hello")
		assert.EqualValues(t, 1, user(t, n, alice).Posts, "a first status makes the post count 1")

		bob := mustUser(t, n, "bob")
		mustFollow(t, n, alice, bob)
		a, bb := user(t, n, alice), user(t, n, bob)
		assert.EqualValues(t, 1, a.Following)
		assert.EqualValues(t, 0, a.Followers)
		assert.EqualValues(t, 1, bb.Followers)
		assert.EqualValues(t, 0, bb.Following)
		ok, err := n.Follow(ctx, alice, bob)
		require.NoError(t, err)
		assert.False(t, ok, "following twice")
		assert.EqualValues(t, 1, user(t, n, bob).Followers)

		before = b.Snapshot()
		ok, err = n.Unfollow(ctx, bob, alice)
		require.NoError(t, err)
		assert.False(t, ok, "bob does not follow alice")
		assert.Equal(t, before, b.Snapshot(), "unfollowing a user one does not follow changes nothing")

		ok, err = n.Unfollow(ctx, alice, bob)
		require.NoError(t, err)
		assert.True(t, ok)
		for _, uid := range []string{alice, bob} {
			u := user(t, n, uid)
			assert.Zero(t, u.Followers, uid)
			assert.Zero(t, u.Following, uid)
		}
		_, err = n.User(ctx, "nobody")
		assert.ErrorIs(t, err, social.ErrNoUser)
	})
}

// A post reaches the first batch of followers at once and the rest through
// the deferred pass (the book: eight more followers, a first pass of 5).
func TestNetwork_Post_fanout(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		n, g := newNet(t, b, b.Client, social.WithFanoutBatch(5))
		author := mustUser(t, n, "author")
		var followers []string
		for i := range 9 {
			f := mustUser(t, n, fmt.Sprintf("f%d", i))
			mustFollow(t, n, f, author)
			followers = append(followers, f)
		}
		st := mustPost(t, n, author, "one")
		for i, f := range followers {
			if i < 5 {
				assert.Equal(t, []string{st.ID}, page(t, n, f, social.Home, 10), "follower %d fed before Post returned", i)
			} else {
				assert.Empty(t, page(t, n, f, social.Home, 10), "follower %d waits for the deferred pass", i)
			}
		}
		drain(t, n, g)
		for _, f := range followers {
			assert.Equal(t, []string{st.ID}, page(t, n, f, social.Home, 10), f)
		}
		assert.Equal(t, []string{st.ID}, page(t, n, author, social.Profile, 10))
		assert.Empty(t, page(t, n, author, social.Home, 10), "the author's own home")
	})
}

// WithFirstPass sets how many followers Post feeds itself, apart from the
// deferred batches: 0 feeds none before Post returns, 2 the first two; the
// tasks (batches of 3) feed the rest.
func TestNetwork_Post_firstPass(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, first := range []int{0, 2} {
			b.Flush()
			n, g := newNet(t, b, b.Client, social.WithFanoutBatch(3), social.WithFirstPass(first))
			author := mustUser(t, n, "author")
			var followers []string
			for i := range 7 {
				f := mustUser(t, n, fmt.Sprintf("f%d", i))
				mustFollow(t, n, f, author)
				followers = append(followers, f)
			}
			st := mustPost(t, n, author, "one")
			for i, f := range followers {
				if i < first {
					assert.Equal(t, []string{st.ID}, page(t, n, f, social.Home, 10), "first %d: follower %d fed before Post returned", first, i)
				} else {
					assert.Empty(t, page(t, n, f, social.Home, 10), "first %d: follower %d waits for the deferred pass", first, i)
				}
			}
			drain(t, n, g)
			for _, f := range followers {
				assert.Equal(t, []string{st.ID}, page(t, n, f, social.Home, 10), "first %d: %s", first, f)
			}
		}
	})
}

// The book's timeline scenario with a home timeline of 5: following two
// users who post 10 times each, unfollowing one, refilling, deleting.
func TestNetwork_timelines(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithTimelineCap(5))
		u, two, three := mustUser(t, n, "one"), mustUser(t, n, "two"), mustUser(t, n, "three")
		mustFollow(t, n, u, two)
		mustFollow(t, n, u, three)
		for i := range 10 {
			mustPost(t, n, two, fmt.Sprint("two ", i))
			mustPost(t, n, three, fmt.Sprint("three ", i))
		}
		drain(t, n, g)
		home := page(t, n, u, social.Home, 10)
		assert.Len(t, home, 5)
		assert.Len(t, page(t, n, two, social.Profile, 10), 5, "profiles are capped too")
		assert.EqualValues(t, 10, user(t, n, two).Posts)

		_, err := n.Unfollow(ctx, u, two)
		require.NoError(t, err)
		home = page(t, n, u, social.Home, 10)
		assert.Less(t, len(home), 5, "fewer after unfollowing")
		for _, id := range home {
			assert.True(t, strings.HasPrefix(id, three+":"), id)
		}
		size, err := n.Refill(ctx, u)
		require.NoError(t, err)
		assert.EqualValues(t, 5, size)
		home = page(t, n, u, social.Home, 10)
		assert.Len(t, home, 5)
		for _, id := range home {
			assert.True(t, strings.HasPrefix(id, three+":"), "after the refill, all from three: %s", id)
		}

		require.NoError(t, n.Delete(ctx, three, home[2]))
		visible := page(t, n, u, social.Home, 10)
		assert.Len(t, visible, 4, "deleting leaves 4 visible at once")
		assert.NotContains(t, visible, home[2])
		drain(t, n, g)
		ids, err := b.Client.ZRange(ctx, key(b, u, "home"), 0, -1).Result()
		require.NoError(t, err)
		assert.Len(t, ids, 4, "4 in the timeline after the clean")
		assert.NotContains(t, ids, home[2])
		assert.EqualValues(t, 9, user(t, n, three).Posts)
		assert.ErrorIs(t, n.Delete(ctx, three, home[2]), social.ErrNoStatus)
		assert.ErrorIs(t, n.Delete(ctx, two, home[1]), social.ErrNoStatus, "not two's status")
	})
}

// Bad input: a clear error, nothing written.
func TestNetwork_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client)
		alice := mustUser(t, n, "alice")
		mustPost(t, n, alice, "x")
		before := b.Snapshot()
		long := strings.Repeat("é", social.MaxStatusLen+1)
		for name, err := range map[string]error{
			"empty login":      second(n.CreateUser(ctx, "", "x")),
			"brace login":      second(n.CreateUser(ctx, "a{b}", "x")),
			"long login":       second(n.CreateUser(ctx, strings.Repeat("a", social.MaxLoginLen+1), "x")),
			"bad name":         second(n.CreateUser(ctx, "bob", "\xff")),
			"empty status":     second(n.Post(ctx, alice, "  ")),
			"long status":      second(n.Post(ctx, alice, long)),
			"not UTF-8":        second(n.Post(ctx, alice, "\xff")),
			"unknown poster":   second(n.Post(ctx, "nobody", "x")),
			"follow self":      second(n.Follow(ctx, alice, "ALICE")),
			"follow unknown":   second(n.Follow(ctx, alice, "nobody")),
			"unknown follower": second(n.Follow(ctx, "nobody", alice)),
			"unfollow self":    second(n.Unfollow(ctx, alice, alice)),
			"bad status ID":    n.Delete(ctx, alice, "alice:x"),
			"other's status":   n.Delete(ctx, alice, "bob:1"),
			"page count":       third(n.Page(ctx, alice, social.Home, 0, 0)),
			"page offset":      third(n.Page(ctx, alice, social.Home, -1, 10)),
			"timeline":         third(n.Page(ctx, alice, social.Timeline(7), 0, 10)),
		} {
			assert.Error(t, err, name)
			t.Logf("%s: %v", name, err)
		}
		_, err := n.Post(ctx, alice, strings.Repeat("é", social.MaxStatusLen))
		require.NoError(t, err, "a status of exactly MaxStatusLen characters")
		_, err = n.Follow(ctx, alice, "nobody")
		assert.ErrorIs(t, err, social.ErrNoUser)
		_, err = n.Follow(ctx, alice, alice)
		assert.ErrorIs(t, err, social.ErrSelf)
		_, err = n.Post(ctx, "nobody", "x")
		assert.ErrorIs(t, err, social.ErrNoUser)
		// Only the last good post changed something.
		after := b.Snapshot()
		assert.Len(t, after, len(before)+1+onceKeys(after)-onceKeys(before))

		_, err = social.New(b.Client, nil)
		assert.Error(t, err)
		for _, o := range []social.Option{social.WithPrefix("a{"), social.WithTimelineCap(0), social.WithTimelineCap(social.MaxTimelineCap + 1),
			social.WithFanoutBatch(0), social.WithFirstPass(-1), social.WithFirstPass(social.MaxFanoutBatch + 1), social.WithQueue(""), social.WithInactiveAfter(-time.Second),
			social.WithInactiveAfter(time.Microsecond), social.WithInactiveAfter(social.MaxInactiveAfter + time.Hour),
			social.WithTombstoneTTL(0), social.WithTombstoneTTL(social.MinTombstoneTTL - time.Millisecond), social.WithTombstoneTTL(social.MaxTombstoneTTL + time.Hour)} {
			_, g := newNet(t, b, b.Client)
			_, err := social.New(b.Client, g, o)
			assert.Error(t, err)
		}
	})
}

func onceKeys(s map[string]string) int {
	k := 0
	for key := range s {
		if strings.Contains(key, ":once:") {
			k++
		}
	}
	return k
}

func second[T any](_ T, err error) error        { return err }
func third[T, U any](_ T, _ U, err error) error { return err }

var _ = errors.Is
