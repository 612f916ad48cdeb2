package keys_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/redistest"
)

func TestSpace_Key(t *testing.T) {
	s := keys.New("lock:")
	assert.Equal(t, "lock:{job}:owner", s.Key("job", "owner"))
	assert.Equal(t, "lock:", s.Prefix())
}

func TestNew_bracePrefixPanics(t *testing.T) {
	assert.Panics(t, func() { keys.New("a{b") })
	assert.Panics(t, func() { keys.New("a}b") })
}

func TestCheckEntity(t *testing.T) {
	tests := []struct {
		entity string
		ok     bool
	}{
		{"job", true},
		{"a{b}c", false},
		{"a}b", false},
		{"g}:ready:a", false},
		{"a:b c/é", true},
		{"", false},
		{"}x", false},
	}
	for _, tt := range tests {
		err := keys.CheckEntity("lock name", tt.entity)
		if tt.ok {
			assert.NoError(t, err, tt.entity)
		} else {
			assert.ErrorContains(t, err, "lock name", tt.entity)
		}
	}
	assert.ErrorIs(t, keys.CheckEntity("lock name", ""), keys.ErrEmpty)
}

func TestGlobEscape(t *testing.T) {
	assert.Equal(t, `a\*b\?c\[d\]e\\f{g}`, keys.GlobEscape(`a*b?c[d]e\f{g}`))
	// Byte by byte: invalid UTF-8 is kept as it is, not replaced by U+FFFD.
	assert.Equal(t, "job\xff", keys.GlobEscape("job\xff"))
	assert.Equal(t, "\xc3\\*\xa9\xe2\x82\\?é", keys.GlobEscape("\xc3*\xa9\xe2\x82?é"))
}

// An escaped name, invalid UTF-8 included, matches itself (and only
// itself) under the server's SCAN MATCH rules. Real servers only:
// miniredis turns patterns into Go regexps and panics on invalid UTF-8.
func TestGlobEscape_scanMatch(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		if !b.Real() {
			t.Skip("miniredis cannot match invalid UTF-8")
		}
		ctx := t.Context()
		names := []string{"job\xff", "a*\xfe?[x]\\", "\xc3\xa9t\xc3", "plain"}
		for _, n := range names {
			require.NoError(t, b.Client.Set(ctx, b.Prefix+n, "1", 0).Err())
		}
		require.NoError(t, b.Client.Set(ctx, b.Prefix+"job\xef\xbf\xbd", "1", 0).Err()) // "job" + U+FFFD
		for _, n := range names {
			var got []string
			err := keys.Scan(ctx, b.Client, keys.GlobEscape(b.Prefix+n), func(_ context.Context, ks []string) error {
				got = append(got, ks...)
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, []string{b.Prefix + n}, got, "%q", n)
		}
	})
}
