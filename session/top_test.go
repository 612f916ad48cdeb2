package session_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// The view ranking, most viewed first with counts, paged; a ranking key of
// another type is named; bad pages are refused.
func TestStore_TopViewed(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		views := map[string]int{"itemA": 3, "itemB": 5, "itemC": 1}
		for item, n := range views {
			for range n {
				require.NoError(t, s.UpdateToken(ctx, "tok", "user", item))
			}
		}
		var top []session.ItemViews
		var err error
		rt, _ := b.Count.Delta(func() { top, err = s.TopViewed(ctx, 0, 10) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt)
		assert.Equal(t, []session.ItemViews{{"itemB", 5}, {"itemA", 3}, {"itemC", 1}}, top)
		top, err = s.TopViewed(ctx, 1, 1)
		require.NoError(t, err)
		assert.Equal(t, []session.ItemViews{{"itemA", 3}}, top)

		for _, c := range [][2]int{{-1, 1}, {0, 0}, {0, session.MaxTop + 1}} {
			_, err := s.TopViewed(ctx, c[0], c[1])
			assert.ErrorIs(t, err, session.ErrInvalid, "%v", c)
		}
		b.CheckWrongTypes(t, func() {}, func() error { _, err := s.TopViewed(ctx, 0, 10); return err },
			redistest.KeyRole{Key: key(b, "views"), Type: "zset", Role: "session view ranking"})
	})
}
