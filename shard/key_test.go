package shard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// The book's shard_key checks (chapter 9 tests).
func TestKey_book(t *testing.T) {
	for _, tc := range []struct {
		key         string
		total, size int64
		want        string
	}{
		{"1", 2, 2, "test:0"},        // shard_key("test", 1, 2, 2)
		{"125", 1000, 100, "test:1"}, // shard_key("test", 125, 1000, 100)
		{"010", 1000, 10, "test:1"},  // decimal, not octal
		{"0", 1, 1, "test:0"},
	} {
		got, err := shard.Key("test", tc.key, tc.total, tc.size)
		require.NoError(t, err, tc.key)
		assert.Equal(t, tc.want, got, "shard_key(test, %s, %d, %d)", tc.key, tc.total, tc.size)
	}
	_, err := shard.Key("test", "99999999999999999999999", 1, 10) // beyond uint64
	assert.ErrorIs(t, err, shard.ErrSize, "a shard number beyond int64 is refused")
	id, err := shard.ID("1234567890123456789012", 1, 1_000_000_000_000) // big.Int path
	require.NoError(t, err)
	assert.Equal(t, int64(1234567890), id)
}

// String keys fall in [0, 2·total/size), by CRC32 as Python computes it.
func TestKey_stringKeys(t *testing.T) {
	const total, size = 1000, 100
	seen := map[int64]int{}
	for i := range 2000 {
		id, err := shard.ID(fmt.Sprintf("keyname:%d", i), total, size)
		require.NoError(t, err)
		require.GreaterOrEqual(t, id, int64(0))
		require.Less(t, id, int64(2*total/size))
		seen[id]++
	}
	assert.Len(t, seen, 2*total/size, "every shard is used")
	// binascii.crc32(b"hello") == 907060870
	id, err := shard.ID("hello", 1<<31, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(907060870%(1<<32)), id)
	id, err = shard.ID("hello", 1000, 100)
	require.NoError(t, err)
	assert.Equal(t, int64(907060870%20), id)
	id, err = shard.ID("-5", 10, 10) // not all digits: hashed
	require.NoError(t, err)
	assert.Less(t, id, int64(2))
}

func TestKey_badInput(t *testing.T) {
	for _, tc := range []struct {
		key         string
		total, size int64
		msg         string
	}{
		{"1", 10, 0, "shard size 0"},
		{"a", 10, 0, "shard size 0"},
		{"1", 10, -3, "shard size -3"},
		{"a", -1, 10, "expected total -1"},
		{"a", 4, 10, "gives no shard"},
	} {
		_, err := shard.ID(tc.key, tc.total, tc.size)
		assert.ErrorIs(t, err, shard.ErrSize, "%+v", tc)
		assert.ErrorContains(t, err, tc.msg)
	}
	id, err := shard.ID("7", 0, 10) // numbers need no total
	assert.NoError(t, err)
	assert.Zero(t, id)
}

// Slot agrees with the server's CLUSTER KEYSLOT.
func TestSlot(t *testing.T) {
	b := redistest.New(t, redistest.Cluster)
	ctx := t.Context()
	for _, k := range []string{"", "a", "foo", "{user1000}.following", "{user1000}.followers", "foo{}{bar}", "foo{{bar}}zap",
		"foo{bar}{zap}", "{", "}{", strings.Repeat("x", 300), "shard:{users:12}:hash"} {
		want, err := b.Client.ClusterKeySlot(ctx, k).Result()
		require.NoError(t, err)
		assert.Equal(t, int(want), shard.Slot(k), "slot of %q", k)
	}
	assert.Equal(t, shard.Slot("{user1000}.following"), shard.Slot("{user1000}.followers"))
}
