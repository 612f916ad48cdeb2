package cache

import "time"

// NearReadyForTest reports whether c's near cache is subscribed (it serves
// and fills only then).
func (c *Cache[T]) NearReadyForTest() bool { return c.NearReady() }

// NearLenForTest returns how many entries c's near cache holds (expired
// ones included, until they are evicted).
func (c *Cache[T]) NearLenForTest() int { return c.near.Stats().Len }

// NearHasForTest reports whether c's near cache would serve key now, and
// the payload it would serve.
func (c *Cache[T]) NearHasForTest(key string) (string, bool) { return c.near.Lookup(key) }

// NearUntilForTest returns the deadline of key's near entry.
func (c *Cache[T]) NearUntilForTest(key string) (time.Time, bool) { return c.near.Until(key) }

// NearInvalidationsForTest returns how many invalidations from other
// caches c's near cache has heard.
func (c *Cache[T]) NearInvalidationsForTest() int64 { return c.near.Stats().Invalidations }

// NearFlushesForTest returns how many times c's near cache was emptied
// (subscription lost or made, Close).
func (c *Cache[T]) NearFlushesForTest() int64 { return c.near.Stats().Flushes }

// NearEvictionsForTest returns how many live entries were evicted to make
// room.
func (c *Cache[T]) NearEvictionsForTest() int64 { return c.near.Stats().Evictions }

// NearClockForTest sets the clock of c's near cache. Set it before using c.
func (c *Cache[T]) NearClockForTest(now func() time.Time) { c.near.SetNow(now) }

// NearBeforeFillForTest makes every fill of c's near cache call f first
// (after the Get read Redis). Set it before using c.
func (c *Cache[T]) NearBeforeFillForTest(f func(key string)) { c.near.SetBeforeFill(f) }

// NearChannelForTest returns c's invalidation channel.
func (c *Cache[T]) NearChannelForTest() string { return c.near.Channel() }

// NearPingForTest sets how long c's subscriber waits for a message before
// it pings, and then for the pong.
func (c *Cache[T]) NearPingForTest(d time.Duration) { c.near.SetPing(d) }

// NearFillingForTest returns how many keys c's near cache has a fill in
// progress for.
func (c *Cache[T]) NearFillingForTest() int { return c.near.Stats().Filling }
