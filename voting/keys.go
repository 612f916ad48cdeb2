package voting

import "github.com/ria-go/ria/internal/keys"

// The keys of one site are <prefix>{<site>}:<part>. All of them share the
// {<site>} hash tag: the time and score indexes span every article of the
// site, so the whole site lives in one Cluster slot and every script and
// pipeline of this package touches that slot only.

// keySet holds the keys of one site that do not depend on an article or a
// group, built once by [New].
type keySet struct {
	space                             keys.Space
	site                              string
	seq, time, score                  string
	articlePrefix, votedPrefix        string
	downvotedPrefix, groupPrefix      string
	cacheScorePrefix, cacheTimePrefix string
}

func newKeySet(ks keys.Space, site string) keySet {
	return keySet{
		space:            ks,
		site:             site,
		seq:              seqKey(ks, site),
		time:             timeKey(ks, site),
		score:            scoreKey(ks, site),
		articlePrefix:    ks.Key(site, "article:"),
		votedPrefix:      ks.Key(site, "voted:"),
		downvotedPrefix:  ks.Key(site, "downvoted:"),
		groupPrefix:      ks.Key(site, "group:"),
		cacheScorePrefix: ks.Key(site, "cache:score:"),
		cacheTimePrefix:  ks.Key(site, "cache:time:"),
	}
}

// seqKey is a STRING counter, the last article ID minted; no TTL.
func seqKey(ks keys.Space, site string) string { return ks.Key(site, "seq") }

// timeKey is a ZSET of every article ID scored by its post time in Unix
// seconds of the server's clock (microsecond fraction). The voting window is
// measured from this score.
func timeKey(ks keys.Space, site string) string { return ks.Key(site, "time") }

// scoreKey is a ZSET of every article ID scored by post time +
// [VoteScore] × (up-votes − down-votes).
func scoreKey(ks keys.Space, site string) string { return ks.Key(site, "score") }

// articleKey is the HASH of article id: title, link, poster, time, votes,
// downvotes; no TTL.
func (k keySet) articleKey(id string) string { return k.articlePrefix + id }

// votedKey is the SET of the users who up-voted article id (the poster at
// first); it expires when voting on the article closes.
func (k keySet) votedKey(id string) string { return k.votedPrefix + id }

// downvotedKey is the SET of the users who down-voted article id; it
// expires when voting on the article closes.
func (k keySet) downvotedKey(id string) string { return k.downvotedPrefix + id }

// groupKey is the SET of the IDs of the articles in group g; no TTL.
func (k keySet) groupKey(g string) string { return k.groupPrefix + g }

// cacheKey is the ZSET caching group g's articles in order o (the
// intersection of [keySet.groupKey] with the score or time index); it
// expires after the site's group cache TTL.
func (k keySet) cacheKey(o Order, g string) string {
	if o == ByTime {
		return k.cacheTimePrefix + g
	}
	return k.cacheScorePrefix + g
}

// orderKey is the site-wide index a page in order o reads.
func (k keySet) orderKey(o Order) string {
	if o == ByTime {
		return k.time
	}
	return k.score
}

// onceKey returns a new reply record key, <prefix>{<site>}:once:<nonce>: a
// STRING holding the first reply of one call of a once-script (Post,
// Vote), which lives for the client's retry window.
func (k keySet) onceKey() string { return k.space.Once(k.site) }
