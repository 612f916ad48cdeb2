package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/script"
)

// requestItem returns the item whose page req is, from the request's
// "item" query parameter (the book's extract_item_id), and whether the
// page may be cached by its URL alone: it names an item and is not dynamic
// (its query has no "_" parameter: the book's is_dynamic). A request that
// does not parse as a URL, or whose query does not parse (a bad % escape,
// a ';'), is not cacheable: a pair that cannot be read might be the "_"
// that makes the page dynamic.
func requestItem(req string) (string, bool) {
	u, err := url.Parse(req)
	if err != nil {
		return "", false
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", false
	}
	item := q.Get("item")
	if item == "" || q.Has("_") {
		return "", false
	}
	return item, true
}

// hashRequest names a request's cached page: the hex SHA-256 of req.
func hashRequest(req string) string {
	h := sha256.Sum256([]byte(req))
	return hex.EncodeToString(h[:])
}

// CanCache reports whether the page of request req (a URL or path with a
// query) may be cached (the book's can_cache): it is an item's page (its
// query has a non-empty "item" parameter), it is not dynamic (no "_"
// parameter), and the item is among the app's most viewed ([WithCacheTop]:
// 10,000 by default). It takes one round trip, or none when the URL alone
// rules caching out; a request that is not a URL, or whose query does not
// parse (url.ParseQuery: a bad % escape, a ';'), is not cacheable.
func (s *Store) CanCache(ctx context.Context, req string) (bool, error) {
	item, ok := requestItem(req)
	if !ok {
		return false, nil
	}
	rank, err := s.rdb.ZRank(ctx, s.keys.viewsKey(), item).Result()
	switch {
	case err == redis.Nil:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("session: can cache %q: %w", req, script.WrongType(ctx, s.rdb, err, s.keys.viewsKey(), "session view ranking", "zset"))
	}
	return rank < s.cacheTop, nil
}

// CacheRequest returns the page of request req (the book's
// cache_request): from the cache when [Store.CanCache] allows it and the
// page is there, otherwise from render, caching the result for the page
// TTL ([WithPageTTL]: 300 s by default) when it may be cached. The cache
// check and lookup are one round trip (a script), and a miss costs one more
// to store the page; a request that the URL alone rules out costs none.
// Concurrent misses of one page each render it.
//
// Errors from render are returned as they are, wrapped, and nothing is
// cached. If storing a rendered page fails, CacheRequest returns the page
// together with the error. Storing a page (SET with the TTL) is naturally
// idempotent: a re-send by go-redis after a lost reply stores the same
// page again; when no reply came at all, the error wraps
// [ria.ErrOutcomeUnknown] (the page may or may not be cached). A nil
// render is an error wrapping [ErrInvalid], and nothing reaches Redis. A
// view ranking or page key holding something this package did not write
// there is a [*ria.KeyError].
func (s *Store) CacheRequest(ctx context.Context, req string, render func(ctx context.Context, req string) (string, error)) (string, error) {
	if render == nil {
		return "", invalid("cache request "+strconv.Quote(req), "nil render")
	}
	item, ok := requestItem(req)
	if !ok {
		return s.render(ctx, req, render)
	}
	page := s.keys.pageKey(hashRequest(req))
	v, err := pageScript.Run(ctx, s.rdb, []string{s.keys.viewsKey(), page}, item, s.cacheTop)
	if err != nil {
		return "", fmt.Errorf("session: cache request %q: %w", req, err)
	}
	r, ok := v.([]any)
	if !ok || len(r) == 0 {
		return "", fmt.Errorf("session: cache request %q: script %s: malformed reply %v", req, pageScript.Name(), v)
	}
	switch code, _ := r[0].(int64); {
	case code == 2 && len(r) == 2:
		if content, ok := r[1].(string); ok {
			return content, nil
		}
	case code == 0:
		return s.render(ctx, req, render)
	case code == 1:
		content, err := s.render(ctx, req, render)
		if err != nil {
			return "", err
		}
		if err := s.rdb.Set(ctx, page, content, s.pageTTL).Err(); err != nil {
			return content, fmt.Errorf("session: cache request %q: store page: %w", req, script.Unknown(err))
		}
		return content, nil
	}
	return "", fmt.Errorf("session: cache request %q: script %s: malformed reply %v", req, pageScript.Name(), v)
}

func (s *Store) render(ctx context.Context, req string, render func(ctx context.Context, req string) (string, error)) (string, error) {
	content, err := render(ctx, req)
	if err != nil {
		return "", fmt.Errorf("session: render %q: %w", req, err)
	}
	return content, nil
}
