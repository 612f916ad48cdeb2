package cache_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// Top.Remove, Top.Score, Top.Rank, Guard.Reset, Latest.Len and
// Latest.Clear: one round trip each, wrong types, bad input, lost replies.

func TestTop_RemoveScoreRank(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		top, err := cache.NewTop[int](b.Client, "jobs", cache.WithPrefix(b.Prefix), cache.WithTTL(time.Hour))
		require.NoError(t, err)
		// A first connection on Cluster, and the script cached on the server.
		_, err = top.Remove(ctx, "site", -1)
		require.NoError(t, err)
		// Ties (2 and 3, 10 and 11, 12 and 13) rank as Range orders them.
		for m, s := range map[int]float64{1: 5, 2: 3, 3: 3, 4: 2.5, 10: 1, 11: 1, 12: -1, 13: -1} {
			require.NoError(t, top.Add(ctx, "site", m, s))
		}
		all, err := top.Range(ctx, "site", 100)
		require.NoError(t, err)
		require.Len(t, all, 8)
		for i, r := range all {
			var (
				rank  int64
				score float64
				ok    bool
			)
			rt, _ := b.Count.Delta(func() { rank, ok, err = top.Rank(ctx, "site", r.Member) })
			require.NoError(t, err)
			assert.Equal(t, int64(1), rt, "rank")
			assert.True(t, ok)
			assert.Equal(t, int64(i), rank, "Rank of %d: its place in Range, 0 the top", r.Member)
			rt, _ = b.Count.Delta(func() { score, ok, err = top.Score(ctx, "site", r.Member) })
			require.NoError(t, err)
			assert.Equal(t, int64(1), rt, "score")
			assert.True(t, ok)
			assert.Equal(t, r.Score, score, "Score of %d", r.Member)
		}
		assert.Equal(t, []int{1, 3, 2, 4, 11, 10, 13, 12},
			[]int{all[0].Member, all[1].Member, all[2].Member, all[3].Member, all[4].Member, all[5].Member, all[6].Member, all[7].Member},
			"ties: the encoded member that sorts last first")

		// Absent: a member that is not there, a ranking that does not exist.
		for _, k := range []string{"site", "nobody"} {
			score, ok, err := top.Score(ctx, k, 99)
			require.NoError(t, err, "redis.Nil never escapes")
			assert.False(t, ok)
			assert.Zero(t, score)
			rank, ok, err := top.Rank(ctx, k, 99)
			require.NoError(t, err, "redis.Nil never escapes")
			assert.False(t, ok)
			assert.Zero(t, rank)
		}

		// Remove leaves the TTL as it is.
		rk := key(b, "jobs", "site", "top")
		require.NoError(t, b.Client.PExpire(ctx, rk, time.Minute).Err())
		var n int
		rt, _ := b.Count.Delta(func() { n, err = top.Remove(ctx, "site", 2, 99, 2, 10) })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "remove")
		assert.Equal(t, 2, n, "2 and 10 were there; 99 was not; 2 counts once")
		pttl, err := b.Client.PTTL(ctx, rk).Result()
		require.NoError(t, err)
		assert.LessOrEqual(t, pttl, time.Minute, "the TTL is not extended")
		assert.Greater(t, pttl, time.Duration(0))
		_, ok, err := top.Score(ctx, "site", 2)
		require.NoError(t, err)
		assert.False(t, ok, "removed")
		rank, ok, err := top.Rank(ctx, "site", 4)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, int64(2), rank, "4 moved up to 2's place")

		n, err = top.Remove(ctx, "nobody", 1)
		require.NoError(t, err)
		assert.Zero(t, n)
		n, err = top.Remove(ctx, "site", 1, 3, 4, 11, 12, 13)
		require.NoError(t, err)
		assert.Equal(t, 6, n)
		assert.Empty(t, b.Keys(rk), "an empty ranking no longer exists")

		// More members than one ZREM takes in the script.
		many, zs := make([]int, 1200), make([]redis.Z, 1200)
		for i := range many {
			many[i], zs[i] = i, redis.Z{Score: float64(i), Member: strconv.Itoa(i)} // as encoding/json encodes i
		}
		require.NoError(t, b.Client.ZAdd(ctx, key(b, "jobs", "big", "top"), zs...).Err())
		n, err = top.Remove(ctx, "big", many...)
		require.NoError(t, err)
		assert.Equal(t, 1200, n)
		assert.Empty(t, b.Keys(key(b, "jobs", "big", "top")))
	})
}

func TestGuard_Reset(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g, err := cache.NewGuard(b.Client, "password-reset", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, g.Reset(ctx, "warm-up")) // a first connection on Cluster
		ok, err := g.Allow(ctx, "user1", time.Hour)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = g.Allow(ctx, "user1", time.Hour)
		require.NoError(t, err)
		require.False(t, ok, "within the window")
		ok, err = g.Allow(ctx, "user2", time.Hour)
		require.NoError(t, err)
		require.True(t, ok)

		rt, _ := b.Count.Delta(func() { err = g.Reset(ctx, "user1") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt)
		assert.Empty(t, b.Keys(key(b, "password-reset", "user1", "guard")))
		ok, err = g.Allow(ctx, "user1", time.Hour)
		require.NoError(t, err)
		assert.True(t, ok, "the next Allow after a Reset")
		ok, err = g.Allow(ctx, "user1", time.Hour)
		require.NoError(t, err)
		assert.False(t, ok, "a new window")
		ok, err = g.Allow(ctx, "user2", time.Hour)
		require.NoError(t, err)
		assert.False(t, ok, "another key keeps its window")

		require.NoError(t, g.Reset(ctx, "nobody"), "idempotent")
		require.NoError(t, g.Reset(ctx, "user1"))
		require.NoError(t, g.Reset(ctx, "user1"))
		ok, err = g.Allow(ctx, "user1", time.Hour)
		require.NoError(t, err)
		assert.True(t, ok)
	})
}

func TestLatest_LenClear(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		l, err := cache.NewLatest[int](b.Client, "views", 3, cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		n, err := l.Len(ctx, "nobody") // a first connection on Cluster
		require.NoError(t, err)
		assert.Zero(t, n)

		require.NoError(t, l.Push(ctx, "site", 1))
		rt, _ := b.Count.Delta(func() { n, err = l.Len(ctx, "site") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "len")
		assert.Equal(t, 1, n)
		require.NoError(t, l.Push(ctx, "site", 2, 3, 4, 5))
		n, err = l.Len(ctx, "site")
		require.NoError(t, err)
		assert.Equal(t, 3, n, "trimmed to 3")
		require.NoError(t, l.Push(ctx, "other", 9))

		rt, _ = b.Count.Delta(func() { err = l.Clear(ctx, "site") })
		require.NoError(t, err)
		assert.Equal(t, int64(1), rt, "clear")
		n, err = l.Len(ctx, "site")
		require.NoError(t, err)
		assert.Zero(t, n)
		got, err := l.List(ctx, "site")
		require.NoError(t, err)
		assert.Empty(t, got)
		assert.Empty(t, b.Keys(key(b, "views", "site", "latest")))
		got, err = l.List(ctx, "other")
		require.NoError(t, err)
		assert.Equal(t, []int{9}, got, "another key keeps its list")
		require.NoError(t, l.Clear(ctx, "site"), "idempotent")
		require.NoError(t, l.Clear(ctx, "nobody"))

		require.NoError(t, l.Push(ctx, "site", 7))
		got, err = l.List(ctx, "site")
		require.NoError(t, err)
		assert.Equal(t, []int{7}, got, "a cleared list starts again")
	})
}

func TestTopGuardLatest_extras_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := cache.WithPrefix(b.Prefix)
		g, err := cache.NewGuard(b.Client, "reset", p)
		require.NoError(t, err)
		l, err := cache.NewLatest[int](b.Client, "views", 3, p)
		require.NoError(t, err)
		top, err := cache.NewTop[int](b.Client, "jobs", p, cache.WithTTL(time.Hour))
		require.NoError(t, err)
		// With members, so that the calls would change something.
		ranked := func() { require.NoError(t, top.Add(ctx, "site", 7, 1)) }
		list := redistest.KeyRole{Key: key(b, "views", "site", "latest"), Type: "list", Role: "cache latest list"}
		ranking := redistest.KeyRole{Key: key(b, "jobs", "site", "top"), Type: "zset", Role: "cache top ranking"}

		t.Run("Top.Remove", func(t *testing.T) {
			b.CheckWrongTypes(t, ranked, func() error { _, err := top.Remove(ctx, "site", 7); return err }, ranking)
		})
		t.Run("Top.Score", func(t *testing.T) {
			b.CheckWrongTypes(t, ranked, func() error { _, _, err := top.Score(ctx, "site", 7); return err }, ranking)
		})
		t.Run("Top.Rank", func(t *testing.T) {
			b.CheckWrongTypes(t, ranked, func() error { _, _, err := top.Rank(ctx, "site", 7); return err }, ranking)
		})
		t.Run("Latest.Len", func(t *testing.T) {
			b.CheckWrongTypes(t, func() {}, func() error { _, err := l.Len(ctx, "site"); return err }, list)
		})

		// Reset and Clear delete their key, whatever it holds; Reset keeps
		// the record of its reply (a once-script), and nothing else.
		t.Run("Guard.Reset and Latest.Clear", func(t *testing.T) {
			gk := key(b, "reset", "u", "guard")
			require.NoError(t, b.Client.HSet(ctx, gk, "wrong", "type").Err())
			require.NoError(t, b.Client.Set(ctx, list.Key, "wrong type", 0).Err())
			require.NoError(t, g.Reset(ctx, "u"))
			require.NoError(t, l.Clear(ctx, "site"))
			assert.Empty(t, dataKeys(b, ""))
			assert.Len(t, b.Keys(""), 1, "the Reset's record")
			assert.Len(t, b.Keys(key(b, "reset", "u", "once:*")), 1, "the Reset's record")
			ok, err := g.Allow(ctx, "u", time.Minute)
			require.NoError(t, err)
			assert.True(t, ok)
		})
	})
}

// unencodable is a member encoding/json cannot encode.
type unencodable struct{ C chan int }

func TestTopGuardLatest_extras_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := cache.WithPrefix(b.Prefix)
		g, err := cache.NewGuard(b.Client, "reset", p)
		require.NoError(t, err)
		l, err := cache.NewLatest[int](b.Client, "views", 3, p)
		require.NoError(t, err)
		top, err := cache.NewTop[int](b.Client, "jobs", p)
		require.NoError(t, err)
		odd, err := cache.NewTop[unencodable](b.Client, "odd", p)
		require.NoError(t, err)
		require.NoError(t, top.Add(ctx, "site", 1, 1))
		require.NoError(t, l.Push(ctx, "site", 1))
		_, err = g.Allow(ctx, "u", time.Minute)
		require.NoError(t, err)
		before := b.Snapshot()

		_, err = top.Remove(ctx, "site")
		assert.ErrorContains(t, err, "cache: top jobs remove \"site\": no members")
		_, err = top.Remove(ctx, "", 1)
		assert.ErrorContains(t, err, "top remove: key: empty")
		_, _, err = top.Score(ctx, "", 1)
		assert.ErrorContains(t, err, "top score: key: empty")
		_, _, err = top.Rank(ctx, "", 1)
		assert.ErrorContains(t, err, "top rank: key: empty")
		assert.ErrorContains(t, g.Reset(ctx, ""), "guard reset: key: empty")
		assert.ErrorContains(t, l.Clear(ctx, ""), "latest clear: key: empty")
		_, err = l.Len(ctx, "")
		assert.ErrorContains(t, err, "latest len: key: empty")

		bad := unencodable{C: make(chan int)}
		_, err = odd.Remove(ctx, "site", unencodable{}, bad)
		assert.ErrorContains(t, err, "encode member 0")
		_, _, err = odd.Score(ctx, "site", bad)
		assert.ErrorContains(t, err, "cache: top odd score \"site\": encode member")
		_, _, err = odd.Rank(ctx, "site", bad)
		assert.ErrorContains(t, err, "cache: top odd rank \"site\": encode member")

		assert.Equal(t, before, b.Snapshot(), "bad input changed nothing")
	})
}

func TestFaults_Top_Remove(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		top, err := cache.NewTop[string](rdb, "jobs", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		_, err = top.Remove(ctx, "warm", "x") // the script cached on the server
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "cache Top.Remove")
		for i := range 20 {
			m := "m" + strconv.Itoa(i)
			require.NoError(t, top.Add(ctx, "site", m, float64(i)))
			require.NoError(t, top.Add(ctx, "site", m+"b", float64(i)))
			var n int
			h.Call(1, redistest.Scripts, func() { n, err = top.Remove(ctx, "site", m, m+"b", "absent") })
			require.NoError(t, err)
			h.Check(n == 2, "Remove %d answered %d, want 2", i, n)
			_, there, err := top.Score(ctx, "site", m)
			require.NoError(t, err)
			h.Check(!there, "Remove %d: %s is still in the ranking", i, m)
		}
	})
}

func TestFaults_Guard_Reset_Latest_Clear(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		g, err := cache.NewGuard(rdb, "reset", cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		l, err := cache.NewLatest[int](rdb, "views", 3, cache.WithPrefix(b.Prefix))
		require.NoError(t, err)
		require.NoError(t, g.Reset(ctx, "u")) // the script cached on the server
		h := redistest.NewHarness(t, f, "cache Guard.Reset/Latest.Clear")
		for i := range 20 {
			ok, err := g.Allow(ctx, "u", time.Hour)
			require.NoError(t, err)
			require.True(t, ok)
			h.Call(1, redistest.Scripts, func() { err = g.Reset(ctx, "u") })
			require.NoError(t, err)
			h.Check(len(b.Keys(key(b, "reset", "u", "guard"))) == 0, "Reset %d: the guard key is still there", i)

			require.NoError(t, l.Push(ctx, "site", i))
			h.Call(1, redistest.Commands("del"), func() { err = l.Clear(ctx, "site") })
			require.NoError(t, err)
			n, err := l.Len(ctx, "site")
			require.NoError(t, err)
			h.Check(n == 0, "Clear %d: the list holds %d values", i, n)
		}
	})
}
