package autocomplete_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
)

// Every operation refuses a key of another type with a *ria.KeyError naming
// the key and its role, having changed nothing.
func TestWrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		recent := redistest.KeyRole{Key: key(b, "u", "recent"), Type: "list", Role: "autocomplete recent contacts"}
		members := redistest.KeyRole{Key: key(b, "g", "members"), Type: "zset", Role: "autocomplete members"}
		setup := func() {
			require.NoError(t, ac.AddContact(ctx, "u", "Ann"))
			require.NoError(t, ac.Join(ctx, "g", "Ann"))
		}
		for name, call := range map[string]func() error{
			"AddContact":     func() error { return ac.AddContact(ctx, "u", "Bob") },
			"RemoveContact":  func() error { return ac.RemoveContact(ctx, "u", "Ann") },
			"Contacts":       func() error { _, err := ac.Contacts(ctx, "u", "a"); return err },
			"RecentContacts": func() error { _, err := ac.RecentContacts(ctx, "u"); return err },
		} {
			t.Run(name, func(t *testing.T) { b.CheckWrongTypes(t, setup, call, recent) })
		}
		for name, call := range map[string]func() error{
			"Join":     func() error { return ac.Join(ctx, "g", "Bob") },
			"Leave":    func() error { return ac.Leave(ctx, "g", "Ann") },
			"Complete": func() error { _, err := ac.Complete(ctx, "g", "a", 5); return err },
			"Members":  func() error { _, err := ac.Members(ctx, "g", "", 5); return err },
		} {
			t.Run(name, func(t *testing.T) { b.CheckWrongTypes(t, setup, call, members) })
		}
	})
}
