package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

func TestNew_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, c := range []struct {
			app  string
			opts []session.Option
			want string
		}{
			{"", nil, "app name: empty name"},
			{"}x", nil, "app name"},
			{"a{b}", nil, `app name "a{b}": must not contain '{' or '}'`},
			{"shop", []session.Option{session.WithPrefix("a{b}")}, "prefix"},
			{"shop", []session.Option{session.WithPageTTL(0)}, "page TTL 0s"},
			{"shop", []session.Option{session.WithPageTTL(-time.Second)}, "page TTL -1s"},
			{"shop", []session.Option{session.WithCacheTop(0)}, "cache top 0"},
		} {
			rt, _ := b.Count.Delta(func() {
				s, err := session.New(b.Client, c.app, append([]session.Option{session.WithPrefix(b.Prefix)}, c.opts...)...)
				assert.Nil(t, s)
				assert.ErrorIs(t, err, session.ErrInvalid)
				assert.ErrorContains(t, err, c.want)
			})
			assert.Zero(t, rt, "New reaches Redis")
		}
		assert.Panics(t, func() { _, _ = session.New(nil, "shop") })
	})
}

func TestStore_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		load := func(context.Context, string) (any, error) { return 1, nil }
		for _, c := range []struct {
			op   string
			fn   func() error
			want string
		}{
			{"UpdateToken empty token", func() error { return s.UpdateToken(ctx, "", "alice", "i") }, "update token: empty token"},
			{"UpdateToken empty user", func() error { return s.UpdateToken(ctx, "tok", "", "i") }, `update token: user of token "tok": empty user`},
			{"CheckToken empty token", func() error { _, _, err := s.CheckToken(ctx, ""); return err }, "check token: empty token"},
			{"Viewed empty token", func() error { _, err := s.Viewed(ctx, ""); return err }, "viewed: empty token"},
			{"AddToCart empty token", func() error { return s.AddToCart(ctx, "", "i", 1) }, "add to cart: empty token"},
			{"AddToCart empty item", func() error { return s.AddToCart(ctx, "tok", "", 1) }, "empty item"},
			{"AddToCart negative count", func() error { return s.AddToCart(ctx, "tok", "i", -1) }, `item "i" count -1: must not be negative`},
			{"Cart empty token", func() error { _, err := s.Cart(ctx, ""); return err }, "cart: empty token"},
			{"ClearCart empty token", func() error { return s.ClearCart(ctx, "") }, "clear cart: empty token"},
			{"Logout empty token", func() error { _, err := s.Logout(ctx, ""); return err }, "logout: empty token"},
			{"ScheduleRowCache empty row", func() error { return s.ScheduleRowCache(ctx, "", time.Second) }, "empty row ID"},
			{"ScheduleRowCache sub-ms delay", func() error { return s.ScheduleRowCache(ctx, "r", time.Microsecond) }, "delay 1µs: must be at least 1ms"},
			{"Row empty row", func() error { _, _, err := s.Row(ctx, ""); return err }, "row: empty row ID"},
			{"Cleaner negative limit", func() error { _, err := s.Cleaner(-1); return err }, "limit -1: must be at least 1"},
			{"Cleaner limit 0", func() error { _, err := s.Cleaner(0); return err }, "cleaner: limit 0: must be at least 1"},
			{"Cleaner batch 0", func() error { _, err := s.Cleaner(1, session.WithBatch(0)); return err }, "batch 0"},
			{"Cleaner batch too big", func() error { _, err := s.Cleaner(1, session.WithBatch(session.MaxBatch+1)); return err }, "batch 10001"},
			{"Cleaner interval 0", func() error { _, err := s.Cleaner(1, session.WithInterval(0)); return err }, "interval 0s: must be positive"},
			{"RowCacher nil loader", func() error { _, err := s.RowCacher(nil); return err }, "nil loader"},
			{"RowCacher nil clock", func() error { _, err := s.RowCacher(load, session.WithClock(nil)); return err }, "nil clock"},
			{"Rescaler interval", func() error { _, err := s.Rescaler(session.WithInterval(-time.Second)); return err }, "interval -1s"},
			{"CacheRequest nil render", func() error { _, err := s.CacheRequest(ctx, "/?item=i", nil); return err }, `cache request "/?item=i": nil render`},
		} {
			rt, _ := b.Count.Delta(func() {
				err := c.fn()
				assert.ErrorIs(t, err, session.ErrInvalid, c.op)
				assert.ErrorContains(t, err, "session: ", c.op)
				assert.ErrorContains(t, err, c.want, c.op)
			})
			assert.Zero(t, rt, c.op+" reached Redis")
		}
		assert.Empty(t, b.Keys(""), "nothing written")
		require.NotPanics(t, func() { _, _ = s.CanCache(ctx, "%%%") })
	})
}
