package chat_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

// The scripts of Join and Leave are once-scripts: go-redis re-sends a
// script whose reply was lost, and another client may write between the
// first run and the re-send. The re-send is answered from the first run's
// record and writes nothing, so it neither undoes that write nor acts on a
// chat created again with the same id.

// resendClient returns Chats on a faulty client, with the chat created and
// the scripts cached on its node (a lost NOSCRIPT reply is not the point).
// A test then arms the proxy with LoseReplyThen: the next script loses its
// reply, and another client acts before go-redis's re-send reaches the
// server.
func resendClient(t *testing.T, b *redistest.Backend, chatID, sender string, recipients ...string) (*chat.Chats, *redistest.Faults) {
	t.Helper()
	rdb, _, f := b.FaultyClient()
	cs := newChats(t, b, rdb)
	ctx := t.Context()
	_, err := cs.Create(ctx, chatID, sender, recipients, "hi")
	require.NoError(t, err)
	require.NoError(t, cs.Join(ctx, chatID, "z"))
	require.NoError(t, cs.Leave(ctx, chatID, "z"))
	require.Zero(t, f.Lost())
	return cs, f
}

// A Leave whose reply is lost is re-sent by go-redis. Meanwhile another
// device of the same user joined the chat again, and a third client saw
// the user out, then in: the Join came after the Leave took effect. The
// re-sent leave.lua is answered from its record and removes nothing, and
// Leave's membership check puts the chat back on the user's list after
// its SREM: the later Join stands.
func TestLeave_resendAfterLaterJoin(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs, f := resendClient(t, b, "c", "b", "a", "x")
		other := newChats(t, b, nil)

		var seen []string
		var ran bool
		fn := func() {
			ran = true
			ms, err := other.Members(ctx, "c")
			_, in := ms["a"]
			seen = append(seen, fmt.Sprintf("before join: a member %v (%v)", in, err))
			err = other.Join(ctx, "c", "a")
			ms, _ = other.Members(ctx, "c")
			_, in = ms["a"]
			seen = append(seen, fmt.Sprintf("join: %v; after: a member %v", err, in))
		}
		f.LoseReplyThen(redistest.Scripts, fn)
		require.NoError(t, cs.Leave(ctx, "c", "a"))
		require.True(t, ran, "the leave was not re-sent")
		require.Equal(t, []string{"before join: a member false (<nil>)", "join: <nil>; after: a member true"}, seen)

		ms, err := other.Members(ctx, "c")
		require.NoError(t, err)
		assert.Contains(t, ms, "a", "a's Join, made after the Leave was seen, stands after the Leave's re-send")
		chats, err := other.Chats(ctx, "a")
		require.NoError(t, err)
		assert.Contains(t, chats, "c")
	})
}

// A Leave of a chat's last member whose reply is lost: meanwhile another
// client creates the chat again (Create succeeds: it saw the chat gone),
// with the leaver among its members. The re-sent leave.lua is answered
// from its record and leaves the new chat alone; Leave's SREM drops the
// new chat from the leaver's list, and its membership check puts it back.
func TestLeave_resendAfterRecreate(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs, f := resendClient(t, b, "c", "b", "a")
		other := newChats(t, b, nil)
		require.NoError(t, other.Leave(ctx, "c", "b"))

		var createErr error
		var ran bool
		fn := func() {
			ran = true
			_, createErr = other.Create(ctx, "c", "b", []string{"a"}, "new chat")
		}
		f.LoseReplyThen(redistest.Scripts, fn)
		require.NoError(t, cs.Leave(ctx, "c", "a"))
		require.True(t, ran, "the leave was not re-sent")
		require.NoError(t, createErr, "the new chat's Create, after the Leave deleted the old one")

		ms, err := other.Members(ctx, "c")
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{"a": 0, "b": 0}, ms, "members of the chat created after the Leave")
		chats, err := other.Chats(ctx, "a")
		require.NoError(t, err)
		assert.Contains(t, chats, "c", "the new chat on a's list")
		got, err := other.Fetch(ctx, "a")
		require.NoError(t, err)
		assert.Len(t, got, 1, "a fetches the new chat's first message")
	})
}

// A Join whose reply is lost: meanwhile another device of the user sees
// the membership and leaves. The re-sent join.lua is answered from its
// record and adds nothing: the Leave, made after the Join was seen,
// stands.
func TestJoin_resendAfterLaterLeave(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs, f := resendClient(t, b, "c", "b", "x")
		other := newChats(t, b, nil)

		var seen []string
		var ran bool
		fn := func() {
			ran = true
			ms, err := other.Members(ctx, "c")
			_, in := ms["a"]
			seen = append(seen, fmt.Sprintf("before leave: a member %v (%v)", in, err))
			err = other.Leave(ctx, "c", "a")
			ms, _ = other.Members(ctx, "c")
			_, in = ms["a"]
			seen = append(seen, fmt.Sprintf("leave: %v; after: a member %v", err, in))
		}
		f.LoseReplyThen(redistest.Scripts, fn)
		require.NoError(t, cs.Join(ctx, "c", "a"))
		require.True(t, ran, "the join was not re-sent")
		require.Equal(t, []string{"before leave: a member true (<nil>)", "leave: <nil>; after: a member false"}, seen)

		ms, err := other.Members(ctx, "c")
		require.NoError(t, err)
		assert.NotContains(t, ms, "a", "a's Leave, made after the Join was seen, stands after the Join's re-send")
	})
}
