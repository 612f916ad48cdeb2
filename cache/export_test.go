package cache

import "context"

// FollowingForTest returns how many Gets of c wait for another Get of the
// same key in this process.
func (c *Cache[T]) FollowingForTest() int64 { return c.following.Load() }

// WaitingForTest returns how many Gets of c are registered as waiters of
// another caller's lease and about to block, or blocked, on its wake list.
func (c *Cache[T]) WaitingForTest() int64 { return c.waiting.Load() }

// BeforeBlockForTest makes every waiter of c call f between its
// registration (wait.lua) and its blocking BLMOVE. Set it before using c.
func (c *Cache[T]) BeforeBlockForTest(f func()) { c.beforeBlock = f }

// WarmWaitForTest loads the waiters' script on the server of key (a Get
// and a Delete load the others), so that a test's round trips are those of
// steady state: a script's first run on a server costs one more (EVALSHA,
// then EVAL). key must be missing: nothing is written then.
func (c *Cache[T]) WarmWaitForTest(ctx context.Context, key string) error {
	k := c.entryKeys(key)
	_, err := waitScript.Run(ctx, c.rdb, []string{k.val, k.wake + "warm"}, "warm")
	return err
}

// RegisterForTest runs a waiter's registration on the lease token of the
// entry key (wait.lua), as a Get that found token's marker does.
func (c *Cache[T]) RegisterForTest(ctx context.Context, key, token string) error {
	k := c.entryKeys(key)
	_, err := waitScript.Run(ctx, c.rdb, []string{k.val, k.wake + token}, token)
	return err
}

// MarkerForTest returns the lease marker of token, as an entry holds it
// while token's holder loads it (waited: once a waiter registered).
func MarkerForTest(token string, waited bool) string {
	if waited {
		return markPrefix + token + ":w"
	}
	return markPrefix + token
}

// WaitingForTest returns how many Incr or Get calls of c wait for a
// restore: blocked in Redis, or waiting for another caller of this process.
func (c *Counter) WaitingForTest() int64 { return c.waiting.Load() }

// BeforeBlockForTest makes every caller of c that blocks on a restorer's
// wake list call f between its registration (incr.lua) and its BLMOVE.
// Set it before using c.
func (c *Counter) BeforeBlockForTest(f func()) { c.beforeBlock = f }

// StoreForTest runs the store of a value by the holder of lease token
// (mode "l"), of the refresh lease token ("r"), or a Set ("s"), as Get,
// a background refresh and Set do.
func (c *Cache[T]) StoreForTest(ctx context.Context, key, mode, token string, v T) error {
	payload, err := c.encode(v)
	if err != nil {
		return err
	}
	_, err = storeScript.Int64(ctx, c.rdb, c.entryKeys(key).keys(), mode, token, payload, ms(c.ttl+c.grace), ms(c.lease), inlineMax, c.refreshFlag())
	return err
}

// ReleaseForTest runs the release of lease token (mode "l"), of the
// refresh lease token ("r"), or a Delete ("d").
func (c *Cache[T]) ReleaseForTest(ctx context.Context, key, mode, token string) error {
	_, err := releaseScript.Int64(ctx, c.rdb, c.entryKeys(key).keys(), mode, token, ms(c.lease), 0, c.refreshFlag())
	return err
}

// RefreshCheckForTest runs the background check of an entry due for
// refresh, as token, and returns its answer: 0 nothing to do, 1 refresh,
// 2 load.
func (c *Cache[T]) RefreshCheckForTest(ctx context.Context, key, token string) (int64, error) {
	k := c.entryKeys(key)
	return refreshScript.Int64(ctx, c.rdb, []string{k.val, k.lease}, token, markPrefix+token,
		ms(c.lease), (c.refresh + c.grace).Milliseconds())
}

// TakeForTest runs the take of the lease, as token, of an entry holding
// bad, a payload the caller could not decode.
func (c *Cache[T]) TakeForTest(ctx context.Context, key, token, bad string) error {
	_, _, err := c.take(ctx, c.entryKeys(key), markPrefix+token, bad)
	return err
}

// RestoredForTest runs the end of a restore by the holder of lease token:
// the counter set to base + n.
func (c *Counter) RestoredForTest(ctx context.Context, key, token string, base, n int64) (int64, error) {
	return c.restored(ctx, c.counterKeys(key), token, base, n)
}

// UnleaseForTest runs the release of lease token of the counter key.
func (c *Counter) UnleaseForTest(ctx context.Context, key, token string) error {
	k := c.counterKeys(key)
	_, err := unleaseScript.Int64(ctx, c.rdb, []string{k.lease, k.wake + token}, token, ms(c.lease))
	return err
}

// ClaimsWaitingForTest returns how many Gets of c wait to send their first
// command in a pipeline shared with other Gets.
func (c *Cache[T]) ClaimsWaitingForTest() int { return c.claims.Waiting() }

// ClaimInflight is how many pipelines of claims a Cache has on their way
// before further claims wait to share the next.
const ClaimInflight = claimInflight
