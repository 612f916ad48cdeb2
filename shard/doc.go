// Package shard holds the memory-saving and scaling structures of Redis in
// Action chapters 9 to 11: hashes and sets sharded into many small keys that
// Redis stores compactly, unique-visitor counting, fixed-width records
// packed into strings and aggregated by scanning, lists sharded over many
// keys with blocking pops, and a [Router] that spreads keys over several
// independent servers.
//
//	h, err := shard.NewHash(ctx, rdb, "media", 10_000_000) // shards sized from the server's limits
//	err = h.Set(ctx, "1155315", "939")                      // one HSET into shard:{media:2256}:hash
//	v, ok, err := h.Get(ctx, "1155315")
//
//	v, err := shard.NewVisitors(ctx, rdb, "site", shard.Sets) // or shard.HyperLogLog
//	err = v.Visit(ctx, time.Now(), id)
//	n, err := v.Count(ctx, time.Now())
//
//	l, err := shard.NewList(ctx, rdb, "jobs")
//	_, err = l.PushRight(ctx, "a", "b")
//	s, ok, err := l.BlockingPopLeft(ctx, time.Second)
//
// # Structures
//
//   - [Hash] (shard_hset, shard_hget) and [Set] (shard_sadd): a field or
//     member goes to one of many small keys, the book's shard_key ([ID],
//     [Key]): a key of ASCII digits to shard n/size (sequential ids fill
//     shards one after another), any other to CRC32 mod 2·total/size (so a
//     shard holds about size/2 of them on average). Set members are int64s,
//     stored as integers: on Redis 7.0 only a set of integers has a compact
//     encoding (intset). [Set.Members] lists them all, shard by shard
//     (SSCAN), for an operator or a migration.
//   - [Visitors] (count_visit): each day's unique visitors by the [Sets]
//     method (exact: sharded intsets, each day sized from the day before's
//     count) or the [HyperLogLog] method (PFADD/PFCOUNT: an estimate in
//     12 KB), same API.
//   - [Records] (set_location): a fixed-width record per numeric id, written
//     with SETRANGE into strings of many records each, read with GETRANGE,
//     scanned block by block. [Locations] keeps a country and state code per
//     user in them, with the book's code tables ([BookCodes]) or the
//     caller's ([NewCodes]), and counts users per country and state by
//     scanning (aggregate_location) or for a list of users
//     (aggregate_location_list).
//   - [List] (chapter 11): a list spread over many small Redis lists: push
//     and pop at both ends, one Lua script per call, and blocking pops that
//     wait without polling.
//   - [Router] (get_sharded_connection): maps each key, by its hash tag, to
//     one of a fixed list of servers; its client is a *redis.ClusterClient
//     that every package of this module accepts.
//
// # Compact encodings and memory
//
// A hash with at most hash-max-listpack-entries fields (each at most
// hash-max-listpack-value bytes), and a set of at most
// set-max-intset-entries integers, are stored as one flat array: a few
// bytes per element instead of the tens of bytes of a hashtable entry. A
// structure of this package reads these limits from the server when it is
// created ([ReadLimits]: CONFIG GET, the smallest over a Cluster's
// primaries; [DefaultLimits] where CONFIG is refused) and sizes its shards
// to stay within them; [WithShardSize] overrides that. Shards past the limit
// fall back to hashtables and save next to nothing.
//
// Measured on redis-server 7.0 (Debian defaults: hash-max-listpack-entries
// 512, set-max-intset-entries 512), INFO used_memory of the data alone:
//
//   - 1,000,000 numeric ids mapped to 10-digit numbers: one STRING key per
//     value 72.4 MB (72 bytes each); a [Hash] with shards of 512 (listpack)
//     10.2 MB (10.2 bytes each, 7.1x less); with shards of 1,000 (past the
//     limit: hashtables) 64.3 MB (1.1x less). A listpack entry here is a
//     3-byte integer field (the id's offset in its shard, [Hash.ShardField];
//     the full id would take 5) and a 6-byte integer value, and a full
//     shard's 4.6 KB sits in a 5 KB allocation. (Instagram's published
//     figure for the same layout, with full ids as fields, was about 4.4x.)
//   - 1,000,000 unique visitors, [Sets]: 9.9 MB (9.9 bytes each: 8-byte
//     intset entries of 60-bit ids, plus 8,192 shards' keys).
//   - 10,000,000 unique visitors, [HyperLogLog]: counted within 0.5% (the
//     standard error is 0.81%) in a 12,304-byte string (MEMORY USAGE 14.4 KB;
//     used_memory moves by more, with buffers), whatever the count.
//
// Aggregating packed records by scanning ([Locations.Aggregate]: GETRANGE
// blocks of 1 MiB, 4 in flight) read 64 MB of records at 380 MB/s end to end
// on a loaded 2-core machine; reading records one GETRANGE per id
// ([Locations.AggregateUsers], pipelined by 10,000) ran at 1.4 MB/s, 265x
// slower (BenchmarkLocations).
//
// The tests TestHash_memory, TestVisitors_memory and
// TestLimits_compactEncoding reproduce these figures and check OBJECT
// ENCODING.
//
// # Guarantees
//
//   - Single-key writes (HSET, HDEL, SADD, SREM, PFADD, SETRANGE) are
//     atomic per shard. A batch ([Hash.SetMany], [Hash.Delete], [Set.Add],
//     [Set.Remove], [Visitors.Visit]) sends one command per shard in one
//     pipeline; its shards live under different hash tags (on different
//     Cluster nodes), so the batch as a whole is not atomic: a shard that
//     fails (a wrong type, a server down) leaves the others written, and
//     the error names it.
//   - A [List]'s push and pop are one script each on one slot: a value is
//     pushed and popped exactly once; pops take from the end shard and move
//     past empty shards. A blocking pop that finds the list empty registers
//     itself in the same script; every push wakes the registered pops, which
//     pop again (one may find the value taken by another and wait again).
//   - [Hash.Len] and [ReadLimits] visit each primary once: a Cluster's
//     replicas are not visited (go-redis's ForEachShard would visit them
//     too and count their keys twice); on a Ring, a shard go-redis marks
//     down makes them fail (go-redis would skip it and they would answer
//     for the others as for all). [Records.Scan] and
//     [Locations.Aggregate] read each string once, by its number, from the
//     node that serves it.
//   - [Set.Members] reads shards 0 to n-1 by number (no key SCAN) with
//     SSCAN: a member in the set from its start to its end is visited, one
//     added or removed meanwhile may or may not be, none is visited twice.
//     It is a listing, not a snapshot.
//   - A structure's parameters (shard size, total, method, record width,
//     ids per string, code table) are stored with it by the first New and
//     reused by later ones: a New given other values fails with
//     [ErrMismatch] instead of mapping keys elsewhere. A code table is
//     kept as a checksum of its names, each with its length, so that no
//     two tables pass for one another; the checksum of earlier versions
//     (names joined with ':', ';' and ',') is still accepted for the same
//     table when no name holds one of those characters, and refused
//     (ErrMismatch) when one does, since it cannot tell such a table from
//     another.
//   - A key of the wrong type (a shard that is a STRING, a list end that is
//     not an integer...) gives a *ria.KeyError naming the key and its role
//     (errors.Is ria.ErrWrongType or ria.ErrCorrupt). Scripts check every
//     key they rely on, the shards they reach included, before their first
//     write; a plain command on a wrong-type key fails without writing.
//     Turning a WRONGTYPE reply of a plain command into a *ria.KeyError costs
//     one TYPE round trip, on that error path only.
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost or timed out
// (MaxRetries). Every write of this package answers truly when that
// happens:
//
//   - Hash, Set, Visitors and Records writes are naturally idempotent
//     (HSET, HDEL, SADD, SREM, PFADD, SETRANGE; the scripts that store a
//     structure's parameters, a day's size and the records' highest string
//     only set what is missing or raise a maximum): running one twice leaves
//     the same state and the same answer.
//   - [List] push and pop are once-scripts: the first run records its reply
//     under a key of the call's own (for the client's retry window) and a
//     re-send is answered from it, so a re-sent push pushes nothing twice
//     and a re-sent pop returns the value the first run popped. A blocking
//     pop's wait (BLMOVE of the caller's wake list onto itself) removes
//     nothing, so a re-send finds the wake too.
//
// When every re-send fails, a write's error wraps ria.ErrOutcomeUnknown: it
// may or may not have taken effect.
//
// # Round trips
//
//   - Hash Get, Set, Exists; Set Contains: 1. Hash GetMany, SetMany, Delete;
//     Set Add, Remove: 1 per server the shards are on (a pipeline). Set
//     Len: 1 per server per 10,000 shards.
//   - Visitors: HyperLogLog Visit and Count 1; Sets Visit 1 per server, and
//     Count 1 per server per 10,000 shards, plus, the first time a process
//     meets a day, one GET of the day's size (and, for the first Visit of
//     the day of all processes, the day before's count and one script to
//     store the size).
//   - List PushLeft, PushRight, PopLeft, PopRight, Len: 1. BlockingPopLeft,
//     BlockingPopRight: 1 when the list has a value; 3 for a value that
//     arrives while it waits (register, wait, pop again).
//   - Records Put, Locations Set: 1, plus 1 the first time a process writes
//     into a string beyond the highest it knows. Get: 1; GetMany and
//     AggregateUsers: 1 per server per 10,000 ids. Scan and Aggregate: 1 GET,
//     1 STRLEN pipeline per server per 10,000 strings, 1 GETRANGE per block
//     (4 in flight).
//   - Hash Len: a SCAN of each primary plus 1 HLEN pipeline per primary.
//   - Set Members: 1 per server per 65,536/size shards (an SSCAN pipeline;
//     a compact shard comes whole in one SSCAN), plus 1 per server per
//     further SSCAN page of the shards over the compact encoding.
//   - New of an existing structure: 1 (HGETALL of its parameters); of a new
//     one: that, CONFIG GET on each primary when the shard size comes from
//     the server, and 1 script.
//
// # Keys
//
// With the default prefix "shard:", a structure named N, shard i, day D:
//
//	shard:{N}:hash:meta       HASH    size, total
//	shard:{N:i}:hash          HASH    the fields of shard i
//	shard:{N}:set:meta        HASH    size, total
//	shard:{N:i}:set           SET     the members of shard i (integers)
//	shard:{N}:visitors:meta   HASH    method, size
//	shard:{N:D}:expected      STRING  visitors day D is sized for
//	shard:{N:D:i}:set         SET     day D's visitor ids in shard i
//	shard:{N:D}:hll           STRING  day D's HyperLogLog
//	shard:{N}:records:meta    HASH    width, per (ids per string), codes (Locations)
//	shard:{N:i}:records       STRING  records i·per to (i+1)·per-1, packed
//	shard:{N}:records:max     STRING  the highest string number written
//	shard:{N}:list:meta       HASH    size
//	shard:{N}:first, :last    STRING  the numbers of the end shards
//	shard:{N}:i               LIST    shard i of the list (i may be negative)
//	shard:{N}:waiters         ZSET    blocked pops' ids -> end of registration (ms)
//	shard:{N}:wake:W          LIST    wake list of blocked pop W
//	shard:{N}:once:X          STRING  a push's or pop's reply, for re-sends
//
// D is the date, YYYY-MM-DD. Structures of different kinds share the
// namespace of their prefix: a [Set] named "v:2024-05-01" and the
// [Visitors] "v" would share shard keys, so give them different names or
// prefixes ([WithPrefix]). Names must not contain '{' or '}'.
//
// # Cluster
//
// Each shard of a Hash, Set, Visitors day or Records has a hash tag of its
// own, so the shards of one structure spread over a Cluster's (or a
// Router's) nodes, and a batch is one round trip per node. All the keys of
// a List share its name's tag: a list lives on one node, which its scripts
// need. Hash.Len scans each primary once. Set.Members reads each shard
// from the node that serves it, pipelined per node.
//
// # Sharding across servers: Router versus Ring
//
// A [Router] maps keys to a fixed list of standalone servers by the hash
// slot of their tag mod the number of servers, the book's
// get_sharded_connection; the keys of one operation of any package here
// share a tag, so they share a server. When a server is down its keys fail
// and are never sent elsewhere, and the other servers' keys keep working.
// go-redis's *redis.Ring instead drops a shard that fails its health checks
// and re-hashes its keys over the others: a lock, a queue or a counter
// would then be written, split or lost on another server. Use Ring for
// caches only; use a Router or Redis Cluster for data that must stay put.
//
// # Limits
//
//   - Shards are sized when a structure is created; a later change of the
//     server's limits (CONFIG SET) does not resize them. Fields or values
//     longer than hash-max-listpack-value bytes make their shard a
//     hashtable whatever its size.
//   - Hashed (non-numeric) keys spread over 2·total/size shards: a
//     structure that grows far past the total it was created with fills its
//     shards past the limit. Numeric keys have no such bound (shard n/size).
//   - A [Set], a [Visitors] day and a [Records] have at most [MaxShards]
//     (2^24) shards or strings, since Set.Len, Visitors.Count and
//     Records.Scan visit each one (10,000 per pipeline, checking ctx in
//     between): NewSet, NewVisitors ([WithDailyExpected]) and Records.Put
//     refuse what goes past it with [ErrSize], writing nothing.
//   - Visitors days are calendar dates of the time.Time given, in its own
//     location. With Sets, a day sized from a small day before and then
//     visited by many more has shards past set-max-intset-entries (still
//     exact, less compact).
//   - A Records string holds at most 512 MB; ids are from 0 to
//     [MaxShards]·(ids per string) - 1 (2^44 - 1 by default). A record
//     of zero bytes reads as "never written" in a [Locations] aggregate.
//   - The first Put of a process into a string beyond the highest it knows
//     raises the records' max string number (another slot, so another
//     command) before its SETRANGE: if that string's key holds another
//     type, the Put fails with the max raised, and Scan reports that key. A
//     process keeps the highest string it knows in memory: records whose
//     max key was deleted by hand are scanned again only after a Put into
//     a new string raises it.
//   - A List push carries at most 100,000 values; each script call blocks
//     the server while it runs. Each blocked pop holds one connection of the
//     client's pool.
//   - Hash.Len and Records.Scan read the whole keyspace or every record:
//     tools and batch jobs, not requests.
package shard
