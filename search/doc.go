// Package search is full-text search on plain Redis and Redis Cluster: an
// inverted index of documents in Redis SETs and bitmaps, the query language of Redis
// in Action (7.1-7.2: tokenize, index_document, intersect, union,
// difference, parse, parse_and_search, search_and_sort, search_and_zsort,
// string_to_score, zadd_string), cached result pages, re-indexing and
// removal, and sharding of one index over several Cluster slots (10.3).
//
//	x, err := search.New(rdb, "posts",
//		search.WithFields(search.NumericField("updated"), search.TextField("title")),
//		search.WithScores("update", "votes"))
//	_, _, err = x.Add(ctx, search.Document{ID: "p1", Text: "Redis in Action",
//		Fields: map[string]string{"updated": "1700000000", "title": "Redis"},
//		Scores: map[string]float64{"update": 1700000000, "votes": 12}})
//	r, err := x.Search(ctx, "redis +valkey -cluster", search.ByField("updated", true), search.Limit(0, 20))
//	next, err := x.Page(ctx, r.ID, 20, 20) // from the cached result
//
// [Index.Get] returns what the index holds for one document (its number
// of terms, its declared sort fields and scores; the text itself is not
// stored), or [ErrNotFound]; [Index.Count] returns the number of
// documents. Both only read, and name a key of another type or a
// malformed value with a *ria.KeyError as the scripts do.
//
// # Analysis
//
// An [Analyzer] turns text into terms, for documents and queries alike.
// The default [Standard] is the book's tokenizer made Unicode-aware:
// letters, digits and marks of any script, apostrophes kept inside words,
// lower-cased, the book's stop words ([BookStopWords]), at least 2
// characters. [StopWords], [MinLength], [MaxLength] and [Filter] (a
// stemmer, accent folding) configure it; any type with a Terms method
// replaces it ([WithAnalyzer]).
//
// # Query language
//
// Words are AND-ed; +word is a synonym OR-ed with the word before it;
// -word excludes (see [Parse]). "connect +connection pool -cluster" finds
// the documents holding connect or connection, and pool, but not
// cluster. Stop words are ignored. A malformed query is a *[ParseError]
// naming the byte where the problem is; an empty query, or one of stop
// words only, is [ErrEmptyQuery]; a query that only excludes is
// [ErrOnlyExclusions].
//
// # Sorting and pages
//
// Results are in index order by default: the order the documents were
// first added (a re-indexed document keeps its place, a removed and
// added again one goes last), which needs no read of the documents the
// page does not show. They are ordered by document ID with [ByID], by a
// stored field
// ([ByField]: numeric or by bytes, ascending or descending; the book's
// search_and_sort, which runs everywhere, miniredis included, since the
// sort is done in the script rather than by SORT), or by a weighted sum
// of score ZSETs ([ByScores]: the book's search_and_zsort by update time
// and votes, any weights), or best match first ([ByRelevance]: BM25
// computed in the script from each document's term counts and length,
// stored in its hash, and each term's document frequency, the size of
// its posting). Ties go by document ID, so an order is total. A
// weighted sum that is no number (inf - inf: scores near the float64
// limit under weights of both signs) counts as 0, as a document without
// the scores does; one that overflows one way is ±inf and sorts so. A
// sharded index orders by the same numbers as an unsharded one.
// [Scorer], [Alphabet] and [ZAddString] turn strings into ZSET scores
// that keep their order (string_to_score, zadd_string), for any
// alphabet.
//
// A search caches its result under a search ID ([Result.ID]) for the
// index's cache TTL ([WithCacheTTL], the book's 30 s by default);
// [Index.Page] reads later pages from it and [Index.Refresh] keeps it
// alive, each renewing the TTL. A page of an expired result is
// [ErrExpired]. A search orders only what its page needs: in index order
// it takes the first offset+count document numbers of the result (the
// first bits of a bitmap, or a bounded heap of numbers) and reads only
// their IDs; in another order it reads every matching document's ID and
// sort key and keeps the first offset+count entries with a bounded heap.
// It answers its page and Total, and caches those entries plus the
// matching document numbers (a bitmap, or a list) and how to order them.
// In index order, an [Index.Page] past the cached entries takes the next
// numbers from there, only as far as it needs, and reads their IDs. In
// another order, the first [Index.Page] that goes past those entries
// orders the rest (once, in the same script, still one round trip) and
// caches the whole order, so deep pages cost one full sort, paid by the
// first of them rather than by every search. The cached result is a
// snapshot of which documents matched: documents added after the search
// are not in its later pages. The entries the search ordered stay as they
// were; the rest are ordered when a later page reaches them, and a
// document removed before then is left out (Total still counts it).
//
// # Postings
//
// A term's posting is a SET of document numbers while it is small, then
// a bitmap (a STRING, bit n set for document n) once it holds more than
// max(256, highest document number / 256) documents. A query reads a SET
// member by member into its script (0.1 to 0.2 µs each), a bitmap in C
// (BITOP over 8 KiB per 65,536 document numbers); past that size a bitmap
// costs at most 8 times the memory of the SET as an intset (Redis's
// encoding up to 512 integers, 2 to 8 bytes each) and less than a SET
// past the intset encoding (about 50 bytes a member). On 64,512 package
// descriptions, this threshold against 512 made queries 0.90-0.96x the
// time for 1.08x the memory. A query whose AND-ed words all have bitmaps is
// answered by BITOP (AND, OR for synonyms, NOT for exclusions) and
// BITCOUNT in the server, and its first page in index order by BITPOS
// and GETRANGE; when one word's posting is a SET, SINTER over the SETs
// gives the candidates, which the bitmaps and exclusions filter. A bitmap
// stays a bitmap (it is deleted with its last document).
//
// # Upgrading
//
// Bitmap postings, index order (gseq) and <sid>:b came in
// together: processes of earlier versions cannot read an index once a
// posting is a bitmap, so upgrade every process of an index together.
// A cached result is one LIST, <sid>:c (earlier versions kept <sid>:l,
// :k, :n and :q): a Page of a search made by a process of another version
// answers [ErrExpired], as after the cache TTL.
//
// # Guarantees
//
// Each shard's part of an [Index.Add] or [Index.Remove] is one Lua script:
// a document is indexed, re-indexed or removed entirely or not at all, and
// readers never see half of it. The shards are in different slots, so a
// batch that spans shards cannot be one atomic step on a Cluster: each
// shard's script first runs its checks without writing (the check pass,
// in one pipeline), and the writes go only when every part passed. A key
// of another type or a malformed value that is there before the call
// therefore fails it with nothing written. A key another client changes
// between the check pass and the writes (or one only the writes reach:
// the hash at a document number the Add reserved) fails that shard's part
// alone, after the other shards may have applied theirs: the error names
// the shards that failed ("shard 1: ..."), and the counts returned are
// those of the parts applied. Re-indexing a document removes it from
// the postings of the terms it no longer has; removing it leaves no
// posting, field or declared score of it behind (only the shard's stats
// HASH stays, which keeps the last document number so that numbers are
// never reused). A search sees each shard at one instant; a sharded search
// is not one snapshot across shards (a document re-indexed between two
// shards' scripts is still seen once: it lives in one shard).
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost. Add and Remove are
// once-scripts (internal/script RunOnce): the first run's reply is
// recorded for the client's retry window, and a re-send is answered from
// it, so the counts they return are true. When every re-send of a shard's
// script failed, the error wraps ria.ErrOutcomeUnknown: the batch part of
// that shard was applied entirely or not at all (search again to know).
// Search and Page only write their own cache keys, the same on a re-run
// (a re-sent Page finds the order its first run cached).
//
// # Wrong types
//
// Every script checks the type of every key it reads or writes (document
// IDs, stats, document hashes, postings, score ZSETs, cached results)
// before its first write, and so does the statistics read of a sharded
// [ByRelevance] search (index stats, postings): a key someone else wrote
// with another type is a *ria.KeyError (ria.ErrWrongType) naming the key
// and its role ("search posting", ...), and nothing is changed (for a
// sharded Add or Remove, see Guarantees). A malformed document number or
// document hash is a *ria.KeyError matching ria.ErrCorrupt, and so, before
// any write, is a number the scripts read that is not one they write: a
// document number (in the IDs hash or a SET posting) that is not
// canonical decimal below 2^32, a document length or stats counter (seq,
// docs, len) that is not a non-negative integer within 2^53, a cached
// result's total that is not one either.
//
// # Round trips
//
// On one server or one shard: Add (any batch up to [MaxBatch]) 1, Remove
// 1, Search 1, Page 1, Refresh 1 (each runs one script per shard, all in
// one pipeline: one round trip per Cluster node holding a shard; the first
// run of a script on a server adds one for EVAL after NOSCRIPT; a sharded
// Remove whose IDs span shards runs the check pass first, one more
// pipeline: 1 more per node), Get 1
// (one read-only script on the document's shard), Count 1 (one HGET of
// each shard's stats, in one pipeline: one round trip per node; a stats
// key of another type costs one TYPE more, on that path only). A
// sharded index's Add first reserves the batch's document numbers
// (HINCRBY of gseq in shard 0's stats, in one pipeline with the check
// pass when the batch spans shards), and a [ByRelevance] search of a
// sharded index first reads the whole index's statistics, each in one
// more pipeline (1 more per node), so that the order and scores are an unsharded index's.
// Inside the script, a search makes a few SET commands (SMEMBERS or
// SINTER, SUNIONSTORE per synonym group; SCARD and then SMEMBERS or
// SMISMEMBER per SET that filters the candidates, an exclusion or a
// synonym of a bitmap) or a few bitmap commands (BITOP, BITCOUNT; BITPOS
// and GETRANGE for an index-order page; a SET synonym is read and set into
// a copy by BITFIELD, an excluded SET's members cleared where the result
// has them), one GET per bitmap that filters SET candidates (GETBIT per
// candidate when they are few), one HMGET
// of {tag}:di per 1,000 documents it reads the IDs of (in index order,
// only the page's; by ID or [ByScores], every match's, plus one ZMSCORE
// per weight and 1,000 documents; by a field or [ByRelevance]: one HMGET
// per matching document, of its hash) and its cache: one RPUSH and one
// PEXPIRE, plus a SET, RENAME or BITOP and PEXPIRE of the rest's numbers
// when the result has more than the page. A Page past
// the cached entries reads, in index order, the next numbers (BITPOS and
// GETRANGE, or the cached list) and only their IDs; in another order, the
// first such Page makes the reads again for the whole rest.
//
// # Key schema
//
// With the default prefix "search:" and index name n, every key of a shard
// is search:{<tag>}:<part>, <tag> being n for an unsharded index:
//
//	{tag}:ids        HASH  document ID -> document number
//	{tag}:di         HASH  document number -> document ID (a search reads IDs from it in bulk)
//	{tag}:n          HASH  seq (last number), docs, len (total terms);
//	                       shard 0 of a sharded index: gseq (numbers reserved)
//	{tag}:d:<num>    HASH  "#id", "#n" (terms), "t:<term>" (count), "s:<field>" (sort value)
//	{tag}:p:t:<term> SET or STRING (bitmap): the documents holding the term
//	{tag}:z:<score>  ZSET  document number -> score
//	{tag}:r:<sid>:c  LIST  cached result (TTL): total; how to order the rest (mode, field,
//	                       weights, BM25 statistics; "" when the entries are the whole
//	                       result); then document ID and sort key of each entry in order:
//	                       the search's first offset+count, all once a Page went past them
//	{tag}:r:<sid>:s  STRING the matching document numbers "n,n,...", until ordered (TTL)
//	{tag}:r:<sid>:b  STRING the same as a bitmap, when bitmaps computed the result
//	{tag}:once:<nonce> STRING reply record of an Add or Remove (retry window TTL)
//
// The u: namespace (see [Shard.Key]) is reserved. The scripts build the
// per-term, per-document and per-score keys from prefixes passed in KEYS
// (a batch touches thousands); the hash tag in the prefix keeps them in
// the shard's slot.
//
// # Cluster and sharding
//
// Every key of a shard carries the shard's hash tag, so each script
// touches one slot and no CROSSSLOT error is possible; the set operations'
// temporary keys are in the slot too. An unsharded index (the default) is
// therefore in one slot, on one master. [WithShards](n) spreads documents
// over n shards by a hash of their ID; shard i's tag is chosen so that its
// slot lies in the i-th of n equal slot ranges, so the shards spread over
// the masters of a Cluster whose slots are evenly split. A search runs
// on every shard in one pipeline and merges the shards' ordered entries in
// Go, answering exactly as one unsharded index given the same Adds and
// Removes would (same order, same total; a document removed or
// re-indexed between a search and its later Page may be placed
// differently by the two). The shards' lists are merged each in its own
// order, so the pages of one result never show a document twice, even
// when re-indexing between pages changed sort keys. Each shard returns
// offset+count entries for a page, so deep
// pages of a sharded index cost more. Open an index with the same name,
// prefix and shard count every time: the count is part of the layout.
//
// # Limits
//
// IDs up to [MaxIDBytes]; terms up to [MaxTermBytes]; text and distinct
// terms per document by [Limits] ([ErrTooLarge]); field values up to
// [MaxFieldBytes]; queries up to [MaxQueryBytes] and [MaxQueryTerms];
// pages up to [MaxPageSize]; batches up to [MaxBatch]; document numbers
// below 2^32 (the last bit SETBIT reaches; a sharded index spends one per
// document of each Add, new or re-indexed). A search in index
// order reads only its page's documents, but its set operations cost in
// proportion to the postings (a bitmap is highest document number / 8
// bytes; document numbers are never reused, so an index whose documents
// come and go grows its frequent terms' bitmaps). In any other order a
// search reads the ID (and sort key) of every matching document (about
// 0.6 µs each on one server core by ID, more by a field), and the first
// page past it sorts the whole result in Lua: those orders are meant for
// results up to some tens of thousands of documents (a query matching
// most of a million documents blocks the server for as long as it reads
// them).
package search
