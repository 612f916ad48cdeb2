package autocomplete_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/autocomplete"
	"github.com/ria-go/ria/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newCompleter returns a Completer on c (b's client if nil) under b's prefix.
func newCompleter(t testing.TB, b *redistest.Backend, c autocomplete.Client, opts ...autocomplete.Option) *autocomplete.Completer {
	t.Helper()
	if c == nil {
		c = b.Client
	}
	ac, err := autocomplete.New(c, append([]autocomplete.Option{autocomplete.WithPrefix(b.Prefix)}, opts...)...)
	require.NoError(t, err)
	return ac
}

// key returns the key of part of entity.
func key(b *redistest.Backend, entity, part string) string {
	return b.Prefix + "{" + entity + "}:" + part
}

// splitKeys returns b's keys in two parts: the data keys, and the reply
// records of the writes' once-scripts (<prefix>{<user or set>}:once:<nonce>,
// one per AddContact, RemoveContact, Join or Leave call, living for the
// client's retry window; see doc.go).
func splitKeys(b *redistest.Backend) (data, records []string) {
	for _, k := range b.Keys("") {
		if strings.Contains(k, "}:once:") {
			records = append(records, k)
		} else {
			data = append(data, k)
		}
	}
	return data, records
}
