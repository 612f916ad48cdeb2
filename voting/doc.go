// Package voting is the article-voting site of Redis in Action chapter 1:
// users post articles, vote them up (or down, and withdraw their vote),
// and read them a page at a time ranked by score or by time, for the whole
// site or for a group.
//
// An article's score is its post time in Unix seconds plus [VoteScore]
// (432, a day's seconds over 200) per up-vote minus the same per down-vote,
// so 200 votes keep an article as high as one posted a day later. Votes are
// taken, switched and withdrawn for [VotingWindow] (a week) after posting.
//
//	site, err := voting.New(rdb, "news")
//	id, err := site.Post(ctx, "user:83271", "Go To Statement Considered Harmful", "http://goo.gl/kZUSu")
//	counted, err := site.Vote(ctx, id, "user:9", voting.Up) // errors.Is(err, voting.ErrVotingClosed) after a week
//	d, err := site.VoteOf(ctx, id, "user:9")                 // voting.Up, voting.Down or 0: the buttons' state
//	withdrawn, err := site.Unvote(ctx, id, "user:9")         // false if user:9 held no vote
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
//   - [Site.Unvote] is one script too, with Vote's window and article
//     checks: it removes the user from the voters' set and undoes the
//     vote's effect exactly (votes or downvotes down by 1, the score back by
//     [VoteScore]), so a vote then its withdrawal leaves the article as it
//     was, and any mix of votes, switches and withdrawals from any number
//     of clients keeps the counters and score equal to the distinct users
//     holding a vote. A user who holds none gets false and nothing changes.
//     [Site.VoteOf] reads a user's standing vote (Up, Down or 0) in one
//     script that writes nothing.
//   - Time is the server's: Post stores Redis TIME as the post time, and
//     Vote, Unvote and VoteOf compare Redis TIME with it. Every client agrees on when voting
//     closes, whatever its own clock says. The post time that counts is the
//     article's score in the time index (key below), as in the book.
//   - Group membership changes ([Site.UpdateGroups]) are one script that
//     also drops the group's cached pages, so a group page never misses a
//     member added, or shows one removed, before the cache TTL.
//   - No script leaves a partial write. Each checks, before its first
//     write, the type of every key it touches (the new article's hash and
//     voters' set, which Post names from the ID it mints, included) and the
//     values it parses (the ID counter, the article's vote counters). A key
//     holding something else (written by another program, or corrupted)
//     makes the call fail with a *ria.KeyError naming the key and its role
//     (for instance "voting article ID counter"), matching ria.ErrWrongType
//     or ria.ErrCorrupt, having changed nothing. Post also refuses a
//     counter that lags behind the articles (an article already holds the
//     next ID: minting would merge two articles).
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost (a dropped connection, a
// read timeout; MaxRetries, 3 by default), so a script may run twice. Every
// state-changing call answers truly all the same:
//
//   - [Site.Post], [Site.Vote], [Site.Unvote] and [Site.UpdateGroups] run
//     once-scripts: the
//     first run records its reply under a key of its own call,
//     <prefix>{S}:once:<nonce>, a STRING that lives for the client's retry
//     window, and a re-send is answered from it. So a re-sent Post posts
//     one article and answers its ID, a re-sent Vote that counted answers
//     true, and a re-sent Unvote that withdrew a vote answers true, never
//     "had not voted" (nor does it withdraw a vote the same user cast in
//     between, when its first run found none), and a re-sent UpdateGroups
//     does not add an article back to a group another client removed it
//     from after the first run. The window is read
//     from the client's options: MaxRetries times (PoolTimeout +
//     WriteTimeout + ReadTimeout + MaxRetryBackoff), plus a second, at most
//     5 minutes; 52 s with go-redis v9's defaults, none (no record is
//     written) with MaxRetries -1 (on a Cluster, MaxRedirects -1 too). Each call keeps about 120 bytes for that
//     window (measured on Redis 7.0 with the default prefix), so 1,000
//     votes/s keep some 6 MB of records with the defaults; give a busy site
//     a client with fewer retries or shorter timeouts to shrink it. A
//     refused vote or withdrawal ([ErrNoArticle], [ErrVotingClosed]) keeps
//     none: a re-send is refused alike.
//   - The cache fill of [Site.GroupPage] is naturally idempotent: a
//     re-send finds the cache its first run filled, and changes nothing
//     more.
//
// When every attempt lost its reply, the call returns an error wrapping
// ria.ErrOutcomeUnknown: it may or may not have taken effect; read the
// state to find out ([Site.VoteOf] tells a user's vote). Voting again is
// harmless (a user's vote cannot count twice), so is withdrawing again (a
// vote is withdrawn at most once); posting again may post the article
// twice. A refusal ([ErrNoArticle], [ErrVotingClosed], a *ria.KeyError)
// always means that the call changed nothing.
//
// # Limits
//
//   - Pages are two round trips, not a snapshot: a vote between reading a
//     page's ranks and its articles can show a Score out of step with the
//     order. Group pages are ordered as of their cache's computation, up to
//     the group cache TTL ago (60 s by default); their Score is live.
//   - The voters' sets expire when voting closes (as in the book), so who
//     voted for an old article is forgotten; its counters and score stay,
//     final. Hence a vote can be withdrawn, like cast or switched, only
//     while voting is open: after it, [Site.Unvote] and [Site.VoteOf]
//     return [ErrVotingClosed] (there is nothing left to withdraw, and a
//     0 would claim that a voter had not voted).
//   - Articles, indexes and groups have no TTL and there is no delete: the
//     site grows with its articles, as in the book.
//
// # Keys
//
// With the default prefix "voting:", a site called S uses:
//
//	voting:{S}:seq              STRING  last article ID minted; no TTL
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
//	voting:{S}:once:<nonce>     STRING  the reply of one Post, Vote or Unvote call;
//	                                    TTL the client's retry window (see Lost
//	                                    replies)
//
// Members of the ZSETs and group SETs are bare article IDs. The post script
// builds the new article's hash and voters' set keys from prefixes declared
// in KEYS and the ID it mints (they cannot be declared before it reads the
// counter); the hash tag keeps them in the site's slot. Every other key a
// script touches is declared in KEYS. Site names must not hold '{' or '}'
// (they would move the hash tag, or let two sites share a key).
//
// # Round trips
//
// Once the server has cached the scripts (the first call of each script on
// a server may take one more: EVALSHA answered by NOSCRIPT, then EVAL):
//
//	Post          1 (script; it also writes its reply record)
//	Vote          1 (script), whether or not it counts or is refused; a
//	              counted or uncounted vote also writes its reply record
//	Unvote        1 (script), whether or not there was a vote to withdraw
//	              or it is refused; one not refused writes its reply record
//	VoteOf        1 (script; writes nothing)
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
