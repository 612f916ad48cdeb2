// Package geoip finds the record (country, or city and location) of an
// IPv4 or IPv6 address from IP-range data imported into Redis (Redis in
// Action 5.3: import_ips_to_redis, import_cities_to_redis,
// find_city_by_ip), exactly: an address in no range is not found, where the
// book answers with the preceding range's city.
//
//	db, err := geoip.New(rdb, "countries")
//	f, _ := os.Open("geolite2-country-ipv4.csv") // start_ip,end_ip,country_code
//	p, err := db.ImportRanges(ctx, f, geoip.WithProgress(func(p geoip.Progress) { log.Print(p.Ranges) }))
//	r, err := db.Lookup(ctx, netip.MustParseAddr("2001:db8::1"))
//	if errors.Is(err, geoip.ErrNotFound) { ... }
//	fmt.Println(r.Country, r.Start, r.End)
//
// # Formats
//
// [DB.ImportRanges] reads start_ip,end_ip,country_code rows with IPv4 and
// IPv6 addresses (the ip-location-db packages' format); [DB.ImportGeoLiteCity]
// reads the book's GeoLite City legacy pair (blocks of integer IPv4
// addresses, and locations). Rows must be sorted by start address and must
// not overlap; a malformed, unsorted or overlapping row fails the import
// with its line number.
//
// # Exact for IPv6
//
// ZSET scores are doubles (53 bits of mantissa) and cannot hold 128-bit
// addresses. Ranges are ZSET members, all of score 0, holding the start and
// end addresses as 16 bytes each, big-endian (IPv4 as IPv4-mapped IPv6),
// followed by the record: Redis orders members of equal score bytewise, so
// ZREVRANGEBYLEX with the looked-up address as bound finds the last range
// starting at or before it, and the end decides whether the address is in
// it. IPv4 and IPv4-mapped IPv6 forms of an address look up the same.
//
// # Guarantees
//
// An import streams its file (memory bounded whatever its size: about 7
// MiB peak heap for 1,000,000 ranges on the test machine) into a staged
// data set in pipelined batches, one pipeline in flight while the next is
// parsed (so parsing and the server overlap), reports progress after each
// pipeline has been answered, and makes
// the staged set live with one script (RENAME over the live ranges): a
// reader sees the old data set or the new one, never a mix. An error or a
// cancelled ctx deletes the staged keys and leaves the old data set in
// place; staged keys of a crashed import expire after 10 minutes (a running
// import refreshes them every 2.5 minutes, however slow its reader). An
// import whose staged keys expired all the same (its process or link
// stalled for longer) fails with [ErrExpired] at its commit, even if its
// later batches recreated them with the rest of the file: a marker key
// that its first pipeline creates and no later one recreates is gone.
// [DB.LookupMany] runs its batch in MULTI/EXEC, so one batch sees one data
// set too.
//
// [DB.Drop] retires a data set: one script UNLINKs the live ranges,
// version and records (lazy free: a million ranges do not block the
// server), so readers see the whole data set or nothing; it then deletes
// the staged keys and records of other versions, found by SCAN steps of
// about 1,000 keys each on the data set's node. An import whose staged
// keys a Drop deleted fails with [ErrDropped] at its commit, never making
// half a data set live: Drop leaves a tombstone for its version, which the
// import keeps alive while it runs and which expires 10 minutes after it
// stopped.
//
// # Round trips
//
// Lookup 1 (one ZREVRANGEBYLEX), LookupMany 1 per batch (MULTI/EXEC; the
// data set lives in one hash slot, so on one node of a Cluster), plus one
// for a GeoLite City data set, whose location records live in a HASH.
// Import: one per pipeline of 8 batches of 1,000 ranges by default
// ([WithBatch]), overlapping the parsing of the next, then one for the
// commit after the last has been answered, plus one every 2.5 minutes
// (the keep-alive of its staged keys). Version 1. Drop 1 while the
// node holding the data set has fewer than about 1,000 keys (its first
// step unlinks the live data set and scans those), plus one per further
// 1,000 or so (a SCAN step each).
//
// # Lost replies
//
// An import's batches (ZADD, HSET, PEXPIRE, SET NX of its marker) are
// idempotent. Its commit is not (re-run after another import committed, it
// would find its version gone and answer [ErrExpired] for data that went
// live), so it records its reply for the client's retry window (a STRING
// in the data set's slot, see Keys) and a re-send after a lost reply gets
// that reply; when no reply comes the error wraps ria.ErrOutcomeUnknown
// (read [DB.Version] to know whether it went live). Lookups change
// nothing, and a batch whose reply was lost is sent again. A Drop's first
// step is not idempotent either (re-run, it would delete an import that
// committed after it), so it records its reply the same way; each later
// step is (a re-run finds less to delete and continues the same scan).
// Dropping a dropped data set is not an error: a Drop whose reply never
// came wraps ria.ErrOutcomeUnknown; call it again.
//
// # Keys
//
//	<prefix>{<name>}:ranges              ZSET, the live ranges (members start(16) end(16) record)
//	<prefix>{<name>}:version             STRING, the live data set's version
//	<prefix>{<name>}:records:<version>   HASH, locId -> JSON record (GeoLite City only)
//	<prefix>{<name>}:staging:<version>   ZSET, an import's ranges until it commits
//	<prefix>{<name>}:staged:<version>    STRING, marker of an import's staging (expires no later than it)
//	<prefix>{<name>}:dropped:<version>   STRING, tombstone of an import a Drop cut (expires)
//	<prefix>{<name>}:once:<nonce>        STRING, reply record of a commit or a Drop's first step (lives for the client's retry window)
//
// A record in a range is "=" and the country code (range format), or "#",
// the version, ":" and the location ID (GeoLite City). Default prefix
// "geoip:". A key of the wrong type gives a *ria.KeyError naming it, and
// an import or a Drop that meets one changes nothing.
//
// # Cluster
//
// A data set is one hash slot ({name}): its lookups, its commit and a
// Drop's scripts (SCAN included: the scan runs in a script, on the node
// of the data set's slot) run on one node. Spread big data sets over nodes by naming several (per
// continent, per family) and choosing one by address in the caller.
package geoip
