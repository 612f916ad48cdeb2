package lock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/lock"
)

// keepAliveModes are the two kinds of RWHold a keep-alive test runs on.
var keepAliveModes = []struct {
	name  string
	write bool
}{{"read", false}, {"write", true}}

// tryRW takes rw shared (write false) or exclusive for ttl, without waiting.
func tryRW(ctx context.Context, rw *lock.RWLock, ttl time.Duration, write bool) (*lock.RWHold, error) {
	if write {
		return rw.TryLock(ctx, ttl)
	}
	return rw.TryRLock(ctx, ttl)
}

// tokenCounter is a redis.Hook that counts, per string argument, the
// commands sent with it (a hold's token is an argument of every script
// call of that hold: its acquisition, extensions and release).
type tokenCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *tokenCounter) add(cmds ...redis.Cmder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	for _, cmd := range cmds {
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok {
				c.n[s]++
			}
		}
	}
}

// sent returns the number of commands sent so far carrying token.
func (c *tokenCounter) sent(token string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[token]
}

func (c *tokenCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *tokenCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd)
		return next(ctx, cmd)
	}
}

func (c *tokenCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.add(cmds...)
		return next(ctx, cmds)
	}
}

// KeepAlive keeps a read or write hold for several TTLs (each step lets
// half a TTL pass, then waits until the hold has been extended again);
// Release then cancels the context with context.Canceled (not ErrNotHeld).
func TestRWHold_KeepAlive(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, m := range keepAliveModes {
			t.Run(m.name, func(t *testing.T) {
				ctx := t.Context()
				rw := newLocker(b).RW("doc-" + m.name)
				// A third of it (the extension period) leaves a loaded
				// machine room; on real servers the steps wait real time.
				const ttl = time.Second
				h, err := tryRW(ctx, rw, ttl, m.write)
				require.NoError(t, err)
				held := h.KeepAlive(ctx)

				// 7 half-TTLs: without extensions the hold would have ended
				// after the second step.
				for i := range 7 {
					b.FastForward(ttl / 2)
					require.Eventually(t, func() bool {
						s, err := rw.State(ctx)
						return err == nil && s.TTL > ttl*3/4
					}, 10*time.Second, time.Millisecond, "extension after step %d", i)
				}
				require.NoError(t, held.Err(), "not cancelled while kept alive")
				s, err := rw.State(ctx)
				require.NoError(t, err)
				w, readers := rwHeld(t, b, rw.Name())
				if m.write {
					assert.True(t, s.Writer)
					assert.Zero(t, s.Readers)
					assert.Equal(t, h.Token(), w, "still the writer")
					assert.Empty(t, readers)
				} else {
					assert.False(t, s.Writer)
					assert.Equal(t, 1, s.Readers)
					assert.Empty(t, w)
					assert.Equal(t, []string{h.Token()}, readers, "still a reader")
				}
				_, err = rw.TryLock(ctx, ttl)
				assert.ErrorIs(t, err, lock.ErrNotObtained, "still held thanks to KeepAlive")

				require.NoError(t, h.Release(ctx), "the kept hold is released")
				assert.ErrorIs(t, held.Err(), context.Canceled, "Release cancels the holder's context")
				assert.Equal(t, context.Canceled, context.Cause(held), "the cause of a Release is context.Canceled")
				again := h.KeepAlive(ctx)
				assert.ErrorIs(t, again.Err(), context.Canceled, "KeepAlive after Release")
				assert.NotErrorIs(t, context.Cause(again), lock.ErrNotHeld, "KeepAlive after Release")
				s, err = rw.State(ctx)
				require.NoError(t, err)
				assert.Equal(t, lock.RWState{Fence: h.Fence()}, s, "free after Release")
			})
		}
	})
}

// KeepAlive cancels the context with cause ErrNotHeld when the hold is
// lost behind its back: the writer key taken over by another token, or
// the reader's entry deleted (another reader's left in place). The lost
// hold then touches nothing of the new holder's.
func TestRWHold_KeepAlive_lost(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, m := range keepAliveModes {
			t.Run(m.name, func(t *testing.T) {
				ctx := t.Context()
				name := "doc-" + m.name
				rw := newLocker(b).RW(name)
				const ttl = time.Second
				h, err := tryRW(ctx, rw, ttl, m.write)
				require.NoError(t, err)
				held := h.KeepAlive(ctx)
				require.NoError(t, held.Err())

				readersKey := rwKey(b, name, "readers")
				var thiefDeadline float64
				if m.write {
					require.NoError(t, b.Client.Set(ctx, rwKey(b, name, "writer"), "thief", time.Minute).Err())
				} else {
					now, err := b.Client.Time(ctx).Result()
					require.NoError(t, err)
					thiefDeadline = float64(now.Add(time.Minute).UnixMilli())
					require.NoError(t, b.Client.ZAdd(ctx, readersKey, redis.Z{Score: thiefDeadline, Member: "thief"}).Err())
					require.NoError(t, b.Client.PExpire(ctx, readersKey, time.Minute).Err())
					require.NoError(t, b.Client.ZRem(ctx, readersKey, h.Token()).Err())
				}
				select {
				case <-held.Done():
					assert.ErrorIs(t, context.Cause(held), lock.ErrNotHeld)
					assert.ErrorIs(t, held.Err(), context.Canceled)
				case <-time.After(10 * time.Second):
					t.Fatal("holder's context not cancelled after the hold was lost")
				}
				assert.ErrorIs(t, context.Cause(h.KeepAlive(ctx)), lock.ErrNotHeld, "KeepAlive after loss")
				assert.ErrorIs(t, h.Release(ctx), lock.ErrNotHeld)

				w, readers := rwHeld(t, b, name)
				if m.write {
					assert.Equal(t, "thief", w, "the new writer is left alone")
					assert.Empty(t, readers)
				} else {
					assert.Empty(t, w)
					assert.Equal(t, []string{"thief"}, readers, "the other reader is left alone")
					score, err := b.Client.ZScore(ctx, readersKey, "thief").Result()
					require.NoError(t, err)
					assert.Equal(t, thiefDeadline, score, "the other reader's deadline is untouched")
				}
			})
		}
	})
}

// After Release the keep-alive sends no more extensions, even when the
// hold's token is put back on the server by hand (so that an extension
// would succeed): while another hold's keep-alive, on the same client
// and with the same TTL, extends several times, the released hold's token
// is sent at most once more (an extension already under way when Release
// stopped the loop).
func TestRWHold_KeepAlive_releaseStops(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		for _, m := range keepAliveModes {
			t.Run(m.name, func(t *testing.T) {
				ctx := t.Context()
				rdb, _ := b.NewClient() // our own client: we may add a hook
				sent := &tokenCounter{}
				rdb.AddHook(sent)
				locker := must(lock.New(rdb, lock.WithPrefix(b.Prefix)))
				name := "doc-" + m.name
				rw := locker.RW(name)
				const ttl = time.Second
				h, err := tryRW(ctx, rw, ttl, m.write)
				require.NoError(t, err)
				// The extend script is now loaded on the hold's server: an
				// extension is one command (no NOSCRIPT then EVAL).
				require.NoError(t, h.Extend(ctx, ttl))
				base := sent.sent(h.Token())
				held := h.KeepAlive(ctx)
				require.Eventually(t, func() bool { return sent.sent(h.Token()) > base }, 10*time.Second, time.Millisecond,
					"the keep-alive extends")

				require.NoError(t, h.Release(ctx))
				assert.ErrorIs(t, held.Err(), context.Canceled)
				assert.Equal(t, context.Canceled, context.Cause(held))
				after := sent.sent(h.Token())
				// Put the hold back under its token (through another
				// client, whose commands are not counted).
				if m.write {
					require.NoError(t, b.Client.Set(ctx, rwKey(b, name, "writer"), h.Token(), time.Minute).Err())
				} else {
					now, err := b.Client.Time(ctx).Result()
					require.NoError(t, err)
					readersKey := rwKey(b, name, "readers")
					require.NoError(t, b.Client.ZAdd(ctx, readersKey,
						redis.Z{Score: float64(now.Add(time.Minute).UnixMilli()), Member: h.Token()}).Err())
					require.NoError(t, b.Client.PExpire(ctx, readersKey, time.Minute).Err())
				}

				// The pace: a hold kept alive by the same Locker with the
				// same TTL; 5 commands are at least 4 extensions, over 3
				// extension periods or more.
				pace, err := locker.RW("pace-"+m.name).TryRLock(ctx, ttl)
				require.NoError(t, err)
				paceBase := sent.sent(pace.Token())
				paced := pace.KeepAlive(ctx)
				require.Eventually(t, func() bool { return sent.sent(pace.Token()) >= paceBase+5 }, 20*time.Second, time.Millisecond,
					"the pace hold is extended")
				require.NoError(t, paced.Err())
				assert.LessOrEqual(t, sent.sent(h.Token()), after+1, "extensions after Release")
				require.NoError(t, pace.Release(ctx))
			})
		}
	})
}
