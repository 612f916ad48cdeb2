package geoip

// SetDropScan sets the SCAN COUNT of db's Drop steps (default 1,000), so
// that a test's small keyspace takes several steps.
func SetDropScan(db *DB, n int) { db.dropScan = n }
