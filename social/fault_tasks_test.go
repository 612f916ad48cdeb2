package social_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// scriptOn matches a script call for a batch of targets of per keys each
// (deliver.lua: 4, clean.lua: 2) one of whose targets has keys ending
// with the suffixes, in order.
func scriptOn(per int, suffixes ...string) func([]string) bool {
	return func(cmd []string) bool {
		if !redistest.Scripts(cmd) || len(cmd) < 3 {
			return false
		}
		nkeys, err := strconv.Atoi(cmd[2])
		if err != nil || nkeys == 0 || nkeys%per != 0 || len(cmd) < 3+nkeys {
			return false
		}
	targets:
		for t := 3; t < 3+nkeys; t += per {
			for i, s := range suffixes {
				if !strings.HasSuffix(cmd[t+i], s) {
					continue targets
				}
			}
			return true
		}
		return false
	}
}

// feedOn matches a feed.lua call (a batch of a fan-out on one server: the
// status HASH, the author's followers and listed as KEYS) whose range
// starts after the sequence number after ("-inf" for Post's first batch,
// else "(n"; "": any batch but Post's first).
func feedOn(after string) func([]string) bool {
	return func(cmd []string) bool {
		return redistest.Scripts(cmd) && len(cmd) == 13 && cmd[2] == "3" &&
			strings.Contains(cmd[3], ":status:") && strings.HasSuffix(cmd[4], ":followers") &&
			strings.HasSuffix(cmd[5], ":listed") && (cmd[11] == after || after == "" && cmd[11] != "-inf")
	}
}

// deliverOn matches the calls that feed a deferred batch: on a Cluster
// deliver.lua's for a follower and for a list; on one server feed.lua's
// for the batches after sequence numbers 2 and 4 (fan-out batches of 2
// over followers and lists numbered from 1).
func deliverOn(b *redistest.Backend) []func([]string) bool {
	if b.Kind == redistest.Cluster {
		return []func([]string) bool{scriptOn(4, ":home", ":following", ":gone"), scriptOn(4, ":timeline", ":members", ":gone")}
	}
	return []func([]string) bool{feedOn("(2"), feedOn("(4")}
}

// Lost replies in the deferred fan-out and clean passes (one pipeline of
// batched scripts per batch, re-sent by go-redis): every follower and
// every list is fed once, then cleaned, and no task dies.
func TestFaults_fanoutTasks(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		n, g := newNet(t, b, rdb, social.WithFanoutBatch(2))
		reader, _ := newNet(t, b, b.Client, social.WithFanoutBatch(2))
		author := mustUser(t, reader, "author")
		var fs []string
		for i := range 5 {
			fs = append(fs, mustUser(t, reader, fmt.Sprint("f", i)))
			mustFollow(t, reader, fs[i], author)
		}
		require.NoError(t, reader.CreateList(ctx, "f0", "l"))
		_, err := reader.AddToList(ctx, "f0", "l", author)
		require.NoError(t, err)
		// Cache the scripts on every node.
		st := mustPost(t, n, author, "warm")
		drain(t, n, g)
		require.NoError(t, n.Delete(ctx, author, st.ID))
		drain(t, n, g)

		h := redistest.NewHarness(t, f, "social fan-out and clean tasks")
		deliver := deliverOn(b)
		clean := scriptOn(2, ":home", ":gone")
		cleanList := scriptOn(2, ":timeline", ":gone")
		for round := range 3 {
			st := mustPost(t, n, author, fmt.Sprint("m", round)) // feeds 2 of 6 targets at once
			h.CallEach(func() { drain(t, n, g) }, deliver...)
			for _, fl := range fs {
				h.Check(slicesEqual(page(t, reader, fl, social.Home, 10), st.ID), "round %d: home of %s: %v", round, fl, page(t, reader, fl, social.Home, 10))
			}
			h.Check(slicesEqual(listPage(t, reader, "f0", "l", 10), st.ID), "round %d: list: %v", round, listPage(t, reader, "f0", "l", 10))
			require.NoError(t, n.Delete(ctx, author, st.ID))
			h.CallEach(func() { drain(t, n, g) }, clean, cleanList)
			for _, fl := range fs {
				ids, err := b.Client.ZRange(ctx, key(b, fl, "home"), 0, -1).Result()
				require.NoError(t, err)
				h.Check(len(ids) == 0, "round %d: %s's home after the clean: %v", round, fl, ids)
			}
			ids, err := b.Client.ZRange(ctx, key(b, "f0", "list:l:timeline"), 0, -1).Result()
			require.NoError(t, err)
			h.Check(len(ids) == 0, "round %d: list after the clean: %v", round, ids)
		}
	})
}

func slicesEqual(got []string, want ...string) bool {
	return strings.Join(got, ",") == strings.Join(want, ",")
}

// Follow and Unfollow through replies held back, part of the time, longer
// than the read timeout. Each call answers, or says its outcome is
// unknown, or fails in its read-only first step having written nothing;
// repeating the last one on a healthy client then makes the two sides
// agree, with counts equal to the sets.
func TestFaults_followDelays(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const calls = 40
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = 2*time.Millisecond, time.Second, time.Minute
		})
		n, _ := newNet(t, b, rdb)
		reader, _ := newNet(t, b, b.Client)
		mustUser(t, reader, "ann")
		mustUser(t, reader, "bob")
		mustPost(t, reader, "ann", "hello")
		mustFollow(t, reader, "bob", "ann") // caches the scripts
		_, err := reader.Unfollow(ctx, "bob", "ann")
		require.NoError(t, err)
		stop := f.Stall()
		state := func() string { // both sides of the follow
			s := b.Snapshot()
			return fmt.Sprint(s[key(b, "ann", "followers")], s[key(b, "bob", "following")], s[key(b, "bob", "home")])
		}
		var ok, unknown, failed, disagree int
		for i := range calls {
			var err error
			before := state()
			if i%2 == 0 {
				_, err = n.Follow(ctx, "bob", "ann")
			} else {
				_, err = n.Unfollow(ctx, "bob", "ann")
			}
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ria.ErrOutcomeUnknown):
				unknown++
			case state() == before: // failed in the read-only first step: nothing written
				failed++
			default:
				disagree++
				t.Errorf("call %d: %v, and it wrote", i, err)
			}
		}
		stop()
		for _, follow := range []bool{true, false} {
			var err error
			if follow {
				_, err = reader.Follow(ctx, "bob", "ann")
			} else {
				_, err = reader.Unfollow(ctx, "bob", "ann")
			}
			require.NoError(t, err)
			followers, err := b.Client.ZCard(ctx, key(b, "ann", "followers")).Result()
			require.NoError(t, err)
			following, err := b.Client.ZCard(ctx, key(b, "bob", "following")).Result()
			require.NoError(t, err)
			want := int64(0)
			if follow {
				want = 1
			}
			a, bb := user(t, reader, "ann"), user(t, reader, "bob")
			if followers != want || following != want || a.Followers != want || bb.Following != want {
				disagree++
				t.Errorf("follow=%v: followers %d (count %d), following %d (count %d)", follow, followers, a.Followers, following, bb.Following)
			}
			if home := page(t, reader, "bob", social.Home, 10); len(home) != int(want) {
				disagree++
				t.Errorf("follow=%v: bob's home %v", follow, home)
			}
		}
		t.Logf("fault harness: social Follow/Unfollow under 0-3ms stalls, ReadTimeout 2ms: calls=%d ok=%d unknown=%d failed-before-writing=%d disagreements=%d", calls, ok, unknown, failed, disagree)
		assert.Zero(t, disagree)
		assert.Equal(t, calls, ok+unknown+failed)
	})
}
