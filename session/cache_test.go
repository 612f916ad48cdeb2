package session_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/session"
)

// sha256hex names a request's page key (see doc.go).
func sha256hex(req string) string {
	h := sha256.Sum256([]byte(req))
	return hex.EncodeToString(h[:])
}

func TestStore_CanCache(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client, session.WithCacheTop(2))
		// Views: item a 3, b 2, c 1; d never viewed.
		for item, views := range map[string]int{"a": 3, "b": 2, "c": 1} {
			for range views {
				require.NoError(t, s.UpdateToken(ctx, "tok", "u", item))
			}
		}
		for _, c := range []struct {
			req  string
			want bool
			rt   int64
		}{
			{"http://test.com/?item=a", true, 1},
			{"http://test.com/?item=b&page=2", true, 1},
			{"/shop?item=a", true, 1},
			{"http://test.com/?item=c", false, 1}, // rank 2: not in the top 2
			{"http://test.com/?item=d", false, 1}, // never viewed
			{"http://test.com/", false, 0},        // no item: the book's first case
			{"http://test.com/?item=", false, 0},
			{"http://test.com/?other=a", false, 0},
			{"http://test.com/?item=a&_=1234", false, 0}, // dynamic: the book's second case
			{"http://test.com/?_=&item=a", false, 0},
			{"%zz?item=a", false, 0}, // not a URL
			// A query that does not parse may hide the "_" (url.Query
			// drops the pairs it cannot parse): dynamic.
			{"/?item=a&_=%zz", false, 0},
			{"/?item=a&_=1;2", false, 0},
			{"/?item=a;_=1", false, 0},
			{"/?item=a&x=%zz", false, 0},
			{"/?item=a&%5F=1", false, 0}, // "_" escaped is still "_"
			{"", false, 0},
		} {
			var ok bool
			rt, _ := b.Count.Delta(func() {
				var err error
				ok, err = s.CanCache(ctx, c.req)
				require.NoError(t, err)
			})
			assert.Equal(t, c.want, ok, c.req)
			assert.Equal(t, c.rt, rt, c.req+" round trips")
		}
	})
}

// The book's test_cache_request: the second request is served from the
// cache, and render runs once.
func TestStore_CacheRequest(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		require.NoError(t, s.UpdateToken(ctx, "tok", "u", "itemX"))

		renders := 0
		render := func(_ context.Context, req string) (string, error) {
			renders++
			return fmt.Sprintf("content for %s (%d)", req, renders), nil
		}
		const req = "http://test.com/?item=itemX"
		page, err := s.CacheRequest(ctx, req, render) // also caches the script
		require.NoError(t, err)
		assert.Equal(t, "content for "+req+" (1)", page)
		assert.Equal(t, 1, renders)

		rt, _ := b.Count.Delta(func() {
			page, err = s.CacheRequest(ctx, req, render)
			require.NoError(t, err)
		})
		assert.Equal(t, "content for "+req+" (1)", page, "served from the cache")
		assert.Equal(t, 1, renders, "render not called again")
		assert.Equal(t, int64(1), rt, "hit: one round trip")

		const other = "http://test.com/?item=itemX&page=2"
		rt, _ = b.Count.Delta(func() {
			page, err = s.CacheRequest(ctx, other, render)
			require.NoError(t, err)
		})
		assert.Equal(t, "content for "+other+" (2)", page)
		assert.Equal(t, int64(2), rt, "miss: lookup and store")
		assert.Equal(t, page, b.Client.Get(ctx, key(b, "page:"+sha256hex(other))).Val())

		// Not cacheable: rendered every time, nothing stored.
		for _, c := range []struct {
			req string
			rt  int64
		}{
			{"http://test.com/?item=unviewed", 1},
			{"http://test.com/?item=itemX&_=1", 0},
			{"http://test.com/?item=itemX&_=%zz", 0}, // unparsable query: dynamic
			{"http://test.com/?item=itemX&_=1;2", 0},
			{"http://test.com/", 0},
		} {
			before := renders
			for range 2 {
				rt, _ = b.Count.Delta(func() {
					_, err = s.CacheRequest(ctx, c.req, render)
					require.NoError(t, err)
				})
				assert.Equal(t, c.rt, rt, c.req+" round trips")
			}
			assert.Equal(t, before+2, renders, c.req+" rendered each time")
			assert.Zero(t, b.Client.Exists(ctx, key(b, "page:"+sha256hex(c.req))).Val(), c.req)
		}
	})
}

func TestStore_CacheRequest_expires(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		// Long enough that the page cannot expire between the two calls
		// however loaded the machine; expiry is brought about below.
		const ttl = time.Hour
		s := newStore(t, b, b.Client, session.WithPageTTL(ttl))
		require.NoError(t, s.UpdateToken(ctx, "tok", "u", "i"))
		renders := 0
		render := func(context.Context, string) (string, error) { renders++; return "p", nil }
		for range 2 {
			_, err := s.CacheRequest(ctx, "/?item=i", render)
			require.NoError(t, err)
		}
		assert.Equal(t, 1, renders)
		expire(t, b, ttl, key(b, "page:"+sha256hex("/?item=i")))
		_, err := s.CacheRequest(ctx, "/?item=i", render)
		require.NoError(t, err)
		assert.Equal(t, 2, renders, "rendered again after the TTL")
	})
}

func TestStore_CacheRequest_renderError(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newStore(t, b, b.Client)
		require.NoError(t, s.UpdateToken(ctx, "tok", "u", "i"))
		boom := errors.New("boom")
		_, err := s.CacheRequest(ctx, "/?item=i", func(context.Context, string) (string, error) { return "", boom })
		assert.ErrorIs(t, err, boom)
		assert.ErrorContains(t, err, `session: render "/?item=i"`)
		assert.Zero(t, b.Client.Exists(ctx, key(b, "page:"+sha256hex("/?item=i"))).Val(), "nothing cached")

		page, err := s.CacheRequest(ctx, "/?item=i", func(context.Context, string) (string, error) { return "ok", nil })
		require.NoError(t, err)
		assert.Equal(t, "ok", page)
		_, err = s.CacheRequest(ctx, "/?item=i", nil)
		assert.ErrorIs(t, err, session.ErrInvalid, "a nil render is an error, not a panic")
	})
}
