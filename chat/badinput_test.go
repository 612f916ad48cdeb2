package chat_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

func TestNew_badOptions(t *testing.T) {
	b := redistest.New(t, redistest.Mini)
	for name, opt := range map[string]chat.Option{
		"prefix":    chat.WithPrefix("a{b"),
		"codec":     chat.WithCodec(nil),
		"fetch 0":   chat.WithFetchLimit(0),
		"fetch big": chat.WithFetchLimit(chat.MaxPage + 1),
		"poll":      chat.WithPollInterval(time.Millisecond),
	} {
		_, err := chat.New(b.Client, opt)
		assert.Error(t, err, name)
	}
}

// Bad input gets a clear error and changes nothing.
func TestBadInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		_, err := cs.Create(ctx, "c", "a", []string{"b"}, "hi")
		require.NoError(t, err)
		before := state(b)
		long := strings.Repeat("x", chat.MaxName+1)
		many := make([]string, chat.MaxMembers)
		for i := range many {
			many[i] = "u" + strings.Repeat("y", i%50) + string(rune('a'+i%26)) + strings.Repeat("z", i/26)
		}
		for _, c := range []struct {
			name string
			want error
			call func() error
		}{
			{"create empty chat", chat.ErrEmpty, func() error { _, err := cs.Create(ctx, "", "a", []string{"b"}, "x"); return err }},
			{"create empty sender", chat.ErrEmpty, func() error { _, err := cs.Create(ctx, "d", "", []string{"b"}, "x"); return err }},
			{"create empty recipient", chat.ErrEmpty, func() error { _, err := cs.Create(ctx, "d", "a", []string{""}, "x"); return err }},
			{"create no recipients", chat.ErrInvalid, func() error { _, err := cs.Create(ctx, "d", "a", nil, "x"); return err }},
			{"create too many", chat.ErrInvalid, func() error { _, err := cs.Create(ctx, "d", "a", many, "x"); return err }},
			{"create long id", chat.ErrTooLong, func() error { _, err := cs.Create(ctx, long, "a", []string{"b"}, "x"); return err }},
			{"create brace", chat.ErrInvalid, func() error { _, err := cs.Create(ctx, "d}", "a", []string{"b"}, "x"); return err }},
			{"create control char", chat.ErrInvalid, func() error { _, err := cs.Create(ctx, "d", "a\n", []string{"b"}, "x"); return err }},
			{"create C1 control char", chat.ErrInvalid, func() error { _, err := cs.Create(ctx, "d\u0085", "a", []string{"b"}, "x"); return err }},
			{"create C1 control sender", chat.ErrInvalid, func() error { _, err := cs.Create(ctx, "d", "a\u009b[2J", []string{"b"}, "x"); return err }},
			{"create exists", chat.ErrExists, func() error { _, err := cs.Create(ctx, "c", "a", []string{"b"}, "x"); return err }},
			{"create bad payload", nil, func() error { _, err := cs.Create(ctx, "d", "a", []string{"b"}, func() {}); return err }},
			{"send unknown chat", chat.ErrNoChat, func() error { _, err := cs.Send(ctx, "nope", "a", "x"); return err }},
			{"send not a member", chat.ErrNotMember, func() error { _, err := cs.Send(ctx, "c", "z", "x"); return err }},
			{"send empty sender", chat.ErrEmpty, func() error { _, err := cs.Send(ctx, "c", "", "x"); return err }},
			{"send huge payload", chat.ErrTooLong, func() error {
				_, err := cs.Send(ctx, "c", "a", strings.Repeat("x", chat.MaxPayload))
				return err
			}},
			{"join unknown chat", chat.ErrNoChat, func() error { return cs.Join(ctx, "nope", "a") }},
			{"members empty chat", chat.ErrEmpty, func() error { _, err := cs.Members(ctx, ""); return err }},
			{"members brace", chat.ErrInvalid, func() error { _, err := cs.Members(ctx, "d}"); return err }},
			{"join empty user", chat.ErrEmpty, func() error { return cs.Join(ctx, "c", "") }},
			{"leave empty chat", chat.ErrEmpty, func() error { return cs.Leave(ctx, "", "a") }},
			{"history unknown chat", chat.ErrNoChat, func() error { _, err := cs.History(ctx, "nope", 0, 10); return err }},
			{"history n 0", chat.ErrInvalid, func() error { _, err := cs.History(ctx, "c", 0, 0); return err }},
			{"history n big", chat.ErrInvalid, func() error { _, err := cs.History(ctx, "c", 0, chat.MaxPage+1); return err }},
			{"history negative", chat.ErrInvalid, func() error { _, err := cs.History(ctx, "c", -1, 10); return err }},
			{"fetch empty user", chat.ErrEmpty, func() error { _, err := cs.Fetch(ctx, ""); return err }},
			{"fetch long user", chat.ErrTooLong, func() error { _, err := cs.Fetch(ctx, long); return err }},
			{"unread empty user", chat.ErrEmpty, func() error { _, err := cs.Unread(ctx, ""); return err }},
			{"wait empty user", chat.ErrEmpty, func() error { _, err := cs.Wait(ctx, ""); return err }},
		} {
			err := c.call()
			require.Error(t, err, c.name)
			if c.want != nil {
				assert.ErrorIs(t, err, c.want, c.name)
			}
			assert.True(t, strings.HasPrefix(err.Error(), "chat: "), "%s: %v", c.name, err)
			assert.Equal(t, before, state(b), c.name)
		}
		var s string
		m := chat.Message{Payload: []byte("not json")}
		assert.Error(t, m.Decode(&s))
		assert.False(t, errors.Is(m.Decode(&s), chat.ErrNoChat))
	})
}
