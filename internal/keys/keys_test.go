package keys_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ria-go/ria/internal/keys"
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
}
