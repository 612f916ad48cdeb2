package session

import "github.com/ria-go/ria/internal/keys"

// The keys of one app are <prefix>{<app>}:<part>. All of them share the
// {<app>} hash tag: the login, recent and views indexes are global to the
// app and every script touches them together with per-session keys, so the
// whole app lives in one Cluster slot (see doc.go).

// keySet holds the fixed keys of one app and the prefixes of its
// per-session, per-page and per-row keys, built once by [New].
type keySet struct {
	space                                 keys.Space
	app                                   string
	login, recent, views, delay, schedule string
	rowGen, rowGenLast                    string
	viewed, cart, page, row               string // prefixes: append a token, hash or row ID
}

func newKeySet(ks keys.Space, app string) keySet {
	return keySet{
		space:      ks,
		app:        app,
		login:      ks.Key(app, "login"),
		recent:     ks.Key(app, "recent"),
		views:      ks.Key(app, "views"),
		delay:      ks.Key(app, "delay"),
		schedule:   ks.Key(app, "schedule"),
		rowGen:     ks.Key(app, "rowgen"),
		rowGenLast: ks.Key(app, "rowgen:last"),
		viewed:     ks.Key(app, "viewed:"),
		cart:       ks.Key(app, "cart:"),
		page:       ks.Key(app, "page:"),
		row:        ks.Key(app, "row:"),
	}
}

// loginKey is a HASH from session token to user.
func (k keySet) loginKey() string { return k.login }

// recentKey is a ZSET of session tokens scored by when they were last seen,
// in server Unix microseconds.
func (k keySet) recentKey() string { return k.recent }

// viewsKey is a ZSET of items scored by minus their (decayed) number of
// views: rank 0 is the most viewed item.
func (k keySet) viewsKey() string { return k.views }

// viewedKey is a ZSET of the last [ViewedLimit] items a session viewed,
// scored by view time in server Unix microseconds, strictly increasing.
func (k keySet) viewedKey(token string) string { return k.viewed + token }

// cartKey is a HASH from item to count: the session's shopping cart.
func (k keySet) cartKey(token string) string { return k.cart + token }

// pageKey is a STRING, a rendered page, with the page TTL. hash is the
// hex SHA-256 of the request.
func (k keySet) pageKey(hash string) string { return k.page + hash }

// delayKey is a ZSET from row ID to its re-caching period in milliseconds.
func (k keySet) delayKey() string { return k.delay }

// scheduleKey is a ZSET from row ID to when it is next due, in Unix
// milliseconds of the [RowCacher]'s clock; a score below 0 means at once
// (ScheduleRowCache writes the server's µs - 2^52, so that rows due at
// once are cached in the order they were scheduled).
func (k keySet) scheduleKey() string { return k.schedule }

// rowGenKey is a HASH from row ID to its generation: a value minted from
// [keySet.rowGenLastKey] by each schedule and each store of the row, which
// a RowCacher's store and drop compare with the one they picked.
func (k keySet) rowGenKey() string { return k.rowGen }

// rowGenLastKey is a STRING, the last row generation minted (a counter
// that mint keeps strictly increasing; it stays when no row is left).
func (k keySet) rowGenLastKey() string { return k.rowGenLast }

// rowKey is a STRING holding the JSON of a cached row.
func (k keySet) rowKey(id string) string { return k.row + id }

// onceKey returns a new reply record key, <prefix>{<app>}:once:<nonce>: a
// STRING holding the first reply of one call of a once-script, which lives
// for the client's retry window.
func (k keySet) onceKey() string { return k.space.Once(k.app) }
