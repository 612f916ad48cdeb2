package social_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// Round trips per operation, as the package doc states them. On a
// Cluster, a pipeline costs one round trip per node it reaches (3 masters).
func TestNetwork_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithFanoutBatch(3))
		idle, _ := newNet(t, b, b.Client, social.WithFanoutBatch(3), social.WithInactiveAfter(time.Hour))
		nodes := int64(1)
		if b.Kind == redistest.Cluster {
			nodes = 3
		}
		// Warm every script on every node.
		author := mustUser(t, n, "author")
		var fs []string
		for i := range 4 {
			f := mustUser(t, n, fmt.Sprint("f", i))
			mustFollow(t, n, f, author)
			fs = append(fs, f)
		}
		for i := range 12 { // users in slots of every node
			w := mustUser(t, n, fmt.Sprint("w", i))
			st := mustPost(t, n, w, "warm")
			require.NoError(t, n.Delete(ctx, w, st.ID))
			mustFollow(t, n, w, author)
			_, err := n.Unfollow(ctx, w, author)
			require.NoError(t, err)
			_, err = n.Refill(ctx, w)
			require.NoError(t, err)
			_, _, err = n.Page(ctx, w, social.Home, 0, 10)
			require.NoError(t, err)
			_, _, err = idle.Page(ctx, w, social.Home, 0, 10)
			require.NoError(t, err)
			require.NoError(t, n.CreateList(ctx, w, "l"))
			_, err = n.AddToList(ctx, w, "l", author)
			require.NoError(t, err)
			_, err = n.RemoveFromList(ctx, w, "l", author)
			require.NoError(t, err)
			_, err = n.AddToList(ctx, w, "l", author)
			require.NoError(t, err)
			require.NoError(t, n.DeleteList(ctx, w, "l"))
		}
		st := mustPost(t, n, author, "warm")
		require.NoError(t, n.Delete(ctx, author, st.ID))
		drain(t, n, g)

		check := func(op string, exact, most int64, fn func()) {
			t.Helper()
			rt, _ := b.Count.Delta(fn)
			if nodes == 1 {
				assert.Equal(t, exact, rt, op)
			} else {
				assert.LessOrEqual(t, rt, most, op)
				assert.GreaterOrEqual(t, rt, exact, op)
			}
			t.Logf("%s: %d round trips", op, rt)
		}
		check("CreateUser", 1, 1, func() { mustUser(t, n, "new") })
		check("User", 1, 1, func() { user(t, n, "new") })
		check("Post, no followers", 2, 2, func() { mustPost(t, n, "new", "x") })
		check("Post, 4 followers, batch 3", 4, 3+nodes, func() { mustPost(t, n, author, "y") })
		check("Follow", 3, 3, func() { mustFollow(t, n, "new", author) })
		check("Unfollow", 3, 3, func() {
			ok, err := n.Unfollow(ctx, "new", author)
			require.NoError(t, err)
			require.True(t, ok)
		})
		check("Page", 1, 1+nodes, func() { require.Len(t, page(t, n, fs[1], social.Home, 10), 1) })
		check("Page, inactive users on", 1, 1+nodes, func() { require.Len(t, page(t, idle, fs[1], social.Home, 10), 1) })
		check("Status", 1, 1, func() {
			_, err := n.Status(ctx, st.ID)
			require.ErrorIs(t, err, social.ErrNoStatus)
		})
		check("Follows", 1, 1, func() {
			ok, err := n.Follows(ctx, fs[1], author)
			require.NoError(t, err)
			require.True(t, ok)
		})
		check("Followers", 1, 1, func() {
			f, err := n.Followers(ctx, author, 0, 10)
			require.NoError(t, err)
			require.Len(t, f, 4)
		})
		check("Refill", 3, 2+nodes, func() {
			_, err := n.Refill(ctx, fs[1])
			require.NoError(t, err)
		})
		st = mustPost(t, n, "new", "z")
		check("Delete, no followers", 2, 2, func() { require.NoError(t, n.Delete(ctx, "new", st.ID)) })
		st = mustPost(t, n, author, "z")
		check("Delete, followers", 3, 3, func() { require.NoError(t, n.Delete(ctx, author, st.ID)) })
		check("CreateList", 1, 1, func() { require.NoError(t, n.CreateList(ctx, "new", "l")) })
		check("AddToList", 3, 3, func() {
			ok, err := n.AddToList(ctx, "new", "l", author)
			require.NoError(t, err)
			require.True(t, ok)
		})
		check("ListPage", 1, 1+nodes, func() {
			_, _, err := n.ListPage(ctx, "new", "l", 0, 10)
			require.NoError(t, err)
		})
		check("ListMembers", 1, 1, func() {
			m, err := n.ListMembers(ctx, "new", "l", 0, 10)
			require.NoError(t, err)
			require.Equal(t, []string{author}, m)
		})
		check("RemoveFromList", 3, 3, func() {
			ok, err := n.RemoveFromList(ctx, "new", "l", author)
			require.NoError(t, err)
			require.True(t, ok)
		})
		check("DeleteList, no members", 1, 1, func() { require.NoError(t, n.DeleteList(ctx, "new", "l")) })
		require.NoError(t, n.CreateList(ctx, "new", "l"))
		_, err := n.AddToList(ctx, "new", "l", author)
		require.NoError(t, err)
		check("DeleteList, 1 member", 3, 3, func() { require.NoError(t, n.DeleteList(ctx, "new", "l")) })
		drain(t, n, g)
	})
}

// Refill's round trips, exactly as the package doc states them: 1 per 500
// followed users (at least 1) to list them, 1 per node per 500 to read
// their profiles, 1 for the script. The first listing also counts them,
// so a followed count that is an exact multiple of 500 costs no listing
// after the last full chunk.
func TestNetwork_Refill_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		nodes := int64(1)
		if b.Kind == redistest.Cluster {
			nodes = 3 // 500 followed users' profiles reach every master
		}
		n, _ := newNet(t, b, b.Client)
		for _, c := range []struct {
			following int
			want      int64
		}{
			{0, 1 + 1},
			{1, 1 + 1 + 1},
			{500, 1 + nodes + 1},
			{501, 2 + nodes + 1 + 1}, // the last chunk's one profile: one node
			{1000, 2 + 2*nodes + 1},
		} {
			u := mustUser(t, n, fmt.Sprint("u", c.following))
			zs := make([]redis.Z, c.following)
			for i := range zs {
				zs[i] = redis.Z{Score: float64(i), Member: fmt.Sprint("x", i)}
			}
			if len(zs) > 0 {
				require.NoError(t, b.Client.ZAdd(ctx, key(b, u, "following"), zs...).Err())
			}
			_, err := n.Refill(ctx, u) // caches the script
			require.NoError(t, err)
			rt, _ := b.Count.Delta(func() {
				_, err = n.Refill(ctx, u)
			})
			require.NoError(t, err)
			assert.Equal(t, c.want, rt, "Refill of a user following %d users: round trips", c.following)
		}
	})
}
