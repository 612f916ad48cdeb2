// Package social is a Twitter-like social network on Redis (Redis in
// Action, chapter 8): users, statuses, profile and home timelines capped
// at a configurable length, followers and following with counts, fan-out
// on write through [queue] tasks, refill and clean of timelines, and a
// filtered stream of statuses.
//
// A [Network] wraps a go-redis client and a [queue.Group]; a
// [queue.Worker] of that group with the handlers of [Network.Handle]
// carries out the deferred fan-out and clean passes.
//
// # Users and statuses
//
// [Network.CreateUser] creates a user in one script, without the book's
// lock: a user's ID is its login in lower case, and the user's HASH is the
// ID's, so the script checks and creates it atomically; a login taken in
// any case is refused with [ErrLoginTaken]. A status holds 1 to
// [MaxStatusLen] characters of UTF-8 and may carry where it was posted
// from ([At]).
//
// # Fan-out
//
// [Network.Post] stores the status on the author's profile and feeds it to
// the home timelines of the author's first [WithFanoutBatch] followers
// (default 1,000, the book's) before it returns; a [TaskFanout] task feeds
// the next batch and enqueues the one after, so a user with millions of
// followers never blocks the caller or the server, and there is one task
// per batch, never one per follower. Feeding a timeline is idempotent
// (ZADD of the same member and score) and skips a follower who no longer
// follows the author or whose timeline saw the status deleted: tasks are
// at least once, and a task run twice, or by a second worker after the
// first was killed, leaves the same timelines. [Network.Delete] deletes
// the status at once for every reader (a page shows only statuses whose
// HASH exists) and a [TaskClean] task removes it from the followers'
// timelines batch by batch, leaving a tombstone so that a fan-out still
// running skips it. [Network.Refill] rebuilds a home timeline from the
// followed users' profiles (refill_timeline).
//
// # Follows between two slots
//
// A follow writes two users' keys, which live in two Cluster slots, so it
// is three scripts in turn: a read-only check of the follower's keys, the
// followed user's side (add the follower, count it, read its recent
// statuses), then the follower's side (add the followee, count it, copy
// the statuses). Each side is atomic and idempotent. Between the second
// and third steps a reader can see the follower in the followed user's
// followers but not yet the followee in the follower's following; a crash
// there leaves exactly that, and repeating [Network.Follow] (it answers
// false: already following) completes it. Unfollow runs the same way and
// is repaired the same way. Fan-out feeds only timelines whose owner
// follows the author on the follower's side, so a half-done follow never
// feeds a timeline that did not ask for it.
//
// # Stream
//
// [Network.Subscribe] returns the statuses posted and deleted from then on
// that a [Filter] matches (a sample, tracked phrases, followed users,
// location boxes: the book's 8.5 filters), as a channel;
// [Network.StreamHandler] serves them as newline-delimited JSON over HTTP
// and stops when the client goes. Every Post and Delete publishes one
// message to one of [StreamShards] channels chosen by the author; on a
// Cluster they are sharded channels (SPUBLISH, SSUBSCRIBE) spread over the
// masters. Filters run in the subscriber. Delivery is at most once, as
// Pub/Sub is; each author's statuses arrive in order.
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost. CreateUser, Post,
// Delete and the follower's side of Follow and Unfollow are once-scripts
// (internal/script NewOnce): a re-send is answered from the record of the
// first run, so a created user is not reported taken, a post is stored
// once under the ID answered, and a deleted status is not reported
// missing. The other scripts (the followed user's side of a follow, feed,
// clean, refill) are naturally idempotent. When every re-send fails, the
// error wraps ria.ErrOutcomeUnknown.
//
// # Wrong types
//
// Every script checks the type of every key it relies on, and the integer
// fields of the user HASH it parses, before its first write; a key of
// another type gives a *ria.KeyError naming the key and its role, and
// changes nothing in either slot (a follow's first step checks the
// follower's keys before the followed user's side writes). Plain reads
// (User, Page, Followers, Following, Refill's reads) answer the same error.
// A fan-out or clean task skips a follower whose keys hold another type,
// feeds the others and fails with the error (the queue retries it, then
// keeps it dead with the error).
//
// # Round trips
//
// Once the scripts are cached: CreateUser 1, User 1, Post 2 (script,
// publish) plus 1 per node for the first batch when the author has
// followers plus 1 to enqueue the next batch, Delete 2 plus 1 to enqueue
// the clean when the author has followers, Follow 3, Unfollow 3, Page 1
// plus 1 per node (the statuses' hashes, pipelined) and the same again for
// each of at most two top-ups after deleted statuses, Followers and
// Following 1, Refill 1 per 500 followed users plus 1 per node per 500
// plus 1, a fan-out or clean task 2 plus 1 per node.
//
// # Key schema
//
//	<prefix>{<uid>}:user        HASH login, name, followers, following, posts, seq, fseq, signup
//	<prefix>{<uid>}:status:<n>  HASH id, uid, login, message, posted, lat, lon
//	<prefix>{<uid>}:profile     ZSET status IDs by post time (ms)
//	<prefix>{<uid>}:home        ZSET status IDs of followed users by post time
//	<prefix>{<uid>}:followers   ZSET follower IDs by follow sequence number
//	<prefix>{<uid>}:following   ZSET followed IDs by follow time (ms)
//	<prefix>{<uid>}:gone        ZSET tombstones of deleted statuses cleaned from home
//	<prefix>{<uid>}:once:<n>    STRING reply records of once-scripts (short TTL)
//	<prefix>{s<k>}:stream       Pub/Sub channel k of the stream (k < StreamShards)
//
// The default prefix is "social:". A status ID is "<uid>:<n>".
//
// # Cluster
//
// Every user's keys are in the user's slot, so every script touches one
// slot; operations between two users (follow, fan-out, clean) run one step
// per slot, pipelined per node where there are many.
//
// # Limits
//
// Logins are 1 to [MaxLoginLen] ASCII letters, digits, '_', '.' or '-';
// statuses at most [MaxStatusLen] characters; timelines keep at most
// [MaxTimelineCap] statuses. Not built yet (see the README): user lists,
// and not feeding the home timelines of inactive users.
package social
