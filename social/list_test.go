package social_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

func listPage(t *testing.T, n *social.Network, owner, list string, count int) []string {
	t.Helper()
	st, _, err := n.ListPage(t.Context(), owner, list, 0, count)
	require.NoError(t, err)
	ids := make([]string, len(st))
	for i, s := range st {
		ids[i] = s.ID
	}
	return ids
}

// User lists (create_user_list, follow_user_list, syndicate_status_list):
// a list's timeline is fed like a home timeline, through the same fan-out
// passes (a first batch before Post returns, then deferred tasks), it
// takes the member's recent statuses when added, drops them when removed,
// and a deleted status leaves it with the clean.
func TestNetwork_lists(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithFanoutBatch(2), social.WithTimelineCap(5))
		owner, two, three := mustUser(t, n, "owner"), mustUser(t, n, "two"), mustUser(t, n, "three")
		early := mustPost(t, n, two, "before the list")
		require.NoError(t, n.CreateList(ctx, owner, "Friends"))
		assert.ErrorIs(t, n.CreateList(ctx, owner, "friends"), social.ErrListTaken, "names are case-insensitive")
		lists, err := n.Lists(ctx, owner)
		require.NoError(t, err)
		assert.Equal(t, []string{"friends"}, lists)

		for _, m := range []string{two, three} {
			ok, err := n.AddToList(ctx, owner, "friends", m)
			require.NoError(t, err)
			assert.True(t, ok, m)
		}
		ok, err := n.AddToList(ctx, owner, "FRIENDS", two)
		require.NoError(t, err)
		assert.False(t, ok, "added twice")
		members, err := n.ListMembers(ctx, owner, "friends", 0, 10)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{two, three}, members)
		assert.Equal(t, []string{early.ID}, listPage(t, n, owner, "friends", 10), "a member's recent statuses are copied")
		assert.Empty(t, page(t, n, owner, social.Home, 10), "a list is not a follow")
		assert.Zero(t, user(t, n, two).Followers)

		// two has 3 followers and the list: a batch of 2 feeds two of them
		// at once, the deferred passes the rest, the list included.
		var fs []string
		for i := range 3 {
			f := mustUser(t, n, fmt.Sprint("f", i))
			mustFollow(t, n, f, two)
			fs = append(fs, f)
		}
		st := mustPost(t, n, two, "to everyone")
		drain(t, n, g)
		for _, f := range fs {
			assert.Equal(t, []string{st.ID, early.ID}, page(t, n, f, social.Home, 10), f)
		}
		assert.Equal(t, []string{st.ID, early.ID}, listPage(t, n, owner, "friends", 10))
		for i := range 6 {
			mustPost(t, n, three, fmt.Sprint("three ", i))
		}
		drain(t, n, g)
		tl := listPage(t, n, owner, "friends", 10)
		assert.Len(t, tl, 5, "the list timeline is capped")

		// Delete one of three's statuses: gone from the page at once, from
		// the list timeline after the clean.
		var gone string // one of three's statuses (miniredis's TIME stands still: all scores tie)
		for _, id := range tl {
			if strings.HasPrefix(id, three+":") {
				gone = id
			}
		}
		require.NotEmpty(t, gone)
		require.NoError(t, n.Delete(ctx, three, gone))
		assert.NotContains(t, listPage(t, n, owner, "friends", 10), gone)
		drain(t, n, g)
		ids, err := b.Client.ZRange(ctx, key(b, owner, "list:friends:timeline"), 0, -1).Result()
		require.NoError(t, err)
		assert.NotContains(t, ids, gone)

		// Removing three drops its statuses; removing it again is false.
		ok, err = n.RemoveFromList(ctx, owner, "friends", three)
		require.NoError(t, err)
		assert.True(t, ok)
		for _, id := range listPage(t, n, owner, "friends", 10) {
			assert.True(t, strings.HasPrefix(id, two+":"), id)
		}
		before := b.Snapshot()
		ok, err = n.RemoveFromList(ctx, owner, "friends", three)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, before, b.Snapshot(), "removing a non-member changes nothing")
		mustPost(t, n, three, "not listed any more")
		drain(t, n, g)
		for _, id := range listPage(t, n, owner, "friends", 10) {
			assert.True(t, strings.HasPrefix(id, two+":"), "a removed member is not fed: %s", id)
		}
	})
}

// Bad input to the list calls: a clear error, nothing written.
func TestNetwork_lists_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client)
		owner := mustUser(t, n, "owner")
		mustUser(t, n, "two")
		require.NoError(t, n.CreateList(ctx, owner, "l"))
		before := b.Snapshot()
		for name, err := range map[string]error{
			"empty name":      n.CreateList(ctx, owner, ""),
			"brace name":      n.CreateList(ctx, owner, "a{b"),
			"slash name":      n.CreateList(ctx, owner, "a/b"),
			"long name":       n.CreateList(ctx, owner, strings.Repeat("a", social.MaxLoginLen+1)),
			"unknown owner":   n.CreateList(ctx, "nobody", "l"),
			"taken":           n.CreateList(ctx, owner, "L"),
			"no list":         second(n.AddToList(ctx, owner, "nolist", "two")),
			"unknown member":  second(n.AddToList(ctx, owner, "l", "nobody")),
			"bad member":      second(n.AddToList(ctx, owner, "l", "a:b")),
			"remove, no list": second(n.RemoveFromList(ctx, owner, "nolist", "two")),
			"page count":      third(n.ListPage(ctx, owner, "l", 0, 0)),
			"page name":       third(n.ListPage(ctx, owner, "", 0, 10)),
			"members offset":  second(n.ListMembers(ctx, owner, "l", -1, 10)),
		} {
			assert.Error(t, err, name)
			t.Logf("%s: %v", name, err)
		}
		assert.Equal(t, before, b.Snapshot(), "bad input wrote something")
		assert.ErrorIs(t, n.CreateList(ctx, "nobody", "l"), social.ErrNoUser)
		_, err := n.AddToList(ctx, owner, "nolist", "two")
		assert.ErrorIs(t, err, social.ErrNoList)
		_, err = n.AddToList(ctx, owner, "l", "nobody")
		assert.ErrorIs(t, err, social.ErrNoUser, "{0}, the reply for no such member, has an odd length")
		for i := range social.MaxLists - 1 {
			require.NoError(t, n.CreateList(ctx, owner, fmt.Sprint("x", i)))
		}
		assert.ErrorIs(t, n.CreateList(ctx, owner, "onemore"), social.ErrTooManyLists)
	})
}

// The list calls check every key they rely on, in both slots, before the
// first write.
func TestNetwork_lists_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client)
		kr := func(uid, part, typ, role string) redistest.KeyRole {
			return redistest.KeyRole{Key: key(b, uid, part), Type: typ, Role: role}
		}
		setup := func() {
			mustUser(t, n, "owner")
			mustUser(t, n, "two")
			mustUser(t, n, "three")
			mustPost(t, n, "two", "one")
			require.NoError(t, n.CreateList(ctx, "owner", "l"))
			ok, err := n.AddToList(ctx, "owner", "l", "three")
			require.NoError(t, err)
			require.True(t, ok)
		}
		t.Run("CreateList", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { return n.CreateList(ctx, "owner", "m") },
				kr("owner", "user", "hash", "social user"),
				kr("owner", "lists", "zset", "social lists"),
				kr("owner", "list:m:members", "zset", "social list members"),
				kr("owner", "list:m:timeline", "zset", "social list timeline"))
		})
		t.Run("AddToList", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := n.AddToList(ctx, "owner", "l", "two"); return err },
				kr("owner", "lists", "zset", "social lists"),
				kr("owner", "list:l:members", "zset", "social list members"),
				kr("owner", "list:l:timeline", "zset", "social list timeline"),
				kr("owner", "gone", "zset", "social tombstones"),
				kr("two", "user", "hash", "social user"),
				kr("two", "listed", "zset", "social listed"),
				kr("two", "profile", "zset", "social profile timeline"))
		})
		t.Run("RemoveFromList", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := n.RemoveFromList(ctx, "owner", "l", "three"); return err },
				kr("owner", "lists", "zset", "social lists"),
				kr("owner", "list:l:members", "zset", "social list members"),
				kr("owner", "list:l:timeline", "zset", "social list timeline"),
				kr("owner", "gone", "zset", "social tombstones"),
				kr("three", "listed", "zset", "social listed"))
		})
		t.Run("DeleteList", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { return n.DeleteList(ctx, "owner", "l") },
				kr("owner", "lists", "zset", "social lists"),
				kr("owner", "list:l:members", "zset", "social list members"),
				kr("owner", "list:l:timeline", "zset", "social list timeline"))
		})
		t.Run("reads", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, _, err := n.ListPage(ctx, "owner", "l", 0, 10); return err },
				kr("owner", "list:l:timeline", "zset", "social list timeline"))
			b.CheckWrongTypes(t, setup, func() error { _, err := n.ListMembers(ctx, "owner", "l", 0, 10); return err },
				kr("owner", "list:l:members", "zset", "social list members"))
			b.CheckWrongTypes(t, setup, func() error { _, err := n.Lists(ctx, "owner"); return err },
				kr("owner", "lists", "zset", "social lists"))
		})
	})
}

// Lost replies of the list calls: each answer matches the state.
func TestFaults_lists(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		n, _ := newNet(t, b, rdb)
		reader, _ := newNet(t, b, b.Client)
		mustUser(t, reader, "owner")
		mustUser(t, reader, "two")
		mustPost(t, reader, "two", "hello")
		// Cache the scripts.
		require.NoError(t, n.CreateList(ctx, "owner", "warm"))
		_, err := n.AddToList(ctx, "owner", "warm", "two")
		require.NoError(t, err)
		_, err = n.RemoveFromList(ctx, "owner", "warm", "two")
		require.NoError(t, err)

		h := redistest.NewHarness(t, f, "social lists")
		h.Call(1, redistest.Scripts, func() { err = n.CreateList(ctx, "owner", "l") })
		h.Check(err == nil, "create list: %v", err)
		h.Call(1, redistest.Scripts, func() { err = n.CreateList(ctx, "owner", "l") })
		h.Check(errors.Is(err, social.ErrListTaken), "create list again: %v", err)
		lists, err := reader.Lists(ctx, "owner")
		require.NoError(t, err)
		h.Check(len(lists) == 2, "lists %v", lists)
		for round := range 2 {
			var ok bool
			h.Call(3, redistest.Scripts, func() { ok, err = n.AddToList(ctx, "owner", "l", "two") })
			h.Check(err == nil && ok, "round %d: add: %v, %v", round, ok, err)
			m, err := reader.ListMembers(ctx, "owner", "l", 0, 10)
			require.NoError(t, err)
			h.Check(len(m) == 1 && len(listPage(t, reader, "owner", "l", 10)) == 1, "round %d: members %v", round, m)
			h.Call(3, redistest.Scripts, func() { ok, err = n.RemoveFromList(ctx, "owner", "l", "two") })
			h.Check(err == nil && ok, "round %d: remove: %v, %v", round, ok, err)
			m, err = reader.ListMembers(ctx, "owner", "l", 0, 10)
			require.NoError(t, err)
			h.Check(len(m) == 0 && len(listPage(t, reader, "owner", "l", 10)) == 0, "round %d: members %v", round, m)
			listed, err := b.Client.ZCard(ctx, key(b, "two", "listed")).Result()
			require.NoError(t, err)
			h.Check(listed == 0, "round %d: listed %d", round, listed)
		}
	})
}

// DeleteList removes a list, its timeline, its members and the list from
// every member's side, page by page; the fan-out feeds it no more, the
// name can be used again, and a delete cut in half is finished by calling
// it again.
func TestNetwork_deleteList(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client)
		owner := mustUser(t, n, "owner")
		var members []string
		for i := range 1100 { // more than two pages of members, in slots of every node
			members = append(members, mustUser(t, n, fmt.Sprint("m", i)))
		}
		require.NoError(t, n.CreateList(ctx, owner, "all"))
		require.NoError(t, n.CreateList(ctx, owner, "other"))
		for _, m := range members {
			_, err := n.AddToList(ctx, owner, "all", m)
			require.NoError(t, err)
		}
		_, err := n.AddToList(ctx, owner, "other", members[0])
		require.NoError(t, err)
		first := mustPost(t, n, members[0], "before")
		drain(t, n, g)
		require.Equal(t, []string{first.ID}, listPage(t, n, owner, "all", 10))

		require.NoError(t, n.DeleteList(ctx, owner, "ALL"))
		lists, err := n.Lists(ctx, owner)
		require.NoError(t, err)
		assert.Equal(t, []string{"other"}, lists)
		for _, part := range []string{"list:all:members", "list:all:timeline"} {
			n, err := b.Client.Exists(ctx, key(b, owner, part)).Result()
			require.NoError(t, err)
			assert.Zero(t, n, part)
		}
		for _, m := range []string{members[0], members[549], members[1099]} {
			listed, err := b.Client.ZRange(ctx, key(b, m, "listed"), 0, -1).Result()
			require.NoError(t, err)
			want := []string{}
			if m == members[0] {
				want = []string{owner + "/other"}
			}
			assert.ElementsMatch(t, want, listed, "the member's side of %s", m)
		}
		assert.ErrorIs(t, n.DeleteList(ctx, owner, "all"), social.ErrNoList, "deleted already")
		_, err = n.AddToList(ctx, owner, "all", members[1])
		assert.ErrorIs(t, err, social.ErrNoList)

		// The fan-out feeds it no more, even from an entry an AddToList
		// racing the delete left on a member's side.
		require.NoError(t, b.Client.ZAdd(ctx, key(b, members[2], "listed"), redis.Z{Score: 5000, Member: owner + "/all"}).Err())
		for _, m := range members[:3] {
			mustPost(t, n, m, "after")
		}
		drain(t, n, g)
		ex, err := b.Client.Exists(ctx, key(b, owner, "list:all:timeline")).Result()
		require.NoError(t, err)
		assert.Zero(t, ex, "a deleted list's timeline is not fed again")
		assert.Len(t, listPage(t, n, owner, "other", 10), 2, "the other list is fed")

		// The name can be used again: the new list starts empty.
		require.NoError(t, n.CreateList(ctx, owner, "all"))
		assert.Empty(t, listPage(t, n, owner, "all", 10))
		mustPost(t, n, members[2], "to nobody's list")
		drain(t, n, g)
		assert.Empty(t, listPage(t, n, owner, "all", 10), "a stale entry feeds no list of the same name")

		// A re-send of the delete's last step (or another DeleteList)
		// after the name was created again leaves the new list alone.
		_, err = n.AddToList(ctx, owner, "all", members[5])
		require.NoError(t, err)
		page, err := social.ListGoneForTest(ctx, n, owner, "all", members[5])
		require.NoError(t, err)
		assert.Empty(t, page)
		m, err := n.ListMembers(ctx, owner, "all", 0, 10)
		require.NoError(t, err)
		assert.Equal(t, []string{members[5]}, m, "the new list keeps its member")
		ok, err := n.RemoveFromList(ctx, owner, "all", members[5])
		require.NoError(t, err)
		require.True(t, ok)

		// Cut in half: a member's side of another type stops the delete
		// after owner's side; the name stays taken until it is repeated.
		_, err = n.AddToList(ctx, owner, "all", members[3])
		require.NoError(t, err)
		_, err = n.AddToList(ctx, owner, "all", members[4])
		require.NoError(t, err)
		bad := key(b, members[4], "listed")
		saved, err := b.Client.ZRangeWithScores(ctx, bad, 0, -1).Result()
		require.NoError(t, err)
		require.NoError(t, b.Client.Del(ctx, bad).Err())
		require.NoError(t, b.Client.Set(ctx, bad, "x", 0).Err())
		var kerr *ria.KeyError
		require.ErrorAs(t, n.DeleteList(ctx, owner, "all"), &kerr)
		assert.Equal(t, bad, kerr.Key)
		assert.ErrorIs(t, n.CreateList(ctx, owner, "all"), social.ErrListTaken, "until the delete is done")
		require.NoError(t, b.Client.Del(ctx, bad).Err())
		require.NoError(t, b.Client.ZAdd(ctx, bad, saved...).Err())
		require.NoError(t, n.DeleteList(ctx, owner, "all"), "repeated: finishes it")
		for _, m := range members[3:5] {
			listed, err := b.Client.ZRange(ctx, key(b, m, "listed"), 0, -1).Result()
			require.NoError(t, err)
			assert.Empty(t, listed, m)
		}
		require.NoError(t, n.CreateList(ctx, owner, "all"))

		// Bad input and unknown lists.
		assert.ErrorIs(t, n.DeleteList(ctx, owner, "nope"), social.ErrNoList)
		assert.ErrorIs(t, n.DeleteList(ctx, "nobody", "all"), social.ErrNoList)
		for _, args := range [][2]string{{"", "all"}, {owner, ""}, {owner, "a b"}, {"a b", "all"}} {
			err := n.DeleteList(ctx, args[0], args[1])
			require.Error(t, err, "%q", args)
			assert.NotErrorIs(t, err, social.ErrNoList, "%q", args)
		}
	})
}
