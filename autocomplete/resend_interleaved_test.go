package autocomplete_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/autocomplete"
	"github.com/ria-go/ria/internal/redistest"
)

// These tests lose the reply of a write's script, so that go-redis re-sends
// it, and let another client write between the first run and the re-send.
// Every write is a once-script: the re-send is answered from the record of
// the first run and changes nothing, so the other client's later write
// stands.

// resendCompleter returns a Completer on a faulty client, with the scripts
// cached on the nodes of user and set. A test then arms the proxy with
// LoseReplyThen: the next script loses its reply, and another client acts
// before go-redis's re-send reaches the server.
func resendCompleter(t *testing.T, b *redistest.Backend, user, set string) (*autocomplete.Completer, *redistest.Faults) {
	t.Helper()
	rdb, _, f := b.FaultyClient()
	ac := newCompleter(t, b, rdb)
	ctx := t.Context()
	require.NoError(t, ac.AddContact(ctx, user, "warm"))
	require.NoError(t, ac.RemoveContact(ctx, user, "warm"))
	require.NoError(t, ac.Join(ctx, set, "warm"))
	require.NoError(t, ac.Leave(ctx, set, "warm"))
	require.Zero(t, f.Lost())
	return ac, f
}

// AddContact of X whose reply is lost: meanwhile another client (another
// device of the user) adds Y and reads the list, Y first then X. The
// re-send is answered from the record of the first run, so Y, added after
// X, stays the most recent.
func TestAddContact_resendAfterLaterAdd(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac, f := resendCompleter(t, b, "u", "g")
		other := newCompleter(t, b, nil)

		var seen string
		var ran bool
		fn := func() {
			ran = true
			err := other.AddContact(ctx, "u", "Y")
			got, _ := other.RecentContacts(ctx, "u")
			seen = fmt.Sprintf("%v %v", err, got)
		}
		f.LoseReplyThen(redistest.Scripts, fn)
		require.NoError(t, ac.AddContact(ctx, "u", "X"))
		require.True(t, ran, "the call was not re-sent")
		require.Equal(t, "<nil> [Y X]", seen)

		got, err := other.RecentContacts(ctx, "u")
		require.NoError(t, err)
		assert.Equal(t, []string{"Y", "X"}, got, "Y, added after X was seen added, is no longer the most recent")
	})
}

// AddContact of X whose reply is lost: meanwhile another client sees X in
// the list and removes it. The re-send is answered from the record and
// does not add X back.
func TestAddContact_resendAfterLaterRemove(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac, f := resendCompleter(t, b, "u", "g")
		other := newCompleter(t, b, nil)

		var seen []string
		var ran bool
		fn := func() {
			ran = true
			got, _ := other.RecentContacts(ctx, "u")
			seen = append(seen, fmt.Sprint(got))
			err := other.RemoveContact(ctx, "u", "X")
			got, _ = other.RecentContacts(ctx, "u")
			seen = append(seen, fmt.Sprint(err, got))
		}
		f.LoseReplyThen(redistest.Scripts, fn)
		require.NoError(t, ac.AddContact(ctx, "u", "X"))
		require.True(t, ran, "the call was not re-sent")
		require.Equal(t, []string{"[X]", "<nil> []"}, seen)

		got, err := other.RecentContacts(ctx, "u")
		require.NoError(t, err)
		assert.Empty(t, got, "X, removed after it was seen added, is back")
	})
}

// RemoveContact of X whose reply is lost: meanwhile another client sees X
// gone and adds it again. The re-send is answered from the record and
// does not remove X again.
func TestRemoveContact_resendAfterLaterAdd(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac, f := resendCompleter(t, b, "u", "g")
		other := newCompleter(t, b, nil)
		require.NoError(t, other.AddContact(ctx, "u", "X"))

		var seen []string
		var ran bool
		fn := func() {
			ran = true
			got, _ := other.RecentContacts(ctx, "u")
			seen = append(seen, fmt.Sprint(got))
			err := other.AddContact(ctx, "u", "X")
			got, _ = other.RecentContacts(ctx, "u")
			seen = append(seen, fmt.Sprint(err, got))
		}
		f.LoseReplyThen(redistest.Scripts, fn)
		require.NoError(t, ac.RemoveContact(ctx, "u", "X"))
		require.True(t, ran, "the call was not re-sent")
		require.Equal(t, []string{"[]", "<nil> [X]"}, seen)

		got, err := other.RecentContacts(ctx, "u")
		require.NoError(t, err)
		assert.Equal(t, []string{"X"}, got, "X, added after it was seen removed, is gone")
	})
}

// Join of a name whose reply is lost: meanwhile another client completes
// the name (it is there) and makes it leave. The re-send is answered from
// the record and does not add the name back.
func TestJoin_resendAfterLaterLeave(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac, f := resendCompleter(t, b, "u", "g")
		other := newCompleter(t, b, nil)

		var seen []string
		var ran bool
		fn := func() {
			ran = true
			got, _ := other.Complete(ctx, "g", "je", 10)
			seen = append(seen, fmt.Sprint(got))
			err := other.Leave(ctx, "g", "jeff")
			got, _ = other.Complete(ctx, "g", "je", 10)
			seen = append(seen, fmt.Sprint(err, got))
		}
		f.LoseReplyThen(redistest.Scripts, fn)
		require.NoError(t, ac.Join(ctx, "g", "jeff"))
		require.True(t, ran, "the call was not re-sent")
		require.Equal(t, []string{"[jeff]", "<nil> []"}, seen)

		got, err := other.Complete(ctx, "g", "je", 10)
		require.NoError(t, err)
		assert.Empty(t, got, "jeff, made to leave after its join was seen, is back")
	})
}

// Leave of a name whose reply is lost: meanwhile another client sees the
// name gone and makes it join again. The re-send is answered from the
// record and does not remove the name again.
func TestLeave_resendAfterLaterJoin(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		ac, f := resendCompleter(t, b, "u", "g")
		other := newCompleter(t, b, nil)
		require.NoError(t, other.Join(ctx, "g", "jeff"))

		var seen []string
		var ran bool
		fn := func() {
			ran = true
			got, _ := other.Complete(ctx, "g", "je", 10)
			seen = append(seen, fmt.Sprint(got))
			err := other.Join(ctx, "g", "jeff")
			got, _ = other.Complete(ctx, "g", "je", 10)
			seen = append(seen, fmt.Sprint(err, got))
		}
		f.LoseReplyThen(redistest.Scripts, fn)
		require.NoError(t, ac.Leave(ctx, "g", "jeff"))
		require.True(t, ran, "the call was not re-sent")
		require.Equal(t, []string{"[]", "<nil> [jeff]"}, seen)

		got, err := other.Complete(ctx, "g", "je", 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"jeff"}, got, "jeff, made to join after its leave was seen, is gone")
	})
}
