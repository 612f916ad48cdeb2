package chat_test

import (
	"context"
	"sync"

	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newChats returns Chats on c (b's client if nil) under b's prefix.
func newChats(t testing.TB, b *redistest.Backend, c chat.Client, opts ...chat.Option) *chat.Chats {
	t.Helper()
	if c == nil {
		c = b.Client
	}
	cs, err := chat.New(c, append([]chat.Option{chat.WithPrefix(b.Prefix)}, opts...)...)
	require.NoError(t, err)
	return cs
}

// key returns the key of part of entity.
func key(b *redistest.Backend, entity, part string) string {
	return b.Prefix + "{" + entity + "}:" + part
}

// texts decodes the payloads of ms as strings, prefixed by the sender.
func texts(t testing.TB, ms []chat.Message) []string {
	t.Helper()
	out := make([]string, len(ms))
	for i, m := range ms {
		var s string
		require.NoError(t, m.Decode(&s))
		out[i] = m.Sender + ": " + s
	}
	return out
}

// state is b's snapshot without the reply records of once scripts
// (<prefix>{chat}:once:<nonce>, strings that expire after the client's
// retry window).
func state(b *redistest.Backend) map[string]string {
	snap := b.Snapshot()
	for k := range snap {
		if strings.Contains(k, "}:once:") {
			delete(snap, k)
		}
	}
	return snap
}

// subscribed reports whether a client subscribes to user's wake-up
// channel, on any node.
func subscribed(ctx context.Context, b *redistest.Backend, cs *chat.Chats, user string) bool {
	ch := b.Prefix + "{" + user + "}:wake"
	n := int64(0)
	count := func(ctx context.Context, c *redis.Client) error {
		m, err := c.PubSubNumSub(ctx, ch).Result()
		n += m[ch]
		return err
	}
	var err error
	if cc, ok := b.Client.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err = cc.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return count(ctx, c)
		})
	} else {
		err = count(ctx, b.Client.(*redis.Client))
	}
	return err == nil && n > 0
}

// watchWake subscribes to user's wake-up channel; the subscription is
// confirmed when it returns.
func watchWake(t *testing.T, b *redistest.Backend, user string) *redis.PubSub {
	t.Helper()
	ps := b.Client.Subscribe(t.Context(), b.Prefix+"{"+user+"}:wake")
	t.Cleanup(func() { _ = ps.Close() })
	_, err := ps.Receive(t.Context())
	require.NoError(t, err)
	return ps
}

// wakeupsBefore publishes a marker on user's wake-up channel from the
// node of chat's slot (a script with a key of chat) and returns the
// wake-ups ps receives before it: every wake-up published before the
// marker, by a script of chat or on the user's node (pub/sub messages
// from one node reach a subscriber in publish order, on a Cluster too).
// A synchronisation, not a timing.
func wakeupsBefore(t *testing.T, b *redistest.Backend, ps *redis.PubSub, chat, user string) []string {
	t.Helper()
	ctx := t.Context()
	ch := b.Prefix + "{" + user + "}:wake"
	err := b.Client.Eval(ctx, "return redis.call('PUBLISH', ARGV[1], ARGV[2])",
		[]string{key(b, chat, "marker")}, ch, "marker").Err()
	require.NoError(t, err)
	var got []string
	for {
		m, err := ps.ReceiveMessage(ctx)
		require.NoError(t, err)
		if m.Payload == "marker" {
			return got
		}
		got = append(got, m.Payload)
	}
}
