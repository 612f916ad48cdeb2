package cache

// FollowingForTest returns how many Gets of c wait for another Get of the
// same key in this process.
func (c *Cache[T]) FollowingForTest() int64 { return c.following.Load() }

// WaitingForTest returns how many Incr or Get calls of c wait for a
// restore: blocked in Redis, or waiting for another caller of this process.
func (c *Counter) WaitingForTest() int64 { return c.waiting.Load() }
