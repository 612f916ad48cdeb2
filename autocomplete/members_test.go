package autocomplete_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/autocomplete"
	"github.com/ria-go/ria/internal/redistest"
)

// inOrder returns names in the order of Complete and Members: by folded
// form, then by bytes.
func inOrder(names ...string) []string {
	out := slices.Clone(names)
	slices.SortFunc(out, func(a, b string) int {
		return strings.Compare(autocomplete.Fold(a)+"\x00"+a, autocomplete.Fold(b)+"\x00"+b)
	})
	return out
}

// allMembers pages through set n names at a time, one round trip a page.
func allMembers(t *testing.T, b *redistest.Backend, ac *autocomplete.Completer, set string, n int) []string {
	t.Helper()
	var all []string
	after := ""
	for {
		var page []string
		var err error
		rt, _ := b.Count.Delta(func() { page, err = ac.Members(t.Context(), set, after, n) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "a page: one round trip")
		all = append(all, page...)
		if len(page) < n {
			return all
		}
		after = page[len(page)-1]
	}
}

// Members pages through a set in folded order, names as spelled: the range
// characters of ZRANGEBYLEX ("-", "+", "[", "(") are names like others.
func TestMembers_paging(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		got, err := ac.Members(ctx, "g", "", 10)
		require.NoError(t, err)
		assert.Empty(t, got, "a set never joined")
		names := []string{"jeff", "Jeff", "JEFF", "jenny", "Jenny", "jack", "jennifer", "Ærø", "æble", "Åsa",
			"-", "+", "[", "(", "-x", "+x", "zz", "a", "A", "Kelvin", "\u212aelvin", "日本"}
		require.NoError(t, ac.Join(ctx, "g", names...))
		want := inOrder(names...)
		for _, n := range []int{1, 3, len(names), len(names) + 1, autocomplete.MaxCompletions} {
			assert.Equal(t, want, allMembers(t, b, ac, "g", n), "pages of %d", n)
		}
		// after need not be a member.
		got, err = ac.Members(ctx, "g", "JENNA", 2)
		require.NoError(t, err)
		assert.Equal(t, []string{"jennifer", "Jenny"}, got)
		got, err = ac.Members(ctx, "g", "\uffff", 5)
		require.NoError(t, err)
		assert.Empty(t, got, "after the last name")
		data, records := splitKeys(b)
		assert.Equal(t, []string{key(b, "g", "members")}, data, "nothing written")
		assert.Len(t, records, 1, "the Join's reply record only: Members writes none")
	})
}

// Paging under joins and leaves between pages: every name there from the
// first page to the last is listed once, in order; a name that joins or
// leaves meanwhile is listed only if its place is read while it is there.
func TestMembers_concurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac := newCompleter(t, b, nil)
		var names []string
		for c := 'a'; c <= 'z'; c++ {
			names = append(names, string(c)+"1")
		}
		require.NoError(t, ac.Join(ctx, "g", names...))
		first, err := ac.Members(ctx, "g", "", 5) // a1 .. e1
		require.NoError(t, err)
		require.Equal(t, names[:5], first)
		// Behind the cursor: a0 joins, b1 leaves; ahead: f0 joins, g1 leaves.
		require.NoError(t, ac.Join(ctx, "g", "a0", "f0"))
		require.NoError(t, ac.Leave(ctx, "g", "b1", "g1"))
		all := first
		after := first[len(first)-1]
		for {
			page, err := ac.Members(ctx, "g", after, 5)
			require.NoError(t, err)
			all = append(all, page...)
			if len(page) < 5 {
				break
			}
			after = page[len(page)-1]
		}
		want := slices.Clone(names[:5])
		want = append(want, "f0", "f1")
		want = append(want, names[7:]...)
		assert.Equal(t, want, all, "b1 read before it left, g1 after; f0 read after it joined, a0 not")
	})
}
