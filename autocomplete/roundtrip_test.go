package autocomplete_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
)

// Round trips per operation, as the package doc states them (scripts
// cached on the server first).
func TestRoundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		// Cache every script on the server.
		require.NoError(t, ac.AddContact(ctx, "u", "warm"))
		require.NoError(t, ac.RemoveContact(ctx, "u", "warm"))
		require.NoError(t, ac.Join(ctx, "g", "warm"))
		require.NoError(t, ac.Leave(ctx, "g", "warm"))
		require.NoError(t, ac.Join(ctx, "g", "jeff", "jenny", "jack"))

		for _, c := range []struct {
			op   string
			want int64
			fn   func() error
		}{
			{"AddContact", 1, func() error { return ac.AddContact(ctx, "u", "Jeff") }},
			{"AddContact again", 1, func() error { return ac.AddContact(ctx, "u", "Jeff") }},
			{"Contacts", 1, func() error { _, err := ac.Contacts(ctx, "u", "je"); return err }},
			{"RecentContacts", 1, func() error { _, err := ac.RecentContacts(ctx, "u"); return err }},
			{"RemoveContact", 1, func() error { return ac.RemoveContact(ctx, "u", "Jeff") }},
			{"Join", 1, func() error { return ac.Join(ctx, "g", "jennifer", "joe") }},
			{"Complete", 1, func() error { _, err := ac.Complete(ctx, "g", "je", 10); return err }},
			{"Members", 1, func() error { _, err := ac.Members(ctx, "g", "", 10); return err }},
			{"Members after", 1, func() error { _, err := ac.Members(ctx, "g", "jeff", 10); return err }},
			{"Leave", 1, func() error { return ac.Leave(ctx, "g", "joe") }},
		} {
			var err error
			rt, _ := b.Count.Delta(func() { err = c.fn() })
			require.NoError(t, err, c.op)
			assert.Equal(t, c.want, rt, "round trips of %s", c.op)
		}
	})
}
