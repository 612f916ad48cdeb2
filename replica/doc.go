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
// may lose them).
//
// [WithFsync] also waits for the disk: on Redis 7.2+ with WAITAOF (the
// primary's and the replicas' AOF fsynced; the primary needs appendonly
// yes). On older servers, detected once per Waiter with COMMAND INFO, the
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
// timeout). WithFsync adds one round trip once per Waiter (the WAITAOF
// probe) and, on old servers, the book's check: one pipelined round trip
// per replica client per millisecond, all clients polled side by side,
// until that client passes or enough have.
//
// # Lost replies
//
// Wait changes nothing but its marker (a STRING that expires by itself), so
// a re-send after a lost reply writes another marker and waits again: the
// answer is still true.
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
// masters, Wait once per key (or per slot). A key without a hash tag that
// holds a '}' cannot be matched by a marker and is refused. A *redis.Ring
// is refused by New: make a Waiter per shard's client.
package replica
