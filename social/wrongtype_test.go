package social_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// Every script-backed operation checks every key it relies on before its
// first write, in both slots of a follow: a key of another type makes it
// fail with a *ria.KeyError naming the key and its role, and changes
// nothing anywhere.
func TestNetwork_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client)
		kr := func(uid, part, typ, role string) redistest.KeyRole {
			return redistest.KeyRole{Key: key(b, uid, part), Type: typ, Role: role}
		}
		// alice follows bob; bob posted one status.
		setup := func() {
			mustUser(t, n, "alice")
			mustUser(t, n, "bob")
			mustPost(t, n, "bob", "one")
			mustFollow(t, n, "alice", "bob")
		}
		t.Run("CreateUser", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := n.CreateUser(ctx, "Carol", "c"); return err },
				kr("carol", "user", "hash", "social user"))
		})
		t.Run("Post", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := n.Post(ctx, "bob", "two"); return err },
				kr("bob", "user", "hash", "social user"),
				kr("bob", "profile", "zset", "social profile timeline"),
				kr("bob", "followers", "zset", "social followers"),
				kr("bob", "status:2", "hash", "social status"), // the next status, named in the script
				kr("bob", "listed", "zset", "social listed"),
			)
		})
		t.Run("Delete", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { return n.Delete(ctx, "bob", "bob:1") },
				kr("bob", "user", "hash", "social user"),
				kr("bob", "status:1", "hash", "social status"),
				kr("bob", "profile", "zset", "social profile timeline"),
				kr("bob", "home", "zset", "social home timeline"),
				kr("bob", "followers", "zset", "social followers"),
				kr("bob", "listed", "zset", "social listed"),
			)
		})
		t.Run("Follow", func(t *testing.T) {
			setup := func() {
				mustUser(t, n, "carol")
				setup()
			}
			b.CheckWrongTypes(t, setup, func() error { _, err := n.Follow(ctx, "carol", "bob"); return err },
				kr("carol", "user", "hash", "social user"),
				kr("carol", "following", "zset", "social following"),
				kr("carol", "home", "zset", "social home timeline"),
				kr("carol", "gone", "zset", "social tombstones"),
				kr("bob", "user", "hash", "social user"),
				kr("bob", "followers", "zset", "social followers"),
				kr("bob", "profile", "zset", "social profile timeline"),
			)
		})
		t.Run("Unfollow", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := n.Unfollow(ctx, "alice", "bob"); return err },
				kr("alice", "user", "hash", "social user"),
				kr("alice", "following", "zset", "social following"),
				kr("alice", "home", "zset", "social home timeline"),
				kr("alice", "gone", "zset", "social tombstones"),
				kr("bob", "user", "hash", "social user"),
				kr("bob", "followers", "zset", "social followers"),
			)
		})
		t.Run("Refill", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := n.Refill(ctx, "alice"); return err },
				kr("alice", "following", "zset", "social following"),
				kr("alice", "home", "zset", "social home timeline"),
				kr("alice", "gone", "zset", "social tombstones"),
				kr("bob", "profile", "zset", "social profile timeline"),
			)
		})
		t.Run("reads", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := n.User(ctx, "bob"); return err },
				kr("bob", "user", "hash", "social user"))
			b.CheckWrongTypes(t, setup, func() error { _, _, err := n.Page(ctx, "alice", social.Home, 0, 10); return err },
				kr("alice", "home", "zset", "social home timeline"),
				kr("bob", "status:1", "hash", "social status"))
			b.CheckWrongTypes(t, setup, func() error { _, _, err := n.Page(ctx, "bob", social.Profile, 0, 10); return err },
				kr("bob", "profile", "zset", "social profile timeline"))
			b.CheckWrongTypes(t, setup, func() error { _, err := n.Status(ctx, "bob:1"); return err },
				kr("bob", "status:1", "hash", "social status"))
			b.CheckWrongTypes(t, setup, func() error { _, err := n.Follows(ctx, "alice", "bob"); return err },
				kr("alice", "following", "zset", "social following"))
			b.CheckWrongTypes(t, setup, func() error { _, err := n.Followers(ctx, "bob", 0, 10); return err },
				kr("bob", "followers", "zset", "social followers"))
			b.CheckWrongTypes(t, setup, func() error { _, err := n.Following(ctx, "alice", 0, 10); return err },
				kr("alice", "following", "zset", "social following"))
		})
	})
}

// A follower whose home timeline holds another type is skipped by the
// fan-out and the clean; every other follower is fed and cleaned, and the
// task fails with the *ria.KeyError naming the key (the queue retries it,
// then keeps it dead with the error).
func TestNetwork_fanout_wrongType(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithFanoutBatch(2))
		mustUser(t, n, "author")
		for _, f := range []string{"f0", "f1", "f2", "f3", "f4"} {
			mustUser(t, n, f)
			mustFollow(t, n, f, "author")
		}
		require.NoError(t, b.Client.Set(ctx, key(b, "f3", "home"), "wrong type", 0).Err())
		st := mustPost(t, n, "author", "x")

		for _, f := range []string{"f0", "f1", "f2", "f4"} {
			if f < "f2" {
				assert.Equal(t, []string{st.ID}, page(t, n, f, social.Home, 10), "first batch: %s", f)
			}
		}
		dead := runUntilDead(t, b, n, g, 1)
		for _, f := range []string{"f0", "f1", "f2", "f4"} {
			assert.Equal(t, []string{st.ID}, page(t, n, f, social.Home, 10), "fed: %s", f)
		}
		assert.Contains(t, dead[0].Error, key(b, "f3", "home"), "the dead task names the key")
		assert.Contains(t, dead[0].Error, "social home timeline")
	})
}
