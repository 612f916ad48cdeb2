package chat_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

// failingReader yields data, then fails: a sender whose source breaks
// leaves its transfer unfinished.
type failingReader struct{ r io.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("source broke")
	}
	return n, err
}

// assertChatGone asserts that no key of the test is left for good: every
// key left is a reply record (<prefix>{<chat>}:once:<nonce>) that expires.
func assertChatGone(t *testing.T, b *redistest.Backend) {
	t.Helper()
	for _, k := range b.Keys("") {
		ttl, err := b.Client.PTTL(context.Background(), k).Result()
		require.NoError(t, err)
		if !strings.Contains(k, "}:once:") || ttl <= 0 {
			t.Errorf("key %s left behind (TTL %v)", k, ttl)
		}
	}
}

// waitFile waits for the message announcing a file to user and returns
// the file's id.
func waitFile(ctx context.Context, t *testing.T, cs *chat.Chats, user string) string {
	t.Helper()
	for {
		ms, err := cs.Wait(ctx, user)
		require.NoError(t, err)
		for _, m := range ms {
			var ref chat.FileRef
			if m.Decode(&ref) == nil && ref.File != "" {
				return ref.File
			}
		}
	}
}

// When its last member leaves, a chat is deleted with its file transfers:
// an abandoned one (its source broke), one sent whole but never read, one
// half read. A chat created again with the same id has no file.
func TestLeave_last_deletesFiles(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		_, err := cs.Create(ctx, "c", "s", []string{"a", "b"}, "hi")
		require.NoError(t, err)
		broken, err := cs.SendFile(ctx, "c", "s", "broken", &failingReader{bytes.NewReader(make([]byte, chat.ChunkSize+100))})
		require.Error(t, err)
		require.NotEmpty(t, broken)
		unread, err := cs.SendFile(ctx, "c", "s", "unread", bytes.NewReader(make([]byte, 3*chat.ChunkSize)))
		require.NoError(t, err)
		fr, err := cs.OpenFile(ctx, "c", "a", unread)
		require.NoError(t, err)
		_, err = io.ReadFull(fr, make([]byte, chat.ChunkSize+1)) // a reads into chunk 2
		require.NoError(t, err)
		ids, err := cs.Files(ctx, "c")
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{broken, unread}, ids)

		for _, u := range []string{"s", "a", "b"} {
			require.NoError(t, cs.Leave(ctx, "c", u))
		}
		assertChatGone(t, b)

		// The same id again: a new chat, without the old transfers.
		_, err = cs.Create(ctx, "c", "s", []string{"a"}, "again")
		require.NoError(t, err)
		ids, err = cs.Files(ctx, "c")
		require.NoError(t, err)
		assert.Empty(t, ids)
		_, err = cs.OpenFile(ctx, "c", "a", unread)
		assert.ErrorIs(t, err, chat.ErrNoFile)
		_, err = cs.OpenFile(ctx, "c", "b", broken)
		assert.ErrorIs(t, err, chat.ErrNoFile)
	})
}

// The last member leaves while a file is being sent (the sender waits on
// the window: nobody reads) and read (a receiver that left keeps its
// reader): the sender's next chunk fails with ErrNoFile instead of
// bringing the transfer back, the reader's next read fails with ErrNoFile
// instead of a silent, truncated end of file, and nothing is left.
func TestLeave_last_duringTransfer(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // a bound if it regresses into waiting for ever
		defer cancel()
		cs := newChats(t, b, nil, chat.WithFileWindow(chat.ChunkSize))
		_, err := cs.Create(ctx, "c", "s", []string{"a", "b"}, "hi")
		require.NoError(t, err)
		// Clear message 1 so that Wait returns with the announcement.
		for _, u := range []string{"a", "b"} {
			_, err = cs.Fetch(ctx, u)
			require.NoError(t, err)
		}
		sent := make(chan error, 1)
		go func() {
			_, err := cs.SendFile(ctx, "c", "s", "f", bytes.NewReader(make([]byte, 10*chat.ChunkSize)))
			sent <- err
		}()
		id := waitFile(ctx, t, cs, "a")
		fr, err := cs.OpenFile(ctx, "c", "a", id)
		require.NoError(t, err)
		_, err = io.ReadFull(fr, make([]byte, chat.ChunkSize)) // chunk 1: waits for it
		require.NoError(t, err)

		for _, u := range []string{"a", "b", "s"} {
			require.NoError(t, cs.Leave(ctx, "c", u))
		}
		err = <-sent
		assert.ErrorIs(t, err, chat.ErrNoFile, "the sender learns the transfer is gone")
		_, err = io.ReadAll(fr)
		assert.ErrorIs(t, err, chat.ErrNoFile, "the reader learns the transfer is gone")
		assertChatGone(t, b)
	})
}

// A Leave and a Join of the same user and chat overlap (two devices):
// Leave's script runs, then Join's script and its SADD, then Leave's SREM.
// The Join came last: the user is a member, and their list holds the chat
// again, so Fetch returns its messages (the SREM used to leave a member
// whose Fetch never saw the chat).
func TestLeave_joinOverlapping(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		_, err := cs.Create(ctx, "c", "a", []string{"u"}, "m1")
		require.NoError(t, err)
		_, err = cs.Fetch(ctx, "u")
		require.NoError(t, err)

		gate := redistest.NewGate(func(cmds []redis.Cmder) bool {
			return len(cmds) == 1 && cmds[0].Name() == "srem"
		})
		rdb, _ := b.NewClient()
		rdb.AddHook(gate)
		leaver := newChats(t, b, rdb)
		hold := gate.Arm()
		left := make(chan error, 1)
		go func() { left <- leaver.Leave(ctx, "c", "u") }()
		hold.Entered() // Leave's script has run; its SREM waits
		require.NoError(t, cs.Join(ctx, "c", "u"))
		hold.Release()
		require.NoError(t, <-left)

		members, err := cs.Members(ctx, "c")
		require.NoError(t, err)
		require.Contains(t, members, "u", "the Join came last: u is a member")
		chats, err := cs.Chats(ctx, "u")
		require.NoError(t, err)
		assert.Contains(t, chats, "c")
		_, err = cs.Send(ctx, "c", "a", "m2")
		require.NoError(t, err)
		ms, err := cs.Fetch(ctx, "u")
		require.NoError(t, err)
		assert.Equal(t, []string{"a: m2"}, texts(t, ms), "a member fetches a message sent while a member")
	})
}

// As TestLeave_joinOverlapping, with a Send after Leave's SREM: it wakes u
// while c is off their list (their Wait fetches nothing); Leave, putting
// c back, wakes u again.
func TestLeave_joinOverlapping_wakes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		_, err := cs.Create(ctx, "c", "a", []string{"u"}, "m1")
		require.NoError(t, err)
		_, err = cs.Fetch(ctx, "u")
		require.NoError(t, err)
		obs := watchWake(t, b, "u")

		gate := redistest.NewGate(func(cmds []redis.Cmder) bool {
			return len(cmds) == 1 && (cmds[0].Name() == "srem" || cmds[0].Name() == "zscore")
		})
		rdb, _ := b.NewClient()
		rdb.AddHook(gate)
		leaver := newChats(t, b, rdb)
		srem, zscore := gate.Arm(), gate.Arm()
		left := make(chan error, 1)
		go func() { left <- leaver.Leave(ctx, "c", "u") }()
		srem.Entered() // Leave's script has run; its SREM waits
		require.NoError(t, cs.Join(ctx, "c", "u"))
		srem.Release()
		zscore.Entered() // c is off u's list, u a member
		_, err = cs.Send(ctx, "c", "a", "m2")
		require.NoError(t, err)
		wakeupsBefore(t, b, obs, "c", "u") // Join's and the send's
		zscore.Release()
		require.NoError(t, <-left)
		assert.Len(t, wakeupsBefore(t, b, obs, "c", "u"), 1, "Leave wakes u once c is back on their list")
		ms, err := cs.Fetch(ctx, "u")
		require.NoError(t, err)
		assert.Equal(t, []string{"a: m2"}, texts(t, ms))
	})
}
