package chat

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
)

// Create creates the chat chat whose members are sender and recipients,
// and sends v from sender as its message 1 (Redis in Action's create_chat;
// the caller names the chat, see [NewID]). Every member, the sender
// included, has seen nothing, so each one's next [Chats.Fetch] returns
// message 1. Two round trips (1 + 1 per node holding a member's list on a
// Cluster): one script in the chat's slot, then one pipeline adding the
// chat to each member's list (in the members' slots),
// each followed by the wake-up of that member's [Chats.Wait] (the sender
// but), so that a woken Wait finds the chat.
//
// A chat id in use gives [ErrExists] and writes nothing. No recipient
// other than the sender (duplicates count once), more than [MaxMembers]
// members, a bad id or a payload the codec cannot
// encode or over [MaxPayload] is an error and nothing is written. A chat
// key of another Redis type gives a *ria.KeyError and nothing is written.
// An error of the second round trip (a member's list of another type, an
// unknown outcome) leaves the chat created: [Chats.Join] of each member
// completes it.
func (c *Chats) Create(ctx context.Context, chat, sender string, recipients []string, v any) (Message, error) {
	members, payload, err := c.checkCreate(chat, sender, recipients, v)
	if err != nil {
		return Message{}, fmt.Errorf("chat: create: %w", err)
	}
	args := make([]any, 0, 2+len(members))
	args = append(args, sender, payload)
	for _, m := range members {
		args = append(args, m)
	}
	r, err := createScript.RunOnce(ctx, c.rdb, c.keys.Once(chat), c.chatKeys(chat), args...)
	if err != nil {
		return Message{}, fmt.Errorf("chat: create %q: %w", chat, err)
	}
	ns, err := createScript.AsInt64s(r)
	if err != nil || len(ns) == 0 {
		return Message{}, fmt.Errorf("chat: create %q: %w: reply %v", chat, ria.ErrCorrupt, r)
	}
	if ns[0] == -3 {
		return Message{}, fmt.Errorf("chat: create %q: %w", chat, ErrExists)
	}
	if len(ns) != 3 {
		return Message{}, fmt.Errorf("chat: create %q: %w: reply %v", chat, ria.ErrCorrupt, r)
	}
	// The wake-ups go after the SADDs, in the same pipeline: a Wait woken
	// by one finds the chat on its user's list (create.lua publishes none).
	id := strconv.FormatInt(ns[1], 10)
	adds := make([]*redis.IntCmd, len(members))
	wakes := make([]*redis.IntCmd, len(members))
	_, _ = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, m := range members {
			wake := id
			if m == sender {
				wake = "" // as a send: the sender is not woken
			}
			adds[i], wakes[i] = c.listAdd(ctx, p, m, chat, wake)
		}
		return nil
	})
	for i := range members {
		if err := c.listAddErr(ctx, "create", chat, members[i], adds[i], wakes[i]); err != nil {
			return Message{}, err
		}
	}
	return Message{Chat: chat, ID: ns[1], Sender: sender, Time: time.UnixMilli(ns[2]), Payload: payload, codec: c.codec}, nil
}

func (c *Chats) checkCreate(chat, sender string, recipients []string, v any) ([]string, []byte, error) {
	if err := checkID("chat", chat); err != nil {
		return nil, nil, err
	}
	if err := checkID("sender", sender); err != nil {
		return nil, nil, err
	}
	members := []string{sender}
	seen := map[string]bool{sender: true}
	for _, r := range recipients {
		if err := checkID("recipient", r); err != nil {
			return nil, nil, err
		}
		if !seen[r] {
			seen[r] = true
			members = append(members, r)
		}
	}
	// Counted once duplicates and the sender are out: a chat has a
	// recipient besides the sender.
	if len(members) < 2 || len(members) > MaxMembers {
		return nil, nil, fmt.Errorf("chat %q: %d members with the sender: want 2 to %d: %w", chat, len(members), MaxMembers, ErrInvalid)
	}
	payload, err := c.encode(v)
	if err != nil {
		return nil, nil, err
	}
	return members, payload, nil
}

// NewID returns a new random chat id (a UUID) for [Chats.Create].
func NewID() string { return newUUID() }

// Send sends v from sender to chat and returns the stored message (Redis
// in Action's send_message without its lock). Ids are 1, 2, 3... per
// chat, in the order sends reach Redis, with no gap and no duplicate. One
// round trip (one script, which also publishes a wake-up to each other
// member for [Chats.Wait]); a re-sent call gets the first reply, not a
// second message.
//
// Unknown chats give [ErrNoChat], a sender who is not a member
// [ErrNotMember]; a bad id or payload is an error; a chat key of another
// Redis type gives a *ria.KeyError. In each case nothing is written.
func (c *Chats) Send(ctx context.Context, chat, sender string, v any) (Message, error) {
	if err := checkID("chat", chat); err != nil {
		return Message{}, fmt.Errorf("chat: send: %w", err)
	}
	if err := checkID("sender", sender); err != nil {
		return Message{}, fmt.Errorf("chat: send to %q: %w", chat, err)
	}
	payload, err := c.encode(v)
	if err != nil {
		return Message{}, fmt.Errorf("chat: send to %q: %w", chat, err)
	}
	r, err := sendScript.RunOnce(ctx, c.rdb, c.keys.Once(chat), c.chatKeys(chat), sender, payload, c.wakePrefix())
	if err != nil {
		return Message{}, fmt.Errorf("chat: send to %q: %w", chat, err)
	}
	ns, err := sendScript.AsInt64s(r)
	switch {
	case err != nil || len(ns) == 0:
		return Message{}, fmt.Errorf("chat: send to %q: %w: reply %v", chat, ria.ErrCorrupt, r)
	case ns[0] == -1:
		return Message{}, fmt.Errorf("chat: send to %q: %w", chat, ErrNoChat)
	case ns[0] == -2:
		return Message{}, fmt.Errorf("chat: send to %q by %q: %w", chat, sender, ErrNotMember)
	case len(ns) != 3:
		return Message{}, fmt.Errorf("chat: send to %q: %w: reply %v", chat, ria.ErrCorrupt, r)
	}
	return Message{Chat: chat, ID: ns[1], Sender: sender, Time: time.UnixMilli(ns[2]), Payload: payload, codec: c.codec}, nil
}

// Join adds user to chat (join_chat): they see only the messages sent
// after they joined. Joining a chat one is a member of changes nothing.
// Two round trips: a script in the chat's slot, then one pipeline of SADD
// to the user's list and a wake-up of the user's [Chats.Wait] (a send
// between the two steps woke it before the chat was on the list). The
// script runs once per call: a re-send after a lost reply gets the first
// run's answer and writes nothing, so it cannot undo a Leave of the same
// user made since. The SADD is idempotent, so a repeated Join completes a
// Create or Join cut between its steps.
//
// Unknown chats give [ErrNoChat], a chat of [MaxMembers] members that
// user is not in gives [ErrFull], and nothing is written; a bad id is an
// error; a chat key of another Redis type gives a *ria.KeyError and
// nothing is written. A user list of another type gives a *ria.KeyError
// after the chat side was written.
func (c *Chats) Join(ctx context.Context, chat, user string) error {
	if err := checkPair(chat, user); err != nil {
		return fmt.Errorf("chat: join: %w", err)
	}
	r, err := joinScript.RunOnce(ctx, c.rdb, c.keys.Once(chat), []string{c.membersKey(chat), c.idsKey(chat)}, user, MaxMembers)
	if err != nil {
		return fmt.Errorf("chat: join %q: %w", chat, err)
	}
	n, err := joinScript.AsInt64(r)
	if err != nil {
		return fmt.Errorf("chat: join %q: %w: reply %v", chat, ria.ErrCorrupt, r)
	}
	switch n {
	case -1:
		return fmt.Errorf("chat: join %q: %w", chat, ErrNoChat)
	case -2:
		return fmt.Errorf("chat: join %q by %q: %d members: %w", chat, user, MaxMembers, ErrFull)
	}
	// A Send between the script and the SADD woke user's Wait, which found
	// the chat missing from their list: wake it again once it is there.
	return c.addToList(ctx, "join", chat, user)
}

// addToList adds chat to user's list and then wakes user's Wait (the wake-up
// "0"), in one pipeline: one round trip.
func (c *Chats) addToList(ctx context.Context, op, chat, user string) error {
	var add, wake *redis.IntCmd
	_, _ = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		add, wake = c.listAdd(ctx, p, user, chat, "0")
		return nil
	})
	return c.listAddErr(ctx, op, chat, user, add, wake)
}

// listAdd queues on p the SADD of chat to user's list, then, unless wake
// is "", the PUBLISH of wake on user's wake-up channel. PUBLISH has no key
// for go-redis, which would send it to any node of a Cluster (in a
// pipeline of its own, maybe before the SADD): it is routed by its
// channel, <prefix>{<user>}:wake, in the user's slot, so it follows the
// SADD on the same connection, and a Wait it wakes finds the chat on the
// list.
func (c *Chats) listAdd(ctx context.Context, p redis.Pipeliner, user, chat, wake string) (add, pub *redis.IntCmd) {
	add = p.SAdd(ctx, c.chatsKey(user), chat)
	if wake == "" {
		return add, nil
	}
	pub = redis.NewIntCmd(ctx, "publish", c.wakeChannel(user), wake)
	pub.SetFirstKeyPos(1)
	_ = p.Process(ctx, pub)
	return add, pub
}

// listAddErr maps the errors of listAdd's commands (pub may be nil).
func (c *Chats) listAddErr(ctx context.Context, op, chat, user string, add, pub *redis.IntCmd) error {
	if err := add.Err(); err != nil {
		return c.listErr(ctx, op, chat, user, err)
	}
	if pub == nil {
		return nil
	}
	if err := pub.Err(); err != nil {
		return fmt.Errorf("chat: %s %q: wake %q: %w", op, chat, user, script.Unknown(err))
	}
	return nil
}

// listErr maps the error of a write to user's chat list.
func (c *Chats) listErr(ctx context.Context, op, chat, user string, err error) error {
	return fmt.Errorf("chat: %s %q: list of %q: %w", op, chat, user,
		script.Unknown(script.WrongType(ctx, c.rdb, err, c.chatsKey(user), "chat user chats", "set")))
}

// Leave removes user from chat (leave_chat). The chat is deleted with its
// last member, in the same script as every file transfer of the chat
// (finished or not: its sender and readers then get [ErrNoFile]);
// otherwise the messages every remaining member has seen are trimmed.
// Leaving a chat one is not in is not an error and changes nothing but,
// for a chat with no member left, deleting what remains of it, so a
// repeated Leave completes the deletion. The script runs once per call: a
// re-send after a lost reply gets the first run's answer and writes
// nothing, so it cannot undo a Join of the same user made since, nor
// remove them from a chat created again with the same id. Three
// round trips: a script in the chat's slot, SREM from the user's list,
// then ZSCORE of the user in the chat; when a Join of the same user has
// made them a member again meanwhile (another device), a fourth, SADD
// with a wake-up of their [Chats.Wait] in one pipeline, puts the chat back
// on their list.
//
// A bad id is an error; a chat key of another Redis type gives a
// *ria.KeyError and nothing is written.
func (c *Chats) Leave(ctx context.Context, chat, user string) error {
	if err := checkPair(chat, user); err != nil {
		return fmt.Errorf("chat: leave: %w", err)
	}
	ks := append(c.chatKeys(chat), c.filesKey(chat), c.filePrefix(chat))
	r, err := leaveScript.RunOnce(ctx, c.rdb, c.keys.Once(chat), ks, user)
	if err != nil {
		return fmt.Errorf("chat: leave %q: %w", chat, err)
	}
	if _, err := leaveScript.AsInt64(r); err != nil {
		return fmt.Errorf("chat: leave %q: %w: reply %v", chat, ria.ErrCorrupt, r)
	}
	if err := c.rdb.SRem(ctx, c.chatsKey(user), chat).Err(); err != nil {
		return c.listErr(ctx, "leave", chat, user, err)
	}
	// A Join of the same user (another device) whose script ran after ours
	// and whose SADD came before our SREM left a member missing from their
	// list, whose Fetch would never see the chat: put it back. So does a
	// Create of the chat again with the user (after our last Leave), and a
	// Join or Create made before the re-send of our script, which answered
	// from its record.
	members := c.membersKey(chat)
	if err := c.rdb.ZScore(ctx, members, user).Err(); err == redis.Nil {
		return nil
	} else if err != nil {
		return fmt.Errorf("chat: leave %q: membership: %w", chat,
			script.Unknown(script.WrongType(ctx, c.rdb, err, members, "chat members", "zset")))
	}
	// A Send since our SREM woke user's Wait, which found the chat missing:
	// wake it again once it is back on the list.
	return c.addToList(ctx, "leave", chat, user)
}

func checkPair(chat, user string) error {
	if err := checkID("chat", chat); err != nil {
		return err
	}
	return checkID("user", user)
}

// History returns up to n messages of chat with ids above after, in id
// order: history paging by id (start with after 0, then the last id of
// each page). Only messages not yet trimmed (seen by every member) are
// there. It reads, marks nothing seen. One round trip.
//
// Unknown chats give [ErrNoChat]; n outside 1 to [MaxPage], a negative
// after or a bad id is an error; a chat key of another Redis type gives a
// *ria.KeyError.
func (c *Chats) History(ctx context.Context, chat string, after int64, n int) ([]Message, error) {
	if err := checkID("chat", chat); err != nil {
		return nil, fmt.Errorf("chat: history: %w", err)
	}
	if n < 1 || n > MaxPage || after < 0 {
		return nil, fmt.Errorf("chat: history of %q: after %d, n %d: want after >= 0, n 1 to %d: %w", chat, after, n, MaxPage, ErrInvalid)
	}
	r, err := historyScript.Run(ctx, c.rdb, []string{c.membersKey(chat), c.msgsKey(chat)}, after, n)
	if err != nil {
		return nil, fmt.Errorf("chat: history of %q: %w", chat, err)
	}
	arr, ok := r.([]any)
	if !ok || len(arr) == 0 {
		return nil, fmt.Errorf("chat: history of %q: %w: reply %v", chat, ria.ErrCorrupt, r)
	}
	if code, _ := arr[0].(int64); code == -1 {
		return nil, fmt.Errorf("chat: history of %q: %w", chat, ErrNoChat)
	}
	out := make([]Message, 0, len(arr)-1)
	for _, e := range arr[1:] {
		s, _ := e.(string)
		m, err := c.unpack(chat, s)
		if err != nil {
			return nil, fmt.Errorf("chat: history of %q: %w", chat, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// unpack parses a stored message '<id>:<ms>:<len(sender)>:<sender><payload>'.
func (c *Chats) unpack(chat, s string) (Message, error) {
	bad := func() (Message, error) {
		return Message{}, &ria.KeyError{Role: "chat messages", Key: c.msgsKey(chat),
			Got: fmt.Sprintf("member %.40q", s), Want: "id:ms:len:sender payload", Err: ria.ErrCorrupt}
	}
	var nums [3]int64
	rest := s
	for i := range nums {
		f, r, ok := strings.Cut(rest, ":")
		if !ok {
			return bad()
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 {
			return bad()
		}
		nums[i], rest = n, r
	}
	if int64(len(rest)) < nums[2] {
		return bad()
	}
	return Message{Chat: chat, ID: nums[0], Time: time.UnixMilli(nums[1]), Sender: rest[:nums[2]],
		Payload: []byte(rest[nums[2]:]), codec: c.codec}, nil
}

// Chats returns the ids of the chats user is a member of, sorted. One
// round trip.
func (c *Chats) Chats(ctx context.Context, user string) ([]string, error) {
	if err := checkID("user", user); err != nil {
		return nil, fmt.Errorf("chat: chats: %w", err)
	}
	ids, err := c.userChats(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("chat: chats of %q: %w", user, err)
	}
	return ids, nil
}

// Members returns the members of chat, each with the id of the last
// message it has seen (read receipts: the last it fetched, or the last
// sent before it joined; 0 for none), in one round trip. An unknown chat
// has none.
func (c *Chats) Members(ctx context.Context, chat string) (map[string]int64, error) {
	if err := checkID("chat", chat); err != nil {
		return nil, fmt.Errorf("chat: members: %w", err)
	}
	key := c.membersKey(chat)
	zs, err := c.rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("chat: members of %q: %w", chat, script.WrongType(ctx, c.rdb, err, key, "chat members", "zset"))
	}
	out := make(map[string]int64, len(zs))
	for _, z := range zs {
		m, _ := z.Member.(string)
		out[m] = int64(z.Score)
	}
	return out, nil
}

func (c *Chats) userChats(ctx context.Context, user string) ([]string, error) {
	key := c.chatsKey(user)
	ids, err := c.rdb.SMembers(ctx, key).Result()
	if err != nil {
		return nil, script.WrongType(ctx, c.rdb, err, key, "chat user chats", "set")
	}
	slices.Sort(ids)
	return ids, nil
}
