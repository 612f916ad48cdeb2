package cache_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// Every script of the package, and every plain command that writes, meets
// a key of the wrong type at each key it relies on: the call fails with a
// *ria.KeyError naming the key and its role, and changes nothing.

func TestCache_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		// With a stale grace, so that the refresh lease is used.
		c := newCache[string](t, b.Client, b, cache.WithStaleGrace(time.Minute), cache.WithLease(time.Minute))
		val, lease := key(b, "jobs", "k", "val"), key(b, "jobs", "k", "lease")
		wakeOf := func(tok string) string { return key(b, "jobs", "k", "wake:"+tok) }
		entry := redistest.KeyRole{Key: val, Type: "string", Role: "cache entry"}
		refreshLease := redistest.KeyRole{Key: lease, Type: "string", Role: "cache refresh lease"}
		wakeList := func(tok string) redistest.KeyRole {
			return redistest.KeyRole{Key: wakeOf(tok), Type: "list", Role: "cache wake list"}
		}
		load := func(context.Context) (string, error) { return "loaded", nil }
		nothing := func() {}
		// holding puts the marker of lease tok, on which a waiter
		// registered, where the entry is.
		holding := func(tok string) func() {
			return func() {
				require.NoError(t, b.Client.Set(ctx, val, cache.MarkerForTest(tok, true), time.Minute).Err())
			}
		}
		refreshing := func(tok string) func() {
			return func() {
				require.NoError(t, b.Client.Set(ctx, val, `"old"`, time.Minute).Err())
				require.NoError(t, b.Client.Set(ctx, lease, tok, time.Minute).Err())
			}
		}
		get := func() error { _, err := c.Get(ctx, "k", load); return err }

		t.Run("Get/read and lease", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, get, entry)
		})
		t.Run("Get/wait", func(t *testing.T) {
			b.CheckWrongTypes(t, holding("other"), get, wakeList("other"))
		})
		t.Run("Get/register", func(t *testing.T) {
			// No waiter yet: a registration would flag the marker.
			leased := func() {
				require.NoError(t, b.Client.Set(ctx, val, cache.MarkerForTest("other", false), time.Minute).Err())
			}
			b.CheckWrongTypes(t, leased, func() error { return c.RegisterForTest(ctx, "k", "other") },
				entry, wakeList("other"))
		})
		t.Run("Get/store", func(t *testing.T) {
			b.CheckWrongTypes(t, holding("mine"), func() error { return c.StoreForTest(ctx, "k", "l", "mine", "v") },
				entry, refreshLease, wakeList("mine"))
		})
		t.Run("Get/release", func(t *testing.T) {
			b.CheckWrongTypes(t, holding("mine"), func() error { return c.ReleaseForTest(ctx, "k", "l", "mine") },
				entry, refreshLease, wakeList("mine"))
		})
		t.Run("Get/take undecodable", func(t *testing.T) {
			b.CheckWrongTypes(t, func() { require.NoError(t, b.Client.Set(ctx, val, "garbage", time.Minute).Err()) },
				func() error { return c.TakeForTest(ctx, "k", "mine", "garbage") }, entry)
		})
		t.Run("Get/background check", func(t *testing.T) {
			b.CheckWrongTypes(t, refreshing("other"),
				func() error { _, err := c.RefreshCheckForTest(ctx, "k", "mine"); return err }, entry, refreshLease)
		})
		t.Run("Get/refresh store", func(t *testing.T) {
			b.CheckWrongTypes(t, refreshing("mine"), func() error { return c.StoreForTest(ctx, "k", "r", "mine", "v") },
				entry, refreshLease)
		})
		t.Run("Get/refresh release", func(t *testing.T) {
			b.CheckWrongTypes(t, refreshing("mine"), func() error { return c.ReleaseForTest(ctx, "k", "r", "mine") },
				entry, refreshLease)
		})
		t.Run("Set", func(t *testing.T) {
			b.CheckWrongTypes(t, holding("other"), func() error { return c.Set(ctx, "k", "v") },
				entry, refreshLease, wakeList("other"))
		})
		t.Run("Delete", func(t *testing.T) {
			b.CheckWrongTypes(t, holding("other"), func() error { return c.Delete(ctx, "k") },
				entry, refreshLease, wakeList("other"))
		})
		t.Run("Batch read", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error {
				bt := cache.NewBatch(b.Client)
				c.Read(bt, "k", nil)
				return bt.Exec(ctx)
			}, entry)
		})
	})
}

// The loader's own store, when a key turns out to be of the wrong type:
// its caller gets its value, the failure is logged, nothing is changed.
func TestCache_wrongTypes_loaderStore(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var logs logBuffer
		c := newCache[string](t, b.Client, b, cache.WithLease(time.Minute),
			cache.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		val := key(b, "jobs", "k", "val")
		var before map[string]string
		v, err := c.Get(ctx, "k", func(context.Context) (string, error) {
			// A waiter registered on our lease, and its wake list is not
			// a list.
			marker, err := b.Client.Get(ctx, val).Result()
			require.NoError(t, err)
			tok, ok := strings.CutPrefix(marker, cache.MarkerForTest("", false))
			require.True(t, ok, "the entry holds our marker")
			require.NoError(t, b.Client.Set(ctx, val, marker+":w", time.Minute).Err())
			require.NoError(t, b.Client.Set(ctx, key(b, "jobs", "k", "wake:"+tok), "wrong type", 0).Err())
			before = b.Snapshot()
			return "loaded", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "loaded", v, "the caller gets its value")
		assert.Contains(t, logs.String(), "cache: loaded value not stored")
		assert.Contains(t, logs.String(), "cache wake list")
		assert.Equal(t, before, b.Snapshot(), "nothing changed")
	})
}

func TestCounter_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		d := newDB(t, map[string]int64{"job1": 10})
		c := newCounter(t, b.Client, b, d.restore, cache.WithLease(time.Minute))
		plain := newCounter(t, b.Client, b, nil)
		count, lease := key(b, "views", "job1", "count"), key(b, "views", "job1", "count.lease")
		wakeOf := func(tok string) string { return key(b, "views", "job1", "count.wake:"+tok) }
		counter := redistest.KeyRole{Key: count, Type: "string", Role: "cache counter"}
		leaseKey := redistest.KeyRole{Key: lease, Type: "hash", Role: "cache counter lease"}
		wakeList := func(tok string) redistest.KeyRole {
			return redistest.KeyRole{Key: wakeOf(tok), Type: "list", Role: "cache counter wake list"}
		}
		nothing := func() {}
		exists := func() { require.NoError(t, b.Client.Set(ctx, count, 5, time.Minute).Err()) }
		restoring := func(tok string) func() {
			return func() { require.NoError(t, b.Client.HSet(ctx, lease, "t", tok, "w", 1).Err()) }
		}
		incr := func() error { _, err := c.Incr(ctx, "job1", 1); return err }
		get := func() error { _, err := c.Get(ctx, "job1"); return err }

		t.Run("Incr/exists", func(t *testing.T) { b.CheckWrongTypes(t, exists, incr, counter) })
		t.Run("Incr/no restore", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { _, err := plain.Incr(ctx, "job1", 1); return err }, counter)
		})
		t.Run("Incr/missing", func(t *testing.T) {
			b.CheckWrongTypes(t, restoring("other"), incr, leaseKey, wakeList("other"))
		})
		t.Run("Get/exists", func(t *testing.T) { b.CheckWrongTypes(t, exists, get, counter) })
		t.Run("Get/missing", func(t *testing.T) {
			b.CheckWrongTypes(t, restoring("other"), get, leaseKey, wakeList("other"))
		})
		t.Run("restored", func(t *testing.T) {
			b.CheckWrongTypes(t, func() {
				exists()
				restoring("mine")()
			}, func() error { _, err := c.RestoredForTest(ctx, "job1", "mine", 10, 1); return err },
				counter, leaseKey, wakeList("mine"))
		})
		t.Run("unlease", func(t *testing.T) {
			b.CheckWrongTypes(t, restoring("mine"), func() error { return c.UnleaseForTest(ctx, "job1", "mine") },
				leaseKey, wakeList("mine"))
		})
		t.Run("Batch read", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error {
				bt := cache.NewBatch(b.Client)
				c.Read(bt, "job1")
				return bt.Exec(ctx)
			}, counter)
		})
	})
}

// A counter or a lease field that holds something else than an integer: the
// call fails with a *ria.KeyError matching ria.ErrCorrupt, and changes
// nothing.
func TestCounter_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		d := newDB(t, map[string]int64{"job1": 10})
		c := newCounter(t, b.Client, b, d.restore)
		count, lease := key(b, "views", "job1", "count"), key(b, "views", "job1", "count.lease")
		for _, tc := range []struct {
			name, key, role string
			setup           func()
			call            func() error
		}{
			{"Incr", count, "cache counter", func() { b.Client.Set(ctx, count, "abc", 0) },
				func() error { _, err := c.Incr(ctx, "job1", 1); return err }},
			{"Get", count, "cache counter", func() { b.Client.Set(ctx, count, "1.5", 0) },
				func() error { _, err := c.Get(ctx, "job1"); return err }},
			{"Incr/lease", lease, "cache counter lease field w", func() { b.Client.HSet(ctx, lease, "t", "other", "w", "x") },
				func() error { _, err := c.Incr(ctx, "job1", 1); return err }},
			{"restored", count, "cache counter", func() {
				b.Client.Set(ctx, count, "abc", 0)
				b.Client.HSet(ctx, lease, "t", "mine", "w", 0)
			}, func() error { _, err := c.RestoredForTest(ctx, "job1", "mine", 10, 1); return err }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				b.Flush()
				tc.setup()
				before := b.Snapshot()
				err := tc.call()
				var kerr *ria.KeyError
				if assert.ErrorAs(t, err, &kerr) {
					assert.ErrorIs(t, err, ria.ErrCorrupt)
					assert.Equal(t, tc.key, kerr.Key)
					assert.Equal(t, tc.role, kerr.Role)
				}
				assert.Equal(t, before, b.Snapshot(), "nothing changed")
			})
		}
		b.Flush()
		// Batch reads say so too (and that they could not decode it).
		require.NoError(t, b.Client.Set(ctx, count, "abc", 0).Err())
		bt := cache.NewBatch(b.Client)
		r := c.Read(bt, "job1")
		require.Error(t, bt.Exec(ctx))
		_, _, err := r.Value()
		assert.ErrorIs(t, err, ria.ErrCorrupt)
		assert.ErrorIs(t, err, cache.ErrDecode)
	})
}

func TestGuardListsTop_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		p := cache.WithPrefix(b.Prefix)
		g, err := cache.NewGuard(b.Client, "reset", p)
		require.NoError(t, err)
		l, err := cache.NewLatest[int](b.Client, "views", 3, p, cache.WithTTL(time.Hour))
		require.NoError(t, err)
		top, err := cache.NewTop[int](b.Client, "jobs", p, cache.WithTTL(time.Hour))
		require.NoError(t, err)
		nothing := func() {}
		guard := redistest.KeyRole{Key: key(b, "reset", "u", "guard"), Type: "string", Role: "cache guard"}
		list := redistest.KeyRole{Key: key(b, "views", "site", "latest"), Type: "list", Role: "cache latest list"}
		ranking := redistest.KeyRole{Key: key(b, "jobs", "site", "top"), Type: "zset", Role: "cache top ranking"}

		t.Run("Guard.Allow", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { _, err := g.Allow(ctx, "u", time.Minute); return err }, guard)
		})
		t.Run("Latest.Push", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { return l.Push(ctx, "site", 1, 2) }, list)
		})
		t.Run("Latest.List", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { _, err := l.List(ctx, "site"); return err }, list)
		})
		t.Run("Top.Incr", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { _, err := top.Incr(ctx, "site", 7, 1); return err }, ranking)
		})
		t.Run("Top.Add", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { return top.Add(ctx, "site", 7, 1) }, ranking)
		})
		t.Run("Top.Range", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { _, err := top.Range(ctx, "site", 3); return err }, ranking)
		})
		t.Run("Batch reads", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error {
				bt := cache.NewBatch(b.Client)
				l.Read(bt, "site")
				top.Read(bt, "site", 3)
				return bt.Exec(ctx)
			}, list, ranking)
		})
	})
}
