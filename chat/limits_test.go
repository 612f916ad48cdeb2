package chat_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

// users returns n distinct user ids.
func users(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("u%d", i)
	}
	return out
}

// A chat needs a recipient besides the sender, duplicates counting once,
// and at most MaxMembers distinct members; a refused Create writes nothing.
func TestCreate_members(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		before := state(b)
		for name, rs := range map[string][]string{
			"sender only":  {"a"},
			"sender twice": {"a", "a"},
			"one too many": users(chat.MaxMembers), // with the sender "a": MaxMembers+1
		} {
			_, err := cs.Create(ctx, "c", "a", rs, "hi")
			assert.ErrorIs(t, err, chat.ErrInvalid, name)
			assert.Equal(t, before, state(b), name)
		}
		// Duplicates do not count against the cap: MaxMembers distinct.
		rs := append(users(chat.MaxMembers-1), users(chat.MaxMembers-1)...)
		_, err := cs.Create(ctx, "c", "a", rs, "hi")
		require.NoError(t, err)
		ms, err := cs.Members(ctx, "c")
		require.NoError(t, err)
		assert.Len(t, ms, chat.MaxMembers)
	})
}

// Join refuses a new member of a full chat with ErrFull, writing nothing,
// while a member already in (a re-sent Join) is still answered success.
func TestJoin_full(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		_, err := cs.Create(ctx, "c", "a", users(chat.MaxMembers-2), "hi")
		require.NoError(t, err)
		require.NoError(t, cs.Join(ctx, "c", "x")) // the last seat
		before := state(b)
		err = cs.Join(ctx, "c", "y")
		assert.ErrorIs(t, err, chat.ErrFull)
		assert.Equal(t, before, state(b))
		// Joining again at the cap, as a re-send would, succeeds.
		require.NoError(t, cs.Join(ctx, "c", "x"))
		require.NoError(t, cs.Join(ctx, "c", "u0"))
		assert.Equal(t, before, state(b))
		ms, err := cs.Members(ctx, "c")
		require.NoError(t, err)
		assert.Len(t, ms, chat.MaxMembers)
		// A seat freed by Leave can be taken.
		require.NoError(t, cs.Leave(ctx, "c", "u0"))
		require.NoError(t, cs.Join(ctx, "c", "y"))
	})
}

// A file read meets a corrupt integer field of the transfer: it fails
// with a *ria.KeyError (ErrCorrupt) naming the field, having written
// nothing (not even the reader's own position).
func TestFileRead_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, field := range []string{"pos:c", "low", "last", "size"} {
			t.Run(field, func(t *testing.T) {
				b.Flush()
				cs := newChats(t, b, nil)
				_, err := cs.Create(ctx, "chat", "a", []string{"b", "c"}, "hi")
				require.NoError(t, err)
				id, err := cs.SendFile(ctx, "chat", "a", "f", bytes.NewReader(make([]byte, chat.ChunkSize+1)))
				require.NoError(t, err)
				fr, err := cs.OpenFile(ctx, "chat", "b", id)
				require.NoError(t, err)
				buf := make([]byte, chat.ChunkSize)
				_, err = io.ReadFull(fr, buf) // chunk 1, all of it
				require.NoError(t, err)
				meta := key(b, "chat", "file:"+id)
				require.NoError(t, b.Client.HSet(ctx, meta, field, "x").Err())
				before := b.Snapshot()
				_, err = fr.Read(buf) // chunk 2: moves b's position
				var kerr *ria.KeyError
				require.True(t, errors.As(err, &kerr), "%v", err)
				assert.ErrorIs(t, err, ria.ErrCorrupt)
				assert.Equal(t, meta, kerr.Key)
				assert.Contains(t, kerr.Role, field)
				assert.Equal(t, before, b.Snapshot())
			})
		}
	})
}
