package social_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// scriptCall matches a script call whose first key is key0 and whose first
// argument (after numkeys keys) is arg0.
func scriptCall(key0, arg0 string) func(cmd []string) bool {
	return func(cmd []string) bool {
		if !redistest.Scripts(cmd) || len(cmd) < 4 || cmd[3] != key0 {
			return false
		}
		var nk int
		for _, c := range cmd[2] {
			if c < '0' || c > '9' {
				return false
			}
			nk = nk*10 + int(c-'0')
		}
		return len(cmd) > 3+nk && cmd[3+nk] == arg0
	}
}

// inZSet reports whether member is in the ZSET key.
func inZSet(t *testing.T, b *redistest.Backend, key, member string) bool {
	t.Helper()
	_, err := b.Client.ZScore(t.Context(), key, member).Result()
	if errors.Is(err, redis.Nil) {
		return false
	}
	require.NoError(t, err)
	return true
}

// Follow's third step (followed.lua, ann's side: add bob to ann's
// followers) runs and loses its reply. When go-redis's re-send reaches the
// proxy, and before it is forwarded, another process sees bob among ann's
// followers and unfollows, which answers true. followed.lua is a
// once-script with its record in ann's slot: the re-send is answered from
// the record and writes nothing, so Follow answers true (its own outcome)
// and the later, acknowledged Unfollow stays done on both sides: bob is in
// neither ann's followers nor bob's following, both counts are 0, and
// ann's next post is not fed to bob.
func TestFollow_resendAfterObservedUnfollow(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		n, _ := newNet(t, b, rdb)
		other, _ := newNet(t, b, b.Client) // another process, no faults
		mustUser(t, other, "ann")
		mustUser(t, other, "bob")
		mustFollow(t, n, "bob", "ann") // the scripts cached
		_, err := n.Unfollow(ctx, "bob", "ann")
		require.NoError(t, err)

		// followed.lua (unfollowed.lua's first argument is bob too, but
		// Follow does not send it).
		followed := scriptCall(key(b, "ann", "user"), "bob")
		var (
			saw      bool
			unOK     bool
			otherErr error
		)
		// The first run loses its reply; as the re-send reaches the proxy,
		// the other process runs first.
		f.LoseReplyThen(followed, func() {
			_, zerr := b.Client.ZScore(ctx, key(b, "ann", "followers"), "bob").Result()
			saw = zerr == nil // no require here: the proxy's goroutine
			unOK, otherErr = other.Unfollow(ctx, "bob", "ann")
		})
		ok, err := n.Follow(ctx, "bob", "ann")
		f.Disarm()
		require.EqualValues(t, 1, f.Lost(), "the third step's reply was lost")
		require.True(t, saw, "the first run of the third step ran: the other process saw bob among ann's followers")
		require.NoError(t, otherErr)
		require.True(t, unOK, "the other process's Unfollow answered true")

		require.NoError(t, err, "the re-send is answered from the record")
		assert.True(t, ok, "Follow answers its own outcome: bob did not follow ann")
		assert.False(t, inZSet(t, b, key(b, "ann", "followers"), "bob"),
			"bob is not back among ann's followers after the later, acknowledged Unfollow")
		assert.False(t, inZSet(t, b, key(b, "bob", "following"), "ann"), "bob's following does not hold ann")
		assert.EqualValues(t, 0, user(t, other, "ann").Followers)
		assert.EqualValues(t, 0, user(t, other, "bob").Following)
		// ann's next post is not fed to bob, who unfollowed her (on one
		// server the feed reads the followed side only).
		st := mustPost(t, other, "ann", "after the unfollow")
		home := page(t, other, "bob", social.Home, 10)
		assert.False(t, slices.Contains(home, st.ID), "ann's post %s was fed to bob, who unfollowed her: %v", st.ID, home)
	})
}

// The same for lists: AddToList's third step (listed.lua, the member's
// side: add bob/friends to ann's listed) loses its reply, and before the
// re-send is forwarded another process sees the list in ann's side and
// removes ann from it (answering true). listed.lua is a once-script with
// its record in ann's slot: the re-send writes nothing, AddToList answers
// true, and neither side holds the other after the acknowledged removal.
func TestAddToList_resendAfterObservedRemove(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		n, _ := newNet(t, b, rdb)
		other, _ := newNet(t, b, b.Client) // another process, no faults
		mustUser(t, other, "ann")
		mustUser(t, other, "bob")
		require.NoError(t, other.CreateList(ctx, "bob", "friends"))
		_, err := n.AddToList(ctx, "bob", "friends", "ann") // the scripts cached
		require.NoError(t, err)
		_, err = n.RemoveFromList(ctx, "bob", "friends", "ann")
		require.NoError(t, err)

		listed := scriptCall(key(b, "ann", "user"), "bob/friends") // listed.lua
		var (
			saw      bool
			rmOK     bool
			otherErr error
		)
		// The re-send: kept, other process first.
		f.LoseReplyThen(listed, func() {
			_, zerr := b.Client.ZScore(ctx, key(b, "ann", "listed"), "bob/friends").Result()
			saw = zerr == nil // no require here: the proxy's goroutine
			rmOK, otherErr = other.RemoveFromList(ctx, "bob", "friends", "ann")
		})
		ok, err := n.AddToList(ctx, "bob", "friends", "ann")
		f.Disarm()
		require.EqualValues(t, 1, f.Lost(), "the third step's reply was lost")
		require.True(t, saw, "the first run ran: the other process saw the list in ann's side")
		require.NoError(t, otherErr)
		require.True(t, rmOK, "the other process's RemoveFromList answered true")

		require.NoError(t, err, "the re-send is answered from the record")
		assert.True(t, ok, "AddToList answers its own outcome: ann was not in the list")
		assert.False(t, inZSet(t, b, key(b, "ann", "listed"), "bob/friends"),
			"ann's side holds the list again after the later, acknowledged removal")
		assert.False(t, inZSet(t, b, key(b, "bob", "list:friends:members"), "ann"), "the list holds ann")
	})
}
