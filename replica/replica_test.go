package replica_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/roundtrip"
	"github.com/ria-go/ria/replica"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// replicated starts a primary with a real replica for t.
func replicated(t *testing.T, args ...string) (primary *redis.Client, cnt *roundtrip.Counter, replicaSrv *redistest.Server, replicaClient *redis.Client) {
	t.Helper()
	redistest.New(t, redistest.Standalone) // fails or skips as the harness does without redis-server
	p, r := redistest.StartReplicated(t, args...)
	primary = redis.NewClient(&redis.Options{Addr: p.Addr()})
	cnt = &roundtrip.Counter{}
	primary.AddHook(cnt)
	replicaClient = redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = primary.Close(); _ = replicaClient.Close() })
	return primary, cnt, r, replicaClient
}

// After Wait, the replica holds every write the primary acknowledged
// before it, read straight from the replica with no retry.
func TestWait_replicaHoldsTheWrite(t *testing.T) {
	ctx := context.Background()
	primary, cnt, _, rc := replicated(t)
	w, err := replica.New(primary, replica.WithTimeout(2*time.Second))
	require.NoError(t, err)
	_, err = w.Wait(ctx, "") // scripts and connections warm
	require.NoError(t, err)
	for i := range 200 {
		key := fmt.Sprintf("k%d", i)
		require.NoError(t, primary.Set(ctx, key, i, 0).Err())
		var ack replica.Ack
		rt, _ := cnt.Delta(func() { ack, err = w.Wait(ctx, "") })
		require.NoError(t, err)
		assert.Equal(t, 1, ack.Replicas)
		assert.EqualValues(t, 1, rt, "round trips per Wait")
		got, err := rc.Get(ctx, key).Int()
		require.NoError(t, err, "replica lacks %s after Wait", key)
		require.Equal(t, i, got)
	}
}

// With the replica down, Wait returns ErrTimeout after its timeout, also
// when the timeout is longer than the client's ReadTimeout (two round
// trips on one connection then).
func TestWait_replicaDown(t *testing.T) {
	ctx := context.Background()
	primary, cnt, r, _ := replicated(t)
	r.Kill()
	for _, d := range []time.Duration{50 * time.Millisecond, 600 * time.Millisecond} {
		c := redis.NewClient(&redis.Options{Addr: primary.Options().Addr, ReadTimeout: 500 * time.Millisecond})
		c.AddHook(cnt)
		w, err := replica.New(c, replica.WithTimeout(d))
		require.NoError(t, err)
		var ack replica.Ack
		start := time.Now()
		rt, _ := cnt.Delta(func() { ack, err = w.Wait(ctx, "") })
		require.ErrorIs(t, err, replica.ErrTimeout)
		assert.Contains(t, err.Error(), "0 of 1 replicas")
		assert.Equal(t, 0, ack.Replicas)
		assert.GreaterOrEqual(t, time.Since(start), d, "WAIT returned before its timeout")
		if d < 500*time.Millisecond {
			assert.EqualValues(t, 1, rt)
		} else {
			assert.EqualValues(t, 2, rt, "a wait longer than ReadTimeout: marker, then WAIT")
		}
		_ = c.Close()
	}
}

// WithFsync on a server without WAITAOF runs the book's check on the
// replica clients; without them it says what is missing. On a server with
// WAITAOF, WAITAOF answers.
func TestWait_fsync(t *testing.T) {
	ctx := context.Background()
	primary, _, _, rc := replicated(t, "--appendonly", "yes")
	info, err := primary.Do(ctx, "COMMAND", "INFO", "WAITAOF").Slice()
	require.NoError(t, err)
	hasWaitAOF := len(info) == 1 && info[0] != nil

	w, err := replica.New(primary, replica.WithFsync())
	require.NoError(t, err)
	ack, err := w.Wait(ctx, "")
	if !hasWaitAOF {
		require.ErrorIs(t, err, replica.ErrNoFsyncCheck)
		w, err = replica.New(primary, replica.WithFsync(rc), replica.WithTimeout(5*time.Second))
		require.NoError(t, err)
		require.NoError(t, primary.Set(ctx, "durable", "yes", 0).Err())
		ack, err = w.Wait(ctx, "")
	}
	require.NoError(t, err)
	assert.Equal(t, 1, ack.ReplicasFsynced)
	if hasWaitAOF {
		assert.True(t, ack.LocalFsynced)
	} else {
		v, err := rc.Get(ctx, "durable").Result()
		require.NoError(t, err)
		assert.Equal(t, "yes", v)
	}
}

// On every backend of the harness (none has replicas): Wait costs one
// round trip, writes its marker in the key's slot (a Cluster would answer
// MOVED otherwise) and reports the missing replica as ErrTimeout.
func TestWait_backends(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		w, err := replica.New(b.Client, replica.WithPrefix(b.Prefix), replica.WithTimeout(10*time.Millisecond))
		require.NoError(t, err)
		for _, key := range []string{"user:1", "{order}:7", "x{y}z", "plain"} {
			_, _ = w.Wait(ctx, key) // warm the cluster's slot map and the pool
			var ack replica.Ack
			rt, _ := b.Count.Delta(func() { ack, err = w.Wait(ctx, key) })
			require.ErrorIs(t, err, replica.ErrTimeout, key)
			assert.Equal(t, 0, ack.Replicas)
			assert.EqualValues(t, 1, rt, "round trips of Wait(%q)", key)
		}
		markers := 0
		for _, k := range b.Keys(b.Prefix + "*") {
			require.Contains(t, k, ":sync:")
			ttl, err := b.Client.PTTL(ctx, k).Result()
			require.NoError(t, err)
			assert.Greater(t, ttl, time.Duration(0), "marker %s expires", k)
			markers++
		}
		assert.Equal(t, 8, markers)
	})
}

func TestNew_badInput(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for name, tc := range map[string]struct {
		c    redis.UniversalClient
		opts []replica.Option
		want string
	}{
		"nil client":     {nil, nil, "nil client"},
		"ring":           {redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}}), nil, "Ring"},
		"zero replicas":  {rdb, []replica.Option{replica.WithReplicas(0)}, "replicas 0"},
		"many replicas":  {rdb, []replica.Option{replica.WithReplicas(replica.MaxReplicas + 1)}, "replicas 1001"},
		"zero timeout":   {rdb, []replica.Option{replica.WithTimeout(0)}, "timeout 0s"},
		"brace prefix":   {rdb, []replica.Option{replica.WithPrefix("a{")}, "prefix"},
		"nil fsync":      {rdb, []replica.Option{replica.WithFsync(nil)}, "nil"},
		"too few fsyncs": {rdb, []replica.Option{replica.WithReplicas(2), replica.WithFsync(rdb)}, "1 fsync replica clients for 2"},
		"same fsync":     {rdb, []replica.Option{replica.WithReplicas(2), replica.WithFsync(rdb, rdb)}, "fsync replica client 1: the same as client 0"},
		"long timeout":   {rdb, []replica.Option{replica.WithTimeout(replica.MaxTimeout + 1)}, "timeout 24h0m0.000000001s"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := replica.New(tc.c, tc.opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "replica: new: "), err.Error())
		})
	}
}

func TestWait_clusterBadKeys(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer c.Close()
	w, err := replica.New(c)
	require.NoError(t, err)
	for _, key := range []string{"", "a}b", "a{}b"} {
		_, err := w.Wait(context.Background(), key)
		require.Error(t, err)
		assert.False(t, errors.Is(err, replica.ErrTimeout))
	}
}

// A lost reply: go-redis re-sends marker and WAIT, and the answer is the
// same as without the fault.
func TestWait_lostReply(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		c, _, f := b.FaultyClient()
		w, err := replica.New(c, replica.WithPrefix(b.Prefix), replica.WithTimeout(10*time.Millisecond))
		require.NoError(t, err)
		const calls = 20
		disagreements := 0
		for range calls {
			f.LoseReply(1, redistest.Commands("wait"))
			ack, err := w.Wait(ctx, "k")
			if !errors.Is(err, replica.ErrTimeout) || ack.Replicas != 0 {
				disagreements++
				t.Logf("answer after a lost reply: %+v, %v", ack, err)
			}
		}
		require.EqualValues(t, calls, f.Lost(), "every call lost a reply")
		t.Logf("fault harness: replica Wait: calls=%d lost=%d disagreements=%d", calls, f.Lost(), disagreements)
		assert.Zero(t, disagreements)
	})
}

// The book's fsync check polls every replica client, not one after the
// other: a replica client that is down does not keep the check from
// counting a good one listed after it, and Wait returns as soon as enough
// passed.
func TestWait_fsyncBookCheckDownClientFirst(t *testing.T) {
	ctx := context.Background()
	primary, _, _, rc := replicated(t, "--appendonly", "yes")
	dead := redistest.StartServer(t)
	dead.Kill()
	down := redis.NewClient(&redis.Options{Addr: dead.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = down.Close() })

	w, err := replica.New(primary, replica.WithReplicas(1), replica.WithFsync(down, rc), replica.WithTimeout(10*time.Second))
	require.NoError(t, err)
	replica.UseBookCheck(w)
	require.NoError(t, primary.Set(ctx, "durable", "yes", 0).Err())
	ack, err := w.Wait(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, 1, ack.Replicas)
	assert.Equal(t, 1, ack.ReplicasFsynced)

	// Only the down one: the timeout, with the count.
	w, err = replica.New(primary, replica.WithFsync(down), replica.WithTimeout(50*time.Millisecond))
	require.NoError(t, err)
	replica.UseBookCheck(w)
	ack, err = w.Wait(ctx, "")
	require.ErrorIs(t, err, replica.ErrTimeout)
	assert.Contains(t, err.Error(), "0 of 1 replicas fsynced")
	assert.Equal(t, 0, ack.ReplicasFsynced)
}

// A lost reply on the two-round-trip path (timeout longer than ReadTimeout
// - 100ms: SET, then a lone WAIT, on one *redis.Conn, which go-redis does
// not re-send on): Wait sends marker and WAIT again itself, and answers as
// without the fault (it failed with "Conn is in a bad state").
func TestWait_lostReplyTwoRoundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		c, _, f := b.FaultyClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 200 * time.Millisecond })
		w, err := replica.New(c, replica.WithPrefix(b.Prefix), replica.WithTimeout(250*time.Millisecond))
		require.NoError(t, err)
		// Without a fault: no replica, ErrTimeout.
		ack, err := w.Wait(ctx, "k")
		require.ErrorIs(t, err, replica.ErrTimeout)
		require.Equal(t, 0, ack.Replicas)

		f.LoseReply(1, redistest.Commands("wait"))
		ack, err = w.Wait(ctx, "k")
		require.EqualValues(t, 1, f.Lost())
		assert.ErrorIs(t, err, replica.ErrTimeout, "same answer as without the lost reply; got %v", err)
		assert.Equal(t, 0, ack.Replicas)
	})
}

// A Wait whose ctx ends while another Wait's WAITAOF probe hangs returns
// its ctx error (it waited for the other's probe, holding a mutex).
func TestWait_probeHonoursContext(t *testing.T) {
	redistest.New(t, redistest.Standalone)
	p, r := redistest.StartReplicated(t)
	primary := redis.NewClient(&redis.Options{Addr: p.Addr()})
	rc := redis.NewClient(&redis.Options{Addr: r.Addr()})
	t.Cleanup(func() { _ = primary.Close(); _ = rc.Close() })
	gate := redistest.NewGate(func(cmds []redis.Cmder) bool {
		return len(cmds) == 1 && strings.EqualFold(cmds[0].Name(), "command")
	})
	primary.AddHook(gate)
	w, err := replica.New(primary, replica.WithFsync(rc), replica.WithTimeout(time.Second))
	require.NoError(t, err)

	hold := gate.Arm()
	first := make(chan error, 1)
	go func() { _, err := w.Wait(context.Background(), ""); first <- err }()
	hold.Entered() // the first Wait is inside its probe, holding the mutex
	var once sync.Once
	release := func() { once.Do(hold.Release) }
	defer func() { <-first }()
	defer release()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	second := make(chan error, 1)
	go func() { _, err := w.Wait(ctx, ""); second <- err }()
	select {
	case err := <-second:
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(3 * time.Second): // bound: the second Wait's ctx ended 2.95 s ago
		t.Errorf("Wait with a 50ms ctx still blocked after 3s: it waits for another call's WAITAOF probe, ignoring its ctx")
		release()
		<-second
	}
}

// When the caller's ctx ends during the book's fsync check, Wait returns
// the ctx error, not ErrTimeout "within" a timeout that did not pass.
func TestWait_bookCheckCallerContext(t *testing.T) {
	ctx := context.Background()
	// No appendonly: the replica never passes the check (no AOF, no fsync).
	primary, _, _, rc := replicated(t)
	w, err := replica.New(primary, replica.WithFsync(rc), replica.WithTimeout(10*time.Second))
	require.NoError(t, err)
	replica.UseBookCheck(w)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = w.Wait(cctx, "")
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the caller's ctx ended; got %v", err)
	assert.NotErrorIs(t, err, replica.ErrTimeout, "the Waiter's 10s timeout did not pass; got %v", err)
}

// During a slot migration (source MIGRATING, target IMPORTING), the key's
// writes may be on either master and a new marker cannot be written on the
// source (it answers ASK): Wait says so with ErrMigrating, naming both
// nodes (it returned the bare ASK reply), and answers as usual once the
// slot is stable again.
func TestWait_clusterSlotMigrating(t *testing.T) {
	b := redistest.New(t, redistest.Cluster)
	ctx := context.Background()
	cc := b.Client.(*redis.ClusterClient)
	key := b.Prefix + "order"
	require.NoError(t, cc.Ping(ctx).Err())
	slot, err := cc.ClusterKeySlot(ctx, key).Result()
	require.NoError(t, err)
	source, err := cc.MasterForKey(ctx, key)
	require.NoError(t, err)
	var target *redis.Client
	var mu sync.Mutex
	require.NoError(t, cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		if n.Options().Addr != source.Options().Addr && target == nil {
			target = n
		}
		return nil
	}))
	require.NotNil(t, target)
	srcID, err := source.Do(ctx, "CLUSTER", "MYID").Text()
	require.NoError(t, err)
	dstID, err := target.Do(ctx, "CLUSTER", "MYID").Text()
	require.NoError(t, err)
	require.NoError(t, target.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err())
	require.NoError(t, source.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err())
	t.Cleanup(func() {
		// Drop what landed on the target, then make the slot stable again.
		ks, _ := target.Do(ctx, "CLUSTER", "GETKEYSINSLOT", slot, 1000).StringSlice()
		conn := target.Conn()
		for _, k := range ks {
			_, _ = conn.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.Do(ctx, "ASKING")
				p.Del(ctx, k)
				return nil
			})
		}
		_ = conn.Close()
		_ = source.Do(ctx, "CLUSTER", "SETSLOT", slot, "STABLE").Err()
		_ = target.Do(ctx, "CLUSTER", "SETSLOT", slot, "STABLE").Err()
	})

	// The caller's write works during the migration (go-redis follows ASK).
	require.NoError(t, cc.Set(ctx, key, "paid", 0).Err())

	w, err := replica.New(cc, replica.WithPrefix(b.Prefix), replica.WithTimeout(10*time.Millisecond))
	require.NoError(t, err)
	_, err = w.Wait(ctx, key)
	require.ErrorIs(t, err, replica.ErrMigrating)
	assert.Contains(t, err.Error(), source.Options().Addr)
	assert.Contains(t, err.Error(), target.Options().Addr)

	require.NoError(t, source.Do(ctx, "CLUSTER", "SETSLOT", slot, "STABLE").Err())
	require.NoError(t, target.Do(ctx, "CLUSTER", "SETSLOT", slot, "STABLE").Err())
	_, err = w.Wait(ctx, key)
	assert.ErrorIs(t, err, replica.ErrTimeout, "no replicas in the harness cluster")
}

// A timeout above MaxTimeout is refused (near math.MaxInt64, timeout +
// 100ms overflowed: the wait "fit" in ReadTimeout and WAIT was read with
// it, failing with an i/o timeout); MaxTimeout itself is honoured: Wait
// blocks until its ctx ends.
func TestWait_hugeTimeout(t *testing.T) {
	b := redistest.New(t, redistest.Standalone) // no replicas: WAIT 1 never succeeds
	c, _ := b.NewClient(func(o *redis.UniversalOptions) { o.ReadTimeout = 200 * time.Millisecond })
	_, err := replica.New(c, replica.WithTimeout(time.Duration(math.MaxInt64)))
	require.ErrorContains(t, err, "must be 1ms to 24h0m0s")
	w, err := replica.New(c, replica.WithPrefix(b.Prefix), replica.WithTimeout(replica.MaxTimeout))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err = w.Wait(ctx, "")
	el := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.GreaterOrEqual(t, el, 1500*time.Millisecond, "Wait gave up before its ctx ended: %v", err)
	assert.False(t, strings.Contains(err.Error(), "i/o timeout"), "WAIT read with ReadTimeout: %v", err)
}

// A Cluster client whose slot map is stale (the key's slot moved) gets
// MOVED for the marker: Wait goes on at the master the reply names (it
// returned the bare MOVED reply).
func TestWait_clusterMoved(t *testing.T) {
	b := redistest.New(t, redistest.Cluster)
	ctx := context.Background()
	cc := b.Client.(*redis.ClusterClient)
	shards, err := cc.ClusterShards(ctx).Result()
	require.NoError(t, err)
	var slots []redis.ClusterSlot // the map, as CLUSTER SLOTS would give it
	for _, sh := range shards {
		for _, n := range sh.Nodes {
			if n.Role != "master" {
				continue
			}
			for _, r := range sh.Slots {
				slots = append(slots, redis.ClusterSlot{Start: int(r.Start), End: int(r.End),
					Nodes: []redis.ClusterNode{{Addr: net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))}}})
			}
		}
	}
	require.GreaterOrEqual(t, len(slots), 2)
	// The first map swaps the nodes of the first two ranges.
	stale := slices.Clone(slots)
	stale[0].Nodes, stale[1].Nodes = slots[1].Nodes, slots[0].Nodes
	var loads atomic.Int32
	var addrs []string
	for _, s := range slots {
		addrs = append(addrs, s.Nodes[0].Addr)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs,
		ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) {
			if loads.Add(1) == 1 {
				return stale, nil
			}
			return slots, nil
		}})
	t.Cleanup(func() { _ = c.Close() })
	key := b.Prefix + "moved"
	for i := 0; ; i++ { // a key in the first range
		k := fmt.Sprintf("%s%d", key, i)
		s, err := cc.ClusterKeySlot(ctx, k).Result()
		require.NoError(t, err)
		if s >= int64(slots[0].Start) && s <= int64(slots[0].End) {
			key = k
			break
		}
	}
	w, err := replica.New(c, replica.WithPrefix(b.Prefix), replica.WithTimeout(10*time.Millisecond))
	require.NoError(t, err)
	ack, err := w.Wait(ctx, key)
	assert.ErrorIs(t, err, replica.ErrTimeout, "no replicas in the harness cluster")
	assert.Equal(t, 0, ack.Replicas)
	assert.EqualValues(t, 1, cc.Exists(ctx, b.Keys(b.Prefix+"{"+key+"}:sync:*")...).Val(), "the marker, on the key's master")
}
