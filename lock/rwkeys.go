package lock

// The keys of read/write lock N are <prefix>{N}:rw:<part>; they share the
// {N} hash tag, so every script of one RWLock touches one Cluster slot.
// They are apart from the keys of the exclusive lock N.

// rwKeys holds the keys of one read/write lock.
type rwKeys struct {
	// writer is a STRING holding the writer's token, PX its TTL.
	writer string
	// readers is a ZSET of reader tokens scored by their deadline (server
	// Unix ms); the key's TTL is at least the longest lease granted.
	readers string
	// fence is a STRING counter, the last fencing token minted; no TTL.
	fence string
	// queue is a LIST of the tokens of waiting acquirers, oldest first.
	queue string
	// waiters is a HASH from a waiting token to "<place expiry ms> <ttl ms>
	// <r|w>": how long its place stays valid (server time), the TTL it
	// gets when granted, and its mode.
	waiters string
	// grant is the prefix of the grant keys; grant+token is a LIST where a
	// release pushes the fence of the hold it grants that waiter (or an
	// empty value to wake it); TTL: the hold's.
	grant string
}

func (lk *Locker) rwKeys(name string) rwKeys {
	return rwKeys{
		writer:  lk.keys.Key(name, "rw:writer"),
		readers: lk.keys.Key(name, "rw:readers"),
		fence:   lk.keys.Key(name, "rw:fence"),
		queue:   lk.keys.Key(name, "rw:queue"),
		waiters: lk.keys.Key(name, "rw:waiters"),
		grant:   lk.keys.Key(name, "rw:grant:"),
	}
}
