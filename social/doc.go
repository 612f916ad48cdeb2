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
// the home timelines of the author's first [WithFirstPass] followers
// (default: the fan-out batch, [WithFanoutBatch], 1,000 as the book's)
// before it returns; a [TaskFanout] task feeds
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
// running skips it (see "Deletes and tombstones"). [Network.Refill] rebuilds a home timeline from the
// followed users' profiles (refill_timeline). (With a status cache,
// "at once" becomes "once the invalidation arrives": see "Status cache".)
//
// A batch is fed (or cleaned) by script calls pipelined in one round trip
// per node. On a *redis.Client (one server) each feed call covers up to 100
// consecutive targets, named by their range of follower sequence numbers:
// the script reads the targets in its range from the author's followers
// and lists (so a target that unfollowed before the call is not fed, and
// the script reads one ZSET range instead of each follower's following)
// and builds their keys from the key prefix (keys a script did not
// declare: Redis allows it on one server; a server that refuses them, such
// as Dragonfly by default, needs its "allow undeclared keys" setting). It
// reads whether the status HASH exists instead of each follower's
// tombstones, and a deleted status is fed to nobody: tombstones are
// written for a deleted status (by its clean, or by a follow it raced),
// and by a follow for a status trimmed from the followed user's profile
// during the follow, whose fan-out is over (on a Cluster such a tombstone
// makes a later [Network.Syndicate] of that status skip that follower). A clean ([Network.Clean])
// of a status whose number is above its author's last (not posted yet)
// writes no tombstone: the status may be posted later. A follower's following and tombstones keys are then not
// read by the fan-out (one of another type is not reported there; the
// clean reports the tombstones). Nor is the batch read beforehand: a
// fan-out task, and Post for its first batch, find the calls' ranges by
// rank in the author's followers (a few O(log n) reads), unless lists hold
// entries in the batch's range (followers and lists share the sequence;
// for Post, unless any list holds the author), when they read the batch.
// Elsewhere a call serves a group of targets whose keys may share a
// script, named in its KEYS, and checks each follower's side (its
// following holds the author) and tombstones:
// on a *redis.ClusterClient the followers whose keys hash to the same slot
// (a Cluster refuses a script over two slots; followers rarely share one,
// so most calls serve one follower); on a *redis.Ring the followers whose
// keys the ring maps to the same shard (Ring.GetShardClientForKey; a ring
// whose shards change between the grouping and the call may run a call on
// a shard that no longer owns all its keys, as any command sent then); on
// any other Client one call per follower. Clean calls name their targets
// the same way on every client. A task enqueues the next batch before
// feeding its own, so the worker's slots feed batches side by side. Post
// publishes the status, feeds the first batch and enqueues the rest side
// by side.
//
// # Inactive users
//
// With [WithInactiveAfter](d) (production feeds' lesson: Mastodon does
// this), a user who has not read its home timeline (nor signed up) for d
// is not fed: the fan-out step that finds it so marks it, drops its home
// timeline and skips it from then on. Its next [Network.Page] of the home
// timeline reports [ErrRegenerating] rather than a silently empty page and
// enqueues a [TaskRegenerate] task ([Network.Refill], then the user is
// active again); reads report it until the task has run. The user is fed
// again from the read on, and the refill reads the followed users'
// profiles after it, so no status is missed. A regeneration task that
// died (the queue keeps a dead task's ID) is requeued by the next read. Reading a home page records
// the read (at most every d/4, capped at a minute) in the same script as
// the read: no extra round trip. User lists are always fed.
//
// # User lists
//
// [Network.CreateList] creates a named list of a user (create_user_list);
// [Network.AddToList] and [Network.RemoveFromList] change its members
// (follow_user_list), and [Network.ListPage] reads its timeline. A list's
// timeline is fed like a home timeline (syndicate_status_list): the lists
// holding an author are kept in the author's slot next to its followers,
// numbered by the same sequence, so the first batch of a post and every
// deferred pass walk followers and lists together, and a clean removes a
// deleted status from both. Adding a member copies its recent statuses
// into the list's timeline, removing it drops them, as a follow and an
// unfollow do. Adding a user to a list does not make the owner follow it.
// [Network.DeleteList] deletes a list: first from its owner's lists, then
// from its members' sides 500 at a time, then its keys; a delete cut in
// half is finished by repeating it (the name stays taken until then). A
// list is fed only while its members hold the author, so an entry left on
// a member's side by an AddToList racing the delete feeds nothing.
//
// # Follows between two slots
//
// A follow writes two users' keys, which live in two Cluster slots, so it
// is three scripts in turn: a read-only one in the followed user's slot
// (it exists, its keys' types, its recent statuses), the follower's side
// (add the followee, count it, copy those statuses: the first write), then
// the followed user's side (add the follower, count it, and return what it
// posted since the first step read its profile, which a fourth, rare
// script copies). Each side is atomic and idempotent. No status is missed:
// a post before the third step is in a profile read, a post after it is
// fanned out to the follower, whose following already holds the author.
// No deleted status stays: the third step also tells whether the followed
// user deleted a status since the first step (its seq minus its posts
// moved) and then returns its profile from the oldest status the first
// step read, and the fourth script removes the copied statuses no longer
// there, with a tombstone (a clean of a delete before the third step may
// have missed the new follower; a delete after it is cleaned as for any
// follower). A status trimmed from the profile by the cap in that window
// is removed too: it is out of the author's recent statuses anyway.
// Fan-out reads each batch from the followed side; on a Cluster it feeds
// only the followers whose own side holds the author too, on one server
// the feed reads the followed side again in the same script as it writes.
// Either way a half-done follow (the followed side not yet written) never
// feeds a timeline that did not ask for it, and a half-done unfollow (the
// followed side written first) stops feeding at once.
//
// # Deletes and tombstones
//
// On one server a feed reads the status HASH in the same script as it
// writes, so a deleted status is never fed. Elsewhere the HASH is in the
// author's slot and the feed in the follower's, so a fan-out step (Post's
// first batch, a [TaskFanout] task) reads that the status exists, then
// feeds; a Delete and its clean can run in between. The clean leaves a
// tombstone in each follower's (or list owner's) slot, and the feed skips
// a timeline holding the status's tombstone. Tombstones are kept by age,
// never by count: each for [WithTombstoneTTL] (default
// [DefaultTombstoneTTL], 24 hours) from its clean, however many deletes
// are cleaned meanwhile; the clean drops older ones, and a follower's
// tombstones ZSET expires a TTL after its last tombstone (memory: the
// tombstones of the deletes cleaned from a follower's timelines in the
// last TTL). The guarantee: a feed that reaches Redis less than the TTL
// after its fan-out step read that the status existed does not put back a
// status deleted meanwhile. A go-redis re-send of a feed reaches Redis
// within the client's timeouts; a crashed or retried task reads the
// status again before it feeds, and skips it when deleted. Only a process
// stalled for longer than the TTL between that read and its feed (a
// frozen VM, SIGSTOP) can put a deleted status back into a timeline on a
// Cluster or Ring; pages still skip it (its HASH is gone) and the cap
// trims it. A follow's copy and a refill skip tombstoned statuses the
// same way, within the same bound.
//
// Between the second and third steps a reader sees the followee in the
// follower's following and counts but not yet the follower in the followed
// user's followers; a crash there leaves exactly that, and repeating
// [Network.Follow] (it answers false: already following) completes it. An
// unfollow runs the other way round (a read-only check in the follower's
// slot, the followed user's side, then the follower's side, which drops
// the followee's statuses), so in between the follower still follows and
// is no longer fed; a crash there is repaired by repeating
// [Network.Unfollow]. [Network.AddToList] and [Network.RemoveFromList] run
// and are repaired the same way. A Follow and an Unfollow of the same pair
// running at once can interleave their steps and leave the two sides
// disagreeing (one says following, the other not); repeating the call
// whose outcome is wanted makes them agree again. Until then, on one
// server, a follower listed by the followed side only is fed, and on a
// Cluster it is not.
//
// # Stream
//
// [Network.Subscribe] returns the statuses posted and deleted from then on
// that a [Filter] matches (a sample, tracked phrases, followed users,
// location boxes: the book's 8.5 filters), as a channel;
// [Network.StreamHandler] serves them as newline-delimited JSON over HTTP
// and stops when the client goes; a client's query narrows the handler's
// filter (a status must match both), never widens it, and its sample can
// only lower the handler's. Every Post and Delete publishes one
// message to one of [StreamShards] channels chosen by the author; on a
// Cluster they are sharded channels (SPUBLISH, SSUBSCRIBE) spread over the
// masters; on a *redis.Ring each channel lives on the shard the ring maps
// it to, and a subscriber listens on each of those shards (a channel the
// ring moves meanwhile, a shard going down or back, is missed until the
// next Subscribe). Filters run in the subscriber. Delivery is at most
// once, as Pub/Sub is; each author's statuses arrive in order.
//
// # Status cache
//
// [WithStatusCache](size, maxStale) keeps up to size statuses in the
// process (CLOCK eviction: memory is bounded at size entries), so a page
// whose statuses are all cached is 1 round trip, the timeline's ZREVRANGE
// (about 3.5x the book's get_status_messages' page reads/s on one local
// server, where a round trip is cheapest; without the cache a page on one
// server is also 1 round trip, but its script reads every status). A status never changes once
// posted; only Delete removes it, and Delete's script PUBLISHes its ID on
// <prefix>{statuses}:near (no extra round trip; PUBLISH, not SPUBLISH, so
// on a Cluster it reaches the subscribers of every node). Every Network
// with a status cache on that prefix subscribes to the channel and drops
// what it hears; the deleting process drops it itself. What changes: a
// status deleted by another process can still be shown by this one until
// the invalidation arrives (the Pub/Sub delay, usually well under a
// millisecond), and never later than maxStale after it was read, even if
// the message is lost. A miss is read as without the cache (pipelined)
// and cached under a ticket taken before the read: an invalidation heard
// while the read is in flight wins. While the subscription is down (it is
// pinged, and made again with a backoff) the cache is emptied and unused,
// and used again only once the new subscription is confirmed, since
// invalidations may have been missed: pages then read Redis as without the
// cache. [Network.StatusCacheReady] reports whether it is in use;
// [Network.Close] stops it. A *redis.Ring is refused by New (a message
// reaches one shard's subscribers only). Every Delete publishes, with or
// without the option in its process, so caches hear the Deletes of
// processes that have none. Without the option pages read every status.
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost. CreateUser, Post,
// Delete, CreateList, both writing sides of Follow and Unfollow (the
// follower's and the followed user's) and of AddToList and RemoveFromList
// (the owner's and the member's) are once-scripts (internal/script
// NewOnce; the record is a key in the slot of the user whose side it is):
// a re-send is answered from the record of the first run, so a created
// user is not reported taken, a post is stored once under the ID
// answered, a deleted status is not reported missing, and a side re-sent
// after another process saw its write and undid it (an Unfollow of a
// follow whose followed user's side lost its reply) is not written again.
// Unfollow and RemoveFromList of a user who is not there write no record:
// both of their sides refuse (an error reply, never recorded) before
// writing anything.
// The other scripts (feed, clean, refill, copy, the later steps of
// DeleteList) are naturally idempotent; a re-sent member's side of
// DeleteList can drop the entry of a list created again meanwhile under
// the same name (see DeleteList). When every re-send fails, the error
// wraps ria.ErrOutcomeUnknown; a network error of the read-only first
// step of Follow, Unfollow, AddToList or RemoveFromList does not, as
// nothing was written. A Follow (or AddToList) whose outcome is unknown
// is completed by calling it again.
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
// keeps it dead with the error). Within one script call serving many
// followers, every key of every follower is checked before the first
// write; the followers whose keys are good are fed, the bad one changes
// nothing of its own, and the call answers the *ria.KeyError of the first
// bad follower (the others of the call are fed all the same). A Post whose
// first batch meets such a follower answers without error: the rest of
// its first batch is fed and the whole fan-out is enqueued again, and that
// task ends dead with the error.
//
// # Round trips
//
// Once the scripts are cached: CreateUser 1, User 1, Post 2 (script,
// publish) plus 1 per node for the first batch when the author has
// followers or lists (none with [WithFirstPass](0)) plus 1 to enqueue the
// next batch (publish, first batch and enqueue sent side by side: 2 round
// trips of wall time), Delete 2 plus 1 to enqueue the clean when the
// author has followers or lists, Follow 3 (4 when the followed user posted
// or deleted during the follow), Unfollow 3, Page 1 on one server without
// [WithStatusCache] (page.lua reads the timeline, the statuses and the
// top-ups; the statuses' keys are built from the key prefix, not declared,
// as feed.lua's), else 1 plus 1 per node (the statuses' hashes, pipelined)
// and the same again for each of at most two top-ups after deleted
// statuses, Status 1 (0 when the status cache holds it), Follows 1,
// Followers and Following 1, CreateList 1, AddToList 3 (or 4, as Follow),
// RemoveFromList 3, DeleteList 1 plus 2 per 500 members (1 per node for
// the members' sides), ListPage as Page, ListMembers and Lists 1, Refill 1
// per 500 followed users (at least 1: 2 in all for a user following
// nobody) plus 1 per node per 500 plus 1, a fan-out or
// clean task 2 plus 1 per node. With [WithInactiveAfter], a home Page
// records the read in the same script (elsewhere in its first read), plus
// 1 to enqueue when it reports [ErrRegenerating], plus 1 more when the
// task is there already (to requeue it if it is dead). Every enqueue of a
// task (Post, Delete, Syndicate, Clean, the tasks' next batches) costs 1
// more round trip when a task holds its ID already: a dead one is then
// requeued, so that enqueueing a pass again runs it again. With [WithStatusCache],
// a Page or ListPage whose statuses are all cached is 1 (plus 1 per
// top-up), and the statuses' round trip reaches only the nodes of the
// statuses not cached.
//
// # Key schema
//
//	<prefix>{<uid>}:user        HASH login, name, followers, following, posts, seq, fseq, signup,
//	                            seen (last home read, ms), idle (1 not fed, 2 regenerating)
//	<prefix>{<uid>}:status:<n>  HASH id, uid, login, message, posted, lat, lon
//	<prefix>{<uid>}:profile     ZSET status IDs by post time (ms)
//	<prefix>{<uid>}:home        ZSET status IDs of followed users by post time
//	<prefix>{<uid>}:followers   ZSET follower IDs by follow sequence number
//	<prefix>{<uid>}:following   ZSET followed IDs by follow time (ms)
//	<prefix>{<uid>}:gone        ZSET tombstones of deleted statuses cleaned from home and list timelines,
//	                            by clean time (ms), kept WithTombstoneTTL (the key expires then too)
//	<prefix>{<uid>}:lists       ZSET the user's list names by creation time (ms)
//	<prefix>{<uid>}:list:<l>:members   ZSET member IDs of list l by time added (ms)
//	<prefix>{<uid>}:list:<l>:timeline  ZSET status IDs of list l's members by post time
//	<prefix>{<uid>}:listed      ZSET "<owner>/<list>" of the lists holding the user, by follow sequence
//	<prefix>{<uid>}:once:<n>    STRING reply records of once-scripts (short TTL)
//	<prefix>{s<k>}:stream       Pub/Sub channel k of the stream (k < StreamShards)
//	<prefix>{statuses}:near     Pub/Sub channel of the status caches' invalidations (WithStatusCache)
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
// [MaxTimelineCap] statuses. A user owns at most [MaxLists] lists, named
// as logins are (case-insensitive).
package social
