// Package voting is the article-voting site of Redis in Action chapter 1:
// users post articles, vote them up (or down), and read them a page at a
// time ranked by score or by time, for the whole site or for a group.
//
// An article's score is its post time in Unix seconds plus [VoteScore]
// (432, a day's seconds over 200) per up-vote minus the same per down-vote,
// so 200 votes keep an article as high as one posted a day later. Votes are
// taken for [VotingWindow] (a week) after posting.
//
//	site, err := voting.New(rdb, "news")
//	id, err := site.Post(ctx, "user:83271", "Go To Statement Considered Harmful", "http://goo.gl/kZUSu")
//	counted, err := site.Vote(ctx, id, "user:9", voting.Up) // errors.Is(err, voting.ErrVotingClosed) after a week
//	top, err := site.Page(ctx, voting.ByScore, 1, 25)
//	err = site.UpdateGroups(ctx, id, []string{"programming"}, nil)
//	prog, err := site.GroupPage(ctx, "programming", voting.ByScore, 1, 25)
//
// # Guarantees
//
//   - [Site.Post] is one script: the ID (a counter), the article's hash,
//     its entries in the time and score indexes and the poster's own
//     up-vote appear together or not at all. (The book makes six separate
//     calls.)
//   - [Site.Vote] is one script: the window check, the one-vote-per-user
//     check and the updates of the voters' sets, the article's counters and
//     its score happen atomically, so concurrent votes from any number of
//     clients leave votes, downvotes and score exactly consistent with the
//     distinct voters. (The book's SADD, ZINCRBY and HINCRBY are separate
//     calls, and a crash between them loses a score.) A user holds at most
//     one vote per article: voting the same way again changes nothing,
//     switching sides moves the vote (score by 2 × [VoteScore]). An unknown
//     article ([ErrNoArticle]) or a closed vote ([ErrVotingClosed]) writes
//     nothing.
//   - Time is the server's: Post stores Redis TIME as the post time, and
//     Vote compares Redis TIME with it. Every client agrees on when voting
//     closes, whatever its own clock says. The post time that counts is the
//     article's score in the time index (key below), as in the book.
//   - Group membership changes ([Site.UpdateGroups]) are one script that
//     also drops the group's cached pages, so a group page never misses a
//     member added, or shows one removed, before the cache TTL.
//
// # Limits
//
//   - Pages are two round trips, not a snapshot: a vote between reading a
//     page's ranks and its articles can show a Score out of step with the
//     order. Group pages are ordered as of their cache's computation, up to
//     the group cache TTL ago (60 s by default); their Score is live.
//   - The voters' sets expire when voting closes (as in the book), so who
//     voted for an old article is forgotten; its counters and score stay.
//   - Articles, indexes and groups have no TTL and there is no delete: the
//     site grows with its articles, as in the book.
//   - A vote cannot be withdrawn, only switched to the other side.
//
// # Keys
//
// With the default prefix "voting:", a site called S uses:
//
//	voting:{S}:seq              STRING  last article ID minted (INCR); no TTL
//	voting:{S}:article:<ID>     HASH    title, link, poster, time (server Unix s,
//	                                    6 decimals), votes (up, poster's included),
//	                                    downvotes; no TTL
//	voting:{S}:time             ZSET    article ID -> post time (server Unix s);
//	                                    the voting window runs from this score
//	voting:{S}:score            ZSET    article ID -> post time + 432 × (votes − downvotes)
//	voting:{S}:voted:<ID>       SET     users who up-voted; expires when voting closes
//	voting:{S}:downvoted:<ID>   SET     users who down-voted; expires when voting closes
//	voting:{S}:group:<G>        SET     IDs of the articles in group G; no TTL
//	voting:{S}:cache:score:<G>  ZSET    group G ∩ score index; group cache TTL
//	voting:{S}:cache:time:<G>   ZSET    group G ∩ time index; group cache TTL
//
// Members of the ZSETs and group SETs are bare article IDs. The post script
// builds the new article's hash and voters' set keys from prefixes declared
// in KEYS and the ID it has just minted (they cannot be declared before the
// INCR); the hash tag keeps them in the site's slot. Every other key a
// script touches is declared in KEYS.
//
// # Round trips
//
// Once the server has cached the scripts (the first call of each script on
// a server may take one more: EVALSHA answered by NOSCRIPT, then EVAL):
//
//	Post          1 (script)
//	Vote          1 (script), whether or not it counts or is refused
//	Get           1 (pipeline: HGETALL + ZSCORE)
//	Page          2 (ZREVRANGE, then one pipeline of HGETALL + ZSCORE per
//	              article); 1 when the page is empty
//	UpdateGroups  1 (script)
//	GroupPage     2 (script: intersection when the cache is missing, then
//	              the page's IDs; then the same pipeline as Page); 1 when empty
//
// Bad arguments are reported before anything reaches Redis.
//
// # Redis Cluster
//
// The time and score indexes are global to a site, and a group page
// intersects a group with one of them, so every key of a site carries the
// hash tag {S}: one site lives in one Cluster slot, on one master, and all
// of a site's load goes to that master. Different sites spread over the
// cluster. Nothing here can cause a CROSSSLOT error; ZINTERSTORE works on
// Cluster because its keys share the tag. Works unchanged with
// *redis.Client, *redis.ClusterClient and *redis.Ring (which shards by the
// same hash tag).
package voting
