package lock

// ownerKey is a STRING holding the holder's token, with the lock's TTL.
func (lk *Locker) ownerKey(name string) string { return lk.keys.Key(name, "owner") }

// fenceKey is a STRING counter, the last fencing token minted; no TTL.
func (lk *Locker) fenceKey(name string) string { return lk.keys.Key(name, "fence") }

// queueKey is a LIST of the tokens of waiting acquirers, oldest first.
func (lk *Locker) queueKey(name string) string { return lk.keys.Key(name, "queue") }

// waitersKey is a HASH from a waiting token to "<place expiry ms> <ttl ms>":
// how long its place in the queue stays valid (server time) and the TTL the
// lock gets when handed to it.
func (lk *Locker) waitersKey(name string) string { return lk.keys.Key(name, "waiters") }

// grantPrefix is the prefix of the grant keys; grantPrefix+token is a LIST
// where a release pushes the fence of the lock it hands to that waiter (or
// an empty value to wake it), and where a pipelined attempt that takes the
// lock pushes its fence; TTL: the lock's.
func (lk *Locker) grantPrefix(name string) string { return lk.keys.Key(name, "grant:") }

// recordKey is a STRING holding the nonce of the Release call that released
// the lock of token, for the client's retry window: a re-send of that call
// answers "released" from it.
func (lk *Locker) recordKey(name, token string) string { return lk.keys.Key(name, "released:"+token) }
