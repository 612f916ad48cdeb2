package autocomplete_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/autocomplete"
	"github.com/ria-go/ria/internal/redistest"
)

// The book's test_add_update_contact: ten contacts, re-adding one moves it
// to the front, removing one leaves nine, and a prefix returns exactly
// the matching ones in recency order.
func TestContacts_book(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		for i := range 10 {
			require.NoError(t, ac.AddContact(ctx, "user", fmt.Sprintf("contact-%d-%d", i/3, i)))
		}
		all, err := ac.RecentContacts(ctx, "user")
		require.NoError(t, err)
		require.Len(t, all, 10)
		assert.Equal(t, "contact-3-9", all[0])

		require.NoError(t, ac.AddContact(ctx, "user", "contact-1-4"))
		all, err = ac.RecentContacts(ctx, "user")
		require.NoError(t, err)
		assert.Equal(t, "contact-1-4", all[0])
		assert.Len(t, all, 10, "moved, not added")

		require.NoError(t, ac.RemoveContact(ctx, "user", "contact-2-6"))
		all, err = ac.RecentContacts(ctx, "user")
		require.NoError(t, err)
		assert.Len(t, all, 9)

		got, err := ac.Contacts(ctx, "user", "c")
		require.NoError(t, err)
		assert.Equal(t, all, got)
		got, err = ac.Contacts(ctx, "user", "contact-2-")
		require.NoError(t, err)
		assert.Equal(t, []string{"contact-2-8", "contact-2-7"}, got)
		got, err = ac.Contacts(ctx, "user", "CONTACT-1")
		require.NoError(t, err)
		assert.Equal(t, []string{"contact-1-4", "contact-1-5", "contact-1-3"}, got, "case-insensitive, in recency order")
		got, err = ac.Contacts(ctx, "user", "x")
		require.NoError(t, err)
		assert.Empty(t, got)

		// Removing a contact that is not there changes nothing.
		require.NoError(t, ac.RemoveContact(ctx, "user", "nobody"))
		all2, err := ac.RecentContacts(ctx, "user")
		require.NoError(t, err)
		assert.Equal(t, all, all2)
	})
}

// The list keeps the newest WithRecent contacts.
func TestContacts_trimmed(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		for i := range 105 {
			require.NoError(t, ac.AddContact(ctx, "user", fmt.Sprintf("c%03d", i)))
		}
		all, err := ac.RecentContacts(ctx, "user")
		require.NoError(t, err)
		require.Len(t, all, 100, "the book's 100 by default")
		assert.Equal(t, "c104", all[0])
		assert.Equal(t, "c005", all[99])

		short := newCompleter(t, b, nil, autocomplete.WithRecent(3))
		for _, c := range []string{"Ann", "Bob", "Cid", "Dee", "Bob"} {
			require.NoError(t, short.AddContact(ctx, "u2", c))
		}
		all, err = short.RecentContacts(ctx, "u2")
		require.NoError(t, err)
		assert.Equal(t, []string{"Bob", "Dee", "Cid"}, all)
	})
}

// Recent contacts in any script and case.
func TestContacts_unicode(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		for _, c := range []string{"Émile", "émilie", "Emma", "Σωκράτης", "σοφία", "Straße", "STRASSE"} {
			require.NoError(t, ac.AddContact(ctx, "u", c))
		}
		for prefix, want := range map[string][]string{
			"ÉMI":   {"émilie", "Émile"},
			"em":    {"Emma"},
			"ΣΟ":    {"σοφία"},
			"σω":    {"Σωκράτης"},
			"stra":  {"STRASSE", "Straße"},
			"straß": {"Straße"},
		} {
			got, err := ac.Contacts(ctx, "u", prefix)
			require.NoError(t, err)
			assert.Equal(t, want, got, prefix)
		}
	})
}

// The book's test_address_book_autocomplete: jeff, jenny, jack and
// jennifer join; "je" completes to three names, two after jeff leaves.
func TestComplete_book(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		for _, name := range []string{"jeff", "jenny", "jack", "jennifer"} {
			require.NoError(t, ac.Join(ctx, "test", name))
		}
		got, err := ac.Complete(ctx, "test", "je", 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"jeff", "jennifer", "jenny"}, got)
		require.NoError(t, ac.Leave(ctx, "test", "jeff"))
		got, err = ac.Complete(ctx, "test", "je", 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"jennifer", "jenny"}, got)
		got, err = ac.Complete(ctx, "test", "je", 1)
		require.NoError(t, err)
		assert.Equal(t, []string{"jennifer"}, got, "at most n")
		got, err = ac.Complete(ctx, "test", "x", 10)
		require.NoError(t, err)
		assert.Empty(t, got)
		data, records := splitKeys(b)
		assert.Equal(t, []string{key(b, "test", "members")}, data, "no sentinel, no other key")
		assert.Len(t, records, 5, "one reply record per Join and Leave, none for Complete")
	})
}

// The book's words: "th" gives that, these; "w" gives we, will, words.
func TestComplete_words(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		require.NoError(t, ac.Join(ctx, "words", strings.Fields("these are some words that we will be autocompleting on")...))
		got, err := ac.Complete(ctx, "words", "th", 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"that", "these"}, got)
		got, err = ac.Complete(ctx, "words", "w", 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"we", "will", "words"}, got)
		got, err = ac.Complete(ctx, "words", "TH", 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"that", "these"}, got)
	})
}

// Case-insensitive over any script, the original spelling returned; names
// that differ only in case are distinct members, listed together.
func TestComplete_unicode(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		names := []string{"Jeff", "jeff", "JEFFREY", "Ærøskøbing", "ærø", "Łódź", "łoś", "Ωmega", "ωmega",
			"Kelvin", "\u212aelvin", "Straße", "日本語", "日本", "😀 smile", "123abc"}
		require.NoError(t, ac.Join(ctx, "s", names...))
		for prefix, want := range map[string][]string{
			"jeff":   {"Jeff", "jeff", "JEFFREY"},
			"ÆRØ":    {"ærø", "Ærøskøbing"},
			"ŁO":     {"łoś"},
			"łó":     {"Łódź"},
			"ΩM":     {"Ωmega", "ωmega"},
			"kel":    {"Kelvin", "\u212aelvin"},
			"\u212a": {"Kelvin", "\u212aelvin"},
			"STRASS": nil,
			"straß":  {"Straße"},
			"日本":     {"日本", "日本語"},
			"😀":      {"😀 smile"},
			"12":     {"123abc"},
		} {
			got, err := ac.Complete(ctx, "s", prefix, 100)
			require.NoError(t, err)
			if want == nil {
				assert.Empty(t, got, prefix)
				continue
			}
			assert.Equal(t, want, got, prefix)
		}
	})
}

// Prefixes made of the characters that ZRANGEBYLEX gives a meaning ("-",
// "+", "[", "(") complete like any other (miniredis once read "[-" as
// minus infinity).
func TestComplete_rangeCharacters(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		require.NoError(t, ac.Join(ctx, "s", " a", "'b", "+c", "+", "-d", "-", "[e", "(f", "zz"))
		for prefix, want := range map[string][]string{
			"-": {"-", "-d"},
			"+": {"+", "+c"},
			"[": {"[e"},
			"(": {"(f"},
			"z": {"zz"},
		} {
			got, err := ac.Complete(ctx, "s", prefix, 100)
			require.NoError(t, err)
			assert.Equal(t, want, got, prefix)
		}
	})
}
