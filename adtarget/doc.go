// Package adtarget is ad targeting that learns from views, clicks and
// actions, on plain Redis and Redis Cluster: Redis in Action 7.3
// (index_ad, target_ads, match_location, finish_scoring,
// record_targeting_result, record_click, update_cpms, cpc_to_ecpm,
// cpa_to_ecpm), each operation one atomic Lua script.
//
//	x, err := adtarget.New(rdb, "ads")
//	_, err = x.Index(ctx, adtarget.Ad{ID: "1", Locations: []string{"USA", "CA"},
//		Content: "redis in action", Bid: adtarget.CPC, Value: 0.25})
//	tg, ok, err := x.Target(ctx, []string{"USA"}, "a page about redis")
//	// show tg.Ad; when the user clicks it:
//	err = x.Click(ctx, tg.ID, tg.Ad)
//
// # What it does
//
// An ad targets locations, holds content words and bids CPC (per click),
// CPA (per action) or CPM (per thousand views) with a value. Each ad has
// an estimated eCPM (earnings per thousand views): a CPM ad's is its
// value; a CPC (CPA) ad's starts as its value times its type's clicks
// (actions) per thousand views so far (its value before any: the book's
// AVERAGE_PER_1K default of 1) and is relearned as 1000 × value × clicks
// (actions) / views from its own numbers once it has a click (action).
// Each of its words has a bonus, learned from the views and clicks of the
// targetings that matched the word: the word's eCPM minus the ad's.
//
// [Targeter.Target] takes the ads targeting any of the request's locations
// and ranks them by eCPM + half the smallest + half the largest bonus of
// the page's words the ad holds (finish_scoring); the best ad wins (ties:
// the greatest ID in byte order, as the book's ZREVRANGE, whatever the
// server's locale). The targeting gets an ID, records a view of the ad, of
// its type and of each word it matched, and keeps its ad and matched words
// for the click to come ([WithMatchTTL], 15 minutes). Every 100th view of
// an ad relearns it.
// [Targeter.Click] and [Targeter.Action] take the targeting's ID and ad,
// record a click or an action for the ad, its type and the matched words,
// and relearn the ad (update_cpms); a targeting ID that is not a live
// targeting of that ad is refused ([ErrNoTargeting]), so an ad never
// shown earns no click. [Targeter.Stats] reads an ad's numbers; [Targeter.Ads]
// lists the indexed ads' IDs a page at a time (HSCAN of the types HASH,
// for an operator or a migration).
//
// Words come from the search package's analyzer (the book's tokenize made
// Unicode-aware, with its stop words) or any [search.Analyzer]
// ([WithAnalyzer]).
//
// # Guarantees
//
// Each operation is one Lua script in the targeter's slot, so it sees and
// leaves the numbers whole: targeting ranks on a state no learning step
// has half-updated, and concurrent targetings and clicks lose no view and
// no click (the book's targeting is several round trips, and its
// update_cpms reads and writes in steps a concurrent click can cut into).
// The book's process-local AVERAGE_PER_1K is replaced by the type
// counters in Redis, shared by every client. Re-indexing an ad replaces
// its locations, words and bid and starts its learning over (the
// targetings served before it take no click for it: a click counts only
// after a view of the same indexing); removing it leaves nothing of it but
// its share of the type counters. Paging with
// Ads lists every ad indexed from the first page to the last (an ad
// indexed or removed meanwhile may or may not be, and an ID may come in
// two pages when the HASH is resized between them: HSCAN's guarantees).
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost. Index, Remove,
// Target, Click and Action are once-scripts (internal/script RunOnce):
// the first run's reply is recorded for the client's retry window, and a
// re-send gets it instead of counting a second view or click. When every
// re-send failed, the error wraps ria.ErrOutcomeUnknown: the operation
// was applied entirely or not at all ([Targeter.Stats] tells which).
// Stats and Ads only read: a re-send reads again.
//
// # Wrong types
//
// Every script checks the type of every key it relies on (the types,
// eCPM, base value and statistics keys, the targeting counter, the
// request's locations and words, the chosen ad's words, views, clicks,
// actions and since mark, the targeting (its ad and matched words); for Index, Remove, Click,
// Action and a relearning view also the postings of the ad's words and
// the SETs of its locations) before its first write: a key someone else
// wrote with another type is a *ria.KeyError (ria.ErrWrongType) naming
// the key and its role, and nothing is changed (Target unions the
// locations' SETs on a small temporary key of its slot when a request has
// several, and deletes it before it checks the chosen ad's keys). A
// counter the scripts increment or compute with (the targeting counter,
// the type statistics) that is not an integer within ±2^53 as Redis writes
// one, an ad's since mark that is not such an integer from 0, or an
// unknown bid type in the types HASH, is a *ria.KeyError
// matching ria.ErrCorrupt (Target also refuses a targeting counter below
// 0, or at 2^53, whose next ID would repeat it), as is a re-index whose
// first eCPM would not be finite.
//
// # How it ranks
//
// The book builds three temporary ZSETs as large as the ads of the
// locations (their eCPMs, the bonuses' MIN and MAX unions, the final
// sum) and takes the top one. Target computes the same scores without
// them: each page word's bonuses among the location's ads, read whole
// from the word's posting for that location (the book's idx:<word> split
// by location, so no intersection is needed: a few entries each), their
// min and max in Lua, the eCPMs of those ads (ZMSCORE), then the best ad
// holding no page word by walking the eCPM ZSET from the top until an ad
// of the locations (SMISMEMBER) or an eCPM below the best score. The sums
// are done in the book's order (eCPM + min×0.5 + max×0.5), so the scores
// and the winner are the book's exactly.
//
// The split postings hold an entry per ad, location and word instead of
// per ad and word, but each is small enough for the listpack encoding:
// with 10,000 ads of 1 to 3 of 50 locations and 5 to 10 of 500 words
// (the benchmark's), they take 4.0 MB (MEMORY USAGE, 24,949 keys) where
// the book's 500 word ZSETs take 8.0 MB, and the whole index 16.4 MB
// against the book's 17.0 MB. Measured on redis-server 7.0 with the
// benchmark's data, Target ran at 3.2x the book's target_ads and
// record_targeting_result (one run; was 1.8-2.2x when it intersected
// each word with the location).
//
// # Bad input
//
// An empty, long or invalid-UTF-8 ad ID or location, no location, an
// unknown bid type, a value that is not a positive finite number up to
// [MaxValue], content over [MaxContentBytes] or [MaxWords], a targeting
// ID below 1: an error matching [ErrInvalid], found before anything
// reaches Redis. A click on an ad not indexed is [ErrUnknownAd], an
// action on an ad that is not CPA [ErrNotCPA], a click or action whose
// targeting ID is not a live targeting of the ad (never served, of another
// ad, past the match TTL, or served before the ad was last indexed)
// [ErrNoTargeting]; they record nothing.
//
// # Round trips
//
// Index 1, Remove 1, Target 1, Click 1, Action 1, Stats 1, Ads 1 per
// page (the first run of a script on a server adds one for EVAL after
// NOSCRIPT).
//
// # Key schema
//
// With the default prefix "adtarget:" and targeter name n (the book's
// key in parentheses):
//
//	{n}:types          HASH   ad -> cpc | cpa | cpm (type:); its fields
//	                          are the indexed ads Ads lists
//	{n}:value          ZSET   ad -> eCPM (idx:ad:value:)
//	{n}:base           ZSET   ad -> bid value (ad:base_value:)
//	{n}:stats          HASH   <type>:views | :clicks | :actions (type:<type>:views: ...)
//	{n}:served         STRING targeting ID counter (ads:served:)
//	{n}:req:<location> SET    ads targeting the location (idx:req:<location>)
//	{n}:word:<len>:<location>:<word>
//	                   ZSET   ad -> the word's bonus, for the location's ads
//	                          (idx:<word>; len: the location's length in bytes)
//	{n}:loc:<ad>       SET    the ad's locations
//	{n}:terms:<ad>     SET    the ad's words (terms:<ad>)
//	{n}:views:<ad>     ZSET   word -> views, "" the ad's (views:<ad>)
//	{n}:clicks:<ad>    ZSET   word -> clicks, "" the ad's (clicks:<ad>)
//	{n}:actions:<ad>   ZSET   word -> actions, "" the ad's (actions:<ad>)
//	{n}:matched:<tid>  HASH   targeting tid: "" -> its ad, each word it matched
//	                          -> 1; TTL (terms:matched:<tid>, which held the words)
//	{n}:since          HASH   ad -> the targeting counter when the ad was last
//	                          indexed (none when nothing was served yet): a
//	                          click needs a targeting ID above it
//	{n}:tmp:m          temporary key of one Target script (never outlives it)
//	{n}:once:<nonce>   STRING reply record (retry window TTL)
//
// The scripts build these keys from the prefix <prefix>{n}: passed in
// KEYS; its hash tag keeps them in the targeter's slot.
//
// # Cluster
//
// Every key of a targeter carries its name as the hash tag: each script
// touches one slot and no CROSSSLOT error is possible. A targeter lives
// on one master; run one targeter per market or region to spread load.
// Ads pages through that master's types HASH, and its cursor is that
// server's: after a failover or a slot migration between pages, start
// again from cursor 0.
//
// # Limits
//
// IDs, locations and words up to [MaxNameBytes]; [MaxLocations] per ad
// or request; content up to [MaxContentBytes] and [MaxWords] distinct
// words. Target's work grows with the page's words times the request's
// locations times the postings' lengths, plus the walk of the
// eCPM ZSET down to the best ad of the locations (short when the
// locations hold a fair share of the ads; a location holding only the
// lowest-ranked of a million ads walks far): the benchmark in
// bench_test.go measures 10,000 ads.
package adtarget
