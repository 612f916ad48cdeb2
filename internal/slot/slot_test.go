package slot_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/slot"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// Of agrees with the Cluster specification's vectors and with the server's
// CLUSTER KEYSLOT.
func TestOf(t *testing.T) {
	assert.Equal(t, 0x31C3, slot.Of("123456789"))
	assert.Equal(t, 12182, slot.Of("foo"))
	assert.Equal(t, slot.Of("user1000"), slot.Of("{user1000}.following"))
	assert.NotEqual(t, slot.Of("x"), slot.Of("{}x"), "an empty tag is no tag")
	b := redistest.New(t, redistest.Cluster)
	keys := []string{"", "a", "{", "}{", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", strings.Repeat("x", 300), "é{ü}"}
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("p:{u%d}:home", i), fmt.Sprint("plain", i))
	}
	for _, k := range keys {
		want, err := b.Client.ClusterKeySlot(t.Context(), k).Result()
		require.NoError(t, err)
		require.Equal(t, int(want), slot.Of(k), "slot of %q", k)
	}
}
