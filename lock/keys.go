package lock

// ownerKey is a STRING holding the holder's token, with the lock's TTL.
func (lk *Locker) ownerKey(name string) string { return lk.keys.Key(name, "owner") }

// fenceKey is a STRING counter, the last fencing token minted; it has no TTL.
func (lk *Locker) fenceKey(name string) string { return lk.keys.Key(name, "fence") }

// waitingKey is a STRING mark whose TTL covers the longest current waiter:
// release wakes a waiter only while it exists.
func (lk *Locker) waitingKey(name string) string { return lk.keys.Key(name, "waiting") }

// wakeKey is a LIST of wake tokens that waiters block on with BLPOP.
func (lk *Locker) wakeKey(name string) string { return lk.keys.Key(name, "wake") }
