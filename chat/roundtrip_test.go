package chat_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

// Round trips per operation, as the package doc states them (scripts
// cached on the servers first): send 1, fetch 2 whatever the number of
// chats (one pipeline, one round trip per node), create, join, leave 2.
func TestRoundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		// Cache every script on every server: chats spread over the
		// cluster's nodes.
		for i := range 40 {
			id := fmt.Sprintf("warm-%d", i)
			_, err := cs.Create(ctx, id, "u", []string{"v"}, "x")
			require.NoError(t, err)
			_, err = cs.Send(ctx, id, "u", "x")
			require.NoError(t, err)
			require.NoError(t, cs.Join(ctx, id, "w"))
			_, err = cs.History(ctx, id, 0, 1)
			require.NoError(t, err)
		}
		_, err := cs.Unread(ctx, "u")
		require.NoError(t, err)
		_, err = cs.Fetch(ctx, "u")
		require.NoError(t, err)
		for i := range 40 {
			require.NoError(t, cs.Leave(ctx, fmt.Sprintf("warm-%d", i), "w"))
		}

		// go-redis sends a pipeline as one round trip per node it
		// touches (the counting hook sees each): on the cluster, a
		// fetch is SMEMBERS then at most one pipeline per master, at
		// most 2 round trips on any node.
		nodes := int64(1)
		if b.Kind == redistest.Cluster {
			nodes = int64(len(b.Addrs()))
		}
		pipe := 1 + nodes
		for _, c := range []struct {
			op   string
			want int64
			fn   func() error
		}{
			{"Create", pipe, func() error { _, err := cs.Create(ctx, "c", "a", []string{"b", "d"}, "hi"); return err }},
			{"Send", 1, func() error { _, err := cs.Send(ctx, "c", "a", "hello"); return err }},
			{"Join", 2, func() error { return cs.Join(ctx, "warm-1", "a") }},
			{"History", 1, func() error { _, err := cs.History(ctx, "c", 0, 10); return err }},
			{"Members", 1, func() error { _, err := cs.Members(ctx, "c"); return err }},
			{"Unread of 41 chats", pipe, func() error { _, err := cs.Unread(ctx, "u"); return err }},
			{"Fetch of 41 chats", pipe, func() error { _, err := cs.Fetch(ctx, "u"); return err }},
			{"Fetch of 2 chats", pipe, func() error { _, err := cs.Fetch(ctx, "a"); return err }},
			{"Fetch of nothing new", pipe, func() error { _, err := cs.Fetch(ctx, "a"); return err }},
			{"Fetch of no chats", 1, func() error { _, err := cs.Fetch(ctx, "nobody"); return err }},
			{"Leave", 3, func() error { return cs.Leave(ctx, "c", "d") }},
		} {
			var err error
			rt, _ := b.Count.Delta(func() { err = c.fn() })
			require.NoError(t, err, c.op)
			if c.want == pipe && nodes > 1 {
				assert.LessOrEqual(t, rt, c.want, "round trips of %s", c.op)
				continue
			}
			assert.Equal(t, c.want, rt, "round trips of %s", c.op)
		}
	})
}

// Round trips of a file, as the package doc states them: SendFile 1 to
// start (open and announce), 1 per chunk, 1 per wait, 1 for the end; a
// read 1 to open, 1 per chunk, 1 per wait, 1 answered end of file. A
// one-chunk file the window holds, read once complete: 3 and 3.
func TestRoundTrips_files(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		_, err := cs.Create(ctx, "c", "s", []string{"r"}, "hi")
		require.NoError(t, err)
		send := func(data []byte) string {
			id, err := cs.SendFile(ctx, "c", "s", "f", bytes.NewReader(data))
			require.NoError(t, err)
			return id
		}
		read := func(id string, data []byte) {
			fr, err := cs.OpenFile(ctx, "c", "r", id)
			require.NoError(t, err)
			got, err := io.ReadAll(fr)
			require.NoError(t, err)
			require.Equal(t, data, got)
		}
		one := bytes.Repeat([]byte{'x'}, chat.ChunkSize)
		three := bytes.Repeat([]byte{'y'}, 2*chat.ChunkSize+1)
		read(send(one), one) // loads the scripts

		for _, c := range []struct {
			data   []byte
			chunks int64
		}{{one, 1}, {three, 3}} {
			var id string
			sendRT, _ := b.Count.Delta(func() { id = send(c.data) })
			readRT, _ := b.Count.Delta(func() { read(id, c.data) })
			assert.Equal(t, 1+c.chunks+1, sendRT, "round trips of SendFile of %d chunks, no wait", c.chunks)
			assert.Equal(t, 1+c.chunks+1, readRT, "round trips of reading a file of %d chunks, no wait", c.chunks)
		}
	})
}
