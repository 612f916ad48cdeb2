package social_test

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// A page skips statuses deleted but not yet cleaned from the timeline and
// entries that are not status IDs of this package, tops itself up from
// further down at most twice, returns the offset of the next page, and
// returns the statuses whole (on one server page.lua reads them; on a
// Cluster the Go side does).
func TestNetwork_pageTopUps(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client) // no worker: deleted statuses stay in alice's home
		alice, bob := mustUser(t, n, "alice"), mustUser(t, n, "bob")
		mustFollow(t, n, alice, bob)
		posted := map[string]social.Status{}
		for i := range 12 {
			var opts []social.PostOption
			if i%3 == 0 {
				opts = append(opts, social.At(48.85+float64(i), 2.35))
			}
			st, err := n.Post(ctx, bob, fmt.Sprint("status ", i), opts...)
			require.NoError(t, err)
			posted[st.ID] = st
		}
		home := key(b, alice, "home")
		raw, err := b.Client.ZRevRange(ctx, home, 0, -1).Result() // newest first
		require.NoError(t, err)
		require.Len(t, raw, 12)
		for _, i := range []int{0, 1, 2, 4} {
			require.NoError(t, n.Delete(ctx, bob, raw[i]))
		}
		check := func(offset, count int, want []string, wantNext int) {
			t.Helper()
			got, next, err := n.Page(ctx, alice, social.Home, offset, count)
			require.NoError(t, err)
			ids := make([]string, len(got))
			for i, st := range got {
				ids[i] = st.ID
				assert.Equal(t, posted[st.ID], st, "status %s", st.ID)
			}
			assert.Equal(t, want, ids, "page (%d, %d)", offset, count)
			assert.Equal(t, wantNext, next, "next of page (%d, %d)", offset, count)
		}
		// raw[0..2] dead: topped up with raw[3], raw[4] (dead), raw[5], then raw[6].
		check(0, 3, []string{raw[3], raw[5], raw[6]}, 7)
		check(10, 5, []string{raw[10], raw[11]}, 12) // the end of the timeline

		// Entries newer than every status that are not status IDs (or not
		// of a status that exists) are skipped like deleted statuses.
		top, err := b.Client.ZScore(ctx, home, raw[0]).Result()
		require.NoError(t, err)
		for i, junk := range []string{"junk", "Bob:1", "bob:01", "nobody:5"} {
			require.NoError(t, b.Client.ZAdd(ctx, home, redis.Z{Score: top + float64(10-i), Member: junk}).Err())
		}
		// Three reads of 2: 4 junk entries, then raw[0], raw[1] (dead).
		check(0, 2, []string{}, 6)
		check(6, 2, []string{raw[3], raw[5]}, 10)
		check(0, 10, []string{raw[3], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11]}, 16)
	})
}

// Status reads one status; Follows reads the follower's side of a follow.
func TestNetwork_statusAndFollows(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client)
		alice, bob := mustUser(t, n, "alice"), mustUser(t, n, "Bob")
		st, err := n.Post(ctx, bob, "hello", social.At(1.5, -2.25))
		require.NoError(t, err)
		got, err := n.Status(ctx, st.ID)
		require.NoError(t, err)
		assert.Equal(t, st, got)
		assert.Equal(t, "Bob", got.Login)
		require.NoError(t, n.Delete(ctx, bob, st.ID))
		for _, gone := range []string{st.ID, "bob:99", "nobody:1"} {
			_, err = n.Status(ctx, gone)
			assert.ErrorIs(t, err, social.ErrNoStatus, gone)
		}
		for _, bad := range []string{"", "bob", "bob:", "bob:0", "bob:01", "Bob:1", "bob:x", "a b:1"} {
			_, err = n.Status(ctx, bad)
			require.Error(t, err, "%q", bad)
			assert.NotErrorIs(t, err, social.ErrNoStatus, "%q", bad)
		}

		follows := func(uid, other string) bool {
			t.Helper()
			ok, err := n.Follows(ctx, uid, other)
			require.NoError(t, err)
			return ok
		}
		for _, p := range [][2]string{{alice, bob}, {bob, alice}, {alice, alice}, {alice, "nobody"}, {"nobody", alice}} {
			assert.False(t, follows(p[0], p[1]), "%s follows %s", p[0], p[1])
		}
		mustFollow(t, n, alice, bob)
		assert.True(t, follows(alice, bob))
		assert.True(t, follows("ALICE", "BOB"), "IDs in any case")
		assert.False(t, follows(bob, alice))
		ok, err := n.Unfollow(ctx, alice, bob)
		require.NoError(t, err)
		require.True(t, ok)
		assert.False(t, follows(alice, bob))
		for _, p := range [][2]string{{"", bob}, {alice, ""}, {"a b", bob}, {alice, "é"}} {
			_, err := n.Follows(ctx, p[0], p[1])
			assert.Error(t, err, "%q follows %q", p[0], p[1])
		}
	})
}
