// Package replica waits until writes have reached a primary's replicas,
// and on disk: the book's wait_for_sync (Redis in Action 4.3.1) made exact
// with WAIT, and WAITAOF where the server has it.
//
//	w, err := replica.New(rdb, replica.WithReplicas(1), replica.WithTimeout(time.Second))
//	...
//	err = rdb.Set(ctx, "order:{42}", body, 0).Err()
//	ack, err := w.Wait(ctx, "order:{42}") // the replica now holds order:{42}
//	if errors.Is(err, replica.ErrTimeout) { ... } // written on the primary, not (yet) replicated
//
// # Guarantees
//
// [Waiter.Wait] writes a marker key on the primary that holds the given key
// (the key's slot on a Cluster; the server on a standalone client) and sends
// WAIT on the same connection. A primary replicates one ordered stream, so
// when WAIT counts a replica, that replica has received every write the
// primary acknowledged before the marker, from any client. Wait returns
// only then; with fewer acknowledgements before the timeout it returns an
// error wrapping [ErrTimeout] with the counts (the writes stay on the
// primary: replication is not undone, and a failover before it completes
// may lose them). A ctx whose deadline comes before the timeout shortens
// the wait to it, and Wait then returns an error wrapping
// context.DeadlineExceeded (go-redis would read a lone WAIT for its whole
// timeout); a ctx cancelled without a deadline is seen only once WAIT
// returns.
//
// [WithFsync] also waits for the disk: on Redis 7.2+ with WAITAOF (the
// primary's and the replicas' AOF fsynced; the primary needs appendonly
// yes). On older servers, detected with COMMAND INFO (by the first Waits
// of a Waiter, until one has the answer), the
// book's check runs on replica clients the caller passes: the replica's
// link is up, it holds the marker, and its AOF has no fsync pending. That
// check is what the book offers, and a heuristic: under appendfsync
// everysec "no fsync pending" does not prove that the marker was fsynced.
//
// # Reading from replicas
//
// go-redis reads from replicas by configuration, not by this package:
//
//   - Redis Cluster: redis.ClusterOptions{ReadOnly: true} sends read-only
//     commands to replicas (RouteByLatency or RouteRandomly choose which).
//   - A standalone primary with replicas: a second redis.NewClient on the
//     replica's address for reads, or redis.NewFailoverClusterClient with
//     ReplicaOnly/RouteByLatency under Sentinel.
//
// A read from a replica can miss a write that Wait has not confirmed for
// that replica; read after Wait (or from the primary) when it must see it.
//
// # Round trips
//
// Wait costs one round trip (marker and WAIT pipelined), two when the
// timeout plus 100 ms does not fit inside the client's ReadTimeout (a
// pipeline's replies are read with ReadTimeout, a lone WAIT with its own
// timeout). WithFsync adds one round trip to the first Waits of a Waiter
// (the WAITAOF probe; each runs its own until one has answered, so none
// waits on another's) and, on old servers, the book's check: one pipelined round trip
// per replica client per millisecond, all clients polled side by side,
// until that client passes or enough have.
//
// # Lost replies
//
// Wait changes nothing but its marker (a STRING that expires by itself), so
// a re-send after a lost reply writes another marker and waits again: the
// answer is still true. go-redis re-sends the one-round-trip pipeline
// (MaxRetries); where it would not (the two-round-trip path holds one
// connection, and the node clients of a Cluster client do not retry),
// Wait sends marker and WAIT again itself, as many times (MaxRetries; on a
// Cluster MaxRedirects).
//
// # Key schema
//
//	<prefix>{<tag>}:sync:<nonce>   STRING, the marker of one call; expires
//	                               after max(timeout + 1 min, 2 min)
//
// The tag is the key's hash tag, the key itself when it has none, or
// "standalone" on a standalone client. Default prefix "replica:".
//
// # Cluster
//
// On a *redis.ClusterClient, Wait asks the master of the key's slot, so it
// confirms the replicas of that master only: to confirm writes on several
// masters, Wait once per key (or per slot). When the slot has moved and the
// client's slot map is stale, the node answers MOVED: Wait goes on at the
// master it names (one more round trip) and has the map reloaded. While
// the slot migrates (MIGRATING on the master, which answers a new key with
// ASK), the key's writes may be on either master and no marker can be
// written on the one giving the slot away: Wait returns an error wrapping
// [ErrMigrating] that names both; wait again once the migration is over.
// A key without a hash tag that
// holds a '}' cannot be matched by a marker and is refused. A *redis.Ring
// is refused by New: make a Waiter per shard's client.
package replica
