package chat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
)

// Fetch returns user's unseen messages of every chat they are a member
// of, at most the fetch limit ([WithFetchLimit]) per chat, ordered by chat
// id then message id, and marks them seen (fetch_pending_messages). A
// chat's messages that every member has now seen are deleted. Two round
// trips whatever the number of chats: SMEMBERS of the user's list, then
// one pipeline of one script per chat (split per node on a Cluster: at
// most one round trip per node). Call it again while it returns a full
// page of a chat.
//
// A re-sent script (its reply lost) answers with the messages of the
// first run, so a lost reply loses no message. When every re-send fails,
// Fetch returns the messages of the chats it read together with an error
// wrapping ria.ErrOutcomeUnknown: the chats in error may have been marked
// seen ([Chats.History] still has their messages until every other
// member has seen them).
//
// Chats on the user's list that the user is no longer in (a Leave cut
// between its two steps) are skipped. A bad user id is an error; a user
// list or chat key of another Redis type gives a *ria.KeyError (a chat key
// of another type fails that chat alone: the other chats' messages come
// back with the error).
func (c *Chats) Fetch(ctx context.Context, user string) ([]Message, error) {
	if err := checkID("user", user); err != nil {
		return nil, fmt.Errorf("chat: fetch: %w", err)
	}
	ids, err := c.userChats(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("chat: fetch for %q: %w", user, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	ttl := script.ReplayWindow(c.rdb).Milliseconds()
	calls := make([]*script.Call, len(ids))
	for i, id := range ids {
		calls[i] = fetchScript.Call([]string{c.membersKey(id), c.msgsKey(id), c.keys.Once(id)}, user, c.fetch, ttl)
	}
	script.Send(ctx, c.rdb, calls)
	var out []Message
	var failed []error
	for i, id := range ids {
		if calls[i].Err != nil {
			failed = append(failed, fmt.Errorf("chat %q: %w", id, script.Unknown(calls[i].Err)))
			continue
		}
		ms, err := c.fetched(id, calls[i].Val)
		if err != nil {
			failed = append(failed, fmt.Errorf("chat %q: %w", id, err))
			continue
		}
		out = append(out, ms...)
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("chat: fetch for %q: %w", user, errors.Join(failed...))
	}
	return out, nil
}

// fetched parses the reply of fetch.lua for chat.
func (c *Chats) fetched(chat string, v any) ([]Message, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, fmt.Errorf("%w: fetch reply %v", ria.ErrCorrupt, v)
	}
	if code, _ := arr[0].(int64); code != 1 {
		return nil, nil // not a member (any more), or the chat is gone
	}
	if len(arr)%2 != 0 {
		return nil, fmt.Errorf("%w: fetch reply of %d elements", ria.ErrCorrupt, len(arr))
	}
	out := make([]Message, 0, len(arr)/2-1)
	for i := 2; i < len(arr); i += 2 {
		s, _ := arr[i+1].(string)
		m, err := c.unpack(chat, s)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Unread returns, for each chat user is a member of, how many messages
// they have not seen (chats with none included). It marks nothing seen.
// Two round trips whatever the number of chats, as [Chats.Fetch]. Errors
// as for Fetch.
func (c *Chats) Unread(ctx context.Context, user string) (map[string]int64, error) {
	if err := checkID("user", user); err != nil {
		return nil, fmt.Errorf("chat: unread: %w", err)
	}
	ids, err := c.userChats(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("chat: unread for %q: %w", user, err)
	}
	out := make(map[string]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	calls := make([]*script.Call, len(ids))
	for i, id := range ids {
		calls[i] = unreadScript.Call([]string{c.membersKey(id), c.msgsKey(id)}, user)
	}
	script.Send(ctx, c.rdb, calls)
	var failed []error
	for i, id := range ids {
		if calls[i].Err != nil {
			failed = append(failed, fmt.Errorf("chat %q: %w", id, calls[i].Err))
			continue
		}
		n, ok := calls[i].Val.(int64)
		if !ok {
			failed = append(failed, fmt.Errorf("chat %q: %w: unread reply %v", id, ria.ErrCorrupt, calls[i].Val))
			continue
		}
		if n >= 0 {
			out[id] = n
		}
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("chat: unread for %q: %w", user, errors.Join(failed...))
	}
	return out, nil
}

// Wait blocks until user has unseen messages, then fetches them as
// [Chats.Fetch] does and returns them (at least one), or until ctx ends.
// It subscribes to the user's wake-up channel first (every send publishes
// one to each other member), then fetches, then waits for a wake-up, so a
// message sent at any moment is returned within the time of a fetch. A
// wake-up lost to a broken connection costs no message: go-redis
// re-subscribes, and Wait fetches again on every re-subscription and,
// failing any wake-up, every poll interval ([WithPollInterval]).
//
// Wait holds one pub/sub connection while it waits. Errors as for Fetch,
// plus ctx's error.
func (c *Chats) Wait(ctx context.Context, user string) ([]Message, error) {
	if err := checkID("user", user); err != nil {
		return nil, fmt.Errorf("chat: wait: %w", err)
	}
	ps := c.rdb.Subscribe(ctx, c.wakeChannel(user))
	defer func() { _ = ps.Close() }()
	if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
		return nil, fmt.Errorf("chat: wait for %q: subscribe: %w", user, err)
	}
	// Wake-ups and re-subscriptions (after a reconnect) both arrive here.
	wake := ps.ChannelWithSubscriptions(redis.WithChannelSize(16))
	timer := time.NewTimer(c.poll)
	defer timer.Stop()
	for {
		ms, err := c.Fetch(ctx, user)
		if err != nil || len(ms) > 0 {
			return ms, err
		}
		timer.Reset(c.poll)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("chat: wait for %q: %w", user, ctx.Err())
		case <-wake:
		case <-timer.C:
		}
		// Coalesce the wake-ups that queued up meanwhile.
		for drained := false; !drained; {
			select {
			case <-wake:
			default:
				drained = true
			}
		}
	}
}
