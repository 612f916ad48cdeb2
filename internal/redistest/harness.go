package redistest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Harness drives the fault tests of a package: each call runs through a
// [Faults] proxy that lets the call's command run on the server and then
// swallows its reply and cuts the connection, so that go-redis (default
// retries) re-sends it. After each call the test compares the caller's
// answer with the server's state ([Harness.Check]); an answer that
// disagrees counts as a disagreement. When the test ends, the Harness logs
// one line of counts and fails the test on any disagreement:
//
//	fault harness: <label>: calls=N lost=N disagreements=0
type Harness struct {
	t        *testing.T
	f        *Faults
	label    string
	calls    int
	disagree int
}

// NewHarness returns a Harness for the calls of one test; label names the
// package and the operation, e.g. "lock TryAcquire".
func NewHarness(t *testing.T, f *Faults, label string) *Harness {
	h := &Harness{t: t, f: f, label: label}
	t.Cleanup(func() {
		t.Logf("fault harness: %s: calls=%d lost=%d disagreements=%d", h.label, h.calls, h.f.Lost(), h.disagree)
		assert.Zero(t, h.disagree, "answers that disagree with the server")
	})
	return h
}

// Call arms n lost replies of the commands match matches, runs fn, and
// checks that all n were lost: the fault happened.
func (h *Harness) Call(n int, match func([]string) bool, fn func()) {
	h.t.Helper()
	lost := h.f.Lost()
	h.f.LoseReply(n, match)
	fn()
	h.calls++
	require.Equal(h.t, lost+int64(n), h.f.Lost(), "the replies were lost")
	require.Zero(h.t, h.f.Armed())
}

// CallEach arms one lost reply for each matcher, in order (say, a WATCH
// then an EXEC), runs fn, and checks that all were lost.
func (h *Harness) CallEach(fn func(), match ...func([]string) bool) {
	h.t.Helper()
	lost := h.f.Lost()
	for _, m := range match {
		h.f.LoseReply(1, m)
	}
	fn()
	h.calls++
	require.Equal(h.t, lost+int64(len(match)), h.f.Lost(), "the replies were lost")
	require.Zero(h.t, h.f.Armed())
}

// Counted counts a call whose faults the test armed itself (and checked).
func (h *Harness) Counted() { h.calls++ }

// Check counts a disagreement unless ok, and returns ok.
func (h *Harness) Check(ok bool, format string, args ...any) bool {
	h.t.Helper()
	if !ok {
		h.disagree++
		h.t.Errorf("disagreement: "+format, args...)
	}
	return ok
}
