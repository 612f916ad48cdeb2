package autocomplete_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/autocomplete"
	"github.com/ria-go/ria/internal/redistest"
)

func TestNew_badOptions(t *testing.T) {
	b := redistest.New(t, redistest.Mini)
	for _, opts := range [][]autocomplete.Option{
		{autocomplete.WithPrefix("a{b")},
		{autocomplete.WithRecent(0)},
		{autocomplete.WithRecent(autocomplete.MaxRecent + 1)},
	} {
		_, err := autocomplete.New(b.Client, opts...)
		assert.Error(t, err)
	}
	assert.Panics(t, func() { _, _ = autocomplete.New(nil) })
}

// Bad input gets a clear error, reaches no Redis and changes nothing.
func TestBadInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		require.NoError(t, ac.AddContact(ctx, "u", "Ann"))
		require.NoError(t, ac.Join(ctx, "g", "Ann"))
		before := b.Snapshot()
		long := strings.Repeat("x", autocomplete.MaxName+1)
		longEntity := strings.Repeat("x", autocomplete.MaxEntity+1)
		many := make([]string, autocomplete.MaxBatch+1)
		for i := range many {
			many[i] = "n"
		}
		for _, c := range []struct {
			name string
			want error
			fn   func() error
		}{
			{"empty user", autocomplete.ErrEmpty, func() error { return ac.AddContact(ctx, "", "Bob") }},
			{"user with a brace", autocomplete.ErrInvalid, func() error { return ac.AddContact(ctx, "u}", "Bob") }},
			{"long user", autocomplete.ErrTooLong, func() error { return ac.AddContact(ctx, longEntity, "Bob") }},
			{"empty contact", autocomplete.ErrEmpty, func() error { return ac.AddContact(ctx, "u", "") }},
			{"long contact", autocomplete.ErrTooLong, func() error { return ac.AddContact(ctx, "u", long) }},
			{"contact not UTF-8", autocomplete.ErrInvalid, func() error { return ac.AddContact(ctx, "u", "a\xffb") }},
			{"contact with NUL", autocomplete.ErrInvalid, func() error { return ac.AddContact(ctx, "u", "a\x00b") }},
			{"remove empty contact", autocomplete.ErrEmpty, func() error { return ac.RemoveContact(ctx, "u", "") }},
			{"contacts empty prefix", autocomplete.ErrEmpty, func() error { _, err := ac.Contacts(ctx, "u", ""); return err }},
			{"contacts long prefix", autocomplete.ErrTooLong, func() error { _, err := ac.Contacts(ctx, "u", long); return err }},
			{"contacts empty user", autocomplete.ErrEmpty, func() error { _, err := ac.Contacts(ctx, "", "a"); return err }},
			{"recent empty user", autocomplete.ErrEmpty, func() error { _, err := ac.RecentContacts(ctx, ""); return err }},
			{"join no names", autocomplete.ErrInvalid, func() error { return ac.Join(ctx, "g") }},
			{"join too many", autocomplete.ErrInvalid, func() error { return ac.Join(ctx, "g", many...) }},
			{"join empty name", autocomplete.ErrEmpty, func() error { return ac.Join(ctx, "g", "Bob", "") }},
			{"join long name", autocomplete.ErrTooLong, func() error { return ac.Join(ctx, "g", "Bob", long) }},
			{"join NUL", autocomplete.ErrInvalid, func() error { return ac.Join(ctx, "g", "B\x00b") }},
			{"join bad UTF-8", autocomplete.ErrInvalid, func() error { return ac.Join(ctx, "g", "\xc3") }},
			{"join empty set", autocomplete.ErrEmpty, func() error { return ac.Join(ctx, "", "Bob") }},
			{"leave empty name", autocomplete.ErrEmpty, func() error { return ac.Leave(ctx, "g", "") }},
			{"complete empty prefix", autocomplete.ErrEmpty, func() error { _, err := ac.Complete(ctx, "g", "", 5); return err }},
			{"complete long prefix", autocomplete.ErrTooLong, func() error { _, err := ac.Complete(ctx, "g", long, 5); return err }},
			{"complete bad UTF-8", autocomplete.ErrInvalid, func() error { _, err := ac.Complete(ctx, "g", "\xff", 5); return err }},
			{"complete n 0", autocomplete.ErrInvalid, func() error { _, err := ac.Complete(ctx, "g", "a", 0); return err }},
			{"complete n too big", autocomplete.ErrInvalid, func() error {
				_, err := ac.Complete(ctx, "g", "a", autocomplete.MaxCompletions+1)
				return err
			}},
			{"members long after", autocomplete.ErrTooLong, func() error { _, err := ac.Members(ctx, "g", long, 5); return err }},
			{"members after not UTF-8", autocomplete.ErrInvalid, func() error { _, err := ac.Members(ctx, "g", "\xff", 5); return err }},
			{"members after with NUL", autocomplete.ErrInvalid, func() error { _, err := ac.Members(ctx, "g", "a\x00", 5); return err }},
			{"members n 0", autocomplete.ErrInvalid, func() error { _, err := ac.Members(ctx, "g", "", 0); return err }},
			{"members n too big", autocomplete.ErrInvalid, func() error {
				_, err := ac.Members(ctx, "g", "", autocomplete.MaxCompletions+1)
				return err
			}},
			{"members empty set", autocomplete.ErrEmpty, func() error { _, err := ac.Members(ctx, "", "", 5); return err }},
			{"members set with brace", autocomplete.ErrInvalid, func() error { _, err := ac.Members(ctx, "g}", "", 5); return err }},
			{"complete set with brace", autocomplete.ErrInvalid, func() error { _, err := ac.Complete(ctx, "{g", "a", 5); return err }},
		} {
			var err error
			rt, _ := b.Count.Delta(func() { err = c.fn() })
			if assert.ErrorIs(t, err, c.want, c.name) {
				assert.True(t, strings.HasPrefix(err.Error(), "autocomplete: "), "%s: %v", c.name, err)
			}
			assert.Zero(t, rt, "%s reached Redis", c.name)
		}
		assert.Equal(t, before, b.Snapshot())
	})
}

// A member that this package did not write is reported, not returned.
func TestComplete_foreignMember(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		require.NoError(t, b.Client.ZAdd(ctx, key(b, "g", "members"), redis.Z{Member: "annie"}).Err())
		_, err := ac.Complete(ctx, "g", "an", 5)
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.True(t, errors.Is(err, ria.ErrCorrupt))
		assert.Equal(t, key(b, "g", "members"), kerr.Key)
		_, err = ac.Members(ctx, "g", "", 5)
		require.ErrorAs(t, err, &kerr)
		assert.True(t, errors.Is(err, ria.ErrCorrupt))
		assert.Equal(t, key(b, "g", "members"), kerr.Key)
	})
}
