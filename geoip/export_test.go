package geoip

import "time"

// SetDropScan sets the SCAN COUNT of db's Drop steps (default 1,000), so
// that a test's small keyspace takes several steps.
func SetDropScan(db *DB, n int) { db.dropScan = n }

// SetKeepAlive makes db's imports refresh their staged keys on each tick
// of tick instead of every 2.5 minutes, and call kept after each refresh.
func SetKeepAlive(db *DB, tick <-chan time.Time, kept func()) {
	db.ticker = func() (<-chan time.Time, func()) { return tick, func() {} }
	db.kept = kept
}
