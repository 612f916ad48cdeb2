package shard

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/big"
	"strconv"

	"github.com/ria-go/ria/internal/slot"
)

// ErrSize is wrapped by the error of a call given a size or count that
// cannot work: a shard size below 1, an expected total too small for even
// one shard of a hashed key, a numeric key whose shard number does not fit
// in an int64, more than [MaxShards] shards or strings.
var ErrSize = errors.New("shard: bad size")

// MaxShards (2^24) is the most shards a [Set] or a [Visitors] day may
// spread over and the most strings a [Records] may use: [Set.Len],
// [Visitors.Count] and [Records.Scan] visit each of them. NewSet,
// NewVisitors and [Records.Put] refuse what would go past it with an error
// wrapping [ErrSize].
const MaxShards = 1 << 24

// pipelineChunk is how many commands one pipeline carries when a call
// visits many shards, strings or ids: replies stay bounded in memory, and
// ctx is checked between pipelines.
const pipelineChunk = 10_000

// ID returns the shard of key in a structure expected to hold total
// elements in shards of size elements: the book's shard_key. A key made of
// ASCII digits only is taken as a sequentially assigned number n and goes
// to shard n/size (so "010" and "10" share shard 1 when size is 10, and
// total is not used); any other key goes to shard CRC32(key) mod
// 2·total/size (CRC-32/IEEE, Python's binascii.crc32), so a shard holds
// about size/2 keys on average and stays under size with room for the
// spread. It returns an error wrapping [ErrSize] when size < 1, or, for a
// hashed key, when total < 0 or 2·total/size < 1.
func ID(key string, total, size int64) (int64, error) {
	if size < 1 {
		return 0, fmt.Errorf("%w: shard size %d, want at least 1", ErrSize, size)
	}
	if digits(key) {
		return numericID(key, size)
	}
	n, err := Count(total, size)
	if err != nil {
		return 0, err
	}
	return int64(uint64(crc32.ChecksumIEEE([]byte(key))) % uint64(n)), nil
}

// Key returns base + ":" + the shard of key ([ID]): the book's shard_key.
// For example Key("test", "1", 2, 2) is "test:0" and Key("test", "125",
// 1000, 100) is "test:1".
func Key(base, key string, total, size int64) (string, error) {
	id, err := ID(key, total, size)
	if err != nil {
		return "", err
	}
	return base + ":" + strconv.FormatInt(id, 10), nil
}

// Count returns how many shards the hashed keys of a structure of total
// elements in shards of size spread over: 2·total/size, as the book
// computes it. It returns an error wrapping [ErrSize] when size < 1, total
// < 0 or the count is below 1 (total under size/2).
func Count(total, size int64) (int64, error) {
	if size < 1 {
		return 0, fmt.Errorf("%w: shard size %d, want at least 1", ErrSize, size)
	}
	if total < 0 {
		return 0, fmt.Errorf("%w: expected total %d, want 0 or more", ErrSize, total)
	}
	if total > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w: expected total %d too large", ErrSize, total)
	}
	n := 2 * total / size
	if n < 1 {
		return 0, fmt.Errorf("%w: expected total %d gives no shard of size %d (2·total/size < 1)", ErrSize, total, size)
	}
	return n, nil
}

// digits reports whether s is non-empty and made of ASCII digits only (the
// book's str.isdigit, restricted to ASCII).
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// numericID returns n/size for the decimal number s (any length).
func numericID(s string, size int64) (int64, error) {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		q := n / uint64(size)
		if q > math.MaxInt64 {
			return 0, fmt.Errorf("%w: key %s gives a shard number beyond int64", ErrSize, s)
		}
		return int64(q), nil
	}
	n, _ := new(big.Int).SetString(s, 10) // s is all digits: never fails
	q := n.Quo(n, big.NewInt(size))
	if !q.IsInt64() {
		return 0, fmt.Errorf("%w: key %.40s... gives a shard number beyond int64", ErrSize, s)
	}
	return q.Int64(), nil
}

// Slot returns the Redis Cluster hash slot of key (0 to 16383): CRC16
// (XMODEM) of its hash tag mod 16384, where the hash tag is what lies
// between the first '{' and the first '}' after it when that is not empty,
// else the whole key.
func Slot(key string) int { return slot.Of(key) }
