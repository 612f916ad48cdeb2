package session

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

// Client is the subset of go-redis this package uses. *redis.Client,
// *redis.ClusterClient and *redis.Ring satisfy it.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd

	Get(ctx context.Context, key string) *redis.StringCmd
	Set(ctx context.Context, key string, value any, expiration time.Duration) *redis.StatusCmd
	HGet(ctx context.Context, key, field string) *redis.StringCmd
	HGetAll(ctx context.Context, key string) *redis.MapStringStringCmd
	ZCard(ctx context.Context, key string) *redis.IntCmd
	ZRank(ctx context.Context, key, member string) *redis.IntCmd
	ZRevRange(ctx context.Context, key string, start, stop int64) *redis.StringSliceCmd
	ZRangeWithScores(ctx context.Context, key string, start, stop int64) *redis.ZSliceCmd
	Do(ctx context.Context, args ...any) *redis.Cmd // TYPE, to name a key of another type
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// ErrInvalid is wrapped by every error about a bad argument: an empty
// token, user, item or row ID, a negative count or limit, a bad option.
// Such calls write nothing.
var ErrInvalid = errors.New("session: invalid argument")

// invalid returns an error for a bad argument of op, wrapping [ErrInvalid].
func invalid(op, format string, args ...any) error {
	return fmt.Errorf("session: %s: %s: %w", op, fmt.Sprintf(format, args...), ErrInvalid)
}

const (
	// ViewedLimit is how many of a session's last viewed items
	// [Store.UpdateToken] keeps, as the book does.
	ViewedLimit = 25
	// DefaultCacheTop is how many of the most viewed items have cacheable
	// pages unless [WithCacheTop] says otherwise: the book's 10,000.
	DefaultCacheTop = 10000
	// DefaultPageTTL is how long a cached page lives unless [WithPageTTL]
	// says otherwise: the book's 300 seconds.
	DefaultPageTTL = 300 * time.Second
)

var (
	//go:embed update.lua
	updateLua string
	//go:embed cart.lua
	cartLua string
	//go:embed clean.lua
	cleanLua string
	//go:embed endsession.lua
	endSessionLua string
	//go:embed logout.lua
	logoutLua string
	//go:embed cartclear.lua
	cartClearLua string
	//go:embed page.lua
	pageLua string
	//go:embed rescale.lua
	rescaleLua string
	//go:embed rowschedule.lua
	rowScheduleLua string
	//go:embed rowpeek.lua
	rowPeekLua string
	//go:embed rowdue.lua
	rowDueLua string
	//go:embed rowstore.lua
	rowStoreLua string
	//go:embed rowdrop.lua
	rowDropLua string

	// The writes of requests and carts are once-scripts too: a re-send
	// must not undo what another client did after their first run (see
	// doc.go).
	updateScript      = script.NewOnce("session update", updateLua)
	cartScript        = script.NewOnce("session cart", cartLua)
	cleanScript       = script.NewOnce("session clean", endSessionLua+cleanLua)
	logoutScript      = script.NewOnce("session logout", endSessionLua+logoutLua)
	cartClearScript   = script.NewOnce("session cart clear", cartClearLua)
	pageScript        = script.New("session page", pageLua)
	rescaleScript     = script.NewOnce("session rescale", rescaleLua)
	rowScheduleScript = script.NewOnce("session row schedule", script.MintLua+rowScheduleLua)
	rowDueScript      = script.New("session row due", rowPeekLua+rowDueLua)
	rowStoreScript    = script.NewOnce("session row store", script.MintLua+rowPeekLua+rowStoreLua)
	rowDropScript     = script.NewOnce("session row drop", rowPeekLua+rowDropLua)
)

// Option configures a [Store].
type Option func(*options)

type options struct {
	prefix   string
	pageTTL  time.Duration
	cacheTop int64
}

// WithPrefix sets the key prefix. Default: "session:". It must not contain
// '{' or '}', which would break the keys' Cluster hash tag.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithPageTTL sets how long [Store.CacheRequest] keeps a rendered page.
// Default: [DefaultPageTTL] (300 s). It must be at least a millisecond.
func WithPageTTL(d time.Duration) Option { return func(o *options) { o.pageTTL = d } }

// WithCacheTop sets how many of the most viewed items have cacheable pages
// (see [Store.CanCache]). Default: [DefaultCacheTop] (10,000). It must be
// at least 1. [Store.Rescaler] keeps twice as many items in the ranking.
func WithCacheTop(n int) Option { return func(o *options) { o.cacheTop = int64(n) } }

// Store holds the sessions, carts, page cache and row cache of one web
// app. It is safe for concurrent use, and any number of Stores of the same
// app and prefix, in any number of processes, share the same data.
type Store struct {
	rdb      Client
	app      string
	keys     keySet
	pageTTL  time.Duration
	cacheTop int64
}

// New returns the Store of the web app called app. All the app's keys
// share the hash tag {app}, so on Redis Cluster the whole app lives in one
// slot (see the package doc).
//
// New returns an error wrapping [ErrInvalid] if app is empty or holds '{'
// or '}' (which could make two apps share a key), the prefix holds '{' or
// '}', or an option is out of range. It panics if rdb is nil. Nothing
// reaches Redis.
func New(rdb Client, app string, opts ...Option) (*Store, error) {
	if rdb == nil {
		panic("session: New with a nil client")
	}
	o := options{prefix: "session:", pageTTL: DefaultPageTTL, cacheTop: DefaultCacheTop}
	if err := option.Apply(&o, opts); err != nil {
		return nil, invalid("new "+strconv.Quote(app), "%v", err)
	}
	if err := keys.CheckEntity("app name", app); err != nil {
		return nil, fmt.Errorf("session: new: %w: %w", err, ErrInvalid)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, invalid("new "+strconv.Quote(app), "%v", err)
	}
	if o.pageTTL < time.Millisecond {
		return nil, invalid("new "+strconv.Quote(app), "page TTL %v: must be at least 1ms", o.pageTTL)
	}
	if o.cacheTop < 1 {
		return nil, invalid("new "+strconv.Quote(app), "cache top %d: must be at least 1", o.cacheTop)
	}
	return &Store{
		rdb:      rdb,
		app:      app,
		keys:     newKeySet(keys.New(o.prefix), app),
		pageTTL:  o.pageTTL,
		cacheTop: o.cacheTop,
	}, nil
}

// App returns the app's name.
func (s *Store) App() string { return s.app }

// CheckToken returns the user a session token belongs to, in one round
// trip (the book's check_token). ok is false for an unknown token, one
// never recorded by [Store.UpdateToken] or deleted by a [Cleaner]. An empty
// token is an error wrapping [ErrInvalid].
func (s *Store) CheckToken(ctx context.Context, token string) (user string, ok bool, err error) {
	if token == "" {
		return "", false, invalid("check token", "empty token")
	}
	user, err = s.rdb.HGet(ctx, s.keys.loginKey(), token).Result()
	switch {
	case err == redis.Nil:
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("session: check token: %w", script.WrongType(ctx, s.rdb, err, s.keys.loginKey(), "session logins", "hash"))
	}
	return user, true, nil
}

// UpdateToken records a request of the session token, made by user, in
// one round trip (one script, where the book sends up to five commands):
// it maps token to user, marks the session as seen now (server time), and
// if item is not empty records the view: item becomes the session's newest
// viewed item (of the last [ViewedLimit] kept) and its count in the app's
// view ranking grows by one.
//
// A re-send of the call by go-redis (after a lost reply) is answered from
// a record of its first run, kept for the client's retry window: a view
// counts once, and a re-send never logs the token in again after a
// [Store.Logout] that ended the session meanwhile (see the package doc's
// "Lost replies"). When no reply came at all, the error wraps
// [ria.ErrOutcomeUnknown]: the request may or may not have been recorded.
//
// An empty token or user is an error wrapping [ErrInvalid], and nothing
// is written. A key of the app or the session holding something this
// package did not write there is a [*ria.KeyError], and nothing is
// written.
func (s *Store) UpdateToken(ctx context.Context, token, user, item string) error {
	switch {
	case token == "":
		return invalid("update token", "empty token")
	case user == "":
		return invalid("update token", "user of token %q: empty user", token)
	}
	keys := []string{s.keys.loginKey(), s.keys.recentKey(), s.keys.viewedKey(token), s.keys.viewsKey()}
	_, err := updateScript.RunOnce(ctx, s.rdb, s.keys.onceKey(), keys, token, user, item, ViewedLimit)
	if err != nil {
		return fmt.Errorf("session: update token: %w", script.Unknown(err))
	}
	return nil
}

// Viewed returns the items the session token viewed last, newest first (at
// most [ViewedLimit]), in one round trip.
func (s *Store) Viewed(ctx context.Context, token string) ([]string, error) {
	if token == "" {
		return nil, invalid("viewed", "empty token")
	}
	items, err := s.rdb.ZRevRange(ctx, s.keys.viewedKey(token), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("session: viewed: %w", script.WrongType(ctx, s.rdb, err, s.keys.viewedKey(token), "session viewed items", "zset"))
	}
	return items, nil
}

// ItemViews is an item of the view ranking and its view count (halved by
// each [Rescaler] pass, so it may be fractional).
type ItemViews struct {
	Item  string
	Views float64
}

// MaxTop is the most items [Store.TopViewed] returns at once.
const MaxTop = 10000

// TopViewed returns up to count (1 to [MaxTop]) items of the view ranking
// from position offset (0 is the most viewed), most viewed first, with
// their counts, in one round trip (ZRANGE WITHSCORES of the ranking, whose
// scores are minus the counts). It is the ranking that decides which pages
// [Store.CacheRequest] caches.
func (s *Store) TopViewed(ctx context.Context, offset, count int) ([]ItemViews, error) {
	if offset < 0 || count < 1 || count > MaxTop {
		return nil, invalid("top viewed", "offset %d, count %d: want offset >= 0 and count 1 to %d", offset, count, MaxTop)
	}
	k := s.keys.viewsKey()
	zs, err := s.rdb.ZRangeWithScores(ctx, k, int64(offset), int64(offset+count-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("session: top viewed: %w", script.WrongType(ctx, s.rdb, err, k, "session view ranking", "zset"))
	}
	out := make([]ItemViews, len(zs))
	for i, z := range zs {
		item, _ := z.Member.(string)
		out[i] = ItemViews{Item: item, Views: -z.Score}
	}
	return out, nil
}

// Sessions returns the number of sessions the app tracks (those a
// [Cleaner] counts against its limit), in one round trip.
func (s *Store) Sessions(ctx context.Context) (int64, error) {
	n, err := s.rdb.ZCard(ctx, s.keys.recentKey()).Result()
	if err != nil {
		return 0, fmt.Errorf("session: sessions: %w", script.WrongType(ctx, s.rdb, err, s.keys.recentKey(), "session recent", "zset"))
	}
	return n, nil
}

// AddToCart sets how many of item the session token has in its cart, in
// one round trip; a count of 0 takes the item out (the book's add_to_cart
// removes on count <= 0). It also marks the session as seen now, so that a
// [Cleaner] tracks every cart, even one of a session that never logged in.
//
// A re-send of the call by go-redis (after a lost reply) is answered from
// a record of its first run, kept for the client's retry window: it does
// not set the count again, so it never puts back an item that another
// client's [Store.ClearCart] or AddToCart changed meanwhile (see the
// package doc's "Lost replies"). When no reply came at all, the error
// wraps [ria.ErrOutcomeUnknown]: the count may or may not have been set.
//
// An empty token or item, or a negative count, is an error wrapping
// [ErrInvalid], and nothing is written. A key holding something this
// package did not write there is a [*ria.KeyError], and nothing is
// written.
func (s *Store) AddToCart(ctx context.Context, token, item string, count int) error {
	switch {
	case token == "":
		return invalid("add to cart", "empty token")
	case item == "":
		return invalid("add to cart", "cart of %q: empty item", token)
	case count < 0:
		return invalid("add to cart", "item %q count %d: must not be negative (0 removes the item)", item, count)
	}
	v, err := cartScript.RunOnce(ctx, s.rdb, s.keys.onceKey(), []string{s.keys.recentKey(), s.keys.cartKey(token)}, token, item, count)
	if err == nil {
		_, err = cartScript.AsInt64(v)
	}
	if err != nil {
		return fmt.Errorf("session: add to cart: %w", script.Unknown(err))
	}
	return nil
}

// Cart returns the items in the session token's cart and their counts, in
// one round trip. An unknown session has an empty cart. A cart that is not
// a hash, or holds a count that is not an integer, is a [*ria.KeyError]
// (matching ria.ErrWrongType or ria.ErrCorrupt).
func (s *Store) Cart(ctx context.Context, token string) (map[string]int, error) {
	if token == "" {
		return nil, invalid("cart", "empty token")
	}
	raw, err := s.rdb.HGetAll(ctx, s.keys.cartKey(token)).Result()
	if err != nil {
		return nil, fmt.Errorf("session: cart: %w", script.WrongType(ctx, s.rdb, err, s.keys.cartKey(token), "session cart", "hash"))
	}
	cart := make(map[string]int, len(raw))
	for item, v := range raw {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("session: cart of %q: item %q: %w", token, item, &ria.KeyError{Role: "session cart",
				Key: s.keys.cartKey(token), Got: "a malformed count " + strconv.Quote(v), Want: "an integer count", Err: ria.ErrCorrupt})
		}
		cart[item] = n
	}
	return cart, nil
}

// ClearCart empties the session token's cart (a checkout), in one round
// trip (one script). The session stays: it is still logged in and tracked
// by a [Cleaner]. Clearing an empty or unknown cart is not an error.
//
// A re-send of the call by go-redis (after a lost reply) is answered from
// a record of its first run, kept for the client's retry window: it does
// not empty the cart again, so it never deletes an item that another
// client added after the clear (see the package doc's "Lost replies").
// When no reply came at all, the error wraps [ria.ErrOutcomeUnknown]: the
// cart may or may not have been emptied.
//
// An empty token is an error wrapping [ErrInvalid], and nothing is
// written. A cart key holding something this package did not write there
// is a [*ria.KeyError], and nothing is written.
func (s *Store) ClearCart(ctx context.Context, token string) error {
	if token == "" {
		return invalid("clear cart", "empty token")
	}
	v, err := cartClearScript.RunOnce(ctx, s.rdb, s.keys.onceKey(), []string{s.keys.cartKey(token)})
	if err == nil {
		_, err = cartClearScript.AsInt64(v)
	}
	if err != nil {
		return fmt.Errorf("session: clear cart: %w", script.Unknown(err))
	}
	return nil
}

// Logout ends the session token (a user logging out), in one round trip:
// one script deletes, in one atomic step, what a [Cleaner] deletes of each
// session it ends: the token's login entry, its recent entry (a Cleaner no
// longer counts it), its viewed items and its cart. The view ranking keeps
// the session's views. existed reports whether the session existed: the
// token was logged in, or tracked by the recent index (an anonymous
// session with a cart). A token that did not exist answers false, and any
// keys left of it (a cart kept by a Cleaner with [WithKeepCarts]) are
// deleted all the same.
//
// Logout always deletes the cart, even when the app's Cleaners keep carts
// ([WithKeepCarts]): the user ended the session (on a shared computer, the
// next visitor must not find the cart), and with its recent entry gone
// nothing would ever delete a cart left behind. To keep a cart across a
// logout, copy it ([Store.Cart], [Store.AddToCart]) to the visitor's next
// token. A request of the token recorded after Logout ([Store.UpdateToken],
// [Store.AddToCart]) starts the session again: stop accepting the token
// (clear the cookie) before calling Logout.
//
// A re-send of the call by go-redis (after a lost reply) is answered from
// a record of its first run, so a session that existed is reported as
// such once it is gone (see the package doc's "Lost replies"). When no
// reply came at all, the error wraps [ria.ErrOutcomeUnknown]: the session
// may or may not have been ended; calling again ends it, but may then
// answer false.
//
// An empty token is an error wrapping [ErrInvalid], and nothing is
// written. A key of the app or the session holding something this package
// did not write there is a [*ria.KeyError], and nothing is written.
func (s *Store) Logout(ctx context.Context, token string) (existed bool, err error) {
	if token == "" {
		return false, invalid("logout", "empty token")
	}
	k := s.keys
	v, err := logoutScript.RunOnce(ctx, s.rdb, k.onceKey(),
		[]string{k.loginKey(), k.recentKey(), k.viewedKey(token), k.cartKey(token)}, token)
	if err != nil {
		return false, fmt.Errorf("session: logout: %w", err)
	}
	n, err := logoutScript.AsInt64(v)
	if err == nil && n != 0 && n != 1 {
		err = fmt.Errorf("script %s: malformed reply %d", logoutScript.Name(), n)
	}
	if err != nil {
		return false, fmt.Errorf("session: logout: %w", err)
	}
	return n == 1, nil
}
