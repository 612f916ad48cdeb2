package cache

// Every key of one entry, counter, guard, list or ranking carries the hash
// tag {<name>:<key>}, so the keys one script touches share a Cluster slot.
// The parts differ between kinds, so that a Cache and a Counter of the same
// name and key never share a key. A key may hold anything, braces
// included; prefixes and names hold no '{' or '}' (names no ':' either),
// and no part holds a '}'. So:
//   - Redis Cluster hashes what lies between a key's first '{' (the one
//     before the name) and the first '}' after it: the '}' after the key,
//     or the key's own first '}' if it holds one. Either way that text
//     starts with the name (never empty) and ends before the part, so the
//     keys of one entity share its slot (entities whose keys agree up to
//     their first '}' share one too).
//   - The last '}' of a key ends <name>:<key>: a key names one entity and
//     one part.

// entryKeys are the keys of one Cache entry.
type entryKeys struct {
	val   string // STRING the encoded value, PX ttl+grace; or a lease marker, PX lease
	lease string // STRING token of the caller refreshing it in the background, PX lease
	wake  string // prefix of the wake LISTs, one per lease: wake + token
	// entity is the entry's hash-tagged entity, name:key.
	entity string
}

// entryKeys returns, for key:
//
//	val        STRING  the encoded value, PX ttl+grace, or while a caller
//	                   loads it its lease marker, PX lease
//	lease      STRING  the token of the caller refreshing it in the
//	                   background, PX lease
//	wake:<t>   LIST    how a lease t's holder (or a Set or Delete) wakes the
//	                   waiters registered on it: "v"+payload, or "r" (look
//	                   again); PX lease
func (c *Cache[T]) entryKeys(key string) entryKeys {
	e := c.name + ":" + key
	return entryKeys{
		val: c.keys.Key(e, "val"), lease: c.keys.Key(e, "lease"), wake: c.keys.Key(e, "wake:"), entity: e,
	}
}

// valKey is entryKeys(key).val, in one allocation (a hit needs no other).
func (c *Cache[T]) valKey(key string) string {
	return c.keys.Prefix() + "{" + c.name + ":" + key + "}:val"
}

// counterKeys are the keys of one Counter.
type counterKeys struct {
	count  string // STRING the counter (an integer), PX ttl from its last use
	lease  string // HASH t = restorer's token, w = waiters registered; PX lease
	wake   string // prefix of the wake LISTs, one per lease: wake + token
	entity string // name:key
}

// counterKeys returns, for key:
//
//	count            STRING  the counter (an integer), PX ttl from its last use
//	count.lease      HASH    t = token of the caller restoring it, w = waiters
//	                         registered; PX lease
//	count.wake:<t>   LIST    "r" when the restore of lease t is done or
//	                         abandoned; PX lease
//	once:<nonce>     STRING  the reply of one Incr, Set or restore, for its
//	                         re-sends; PX the client's retry window
func (c *Counter) counterKeys(key string) counterKeys {
	e := c.name + ":" + key
	return counterKeys{
		count: c.keys.Key(e, "count"), lease: c.keys.Key(e, "count.lease"), wake: c.keys.Key(e, "count.wake:"), entity: e,
	}
}

// guardKey is a STRING, the nonce of the call that was let through, with PX
// window: set while key is refused. A Reset's reply record is
// g.keys.Once(name:key), <prefix>{name:key}:once:<nonce>.
func (g *Guard) guardKey(key string) string { return g.keys.Key(g.name+":"+key, "guard") }

// listKey is a LIST of encoded values, newest first, at most n long.
func (l *Latest[T]) listKey(key string) string { return l.keys.Key(l.name+":"+key, "latest") }

// rankKey is a ZSET of encoded members scored by their counts.
func (t *Top[T]) rankKey(key string) string { return t.keys.Key(t.name+":"+key, "top") }
