package search

import (
	"hash/fnv"
	"strconv"

	"github.com/ria-go/ria/internal/slot"

	"github.com/ria-go/ria/internal/keys"
)

// The keys of one shard are <prefix>{<tag>}:<part>. All of them share the
// shard's hash tag, so every script of this package touches one slot: a
// shard is the unit of atomicity. An unsharded index's tag is its name; a
// sharded index's tags are chosen so that the shards' slots are spread
// evenly over the 16384 slots (see shardTag).
//
// The scripts receive the prefixes of the per-term, per-document and
// per-score keys in KEYS and build those keys from them and the terms or
// document numbers they are given or read (an index batch touches
// thousands of them); the hash tag in the prefix keeps them in the
// shard's slot.

// shardKeys holds the keys and key prefixes of one shard.
type shardKeys struct {
	space keys.Space
	tag   string
	// ids is a HASH: document ID -> document number.
	ids string
	// nums is a HASH: document number -> document ID (the reverse of ids,
	// so that a search reads many documents' IDs in one HMGET).
	nums string
	// stats is a HASH: seq (last document number), docs (documents),
	// len (total terms, for the average document length); in shard 0 of a
	// sharded index also gseq (the document numbers reserved so far).
	stats string
	// docPrefix + <number> is a document's HASH.
	docPrefix string
	// setPrefix + <token> is a posting: a SET of the numbers of the
	// documents holding the token, or a bitmap (see add.lua).
	setPrefix string
	// scorePrefix + <name> is a ZSET: document number -> score.
	scorePrefix string
	// cachePrefix + <search ID> + ":c" | ":s" | ":b" are a
	// search's cached result (see the package doc's key schema), ":t:<i>"
	// its temporary keys.
	cachePrefix string
}

func newShardKeys(ks keys.Space, tag string) shardKeys {
	return shardKeys{
		space:       ks,
		tag:         tag,
		ids:         ks.Key(tag, "ids"),
		nums:        ks.Key(tag, "di"),
		stats:       ks.Key(tag, "n"),
		docPrefix:   ks.Key(tag, "d:"),
		setPrefix:   ks.Key(tag, "p:"),
		scorePrefix: ks.Key(tag, "z:"),
		cachePrefix: ks.Key(tag, "r:"),
	}
}

// onceKey returns a new reply record key of the shard.
func (k shardKeys) onceKey() string { return k.space.Once(k.tag) }

// termToken prefixes a term in its posting key and in its document's
// hash field (t:<term>).
const termToken = "t:"

func termTok(term string) string { return termToken + term }

// shardOf returns the shard of document id in an index of n shards: FNV-1a
// of the ID modulo n. Changing n moves documents: an index keeps its
// shard count.
func shardOf(id string, n int) int {
	if n == 1 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum64() % uint64(n))
}

// shardTag returns the hash tag of shard i of n of index name: the name
// itself for an unsharded index; else "<name>:<i>:<k>" with the smallest
// k >= 0 whose slot lies in the i-th of n equal ranges of the 16384
// slots, so that the shards spread over the slots, and so over the masters
// of a Cluster whose slots are evenly split, instead of landing where the
// hash puts them.
func shardTag(name string, i, n int) string {
	if n == 1 {
		return name
	}
	lo, hi := i*16384/n, (i+1)*16384/n
	base := name + ":" + strconv.Itoa(i) + ":"
	for k := 0; ; k++ {
		t := base + strconv.Itoa(k)
		if s := slot.Of("{" + t + "}"); s >= lo && s < hi {
			return t
		}
	}
}

// Shard is the key layout of one shard of an index, for packages that
// build on it (ad targeting, job matching) and write their own scripts
// over its postings: every key it names shares the shard's hash tag, so a
// script may use them all together, and with keys of its own built by
// [Shard.Key].
type Shard struct{ k shardKeys }

// Shards returns the index's shard count.
func (x *Index) Shards() int { return len(x.shards) }

// ShardOf returns the shard that holds document id.
func (x *Index) ShardOf(id string) int { return shardOf(id, len(x.shards)) }

// Shard returns the layout of shard i (0 <= i < [Index.Shards]).
func (x *Index) Shard(i int) Shard { return Shard{x.shards[i]} }

// Tag returns the shard's hash tag (without braces).
func (s Shard) Tag() string { return s.k.tag }

// Key returns <prefix>{<tag>}:u:<part>, a key of the caller's own in the
// shard's slot (the u: namespace is never used by the index).
func (s Shard) Key(part string) string { return s.k.space.Key(s.k.tag, "u:"+part) }

// IDsKey returns the HASH of the shard's documents: document ID ->
// document number (a decimal integer, never reused).
func (s Shard) IDsKey() string { return s.k.ids }

// DocKey returns the HASH of document number num: "#id" (the document
// ID), "#n" (its number of terms), "t:<term>" (a term's count) and
// "s:<field>" (a sort field's value, a Numeric one formatted back from its
// float64).
func (s Shard) DocKey(num int64) string { return s.k.docPrefix + strconv.FormatInt(num, 10) }

// TermKey returns the posting of term: a SET of the numbers of the
// documents holding it, or, once the term is frequent, a bitmap (a
// STRING whose bit n is set for document n; see the package doc).
// Scripts reading it must handle both.
func (s Shard) TermKey(term string) string { return s.k.setPrefix + termTok(term) }

// ScoreKey returns the ZSET of score name: document number -> score.
func (s Shard) ScoreKey(name string) string { return s.k.scorePrefix + name }
