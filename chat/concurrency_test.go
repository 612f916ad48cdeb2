package chat_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

// 8 senders × 1,000 messages to one chat while 3 members fetch in a loop:
// every member receives every message exactly once, in id order, and the
// ids are 1 to 8,000 without duplicates; at the end everything is trimmed.
func TestChat_concurrentSendersAndFetchers(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const senders, each = 8, 1000
		ctx := t.Context()
		cs := newChats(t, b, nil)
		var users []string
		for i := range senders {
			users = append(users, fmt.Sprintf("s%d", i))
		}
		readers := []string{"r0", "r1", "r2"}
		_, err := cs.Create(ctx, "big", "s0", append(users[1:], readers...), "start")
		require.NoError(t, err)
		// The senders read nothing: drop them so that trimming depends
		// on the readers alone.
		errs := make(chan error, senders+len(readers))
		var sent sync.WaitGroup
		for _, u := range users {
			sent.Go(func() {
				for i := range each {
					if _, err := cs.Send(ctx, "big", u, fmt.Sprintf("%s-%d", u, i)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		done := make(chan struct{})
		got := make([][]int64, len(readers))
		var read sync.WaitGroup
		for r, u := range readers {
			read.Go(func() {
				for {
					select {
					case <-done:
						// One last fetch after the senders finished.
						ms, err := cs.Fetch(ctx, u)
						if err != nil {
							errs <- err
						}
						for _, m := range ms {
							got[r] = append(got[r], m.ID)
						}
						if len(ms) == 0 {
							return
						}
						continue
					default:
					}
					ms, err := cs.Fetch(ctx, u)
					if err != nil {
						errs <- err
						return
					}
					for _, m := range ms {
						got[r] = append(got[r], m.ID)
					}
				}
			})
		}
		sent.Wait()
		close(done)
		read.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		want := make([]int64, senders*each+1)
		for i := range want {
			want[i] = int64(i + 1)
		}
		for r := range readers {
			assert.Equal(t, want, got[r], "reader %s: every message once, in id order", readers[r])
		}
		for _, u := range users {
			require.NoError(t, cs.Leave(ctx, "big", u))
		}
		h, err := cs.History(ctx, "big", 0, 10)
		require.NoError(t, err)
		assert.Empty(t, h, "trimmed once every member has seen them")
	})
}

// Wait returns within milliseconds of a send, without polling: the poll
// interval is an hour.
func TestChat_Wait(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil, chat.WithPollInterval(time.Hour))
		_, err := cs.Create(ctx, "w", "joe", []string{"jeff"}, "first")
		require.NoError(t, err)
		ms, err := cs.Wait(ctx, "jeff") // pending already: at once
		require.NoError(t, err)
		assert.Equal(t, []string{"joe: first"}, texts(t, ms))

		type result struct {
			texts []string
			err   error
			at    time.Time
		}
		res := make(chan result, 1)
		go func() {
			ms, err := cs.Wait(ctx, "jeff")
			var ts []string
			for _, m := range ms {
				var s string
				_ = m.Decode(&s)
				ts = append(ts, m.Sender+": "+s)
			}
			res <- result{ts, err, time.Now()}
		}()
		// Send once the waiter has subscribed (PUBSUB NUMSUB on the real
		// servers; miniredis counts the same).
		require.Eventually(t, func() bool { return subscribed(ctx, b, cs, "jeff") }, 10*time.Second, time.Millisecond)
		sentAt := time.Now()
		_, err = cs.Send(ctx, "w", "joe", "second")
		require.NoError(t, err)
		select {
		case r := <-res:
			require.NoError(t, r.err)
			assert.Equal(t, []string{"joe: second"}, r.texts)
			t.Logf("woke %v after the send", r.at.Sub(sentAt))
			assert.Less(t, r.at.Sub(sentAt), 5*time.Second)
		case <-time.After(30 * time.Second):
			t.Fatal("Wait did not wake")
		}

		// ctx ending stops a Wait.
		cctx, cancel := context.WithCancel(ctx)
		go func() {
			_, err := cs.Wait(cctx, "jeff")
			res <- result{err: err}
		}()
		require.Eventually(t, func() bool { return subscribed(ctx, b, cs, "jeff") }, 10*time.Second, time.Millisecond)
		cancel()
		assert.ErrorIs(t, (<-res).err, context.Canceled)
	})
}

// A member waiting in Wait when a chat is created with them is woken once
// the chat is on their list, and Wait returns message 1. create.lua used to
// publish the wake-up in Create's first round trip, before the second put
// the chat on the member's list: the woken Wait fetched nothing and slept
// for the poll interval. Create's second step is held (a gate) while the
// wake-ups published so far are collected (a marker): none may be there.
func TestWait_createWakesAfterList(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		wgate := redistest.NewGate(func(cmds []redis.Cmder) bool { return cmds[0].Name() == "smembers" })
		wrdb, _ := b.NewClient()
		wrdb.AddHook(wgate)
		waiter := newChats(t, b, wrdb, chat.WithPollInterval(time.Hour))
		gate := redistest.NewGate(func(cmds []redis.Cmder) bool { return cmds[0].Name() == "sadd" })
		rdb, _ := b.NewClient()
		rdb.AddHook(gate)
		creator := newChats(t, b, rdb)
		obs := watchWake(t, b, "jeff")

		type result struct {
			ms  []chat.Message
			err error
		}
		res := make(chan result, 1)
		// The timeout only ends a Wait left asleep by a failure.
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		subscribed := wgate.Arm()
		go func() {
			ms, err := waiter.Wait(wctx, "jeff")
			res <- result{ms, err}
		}()
		subscribed.Entered() // Wait fetches once subscribed
		subscribed.Release()

		hold := gate.Arm()
		created := make(chan error, 1)
		go func() {
			_, err := creator.Create(ctx, "c", "joe", []string{"jeff"}, "first")
			created <- err
		}()
		hold.Entered() // the chat is written; the members' lists wait
		early := wakeupsBefore(t, b, obs, "c", "jeff")
		hold.Release()
		require.NoError(t, <-created)
		if !assert.Empty(t, early, "a wake-up published before the chat was on jeff's list") {
			cancel() // the Wait it woke fetched nothing, and sleeps
			<-res
			return
		}
		r := <-res
		require.NoError(t, r.err)
		assert.Equal(t, []string{"joe: first"}, texts(t, r.ms))
	})
}

// A Send between Join's script and its SADD wakes the new member before
// the chat is on their list (their Wait fetches nothing): Join wakes them
// again once it is there.
func TestWait_joinWakesAfterList(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		_, err := cs.Create(ctx, "c", "a", []string{"b"}, "m1")
		require.NoError(t, err)
		obs := watchWake(t, b, "u")
		gate := redistest.NewGate(func(cmds []redis.Cmder) bool { return cmds[0].Name() == "sadd" })
		rdb, _ := b.NewClient()
		rdb.AddHook(gate)
		joiner := newChats(t, b, rdb)

		hold := gate.Arm()
		joined := make(chan error, 1)
		go func() { joined <- joiner.Join(ctx, "c", "u") }()
		hold.Entered() // u is a member; c is not on u's list yet
		_, err = cs.Send(ctx, "c", "a", "m2")
		require.NoError(t, err)
		require.Len(t, wakeupsBefore(t, b, obs, "c", "u"), 1, "the send's wake-up")
		chats, err := cs.Chats(ctx, "u")
		require.NoError(t, err)
		require.Empty(t, chats, "the wake-up came before the chat was on u's list")
		hold.Release()
		require.NoError(t, <-joined)
		assert.Len(t, wakeupsBefore(t, b, obs, "c", "u"), 1, "Join wakes u once c is on their list")
		ms, err := cs.Fetch(ctx, "u")
		require.NoError(t, err)
		assert.Equal(t, []string{"a: m2"}, texts(t, ms))
	})
}
