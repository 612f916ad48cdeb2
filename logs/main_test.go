package logs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/logs"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// hourEnd is an hour boundary used by the tests' explicit times.
var hourEnd = time.Unix(1_700_002_800, 0)

func newLogs(t *testing.T, b *redistest.Backend, rdb logs.Client, opts ...logs.Option) *logs.Logs {
	t.Helper()
	l, err := logs.New(rdb, append([]logs.Option{logs.WithPrefix(b.Prefix)}, opts...)...)
	require.NoError(t, err)
	return l
}

// key returns the name of a key of log name.
func key(b *redistest.Backend, name, part string) string { return b.Prefix + "{" + name + "}:" + part }

// total adds the counts of an hour.
func total(h logs.Hour) int64 {
	var n int64
	for _, c := range h.Counts {
		n += c.Count
	}
	return n
}
