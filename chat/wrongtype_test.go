package chat_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
)

// Every operation refuses a key of another type with a *ria.KeyError
// naming the key and its role, having changed nothing.
func TestWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		members := redistest.KeyRole{Key: key(b, "c", "members"), Type: "zset", Role: "chat members"}
		msgs := redistest.KeyRole{Key: key(b, "c", "msgs"), Type: "zset", Role: "chat messages"}
		ids := redistest.KeyRole{Key: key(b, "c", "ids"), Type: "string", Role: "chat ids"}
		chats := redistest.KeyRole{Key: key(b, "a", "chats"), Type: "set", Role: "chat user chats"}
		setup := func() {
			_, err := cs.Create(ctx, "c", "a", []string{"b"}, "hi")
			require.NoError(t, err)
			_, err = cs.Send(ctx, "c", "b", "hello")
			require.NoError(t, err)
		}
		for _, c := range []struct {
			name string
			call func() error
			keys []redistest.KeyRole
		}{
			{"Send", func() error { _, err := cs.Send(ctx, "c", "a", "x"); return err }, []redistest.KeyRole{members, msgs, ids}},
			{"Join", func() error { return cs.Join(ctx, "c", "d") }, []redistest.KeyRole{members, ids}},
			{"Leave", func() error { return cs.Leave(ctx, "c", "b") }, []redistest.KeyRole{members, msgs, ids}},
			{"History", func() error { _, err := cs.History(ctx, "c", 0, 10); return err }, []redistest.KeyRole{members, msgs}},
			{"Fetch", func() error { _, err := cs.Fetch(ctx, "a"); return err }, []redistest.KeyRole{members, msgs, chats}},
			{"Unread", func() error { _, err := cs.Unread(ctx, "a"); return err }, []redistest.KeyRole{members, msgs, chats}},
			{"Chats", func() error { _, err := cs.Chats(ctx, "a"); return err }, []redistest.KeyRole{chats}},
			{"Members", func() error { _, err := cs.Members(ctx, "c"); return err }, []redistest.KeyRole{members}},
		} {
			t.Run(c.name, func(t *testing.T) { b.CheckWrongTypes(t, setup, c.call, c.keys...) })
		}
		// Create of a chat whose keys are taken.
		c2 := []redistest.KeyRole{
			{Key: key(b, "c2", "members"), Type: "zset", Role: "chat members"},
			{Key: key(b, "c2", "msgs"), Type: "zset", Role: "chat messages"},
			{Key: key(b, "c2", "ids"), Type: "string", Role: "chat ids"},
		}
		t.Run("Create", func(t *testing.T) {
			b.CheckWrongTypes(t, func() {}, func() error {
				_, err := cs.Create(ctx, "c2", "a", []string{"b"}, "hi")
				return err
			}, c2...)
		})

		// A corrupt counter.
		b.Flush()
		setup()
		require.NoError(t, b.Client.Set(ctx, ids.Key, "many", 0).Err())
		before := b.Snapshot()
		_, err := cs.Send(ctx, "c", "a", "x")
		var kerr *ria.KeyError
		require.True(t, errors.As(err, &kerr), "%v", err)
		assert.ErrorIs(t, err, ria.ErrCorrupt)
		assert.Equal(t, ids.Key, kerr.Key)
		assert.Equal(t, before, b.Snapshot())

		// A member's list of another type: Join says so (the chat side
		// is written: two slots, see the doc), Fetch names it.
		b.Flush()
		setup()
		require.NoError(t, b.Client.Set(ctx, key(b, "d", "chats"), "x", 0).Err())
		err = cs.Join(ctx, "c", "d")
		require.True(t, errors.As(err, &kerr), "%v", err)
		assert.Equal(t, key(b, "d", "chats"), kerr.Key)
		assert.Equal(t, "chat user chats", kerr.Role)
	})
}

// The file scripts refuse keys of another type, having changed nothing.
func TestWrongTypes_files(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		members := redistest.KeyRole{Key: key(b, "c", "members"), Type: "zset", Role: "chat members"}
		files := redistest.KeyRole{Key: key(b, "c", "files"), Type: "set", Role: "chat files"}
		msgs := redistest.KeyRole{Key: key(b, "c", "msgs"), Type: "zset", Role: "chat messages"}
		setup := func() {
			_, err := cs.Create(ctx, "c", "a", []string{"b"}, "hi")
			require.NoError(t, err)
		}
		t.Run("SendFile", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error {
				_, err := cs.SendFile(ctx, "c", "a", "f", strings.NewReader("data"))
				return err
			}, members, files, msgs)
		})
		t.Run("Files", func(t *testing.T) {
			b.CheckWrongTypes(t, setup, func() error { _, err := cs.Files(ctx, "c"); return err }, files)
		})
	})
}
