package shard_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// Locations.Records is the Records the locations are written to: it reads
// (Get, GetMany, Scan) the packed codes of what Set wrote, which decode to
// the locations set, and what it writes, Locations reads.
func TestLocations_Records(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		// A table small enough to write the codes by hand: a country is its
		// position plus one, then its state's (0: none), one byte each.
		codes := must(shard.NewCodes([]string{"FRA", "USA", "CAN"},
			map[string][]string{"USA": {"CA", "NY"}, "CAN": {"ON"}}))
		// 10 ids per string: the users span three strings (and servers).
		locs := must(shard.NewLocations(ctx, b.Client, "loc", codes, shard.WithIDsPerShard(10), shard.WithPrefix(b.Prefix)))
		type location struct{ country, state string }
		set := map[int64]location{3: {"USA", "NY"}, 14: {"CAN", "ON"}, 25: {"FRA", ""}, 26: {"USA", "CA"}}
		want := map[int64][]byte{3: {2, 2}, 14: {3, 1}, 25: {1, 0}, 26: {2, 1}}
		for id, loc := range set {
			require.NoError(t, locs.Set(ctx, id, loc.country, loc.state))
		}

		r := locs.Records()
		require.NotNil(t, r)
		assert.Same(t, r, locs.Records(), "one Records")
		assert.Equal(t, codes.Width(), r.Width())

		for id, loc := range set {
			rec, err := r.Get(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, want[id], rec, "user %d", id)
			c, s, ok := codes.Decode(rec)
			assert.True(t, ok, "user %d", id)
			assert.Equal(t, loc, location{c, s}, "user %d", id)
		}
		recs, err := r.GetMany(ctx, 3, 4, 26)
		require.NoError(t, err)
		assert.Equal(t, [][]byte{{2, 2}, {0, 0}, {2, 1}}, recs, "user 4 never set: zero bytes")

		// Scan finds exactly the users set, each record at its id.
		found := map[int64][]byte{}
		require.NoError(t, r.Scan(ctx, func(first int64, block []byte) error {
			for i := 0; i+2 <= len(block); i += 2 {
				if block[i] != 0 || block[i+1] != 0 {
					found[first+int64(i/2)] = []byte{block[i], block[i+1]}
				}
			}
			return nil
		}))
		assert.Equal(t, want, found)

		// What the Records writes, the Locations reads and counts.
		require.NoError(t, r.Put(ctx, 14, []byte{2, 1}))
		c, s, ok, err := locs.Get(ctx, 14)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, location{"USA", "CA"}, location{c, s})
		agg, err := locs.Aggregate(ctx)
		require.NoError(t, err)
		assert.Equal(t, shard.Aggregate{Countries: map[string]int64{"USA": 3, "FRA": 1},
			States: map[string]map[string]int64{"USA": {"CA": 2, "NY": 1}}}, agg)
	})
}
