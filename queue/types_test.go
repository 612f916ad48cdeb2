package queue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
)

// Roles of the group's keys, as a *ria.KeyError names them.
const (
	roleTasks    = "queue tasks"
	roleDelayed  = "queue delayed set"
	roleInflight = "queue in-flight set"
	roleDead     = "queue dead set"
	roleReady    = "queue ready list"
	roleSignal   = "queue signal list"
	roleSchedule = "queue schedule list"
	roleRecord   = "queue take record"
	roleWake     = "queue wake list"
	rolePaused   = "queue paused set"
)

// putU writes task id of queue q (max retries m) with uniqueness key u
// straight into the tasks hash, and its lock.
func putU(t *testing.T, b *redistest.Backend, id, q string, m int, u string) {
	t.Helper()
	require.NoError(t, b.Client.HSet(t.Context(), key(b, "tasks"), id, queue.Pack(q, "t", m, "/"+u, []byte(`1`))).Err())
	require.NoError(t, b.Client.Set(t.Context(), key(b, "unique:"+u), id, time.Hour).Err())
}

// far is a score (server Unix ms) far in the future: a due time or lease
// deadline that does not pass during a test.
const far = 9e12

// put writes task id of queue q (max retries m) straight into the tasks
// hash.
func put(t *testing.T, b *redistest.Backend, id, q string, m int) {
	t.Helper()
	require.NoError(t, b.Client.HSet(t.Context(), key(b, "tasks"), id, queue.Pack(q, "t", m, "", []byte(`1`))).Err())
}

func zadd(t *testing.T, b *redistest.Backend, part string, score float64, member string) {
	t.Helper()
	require.NoError(t, b.Client.ZAdd(t.Context(), key(b, part), redis.Z{Score: score, Member: member}).Err())
}

// Every script-backed operation checks the type of every key it relies
// on, the lists it finds through a task's queue included, before its first
// write: a key of another type makes it fail with a *ria.KeyError naming
// the key and its role, and change nothing (Enqueue leaves no task fields
// behind).
func TestGroup_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		k := func(part, typ, role string) redistest.KeyRole {
			return redistest.KeyRole{Key: key(b, part), Type: typ, Role: role}
		}
		nothing := func() {}
		t.Run("Enqueue", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { _, err := g.Enqueue(ctx, "default", "t", 1); return err },
				k("tasks", "hash", roleTasks), k("ready:default", "list", roleReady), k("signal:default", "list", roleSignal))
		})
		t.Run("Enqueue with an ID", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { _, err := g.Enqueue(ctx, "default", "t", 1, queue.ID("x")); return err },
				k("tasks", "hash", roleTasks), k("ready:default", "list", roleReady), k("signal:default", "list", roleSignal))
		})
		t.Run("Enqueue delayed", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { _, err := g.Enqueue(ctx, "default", "t", 1, queue.Delay(time.Hour)); return err },
				k("tasks", "hash", roleTasks), k("delayed", "zset", roleDelayed), k("schedule", "list", roleSchedule))
		})
		t.Run("EnqueueBatch", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error {
				_, err := g.EnqueueBatch(ctx, []queue.Job{
					{Queue: "a", Name: "t", Options: []queue.EnqueueOption{queue.ID("x")}},
					{Queue: "b", Name: "t"},
					{Queue: "a", Name: "t", Options: []queue.EnqueueOption{queue.Delay(time.Hour)}},
				})
				return err
			}, k("tasks", "hash", roleTasks), k("ready:a", "list", roleReady), k("signal:a", "list", roleSignal),
				k("ready:b", "list", roleReady), k("signal:b", "list", roleSignal), k("delayed", "zset", roleDelayed),
				k("schedule", "list", roleSchedule))
		})
		t.Run("Enqueue unique", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error {
				_, err := g.Enqueue(ctx, "default", "t", 1, queue.Unique(time.Hour), queue.UniqueKey("u"))
				return err
			}, k("tasks", "hash", roleTasks), k("ready:default", "list", roleReady), k("signal:default", "list", roleSignal),
				k("unique:u", "string", roleUnique))
		})
		t.Run("EnqueueBatch unique", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error {
				_, err := g.EnqueueBatch(ctx, []queue.Job{
					{Queue: "a", Name: "t", Options: []queue.EnqueueOption{queue.Unique(time.Hour), queue.UniqueKey("u1"), queue.ID("x")}},
					{Queue: "a", Name: "t", Options: []queue.EnqueueOption{queue.Unique(time.Hour), queue.UniqueKey("u2"), queue.Delay(time.Hour)}},
				})
				return err
			}, k("tasks", "hash", roleTasks), k("ready:a", "list", roleReady), k("signal:a", "list", roleSignal),
				k("delayed", "zset", roleDelayed), k("schedule", "list", roleSchedule),
				k("unique:u1", "string", roleUnique), k("unique:u2", "string", roleUnique))
		})
		t.Run("Cancel", func(t *testing.T) {
			b.CheckWrongTypes(t, func() { put(t, b, "c", "default", 5); zadd(t, b, "delayed", far, "c") },
				func() error { return g.Cancel(ctx, "c") },
				k("delayed", "zset", roleDelayed), k("tasks", "hash", roleTasks))
		})
		t.Run("Cancel unique", func(t *testing.T) {
			b.CheckWrongTypes(t, func() { putU(t, b, "c", "default", 5, "u"); zadd(t, b, "delayed", far, "c") },
				func() error { return g.Cancel(ctx, "c") },
				k("delayed", "zset", roleDelayed), k("tasks", "hash", roleTasks), k("unique:u", "string", roleUnique))
		})
		t.Run("Pause", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { return g.Pause(ctx, "default") }, k("paused", "set", rolePaused),
				k("ready:default", "list", roleReady), k("signal:default", "list", roleSignal))
		})
		t.Run("Resume", func(t *testing.T) {
			b.CheckWrongTypes(t, func() { require.NoError(t, g.Pause(ctx, "default")) }, func() error { return g.Resume(ctx, "default") },
				k("paused", "set", rolePaused), k("ready:default", "list", roleReady), k("signal:default", "list", roleSignal))
		})
		t.Run("Paused", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { _, err := g.Paused(ctx); return err }, k("paused", "set", rolePaused))
		})
		t.Run("Requeue", func(t *testing.T) {
			b.CheckWrongTypes(t, func() { put(t, b, "d", "default", 5); zadd(t, b, "dead", 1, "d") },
				func() error { return g.Requeue(ctx, "d") },
				k("dead", "zset", roleDead), k("tasks", "hash", roleTasks), k("ready:default", "list", roleReady),
				k("signal:default", "list", roleSignal))
		})
		t.Run("Promote", func(t *testing.T) {
			b.CheckWrongTypes(t, func() { put(t, b, "p", "default", 5); zadd(t, b, "delayed", 1, "p") },
				func() error { _, err := g.Promote(ctx); return err },
				k("delayed", "zset", roleDelayed), k("tasks", "hash", roleTasks), k("ready:default", "list", roleReady),
				k("signal:default", "list", roleSignal))
		})
		t.Run("Recover", func(t *testing.T) {
			b.CheckWrongTypes(t, func() {
				put(t, b, "x", "default", 5)
				putU(t, b, "y", "other", 0, "u") // no retry left: dead, its lock released
				zadd(t, b, "inflight", 1, "x:tok")
				zadd(t, b, "inflight", 1, "y:tok")
			}, func() error { _, err := g.Recover(ctx); return err },
				k("inflight", "zset", roleInflight), k("tasks", "hash", roleTasks), k("dead", "zset", roleDead),
				k("ready:default", "list", roleReady), k("signal:default", "list", roleSignal), k("unique:u", "string", roleUnique))
		})
		t.Run("Dead", func(t *testing.T) {
			b.CheckWrongTypes(t, func() { put(t, b, "d", "default", 5); zadd(t, b, "dead", 1, "d") },
				func() error { _, err := g.Dead(ctx, 0, 10); return err },
				k("dead", "zset", roleDead), k("tasks", "hash", roleTasks))
		})
		// A worker's take settles outcomes (a release to queue "other", a
		// retry), promotes a due task, recovers an expired lease (no retry
		// left: dead) and takes.
		takeState := func() {
			_, err := g.Enqueue(ctx, "default", "t", 1)
			require.NoError(t, err)
			put(t, b, "p", "default", 5)
			zadd(t, b, "delayed", 1, "p")
			putU(t, b, "x", "default", 0, "ux")
			zadd(t, b, "inflight", 1, "x:tok")
			for _, id := range []string{"l", "r"} {
				put(t, b, id, "other", 5)
				zadd(t, b, "inflight", far, id+":tok")
			}
			putU(t, b, "ua", "default", 5, "ua") // acknowledged: its lock released
			zadd(t, b, "inflight", far, "ua:tok")
			require.NoError(t, g.Pause(ctx, "paused"))
		}
		outcomes := []queue.Outcome{{ID: "l", Token: "tok", Kind: 'l'}, {ID: "r", Token: "tok", Kind: 'r', Attempts: "1", Backoff: time.Hour, Err: "e"},
			{ID: "ua", Token: "tok", Kind: 'a', Unique: "ua"}}
		t.Run("take", func(t *testing.T) {
			b.CheckWrongTypes(t, takeState, func() error {
				_, _, err := g.TakeRuns(ctx, "w", []string{"default", "paused"}, 3, time.Minute, queue.Nonce(), outcomes...)
				return err
			}, k("tasks", "hash", roleTasks), k("delayed", "zset", roleDelayed), k("inflight", "zset", roleInflight),
				k("dead", "zset", roleDead), k("schedule", "list", roleSchedule), k("took:w", "string", roleRecord),
				k("ready:default", "list", roleReady), k("signal:default", "list", roleSignal),
				k("ready:other", "list", roleReady), k("signal:other", "list", roleSignal),
				k("unique:ux", "string", roleUnique), k("unique:ua", "string", roleUnique), k("paused", "set", rolePaused),
				k("ready:paused", "list", roleReady), k("signal:paused", "list", roleSignal))
		})
		t.Run("settle", func(t *testing.T) {
			settleStateBase := func() {
				takeState()
				for _, id := range []string{"a", "d"} {
					put(t, b, id, "default", 5)
					zadd(t, b, "inflight", far, id+":tok")
				}
			}
			settleState := func() {
				settleStateBase()
				putU(t, b, "ud", "default", 5, "ud")
				zadd(t, b, "inflight", far, "ud:tok")
			}
			all := append([]queue.Outcome{{ID: "a", Token: "tok", Kind: 'a'}, {ID: "d", Token: "tok", Kind: 'd', Attempts: "1", Err: "e"},
				{ID: "ud", Token: "tok", Kind: 'd', Attempts: "1", Err: "e", Unique: "ud"}}, outcomes...)
			b.CheckWrongTypes(t, settleState, func() error {
				return g.SettleForTest(ctx, "w", []string{"default"}, all...)
			}, k("tasks", "hash", roleTasks), k("delayed", "zset", roleDelayed), k("inflight", "zset", roleInflight),
				k("dead", "zset", roleDead), k("schedule", "list", roleSchedule), k("took:w", "string", roleRecord),
				k("wake:w", "list", roleWake), k("ready:default", "list", roleReady), k("signal:default", "list", roleSignal),
				k("ready:other", "list", roleReady), k("signal:other", "list", roleSignal),
				k("unique:ua", "string", roleUnique), k("unique:ud", "string", roleUnique))
		})
		t.Run("Stats", func(t *testing.T) {
			b.CheckWrongTypes(t, nothing, func() error { _, err := g.Stats(ctx, "default"); return err },
				k("ready:default", "list", roleReady), k("delayed", "zset", roleDelayed), k("inflight", "zset", roleInflight),
				k("dead", "zset", roleDead), k("paused", "set", rolePaused))
		})
		t.Run("extend", func(t *testing.T) {
			b.CheckWrongTypes(t, func() { zadd(t, b, "inflight", far, "x:tok") },
				func() error { _, err := g.ExtendForTest(ctx, time.Minute, [2]string{"x", "tok"}); return err },
				k("inflight", "zset", roleInflight))
		})
	})
}

// A value the scripts parse that someone else wrote (a task's packed
// fields, its failed attempts) makes the call fail with a *ria.KeyError
// matching ria.ErrCorrupt, naming the key and the field, and change
// nothing; except for promotion and recovery, which send such a task to
// the dead letters (TestGroup_corruptPromotedOrRecovered).
func TestGroup_corruptValues(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		check := func(name, field string, setup func(), call func() error) {
			t.Helper()
			b.Flush()
			setup()
			before := b.Snapshot()
			err := call()
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, name) {
				assert.ErrorIs(t, err, ria.ErrCorrupt, name)
				assert.Equal(t, key(b, "tasks"), kerr.Key, name)
				assert.Equal(t, roleTasks+" field "+field, kerr.Role, name)
			}
			assert.Equal(t, before, b.Snapshot(), "%s: nothing changed", name)
		}
		garbage := func(id string) {
			require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), id, "not a task").Err())
		}
		check("Requeue", "d", func() { garbage("d"); zadd(t, b, "dead", 1, "d") },
			func() error { return g.Requeue(ctx, "d") })
		check("release", "l", func() { garbage("l"); zadd(t, b, "inflight", far, "l:tok") },
			func() error { return g.SettleForTest(ctx, "w", nil, queue.Outcome{ID: "l", Token: "tok", Kind: 'l'}) })

		// A take pops a ready task before it can read it: it hands the
		// corrupt task out, and the worker sends it to the dead letters
		// unrun (see TestWorker_corruptTask).
		b.Flush()
		garbage("c")
		require.NoError(t, b.Client.RPush(ctx, key(b, "ready:default"), "c").Err())
		_, _, err := g.TakeRuns(ctx, "w", []string{"default"}, 1, time.Minute, queue.Nonce())
		assert.ErrorContains(t, err, `corrupt task "c"`)
		assert.False(t, errors.Is(err, queue.ErrNotFound))
	})
}

// A due delayed task, or a task whose lease expired, whose stored fields
// do not parse goes to the dead letters unrun, saying why, with its fields
// kept for a look; the others of the batch are promoted or recovered as
// usual. (It made every take of the group fail, and so stopped every
// worker.)
func TestGroup_corruptPromotedOrRecovered(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := newGroup(t, b, b.Client)
		require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), "p", "not a task").Err())
		zadd(t, b, "delayed", 1, "p")
		put(t, b, "ok", "default", 5)
		zadd(t, b, "delayed", 2, "ok")
		n, err := g.Promote(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		assert.Equal(t, []string{"ok"}, readyIDs(t, b, "default"))

		put(t, b, "x", "default", 5)
		require.NoError(t, b.Client.HSet(ctx, key(b, "tasks"), "x:a", "many").Err())
		zadd(t, b, "inflight", 1, "x:tok")
		n, err = g.Recover(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)

		dead, err := g.Dead(ctx, 0, 10)
		require.NoError(t, err)
		errs := map[string]string{}
		for _, d := range dead {
			errs[d.ID] = d.Error
		}
		assert.Equal(t, map[string]string{
			"p": `queue: corrupt task: field p holds "not a task", want a packed task`,
			"x": `lease expired; queue: corrupt task: field x:a holds "many", want an integer from 0 to 2^53`,
		}, errs)
		assert.Equal(t, "not a task", b.Client.HGet(ctx, key(b, "tasks"), "p").Val(), "kept as it was, for a look")
		s := stats(t, g)
		assert.Equal(t, [3]int64{0, 0, 2}, [3]int64{s.Delayed, s.InFlight, s.Dead}, "delayed, in flight, dead")
	})
}
