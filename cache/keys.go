package cache

// Every key of one entry, counter, guard, list or ranking carries the hash
// tag {<name>:<key>}, so the keys one script touches share a Cluster slot.
// The parts differ between kinds, so that a Cache and a Counter of the same
// name and key never share a key.

// entryKeys are the keys of one Cache entry, in the order the scripts take
// them (KEYS[1..3]).
type entryKeys [3]string

// entryKeys returns, for key:
//
//	val    STRING  the encoded value, PX ttl+grace
//	lease  HASH    t = token of the caller loading it, w = number of waits; PX lease
//	wake   LIST    how the loader wakes waiters: "v"+payload, or "r" (look again); PX lease
func (c *Cache[T]) entryKeys(key string) entryKeys {
	e := c.name + ":" + key
	return entryKeys{c.keys.Key(e, "val"), c.keys.Key(e, "lease"), c.keys.Key(e, "wake")}
}

// valKey is entryKeys(key)[0].
func (c *Cache[T]) valKey(key string) string { return c.keys.Key(c.name+":"+key, "val") }

// counterKeys returns, for key:
//
//	count          STRING  the counter (an integer), PX ttl from its last use
//	count.lease    HASH    as a Cache entry's lease, for the caller restoring it
//	count.wake     LIST    "r" when the restore is done or abandoned; PX lease
func (c *Counter) counterKeys(key string) entryKeys {
	e := c.name + ":" + key
	return entryKeys{c.keys.Key(e, "count"), c.keys.Key(e, "count.lease"), c.keys.Key(e, "count.wake")}
}

// guardKey is a STRING "1" with PX window, set while key is refused.
func (g *Guard) guardKey(key string) string { return g.keys.Key(g.name+":"+key, "guard") }

// listKey is a LIST of encoded values, newest first, at most n long.
func (l *Latest[T]) listKey(key string) string { return l.keys.Key(l.name+":"+key, "latest") }

// rankKey is a ZSET of encoded members scored by their counts.
func (t *Top[T]) rankKey(key string) string { return t.keys.Key(t.name+":"+key, "top") }
