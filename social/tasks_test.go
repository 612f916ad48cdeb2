package social_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// home returns the IDs in uid's home timeline ZSET, newest first, dead
// entries included.
func home(t *testing.T, b *redistest.Backend, uid string) []string {
	t.Helper()
	ids, err := b.Client.ZRevRange(t.Context(), key(b, uid, "home"), 0, -1).Result()
	require.NoError(t, err)
	return ids
}

// A Clean of a status not posted yet writes no tombstone: once posted,
// the status is fed, and a refollow or a refill finds it.
func TestNetwork_Clean_notPosted(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client)
		a, f := mustUser(t, n, "a"), mustUser(t, n, "b")
		mustFollow(t, n, f, a)
		require.NoError(t, n.Clean(ctx, a+":1"))
		drain(t, n, g)
		gone, err := b.Client.Exists(ctx, key(b, f, "gone")).Result()
		require.NoError(t, err)
		assert.Zero(t, gone, "no tombstone")

		st := mustPost(t, n, a, "one")
		require.Equal(t, a+":1", st.ID)
		drain(t, n, g)
		assert.Equal(t, []string{st.ID}, home(t, b, f), "fed")
		_, err = n.Unfollow(ctx, f, a)
		require.NoError(t, err)
		mustFollow(t, n, f, a)
		assert.Equal(t, []string{st.ID}, home(t, b, f), "copied by the follow")
		_, err = n.Refill(ctx, f)
		require.NoError(t, err)
		assert.Equal(t, []string{st.ID}, home(t, b, f), "refilled")
	})
}

// A regeneration whose task died is enqueued again by the next read:
// the dead task keeps its ID, and is requeued rather than taken for a
// waiting one, so the user is not locked out.
func TestNetwork_regenerate_deadTask(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithInactiveAfter(time.Hour))
		a, x, f := mustUser(t, n, "a"), mustUser(t, n, "x"), mustUser(t, n, "f")
		mustFollow(t, n, f, a)
		mustFollow(t, n, f, x)
		st := mustPost(t, n, a, "one")
		// f was found inactive (as a fan-out marks it): its next read asks
		// for the regeneration, which fails for good on x's profile.
		require.NoError(t, b.Client.HSet(ctx, key(b, f, "user"), "idle", 1).Err())
		require.NoError(t, b.Client.Set(ctx, key(b, x, "profile"), "x", 0).Err())
		_, _, err := n.Page(ctx, f, social.Home, 0, 10)
		require.ErrorIs(t, err, social.ErrRegenerating)
		runUntilDead(t, b, n, g, 1)

		require.NoError(t, b.Client.Del(ctx, key(b, x, "profile")).Err())
		_, _, err = n.Page(ctx, f, social.Home, 0, 10)
		require.ErrorIs(t, err, social.ErrRegenerating, "the task has not run again yet")
		drain(t, n, g) // no dead task left
		assert.Equal(t, []string{st.ID}, page(t, n, f, social.Home, 10), "regenerated")
	})
}

// Syndicate starts a fan-out that died again: the dead task is requeued.
func TestNetwork_Syndicate_deadTask(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithFirstPass(0))
		a, f := mustUser(t, n, "a"), mustUser(t, n, "f")
		mustFollow(t, n, f, a)
		require.NoError(t, b.Client.Set(ctx, key(b, f, "home"), "x", 0).Err())
		st := mustPost(t, n, a, "one")
		runUntilDead(t, b, n, g, 1)

		require.NoError(t, b.Client.Del(ctx, key(b, f, "home")).Err())
		require.NoError(t, n.Syndicate(ctx, st.ID))
		drain(t, n, g)
		assert.Equal(t, []string{st.ID}, home(t, b, f), "fed")
	})
}

// Users called "a" and "e" get their timelines regenerated too: the task
// ID does not end in ":a" or ":e", which the queue refuses (another task's
// field names).
func TestNetwork_regenerate_shortLogins(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithInactiveAfter(time.Hour))
		x := mustUser(t, n, "x")
		st := mustPost(t, n, x, "one")
		for _, login := range []string{"a", "e"} {
			u := mustUser(t, n, login)
			mustFollow(t, n, u, x)
			require.NoError(t, b.Client.HSet(ctx, key(b, u, "user"), "idle", 1).Err())
			_, _, err := n.Page(ctx, u, social.Home, 0, 10)
			require.ErrorIs(t, err, social.ErrRegenerating, login)
			drain(t, n, g)
			assert.Equal(t, []string{st.ID}, page(t, n, u, social.Home, 10), login)
		}
	})
}

// A clean keeps a follower's tombstones by age, not by count: it drops
// those older than the tombstone TTL (server time), keeps the others
// however many there are (more than the timeline cap here), and the
// tombstones ZSET expires a TTL after its last tombstone, so a follower
// that sees no more deletes keeps none.
func TestNetwork_Clean_tombstoneTTL(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		const ttl = time.Hour
		n, g := newNet(t, b, b.Client, social.WithTimelineCap(1), social.WithTombstoneTTL(ttl))
		a, f := mustUser(t, n, "a"), mustUser(t, n, "f")
		mustFollow(t, n, f, a)
		now, err := b.Client.Time(ctx).Result()
		require.NoError(t, err)
		ms := now.UnixMilli()
		gone := key(b, f, "gone")
		require.NoError(t, b.Client.ZAdd(ctx, gone,
			redis.Z{Score: float64(ms - ttl.Milliseconds() - 1000), Member: "old:1"},
			redis.Z{Score: float64(ms - ttl.Milliseconds() + 60_000), Member: "recent:1"},
			redis.Z{Score: float64(ms - 1000), Member: "recent:2"}).Err())
		var deleted []string
		for range 2 {
			st := mustPost(t, n, a, "deleted")
			require.NoError(t, n.Delete(ctx, a, st.ID))
			deleted = append(deleted, st.ID)
		}
		drain(t, n, g)
		got, err := b.Client.ZRange(ctx, gone, 0, -1).Result()
		require.NoError(t, err)
		assert.ElementsMatch(t, append([]string{"recent:1", "recent:2"}, deleted...), got, "tombstones kept")
		pttl, err := b.Client.PTTL(ctx, gone).Result()
		require.NoError(t, err)
		assert.Greater(t, pttl, ttl-time.Minute, "the tombstones' TTL")
		assert.LessOrEqual(t, pttl, ttl)
	})
}
