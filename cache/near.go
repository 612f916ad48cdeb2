package cache

// The near cache itself (CLOCK eviction, fill tickets, the invalidation
// subscriber) is internal/near; this is its glue to a Cache.

// nearChannel is the Pub/Sub channel of the cache's invalidations:
// <prefix>{<name>}:near (a channel, not a key; no entry's hash tag is
// {<name>}).
func (c *Cache[T]) nearChannel() string { return c.keys.Key(c.name, "near") }

// nearArgs returns the last two arguments of the write scripts: the
// invalidation channel and message of key, or two empty strings when the
// cache has no near cache (nothing is published).
func (c *Cache[T]) nearArgs(key string) (channel, message string) {
	if c.near == nil {
		return "", ""
	}
	return c.near.Channel(), c.near.Message(key)
}

// NearReady reports whether c's near cache ([WithNear]) is in use: its
// subscription to invalidations is confirmed. It is false until the first
// subscription is confirmed (shortly after New), while a lost one is being
// made again, after [Cache.Close], and without WithNear; Gets then read
// Redis.
func (c *Cache[T]) NearReady() bool {
	if c.near == nil {
		return false
	}
	return c.near.Ready()
}

// Close stops the near cache ([WithNear]): its subscriber goroutine ends
// (Close waits for it) and Gets no longer use it. The Cache still works
// without it and its writes still publish invalidations. It returns nil;
// calling it again, or on a Cache without a near cache, does nothing.
func (c *Cache[T]) Close() error {
	if c.near != nil {
		c.near.Stop()
	}
	return nil
}
