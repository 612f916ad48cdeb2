package chat_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
