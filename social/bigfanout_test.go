package social_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/social"
)

// addFollowers writes the keys of count followers f<i> of author straight
// into Redis (as CreateUser and Follow would leave them), with a home
// timeline already full (capacity entries older than any post) for every
// 1000th of them: 1000 followers per script on a single server, pipelined
// on a Cluster (their keys are in many slots).
func addFollowers(t testing.TB, b *redistest.Backend, author string, count, capacity int) []string {
	t.Helper()
	ctx := t.Context()
	now := time.Now().UnixMilli()
	fs := make([]string, count)
	for i := range fs {
		fs[i] = fmt.Sprint("f", i)
	}
	pre := b.Prefix + "social:{"
	// Remove them when the test ends: the tests after it look at every
	// key of the server (Snapshot, Flush), which would then take minutes.
	t.Cleanup(func() {
		ctx := context.Background()
		for start := 0; start < count; start += 1000 {
			end := min(start+1000, count)
			if b.Kind != redistest.Cluster {
				if err := b.Client.Eval(ctx, delFollowersLua, nil, pre, start, end).Err(); err != nil {
					t.Error(err)
				}
				continue
			}
			_, err := b.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i := start; i < end; i++ {
					p.Del(ctx, key(b, fs[i], "user"), key(b, fs[i], "following"), key(b, fs[i], "home"))
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}
	})
	for start := 0; start < count; start += 1000 {
		end := min(start+1000, count)
		if b.Kind != redistest.Cluster {
			err := b.Client.Eval(ctx, addFollowersLua, nil, pre, author, start, end, now, capacity).Err()
			require.NoError(t, err)
			continue
		}
		_, err := b.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := start; i < end; i++ {
				f := fs[i]
				p.HSet(ctx, key(b, f, "user"), "login", f, "name", f, "followers", 0, "following", 1, "posts", 0,
					"seq", 0, "fseq", 0, "signup", now)
				p.ZAdd(ctx, key(b, f, "following"), redis.Z{Score: float64(now), Member: author})
				p.ZAdd(ctx, key(b, author, "followers"), redis.Z{Score: float64(i + 1), Member: f})
				if i%1000 == 0 {
					for k := range capacity {
						p.ZAdd(ctx, key(b, f, "home"), redis.Z{Score: float64(k + 1), Member: "old:" + strconv.Itoa(k+1)})
					}
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.NoError(t, b.Client.HSet(ctx, key(b, author, "user"), "followers", count, "fseq", count).Err())
	return fs
}

// addFollowersLua is the single-server form of addFollowers' loop (test
// set-up only: it writes keys it does not declare, which a Cluster refuses).
const addFollowersLua = `
local pre, author, now, cap = ARGV[1], ARGV[2], ARGV[5], tonumber(ARGV[6])
for i = tonumber(ARGV[3]), tonumber(ARGV[4]) - 1 do
  local f = 'f' .. i
  redis.call('HSET', pre .. f .. '}:user', 'login', f, 'name', f, 'followers', 0, 'following', 1, 'posts', 0,
    'seq', 0, 'fseq', 0, 'signup', now)
  redis.call('ZADD', pre .. f .. '}:following', now, author)
  redis.call('ZADD', pre .. author .. '}:followers', i + 1, f)
  if i % 1000 == 0 then
    for k = 1, cap do redis.call('ZADD', pre .. f .. '}:home', k, 'old:' .. k) end
  end
end
return 1`

// delFollowersLua deletes the keys addFollowersLua wrote for f<i>.
const delFollowersLua = `
local pre = ARGV[1]
for i = tonumber(ARGV[2]), tonumber(ARGV[3]) - 1 do
  local f = pre .. 'f' .. i .. '}:'
  redis.call('DEL', f .. 'user', f .. 'following', f .. 'home')
end
return 1`

// fedCount returns how many of fs have id in their home timeline, and
// checks that the timelines that were full (every 1000th) are at their cap.
func fedCount(t *testing.T, b *redistest.Backend, fs []string, id string, capacity int) int {
	t.Helper()
	ctx := t.Context()
	fed := 0
	for start := 0; start < len(fs); start += 2000 {
		part := fs[start:min(start+2000, len(fs))]
		scores := make([]*redis.FloatCmd, len(part))
		var cards []*redis.IntCmd
		_, err := b.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, f := range part {
				scores[i] = p.ZScore(ctx, key(b, f, "home"), id)
				if (start+i)%1000 == 0 {
					cards = append(cards, p.ZCard(ctx, key(b, f, "home")))
				}
			}
			return nil
		})
		if err != nil && err != redis.Nil {
			require.NoError(t, err)
		}
		for i := range part {
			if scores[i].Err() == nil {
				fed++
			}
		}
		for _, c := range cards {
			assert.EqualValues(t, capacity, c.Val(), "a full timeline stays at its cap")
		}
	}
	return fed
}

// A user with many followers (100,000 on a real server) posts: Post returns
// after the first batch, the deferred tasks (one per batch) feed every
// follower once, and full timelines stay at their cap.
func TestNetwork_bigFanout(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		count, batch := 100_000, 1000
		switch {
		case b.Mini != nil:
			count, batch = 1_000, 100 // miniredis: small data
		case b.Kind == redistest.Cluster:
			count = 10_000 // set up by pipelines: the single server has the 100,000
		}
		const capacity = 5
		n, g := newNet(t, b, b.Client, social.WithFanoutBatch(batch), social.WithTimelineCap(capacity))
		author := mustUser(t, n, "author")
		fs := addFollowers(t, b, author, count, capacity)
		mustPost(t, n, author, "warm") // caches the scripts
		drain(t, n, g)

		start := time.Now()
		st := mustPost(t, n, author, "to everyone")
		took := time.Since(start)
		// No worker runs yet: the first batch, in follow order, and no more.
		assert.Equal(t, batch, fedCount(t, b, fs[:2*batch], st.ID, capacity), "fed before Post returned: the first batch")
		assert.Equal(t, []string{st.ID}, page(t, n, fs[batch-1], social.Home, 1))
		assert.NotEqual(t, []string{st.ID}, page(t, n, fs[batch], social.Home, 1))
		t.Logf("Post with %d followers returned in %v", count, took)

		start = time.Now()
		drain(t, n, g)
		t.Logf("deferred fan-out to %d followers: %v", count-batch, time.Since(start))
		assert.Equal(t, count, fedCount(t, b, fs, st.ID, capacity), "every follower fed")
		for i := 0; i < count; i += 1000 {
			assert.Equal(t, st.ID, page(t, n, fs[i], social.Home, 1)[0], "a full timeline keeps the newest")
		}
	})
}

// Delete during fan-out: whichever order the fan-out and clean passes run
// in, no follower keeps the deleted status once both have finished.
func TestNetwork_deleteDuringFanout(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithFanoutBatch(3))
		author := mustUser(t, n, "author")
		var fs []string
		for i := range 20 {
			fs = append(fs, mustUser(t, n, fmt.Sprint("f", i)))
			mustFollow(t, n, fs[i], author)
		}
		keep := mustPost(t, n, author, "keep")
		// Deleted before any deferred pass ran.
		st := mustPost(t, n, author, "gone before the passes")
		require.NoError(t, n.Delete(ctx, author, st.ID))
		drain(t, n, g)
		// Deleted while workers run the passes.
		w, err := queue.NewWorker(g, queue.Queues(social.DefaultQueue), queue.Concurrency(4))
		require.NoError(t, err)
		require.NoError(t, n.Handle(w))
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(runCtx) }()
		var deleted []string
		for i := range 5 {
			st := mustPost(t, n, author, fmt.Sprint("gone during the passes ", i))
			require.NoError(t, n.Delete(ctx, author, st.ID))
			deleted = append(deleted, st.ID)
		}
		stop()
		require.NoError(t, <-done)
		drain(t, n, g)
		for _, f := range fs {
			ids, err := b.Client.ZRange(ctx, key(b, f, "home"), 0, -1).Result()
			require.NoError(t, err)
			assert.Equal(t, []string{keep.ID}, ids, "%s keeps only the live status", f)
		}
		_ = deleted
	})
}

// A deferred fan-out whose worker is stopped midway (its context ends
// while a batch's pipeline is on the wire, with no grace) is completed by
// another worker: at least once and idempotent.
func TestNetwork_fanoutWorkerStopped(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		rdb, _, f := b.FaultyClient()
		n1, g1 := newNet(t, b, rdb, social.WithFanoutBatch(4))
		n, g := newNet(t, b, b.Client, social.WithFanoutBatch(4))
		author := mustUser(t, n, "author")
		var fs []string
		for i := range 12 {
			fs = append(fs, mustUser(t, n, fmt.Sprint("f", i)))
			mustFollow(t, n, fs[i], author)
		}
		mustPost(t, n, author, "warm")
		drain(t, n, g)
		st := mustPost(t, n, author, "to everyone") // 4 fed, 2 deferred passes

		w1, err := queue.NewWorker(g1, queue.Queues(social.DefaultQueue), queue.Grace(0))
		require.NoError(t, err)
		require.NoError(t, n1.Handle(w1))
		ctx1, kill := context.WithCancel(t.Context())
		var killed atomic.Bool
		deliver := scriptOn(4, ":home", ":following", ":gone")
		if b.Kind != redistest.Cluster {
			deliver = feedOn("") // one server: a deferred batch's feed.lua call
		}
		f.LoseReply(1, func(cmd []string) bool { // the first deliver of w1 runs, then w1 stops
			if deliver(cmd) {
				killed.Store(true)
				kill()
				return true
			}
			return false
		})
		done := make(chan error, 1)
		go func() { done <- w1.Run(ctx1) }()
		require.NoError(t, <-done)
		require.True(t, killed.Load(), "w1 was stopped during a pass")
		drain(t, n, g) // another worker completes it
		for _, fl := range fs {
			assert.Equal(t, []string{st.ID, "author:1"}, page(t, n, fl, social.Home, 10), fl)
		}
	})
}

// beforeFeed is a go-redis hook that runs fn once, just before the first
// pipeline that feeds a deferred batch (feed.lua on one server, deliver.lua
// elsewhere) is sent: after the batch's followers were read.
type beforeFeed struct {
	fed func([]string) bool
	fn  func()
	ran atomic.Bool
}

func (h *beforeFeed) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *beforeFeed) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *beforeFeed) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			args := make([]string, len(c.Args()))
			for i, a := range c.Args() {
				args[i] = fmt.Sprint(a)
			}
			if h.fed(args) && h.ran.CompareAndSwap(false, true) {
				h.fn()
				break
			}
		}
		return next(ctx, cmds)
	}
}

// A follower who unfollows after a deferred batch was read, before it is
// fed, is not fed (the feed reads the followers again, or checks the
// follower's side), and the others of the batch are.
func TestNetwork_unfollowDuringBatch(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		reader, _ := newNet(t, b, b.Client)
		author := mustUser(t, reader, "author")
		var fs []string
		for i := range 6 {
			fs = append(fs, mustUser(t, reader, fmt.Sprint("f", i)))
			mustFollow(t, reader, fs[i], author)
		}
		rdb, _ := b.NewClient()
		t.Cleanup(func() { _ = rdb.Close() })
		fed := scriptOn(4, ":home", ":following", ":gone")
		if b.Kind != redistest.Cluster {
			fed = feedOn("")
		}
		h := &beforeFeed{fed: fed, fn: func() {
			gone, err := reader.Unfollow(ctx, fs[3], author)
			require.NoError(t, err)
			require.True(t, gone)
		}}
		rdb.AddHook(h)
		n, g := newNet(t, b, rdb, social.WithFanoutBatch(6), social.WithFirstPass(0))
		st := mustPost(t, n, author, "after the read") // every follower deferred: one batch
		drain(t, n, g)
		require.True(t, h.ran.Load(), "the unfollow ran between the batch's read and its feed")
		for i, f := range fs {
			home := page(t, reader, f, social.Home, 10)
			if i == 3 {
				assert.Empty(t, home, "the follower who unfollowed is not fed")
			} else {
				assert.Equal(t, []string{st.ID}, home, f)
			}
		}
	})
}

// On a Cluster a fan-out's deliver.lua does not read the status HASH (it
// lives in another slot): only the follower's tombstone stops a feed that
// reaches the follower after the delete's clean. Tombstones are kept for
// the tombstone TTL, however many: a later delete cleaned meanwhile (with
// a timeline cap of 1) does not evict it, and the held feed skips the
// follower, instead of putting the deleted status back into its home
// timeline, where no clean would ever remove it.
func TestNetwork_deleteDuringFanout_tombstoneOutlivesLaterDeletes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		if b.Kind != redistest.Cluster {
			t.Skip("feed.lua on one server reads the status HASH")
		}
		ctx := t.Context()
		const capacity = 1
		n, g := newNet(t, b, b.Client, social.WithTimelineCap(capacity))
		a, f := mustUser(t, n, "a"), mustUser(t, n, "f")
		mustFollow(t, n, f, a)
		mustPost(t, n, a, "warm") // caches the scripts
		drain(t, n, g)

		homeKey := key(b, f, "home")
		gate := redistest.NewGate(func(cmds []redis.Cmder) bool {
			for _, c := range cmds {
				for _, arg := range c.Args() {
					if s, ok := arg.(string); ok && s == homeKey && strings.HasPrefix(fmt.Sprint(c.Args()[0]), "eval") {
						return true
					}
				}
			}
			return false
		})
		rdb, _ := b.NewClient()
		rdb.AddHook(gate)
		held, _ := newNet(t, b, rdb, social.WithTimelineCap(capacity))
		hold := gate.Arm()
		var st social.Status
		posted := make(chan error, 1)
		go func() {
			var err error
			st, err = held.Post(ctx, a, "deleted soon")
			posted <- err
		}()
		hold.Entered() // the status is stored; its feed of f is on its way
		last, err := b.Client.ZRevRange(ctx, key(b, a, "profile"), 0, 0).Result()
		require.NoError(t, err)
		require.Len(t, last, 1)
		s := last[0]
		require.NoError(t, n.Delete(ctx, a, s))
		drain(t, n, g) // the clean leaves a tombstone of s at f
		// More statuses deleted and cleaned: their tombstones (more than
		// the cap) do not evict s's.
		for range 3 {
			other := mustPost(t, n, a, "another")
			drain(t, n, g)
			require.NoError(t, n.Delete(ctx, a, other.ID))
			drain(t, n, g)
		}
		hold.Release()
		require.NoError(t, <-posted)
		require.Equal(t, s, st.ID)

		home, err := b.Client.ZRange(ctx, homeKey, 0, -1).Result()
		require.NoError(t, err)
		assert.NotContains(t, home, s, "deleted status %s is back in f's home timeline, and no clean will remove it", s)
	})
}
