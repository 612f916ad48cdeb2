package chat_test

import (
	"fmt"
	"strconv"
	"time"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

// The book's scenario: joe creates a chat with jeff and jenny and sends
// messages 2 to 4; jeff and jenny each fetch the same four, then nothing;
// messages are trimmed once all have seen them; join and leave.
func TestChat_book(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		m1, err := cs.Create(ctx, "c1", "joe", []string{"jeff", "jenny"}, "message 1")
		require.NoError(t, err)
		assert.Equal(t, int64(1), m1.ID)
		assert.WithinDuration(t, time.Now(), m1.Time, time.Minute)
		for i := 2; i <= 4; i++ {
			m, err := cs.Send(ctx, "c1", "joe", fmt.Sprintf("message %d", i))
			require.NoError(t, err)
			assert.Equal(t, int64(i), m.ID)
		}
		want := []string{"joe: message 1", "joe: message 2", "joe: message 3", "joe: message 4"}
		unread, err := cs.Unread(ctx, "jeff")
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{"c1": 4}, unread)
		for _, u := range []string{"jeff", "jenny"} {
			ms, err := cs.Fetch(ctx, u)
			require.NoError(t, err)
			assert.Equal(t, want, texts(t, ms), u)
			for i, m := range ms {
				assert.Equal(t, "c1", m.Chat)
				assert.Equal(t, int64(i+1), m.ID)
			}
			ms, err = cs.Fetch(ctx, u)
			require.NoError(t, err)
			assert.Empty(t, ms, u)
		}
		unread, err = cs.Unread(ctx, "jeff")
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{"c1": 0}, unread)
		members := func() map[string]int64 {
			t.Helper()
			m, err := cs.Members(ctx, "c1")
			require.NoError(t, err)
			return m
		}
		m := members()
		assert.Len(t, m, 3)
		assert.Contains(t, m, "joe")
		assert.Equal(t, int64(4), m["jeff"], "read receipts")
		assert.Equal(t, int64(4), m["jenny"])

		// joe has not fetched: nothing is trimmed yet.
		h, err := cs.History(ctx, "c1", 0, 100)
		require.NoError(t, err)
		assert.Equal(t, want, texts(t, h))
		ms, err := cs.Fetch(ctx, "joe")
		require.NoError(t, err)
		assert.Equal(t, want, texts(t, ms))
		h, err = cs.History(ctx, "c1", 0, 100)
		require.NoError(t, err)
		assert.Empty(t, h, "trimmed once all have seen")

		// A member who joins sees only what is sent after.
		require.NoError(t, cs.Join(ctx, "c1", "jack"))
		require.NoError(t, cs.Join(ctx, "c1", "jack"), "joining again changes nothing")
		_, err = cs.Send(ctx, "c1", "jack", "hello")
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{"joe": 4, "jeff": 4, "jenny": 4, "jack": 4}, members(), "a joiner has seen what came before")
		ms, err = cs.Fetch(ctx, "jack")
		require.NoError(t, err)
		assert.Equal(t, []string{"jack: hello"}, texts(t, ms))
		assert.Equal(t, int64(5), members()["jack"])
		got, err := cs.Chats(ctx, "jack")
		require.NoError(t, err)
		assert.Equal(t, []string{"c1"}, got)

		// Leaving: a leaver's fetch is empty; the last one deletes it.
		require.NoError(t, cs.Leave(ctx, "c1", "jeff"))
		require.NoError(t, cs.Leave(ctx, "c1", "jeff"), "leaving again changes nothing")
		ms, err = cs.Fetch(ctx, "jeff")
		require.NoError(t, err)
		assert.Empty(t, ms)
		_, err = cs.Send(ctx, "c1", "jeff", "still here?")
		assert.ErrorIs(t, err, chat.ErrNotMember)
		for _, u := range []string{"joe", "jenny", "jack"} {
			require.NoError(t, cs.Leave(ctx, "c1", u))
		}
		assert.Empty(t, state(b), "the chat is deleted with its last member")
		assert.Empty(t, members())
		_, err = cs.Send(ctx, "c1", "joe", "anyone?")
		assert.ErrorIs(t, err, chat.ErrNoChat)
	})
}

// Fetch covers every chat of the user, ordered by chat then id; history
// pages by id; typed payloads round-trip through the codec.
func TestChat_manyChatsAndPaging(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		type note struct {
			N    int    `json:"n"`
			Text string `json:"text"`
		}
		for c := range 5 {
			id := fmt.Sprintf("room-%d", c)
			_, err := cs.Create(ctx, id, "ann", []string{"bob"}, note{0, id})
			require.NoError(t, err)
			for i := 1; i <= c; i++ {
				_, err := cs.Send(ctx, id, "bob", note{i, id})
				require.NoError(t, err)
			}
		}
		ms, err := cs.Fetch(ctx, "ann")
		require.NoError(t, err)
		require.Len(t, ms, 5+0+1+2+3+4)
		k := 0
		for c := range 5 {
			for i := 0; i <= c; i++ {
				var n note
				require.NoError(t, ms[k].Decode(&n))
				assert.Equal(t, note{i, fmt.Sprintf("room-%d", c)}, n)
				assert.Equal(t, int64(i+1), ms[k].ID)
				k++
			}
		}
		var all []int64
		for after := int64(0); ; {
			page, err := cs.History(ctx, "room-4", after, 2)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			for _, m := range page {
				all = append(all, m.ID)
			}
			after = page[len(page)-1].ID
		}
		assert.Equal(t, []int64{1, 2, 3, 4, 5}, all)
	})
}

// A fetch limit pages the unseen messages of a chat.
func TestChat_fetchLimit(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil, chat.WithFetchLimit(3))
		_, err := cs.Create(ctx, "c", "a", []string{"b"}, "1")
		require.NoError(t, err)
		for i := 2; i <= 7; i++ {
			_, err := cs.Send(ctx, "c", "a", strconv.Itoa(i))
			require.NoError(t, err)
		}
		var ids []int64
		for range 4 {
			ms, err := cs.Fetch(ctx, "b")
			require.NoError(t, err)
			assert.LessOrEqual(t, len(ms), 3)
			for _, m := range ms {
				ids = append(ids, m.ID)
			}
		}
		assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, ids)
	})
}
