package autocomplete_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/autocomplete"
	"github.com/ria-go/ria/internal/redistest"
)

// The fault harness: every state-changing call of the package, through a
// proxy that lets the call's script run on the server and then swallows
// its reply and cuts the connection, so that go-redis (default retries)
// re-sends it. After each call the test compares the state with a model
// of it; a call that succeeded and left another state is a disagreement.
func TestFaults_lostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		ac := newCompleter(t, b, rdb)
		reader := newCompleter(t, b, nil)
		// Cache the scripts.
		require.NoError(t, ac.AddContact(ctx, "u", "warm"))
		require.NoError(t, ac.RemoveContact(ctx, "u", "warm"))
		require.NoError(t, ac.Join(ctx, "g", "warm"))
		require.NoError(t, ac.Leave(ctx, "g", "warm"))

		var recent []string // the model: most recent first
		members := map[string]bool{}
		h := redistest.NewHarness(t, f, "autocomplete writes")
		check := func(ok bool, format string, args ...any) { h.Check(ok, format, args...) }
		lose := func(n int, fn func() error) {
			h.Call(n, redistest.Scripts, func() { require.NoError(t, fn()) })
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range 40 {
			name := fmt.Sprintf("c%d", rng.IntN(8))
			n := 1 + i%2 // one or two lost replies in a row
			switch rng.IntN(4) {
			case 0, 1:
				lose(n, func() error { return ac.AddContact(ctx, "u", name) })
				recent = slices.DeleteFunc(recent, func(s string) bool { return s == name })
				recent = append([]string{name}, recent...)
			case 2:
				lose(n, func() error { return ac.RemoveContact(ctx, "u", name) })
				recent = slices.DeleteFunc(recent, func(s string) bool { return s == name })
			case 3:
				if rng.IntN(2) == 0 {
					lose(n, func() error { return ac.Join(ctx, "g", name, "Z"+name) })
					members[name], members["Z"+name] = true, true
				} else {
					lose(n, func() error { return ac.Leave(ctx, "g", name) })
					delete(members, name)
				}
			}
			got, err := reader.RecentContacts(ctx, "u")
			require.NoError(t, err)
			check(slices.Equal(recent, got), "recent contacts %v, want %v", got, recent)
			all, err := reader.Complete(ctx, "g", "c", 100)
			require.NoError(t, err)
			var want []string
			for m := range members {
				if m[0] == 'c' {
					want = append(want, m)
				}
			}
			slices.Sort(want)
			check(slices.Equal(want, all), "members %v, want %v", all, want)
		}
	})
}

// Writes through replies held back, part of the time, longer than the
// read timeout: go-redis re-sends them. Every call that returned nil took
// effect once (no contact twice in the list, every joined name there); a
// call that got no reply says its outcome is unknown.
func TestFaults_delays(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const calls = 200
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = 2*time.Millisecond, time.Second, time.Minute
		})
		ac := newCompleter(t, b, rdb, autocomplete.WithRecent(autocomplete.MaxRecent))
		reader := newCompleter(t, b, nil)
		// Cache the scripts through a client without the 2ms read timeout:
		// a loaded machine can take longer than that for a first EVAL.
		require.NoError(t, reader.AddContact(ctx, "u", "warm"))
		require.NoError(t, reader.Join(ctx, "g", "warm"))
		stop := f.Stall()
		var ok, unknown, disagree int
		joined := map[string]bool{}
		for i := range calls {
			name := fmt.Sprintf("n%03d", i)
			for _, err := range []error{ac.AddContact(ctx, "u", name), ac.AddContact(ctx, "u", "same"), ac.Join(ctx, "g", name)} {
				switch {
				case err == nil:
					ok++
				case errors.Is(err, ria.ErrOutcomeUnknown):
					unknown++
				default:
					disagree++
					t.Errorf("call %d: %v", i, err)
				}
			}
			if err := ac.Join(ctx, "g", name); err == nil {
				joined[name] = true
			}
		}
		stop()
		got, err := reader.RecentContacts(ctx, "u")
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, c := range got {
			if seen[c] {
				disagree++
				t.Errorf("contact %q twice", c)
			}
			seen[c] = true
		}
		names, err := reader.Complete(ctx, "g", "n", autocomplete.MaxCompletions)
		require.NoError(t, err)
		in := map[string]bool{}
		for _, n := range names {
			in[n] = true
		}
		for n := range joined {
			if !in[n] {
				disagree++
				t.Errorf("%s joined but not a member", n)
			}
		}
		t.Logf("fault harness: autocomplete writes under 0-3ms stalls, ReadTimeout 2ms: calls=%d ok=%d unknown=%d disagreements=%d",
			3*calls, ok, unknown, disagree)
		assert.Zero(t, disagree)
		assert.Positive(t, unknown+ok)
	})
}
