// Package config keeps configuration in Redis for every process of a
// service: a maintenance flag, typed values per (type, component) stored as
// JSON, and a registry of Redis connections built from them, each read
// through a local cache that change notifications keep fresh (Redis in
// Action 5.4: is_under_maintenance, set_config, get_config,
// redis_connection).
//
//	st, err := config.New(rdb)
//	go st.Run(ctx) // change notifications: caches drop a value as soon as it changes
//	err = st.Set(ctx, "limits", "api", Limits{Rate: 100})
//	var l Limits
//	err = st.Get(ctx, "limits", "api", &l) // from memory when fresh
//	down, err := st.UnderMaintenance(ctx)
//
//	conns := st.Conns()
//	err = conns.Set(ctx, "sessions", config.ConnConfig{Addrs: []string{"10.0.0.7:6379"}})
//	db, release, err := conns.Get(ctx, "sessions")
//	defer release()
//
// # Guarantees
//
// A Get answers from memory while the value read is younger than the max
// age (WithMaxAge, 1 s by default, as the book) and no change was notified
// since; otherwise it reads Redis. [Store.Set] and [Store.Delete] write and
// publish in one script, so a Store whose [Store.Run] is subscribed drops
// the value from its cache within a notification's latency (measured on
// the test machine: median well under a millisecond, asserted < 100 ms).
// A script publishes on the server of the value's key, so Run subscribes
// on every server whose messages no other subscription hears (see
// Cluster). When a subscription (any server's) breaks, Run drops the
// whole cache and resubscribes (with backoff), then drops everything
// again: changes sent while unsubscribed are never served from a stale
// cache longer than the max age. A read that raced with a notification is
// not cached.
//
// [Conns.Get] returns a client built from the component's [ConnConfig]; a
// changed configuration builds a new client on the next Get, and the old
// one is closed when the last user releases it. A Get never goes back: one
// whose read came before that of the client in use returns that client.
//
// # Limits
//
// Values are JSON of at most [MaxValueSize] bytes. Types and components are
// non-empty, without braces or NUL; a type has no ':' either (it ends the
// type in the key). The cache holds every value read, for the Store's
// life. [Store.Components] lists a type's components by scanning the
// keyspace (every master of a Cluster): for tools and start-up.
//
// # Round trips
//
// Set 1, Delete 1 (each also writes its reply record, see Lost replies),
// Get 0 from a fresh cache or 1, UnderMaintenance as Get,
// Components one per 1,000 keys of the database per node,
// Conns.Get as Get (plus the new client's own dial when it is built). Run
// holds one Pub/Sub connection (one per server on a Router's client or a
// Ring), plus, on a *redis.ClusterClient, one INFO round trip when it
// starts (to tell a Cluster from a Router's servers).
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost (a dropped connection, a
// read timeout; MaxRetries, 3 by default), so a script may run twice, with
// another process's writes in between. Running a write again is not
// harmless then: a second Set would put its value back over another
// process's later, acknowledged Set or Delete, and a second Delete would
// delete another process's later Set. So [Store.Set] and [Store.Delete]
// (and [Store.SetMaintenance] and [Conns.Set], which go through Set) run a
// once-script: the first run records its reply under a key of its own
// call, <prefix>{<type>:<component>}:once:<nonce> (in the slot of the
// value's key), a STRING that lives for the client's retry window, and a
// re-send is answered from it and changes nothing. A re-send answered from
// the record publishes nothing either: the first run published, which is
// all a subscribed Store needs. The window is read from the client's
// options: MaxRetries times (PoolTimeout + WriteTimeout + ReadTimeout +
// MaxRetryBackoff), plus a second, at most 5 minutes (and at most the
// call's ctx deadline plus a second); 52 s with go-redis v9's defaults,
// none (no record is written) with MaxRetries -1 (on a Cluster,
// MaxRedirects -1 too). Each call keeps one such record for that window;
// give a busy writer fewer retries or shorter timeouts to shrink it. A
// refused call (a *ria.KeyError: a key of another type) keeps none and
// writes nothing: a re-send is refused alike. Still one round trip per
// call.
//
// When every attempt lost its reply, the error wraps ria.ErrOutcomeUnknown:
// the call may or may not have taken effect; Get (with a max age of zero,
// or after the cache expired) tells which. Calling again leaves the value
// the call asks for.
//
// # Keys
//
//	<prefix>{<type>:<component>}:value   STRING, the JSON
//	<prefix>{<type>:<component>}:once:<nonce>
//	                                     STRING, the reply of one Set or Delete
//	                                     call, for the client's retry window
//	<prefix>changes                      Pub/Sub channel; messages name the value changed
//
// The maintenance flag is the value ("ria", "maintenance"). Default prefix
// "config:". A key of another type gives a *ria.KeyError and changes
// nothing.
//
// # Cluster
//
// Each value is one key; Pub/Sub messages published on any node of a
// Redis Cluster reach subscribers on every node (classic Pub/Sub is
// cluster-wide), so there Run holds one subscription, as on a single
// server. The independent servers behind a shard.Router's client (also a
// *redis.ClusterClient: Run asks INFO cluster to tell them apart) and a
// *redis.Ring's shards pass nothing on: there Run subscribes on each
// server (each live shard of a Ring, subscribing again when they change)
// and merges what it hears, so a change on any server reaches the cache.
package config
