package shard_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// faulty returns a client of b whose connections go through fault
// proxies, with go-redis's default retries unless opts say otherwise.
func faulty(t *testing.T, b *redistest.Backend, opts ...func(*redis.UniversalOptions)) (redis.UniversalClient, *redistest.Faults) {
	t.Helper()
	c, _, f := b.FaultyClient(opts...)
	return c, f
}

// Every state-changing call of a List answers truly when the reply of its
// script is lost and go-redis re-sends it: a push pushes once, a pop pops
// once and returns the value it popped.
func TestFaults_list(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, f := faulty(t, b)
		l := must(shard.NewList(ctx, c, "l", shard.WithShardSize(3), shard.WithPrefix(b.Prefix)))
		check := must(shard.NewList(ctx, b.Client, "l", shard.WithPrefix(b.Prefix)))
		_, _, err := l.PopLeft(ctx) // loads the scripts
		require.NoError(t, err)
		length := func() int64 { n, err := check.Len(ctx); require.NoError(t, err); return n }

		h := redistest.NewHarness(t, f, "shard list push")
		for i := range 10 {
			before := length()
			var n int64
			push := l.PushRight
			if i%2 == 1 {
				push = l.PushLeft
			}
			h.Call(1+i%2, redistest.Scripts, func() { n, err = push(ctx, strconv.Itoa(2*i), strconv.Itoa(2*i+1)) })
			h.Check(err == nil && n == 2, "push %d: n=%d err=%v", i, n, err)
			h.Check(length() == before+2, "push %d: length %d, want %d", i, length(), before+2)
		}

		// A client (and its count of lost replies) per harness.
		c, f = faulty(t, b)
		l = must(shard.NewList(ctx, c, "l", shard.WithPrefix(b.Prefix)))
		hp := redistest.NewHarness(t, f, "shard list pop")
		for i := range 10 {
			before := length()
			var want string
			var ok bool
			if i%2 == 0 {
				want, ok = peek(t, b, check, "l", true)
			} else {
				want, ok = peek(t, b, check, "l", false)
			}
			require.True(t, ok)
			var v string
			hp.Call(1, redistest.Scripts, func() {
				if i%2 == 0 {
					v, ok, err = l.PopLeft(ctx)
				} else {
					v, ok, err = l.PopRight(ctx)
				}
			})
			hp.Check(err == nil && ok && v == want, "pop %d: %q %v %v, want %q", i, v, ok, err, want)
			hp.Check(length() == before-1, "pop %d: length %d, want %d", i, length(), before-1)
		}

		// A blocking pop whose pop script's reply is lost, then one whose
		// wait's (BLMOVE) reply is lost: each gets the value pushed once.
		c, f = faulty(t, b)
		l = must(shard.NewList(ctx, c, "l", shard.WithPrefix(b.Prefix)))
		hb := redistest.NewHarness(t, f, "shard list blocking pop")
		for length() > 0 {
			_, _, err := check.PopLeft(ctx)
			require.NoError(t, err)
		}
		for _, match := range []func([]string) bool{redistest.Scripts, redistest.Commands("blmove")} {
			type result struct {
				v   string
				ok  bool
				err error
			}
			done := make(chan result, 1)
			hb.Call(1, match, func() {
				go func() {
					v, ok, err := l.BlockingPopLeft(ctx, 30*time.Second)
					done <- result{v, ok, err}
				}()
				waitWaiter(t, b, b.Prefix+"{l}:waiters")
				_, err := check.PushRight(ctx, "woken")
				require.NoError(t, err)
				r := <-done
				hb.Check(r.err == nil && r.ok && r.v == "woken", "blocking pop: %q %v %v", r.v, r.ok, r.err)
			})
			hb.Check(length() == 0, "blocking pop: length %d, want 0", length())
		}
	})
}

// peek returns the value at one end of the list name (the end shard's
// LINDEX), read with the test's own client.
func peek(t *testing.T, b *redistest.Backend, l *shard.List, name string, left bool) (string, bool) {
	t.Helper()
	ctx := t.Context()
	end := "last"
	idx := int64(-1)
	if left {
		end, idx = "first", 0
	}
	s, err := b.Client.Get(ctx, b.Prefix+"{"+name+"}:"+end).Result()
	if err == redis.Nil {
		s = "0"
	} else {
		require.NoError(t, err)
	}
	v, err := b.Client.LIndex(ctx, b.Prefix+"{"+name+"}:"+s, idx).Result()
	if err == redis.Nil {
		return "", false
	}
	require.NoError(t, err)
	return v, true
}

// Hash, Set, Visitors and Records writes are idempotent: a re-send after a
// lost reply leaves the state the call reports.
func TestFaults_idempotentWrites(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, f := faulty(t, b)
		p := shard.WithPrefix(b.Prefix)

		hh := redistest.NewHarness(t, f, "shard hash writes")
		var hsh *shard.Hash
		var err error
		hh.Call(1, redistest.Scripts, func() { hsh, err = shard.NewHash(ctx, c, "h", 1000, shard.WithShardSize(10), p) })
		hh.Check(err == nil && hsh != nil, "NewHash: %v", err)
		stored := b.Client.HGetAll(ctx, b.Prefix+"{h}:hash:meta").Val()
		hh.Check(stored["size"] == "10" && stored["total"] == "1000", "NewHash: stored %v", stored)
		for i := range 5 {
			f := strconv.Itoa(i)
			hh.Call(1, redistest.Commands("hset"), func() { err = hsh.Set(ctx, f, "v"+f) })
			hh.Check(err == nil && b.Client.HGet(ctx, hsh.ShardKey(f), hsh.ShardField(f)).Val() == "v"+f, "Set %s: %v", f, err)
		}
		vals := map[string]string{"5": "a", "15": "b", "25": "c", "x": "d"}
		hh.Call(1, redistest.Commands("hset"), func() { err = hsh.SetMany(ctx, vals) })
		got, gerr := hsh.GetMany(ctx, "5", "15", "25", "x")
		require.NoError(t, gerr)
		hh.Check(err == nil && assert.ObjectsAreEqual(vals, got), "SetMany: %v %v", got, err)
		hh.Call(1, redistest.Commands("hdel"), func() { err = hsh.Delete(ctx, "5", "15", "0") })
		got, gerr = hsh.GetMany(ctx, "0", "5", "15", "25")
		require.NoError(t, gerr)
		hh.Check(err == nil && assert.ObjectsAreEqual(map[string]string{"25": "c"}, got), "Delete: %v %v", got, err)

		c, f = faulty(t, b)
		hs := redistest.NewHarness(t, f, "shard set writes")
		set := must(shard.NewSet(ctx, c, "s", 1000, shard.WithShardSize(10), p))
		hs.Call(1, redistest.Commands("sadd"), func() { err = set.Add(ctx, 1, 2, 3, 4, 5) })
		n, lerr := set.Len(ctx)
		require.NoError(t, lerr)
		hs.Check(err == nil && n == 5, "Add: len %d, %v", n, err)
		hs.Call(1, redistest.Commands("srem"), func() { err = set.Remove(ctx, 1, 2) })
		n, lerr = set.Len(ctx)
		require.NoError(t, lerr)
		hs.Check(err == nil && n == 3, "Remove: len %d, %v", n, err)

		c, f = faulty(t, b)
		hv := redistest.NewHarness(t, f, "shard visitors visit")
		day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
		sets := must(shard.NewVisitors(ctx, c, "v", shard.Sets, shard.WithDailyExpected(100), p))
		hll := must(shard.NewVisitors(ctx, c, "w", shard.HyperLogLog, p))
		hv.Call(1, redistest.Scripts, func() { err = sets.Visit(ctx, day, 1, 2, 3) }) // the day's size script
		hv.Check(err == nil && b.Client.Get(ctx, b.Prefix+"{v:2024-05-01}:expected").Val() == "256", "Visit (size): %v", err)
		hv.Call(1, redistest.Commands("sadd"), func() { err = sets.Visit(ctx, day, 3, 4) })
		n, cerr := sets.Count(ctx, day)
		require.NoError(t, cerr)
		hv.Check(err == nil && n == 4, "Visit (sets): count %d, %v", n, err)
		hv.Call(1, redistest.Commands("pfadd"), func() { err = hll.Visit(ctx, day, 1, 2, 3, 3) })
		n, cerr = hll.Count(ctx, day)
		require.NoError(t, cerr)
		hv.Check(err == nil && n == 3, "Visit (hyperloglog): count %d, %v", n, err)

		c, f = faulty(t, b)
		hr := redistest.NewHarness(t, f, "shard records put")
		locs := must(shard.NewLocations(ctx, c, "loc", nil, shard.WithIDsPerShard(10), p))
		for i, match := range []func([]string) bool{redistest.Scripts, redistest.Commands("setrange")} {
			id := int64(25 * i) // a new string each time: the max is raised first
			hr.Call(1, match, func() { err = locs.Set(ctx, id, "USA", "CA") })
			a, aerr := locs.Aggregate(ctx)
			require.NoError(t, aerr)
			hr.Check(err == nil && a.States["USA"]["CA"] == int64(i+1), "Set %d: %v %v", id, a, err)
		}
	})
}

// With every reply slower than the client's ReadTimeout, each re-send
// times out too: the call reports ria.ErrOutcomeUnknown, never a refusal,
// and the state holds the effect of one call (a once-script's re-sends
// are answered from its record).
func TestFaults_delay(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		c, f := faulty(t, b, func(o *redis.UniversalOptions) {
			o.ReadTimeout = 50 * time.Millisecond
			o.MaxRetries = 2
			o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 5*time.Millisecond
		})
		p := shard.WithPrefix(b.Prefix)
		l := must(shard.NewList(ctx, c, "l", p))
		check := must(shard.NewList(ctx, b.Client, "l", p))
		h := must(shard.NewHash(ctx, c, "h", 100, shard.WithShardSize(10), p))
		_, err := l.PushRight(ctx, "a", "b", "c", "x") // loads the scripts
		require.NoError(t, err)
		_, _, err = l.PopRight(ctx)
		require.NoError(t, err)
		hv := redistest.NewHarness(t, f, "shard delayed replies")

		// Each call starts on a pooled connection (a new one would time out
		// in its handshake, before the call is sent): warm it first.
		delayed := func(name string, warm func() error, call func() error) {
			f.Delay(0)
			require.NoError(t, warm())
			f.Delay(200 * time.Millisecond)
			err := call()
			f.Delay(0)
			hv.Counted()
			hv.Check(assert.ErrorIs(t, err, ria.ErrOutcomeUnknown), "%s: %v", name, err)
		}
		lenErr := func() error { _, err := l.Len(ctx); return err }
		delayed("push", lenErr, func() error { _, err := l.PushRight(ctx, "d", "e"); return err })
		delayed("pop", lenErr, func() error { _, _, err := l.PopLeft(ctx); return err })
		delayed("hash set", func() error { _, _, err := h.Get(ctx, "1"); return err }, func() error { return h.Set(ctx, "1", "one") })

		n, err := check.Len(ctx)
		require.NoError(t, err)
		hv.Check(n == 4, "length %d, want 4: the push ran once and the pop once", n)
		v, ok, err := check.PopLeft(ctx)
		require.NoError(t, err)
		hv.Check(ok && v == "b", "the pop in doubt took %q", "a")
		hv.Check(b.Client.HGet(ctx, h.ShardKey("1"), h.ShardField("1")).Val() == "one", "hash set ran")
	})
}
