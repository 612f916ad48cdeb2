package social_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// What production feeds learned: the home timeline of a user who has not
// read it for the configured time is not fed (it is dropped); the user's
// next read reports that it is being regenerated instead of returning a
// silently empty page, and once the regeneration task ran the timeline is
// whole again and fed as before.
func TestNetwork_inactive(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const idle = 2 * time.Second // waited out in real time on a real server
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithInactiveAfter(idle))
		author, active, asleep := mustUser(t, n, "author"), mustUser(t, n, "active"), mustUser(t, n, "asleep")
		mustFollow(t, n, active, author)
		mustFollow(t, n, asleep, author)
		first := mustPost(t, n, author, "first")
		assert.Equal(t, []string{first.ID}, page(t, n, asleep, social.Home, 10), "fed while active")

		b.FastForward(idle + idle/4)
		page(t, n, active, social.Home, 10) // active reads: it stays active
		second := mustPost(t, n, author, "second")
		assert.Equal(t, []string{second.ID, first.ID}, page(t, n, active, social.Home, 10))
		ids, err := b.Client.ZRange(ctx, key(b, asleep, "home"), 0, -1).Result()
		require.NoError(t, err)
		assert.Empty(t, ids, "an inactive user's home timeline is dropped and not fed")

		_, _, err = n.Page(ctx, asleep, social.Home, 0, 10)
		require.ErrorIs(t, err, social.ErrRegenerating, "the read reports the regeneration")
		_, _, err = n.Page(ctx, asleep, social.Home, 0, 10)
		require.ErrorIs(t, err, social.ErrRegenerating, "until the task ran")
		third := mustPost(t, n, author, "third") // during the regeneration: fed
		drain(t, n, g)
		assert.Equal(t, []string{third.ID, second.ID, first.ID}, page(t, n, asleep, social.Home, 10), "regenerated")
		fourth := mustPost(t, n, author, "fourth")
		assert.Equal(t, fourth.ID, page(t, n, asleep, social.Home, 10)[0], "fed again")
		assert.Len(t, page(t, n, author, social.Profile, 10), 4)
	})
}

// The first read of a home page with WithInactiveAfter is a script that
// records the read: it checks its keys before (on one server the
// statuses' too).
func TestNetwork_inactive_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client, social.WithInactiveAfter(time.Hour))
		setup := func() {
			mustUser(t, n, "alice")
			mustUser(t, n, "bob")
			mustFollow(t, n, "alice", "bob")
			mustPost(t, n, "bob", "one")
		}
		b.CheckWrongTypes(t, setup, func() error { _, _, err := n.Page(ctx, "alice", social.Home, 0, 10); return err },
			redistest.KeyRole{Key: key(b, "alice", "user"), Type: "hash", Role: "social user"},
			redistest.KeyRole{Key: key(b, "alice", "home"), Type: "zset", Role: "social home timeline"})
		// On one server one script checks the statuses' keys too before it
		// records the read; elsewhere the statuses are read after the first
		// step recorded it (the doc says so), so only the error is checked.
		status := redistest.KeyRole{Key: key(b, "bob", "status:1"), Type: "hash", Role: "social status"}
		if b.Kind != redistest.Cluster {
			b.CheckWrongTypes(t, setup, func() error { _, _, err := n.Page(ctx, "alice", social.Home, 0, 10); return err }, status)
		} else {
			b.Flush()
			setup()
			require.NoError(t, b.Client.Del(ctx, status.Key).Err())
			require.NoError(t, b.Client.Set(ctx, status.Key, "x", 0).Err())
			_, _, err := n.Page(ctx, "alice", social.Home, 0, 10)
			var kerr *ria.KeyError
			require.ErrorAs(t, err, &kerr)
			assert.Equal(t, status.Key, kerr.Key)
		}
	})
}
