package social

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/near"
	"github.com/ria-go/ria/internal/script"
)

// Timeline names a timeline of a user: [Home] or [Profile].
type Timeline int

const (
	// Home is the statuses of the users a user follows.
	Home Timeline = iota
	// Profile is a user's own statuses.
	Profile
)

// String returns "home" or "profile".
func (t Timeline) String() string {
	switch t {
	case Home:
		return "home"
	case Profile:
		return "profile"
	}
	return "Timeline(" + strconv.Itoa(int(t)) + ")"
}

// topUps is how many more reads a page makes when deleted statuses left
// it short.
const topUps = 2

// Page returns up to count statuses (1 to [MaxPage]) of timeline t of user
// uid, newest first, from position offset (0 is the newest), and the
// offset of the next page. A status deleted but not yet cleaned from the
// timeline is skipped, and the page is topped up from further down the
// timeline (at most twice), so next may exceed offset+count. Round trips:
// on one server without [WithStatusCache] 1 (one script reads the IDs,
// the statuses and the top-ups); else 1 (ZREVRANGE) plus 1 per node (the statuses'
// hashes, pipelined), and the same again per top-up. With
// [WithStatusCache], cached statuses are not read (a warm page is 1 round
// trip, the ZREVRANGE). An unknown user has empty timelines.
func (n *Network) Page(ctx context.Context, uid string, t Timeline, offset, count int) ([]Status, int, error) {
	uid, err := checkUID("user", uid)
	if err != nil {
		return nil, 0, fmt.Errorf("social: page: %w", err)
	}
	var key, role string
	switch t {
	case Home:
		key, role = n.homeKey(uid), "social home timeline"
	case Profile:
		key, role = n.profileKey(uid), "social profile timeline"
	default:
		return nil, 0, fmt.Errorf("social: page %q: unknown timeline %v", uid, t)
	}
	return n.page(ctx, uid, t.String(), key, role, offset, count)
}

// page reads a page of the timeline key (of uid, named what, role role)
// for Page and ListPage, after checking offset and count.
func (n *Network) page(ctx context.Context, uid, what, key, role string, offset, count int) ([]Status, int, error) {
	if count < 1 || count > MaxPage || offset < 0 || offset > 1<<30 {
		return nil, 0, fmt.Errorf("social: page %q: offset %d, count %d: want offset >= 0 and count between 1 and %d", uid, offset, count, MaxPage)
	}
	seen := n.idle > 0 && key == n.homeKey(uid) // the read is recorded
	if n.single() && n.near == nil {
		out, next, regen, err := n.pageOne(ctx, uid, key, role, seen, offset, count)
		if err == nil && regen {
			if err = n.regenerate(ctx, uid); err == nil {
				err = ErrRegenerating
			}
			return nil, offset, fmt.Errorf("social: page %q %s: %w", uid, what, err)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("social: page %q %s: %w", uid, what, err)
		}
		return out, next, nil
	}
	out := make([]Status, 0, count)
	next := offset
	for try := 0; try <= topUps && len(out) < count; try++ {
		want := count - len(out)
		var ids []string
		var err error
		if try == 0 && seen {
			var regen bool
			if ids, regen, err = n.homeFirst(ctx, uid, next, want); err == nil && regen {
				return nil, offset, fmt.Errorf("social: page %q %s: %w", uid, what, ErrRegenerating)
			}
		} else {
			ids, err = n.rdb.ZRevRange(ctx, key, int64(next), int64(next+want-1)).Result()
		}
		if err != nil {
			return nil, 0, fmt.Errorf("social: page %q %s: %w", uid, what, script.WrongType(ctx, n.rdb, err, key, role, "zset"))
		}
		next += len(ids)
		got, err := n.statuses(ctx, ids)
		if err != nil {
			return nil, 0, fmt.Errorf("social: page %q %s: %w", uid, what, err)
		}
		out = append(out, got...)
		if len(ids) < want {
			break // the end of the timeline
		}
	}
	return out, next, nil
}

// pageOne reads a page of the timeline key of uid on one server with
// page.lua: the IDs, the statuses and the top-ups in one round trip,
// recording the read first if seen (a home timeline, inactive users on),
// or reporting that the timeline is being regenerated.
func (n *Network) pageOne(ctx context.Context, uid, key, role string, seen bool, offset, count int) ([]Status, int, bool, error) {
	keys, args := []string{key}, []any{n.ks.Prefix(), offset, count, topUps, role}
	if seen {
		keys, args = append(keys, n.userKey(uid)), append(args, n.seenEvery())
	}
	v, err := pageScript.Run(ctx, n.rdb, keys, args...)
	if err != nil {
		if seen { // it may have written
			err = script.Unknown(err)
		}
		return nil, 0, false, err
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 || (len(arr)-1)%7 != 0 {
		return nil, 0, false, fmt.Errorf("script %s: unexpected reply %v", pageScript.Name(), v)
	}
	next, _ := arr[0].(int64)
	if next < 0 {
		return nil, 0, true, nil
	}
	out := make([]Status, 0, (len(arr)-1)/7)
	for i := 1; i < len(arr); i += 7 {
		f := func(j int) string { s, _ := arr[i+j].(string); return s }
		ms, _ := strconv.ParseInt(f(4), 10, 64)
		out = append(out, Status{ID: f(0), UID: f(1), Login: f(2), Message: f(3), Posted: msToTime(ms), Location: parsePoint(f(5), f(6))})
	}
	return out, int(next), false, nil
}

// statuses reads the statuses ids, pipelined, skipping those that no
// longer exist. With a status cache ([WithStatusCache]) the cached ones are
// not read (no round trip when all are), and the others are cached once
// read, each under a ticket taken before the read (an invalidation heard
// meanwhile wins).
func (n *Network) statuses(ctx context.Context, ids []string) ([]Status, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out := make([]Status, len(ids))
	have := make([]bool, len(ids))
	miss := len(ids)
	if n.near != nil {
		for i, id := range ids {
			if p, ok := n.near.Lookup(id); ok {
				if st, ok := decodeStatus(id, p); ok {
					out[i], have[i] = st, true
					miss--
				}
			}
		}
	}
	if miss > 0 {
		if err := n.readStatuses(ctx, ids, out, have); err != nil {
			return nil, err
		}
	}
	j := 0
	for i := range out {
		if have[i] {
			out[j] = out[i]
			j++
		}
	}
	return out[:j], nil
}

// readStatuses reads the statuses ids[i] that are not have[i], pipelined,
// into out[i], setting have[i] for those that exist, and caches them.
func (n *Network) readStatuses(ctx context.Context, ids []string, out []Status, have []bool) error {
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	keys := make([]string, len(ids))
	var tickets []near.Ticket
	if n.near != nil {
		tickets = make([]near.Ticket, len(ids))
	}
	_, err := n.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for i, id := range ids {
			if have[i] {
				continue
			}
			uid, num, err := checkStatusID(id)
			if err != nil {
				continue // not a status ID of this package: skipped
			}
			keys[i] = n.statusPrefix(uid) + num
			if tickets != nil {
				tickets[i] = n.near.Begin(id)
			}
			cmds[i] = pl.HGetAll(ctx, keys[i])
		}
		return nil
	})
	if tickets != nil {
		defer func() { // every ticket is finished; cached only on success
			for i, c := range cmds {
				if c == nil {
					continue
				}
				ok := err == nil && have[i]
				var p string
				if ok {
					p = encodeStatus(out[i])
				}
				n.near.Finish(ids[i], tickets[i], p, near.Forever, ok)
			}
		}()
	}
	if err != nil {
		for i, c := range cmds {
			if c != nil && c.Err() != nil {
				return script.WrongType(ctx, n.rdb, c.Err(), keys[i], "social status", "hash")
			}
		}
		return err
	}
	for i, c := range cmds {
		if c == nil || len(c.Val()) == 0 {
			continue
		}
		h := c.Val()
		ms, _ := strconv.ParseInt(h["posted"], 10, 64)
		out[i] = Status{ID: ids[i], UID: h["uid"], Login: h["login"], Message: h["message"], Posted: msToTime(ms), Location: parsePoint(h["lat"], h["lon"])}
		have[i] = true
	}
	return nil
}

// encodeStatus is the status cache's payload of st: its fields but the
// ID (the cache key), each a length and the bytes.
func encodeStatus(st Status) string {
	b := make([]byte, 0, 64+len(st.Message))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(st.UID)
	str(st.Login)
	str(st.Message)
	b = binary.AppendVarint(b, st.Posted.UnixMilli())
	if st.Location == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(st.Location.Lat))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(st.Location.Lon))
	}
	return string(b)
}

// decodeStatus decodes a payload of encodeStatus for status id.
func decodeStatus(id, p string) (Status, bool) {
	st := Status{ID: id}
	str := func() (string, bool) {
		l, k := binary.Uvarint([]byte(p[:min(len(p), binary.MaxVarintLen64)]))
		if k <= 0 || uint64(len(p)-k) < l {
			return "", false
		}
		s := p[k : k+int(l)]
		p = p[k+int(l):]
		return s, true
	}
	var ok1, ok2, ok3 bool
	st.UID, ok1 = str()
	st.Login, ok2 = str()
	st.Message, ok3 = str()
	if !ok1 || !ok2 || !ok3 {
		return Status{}, false
	}
	ms, k := binary.Varint([]byte(p[:min(len(p), binary.MaxVarintLen64)]))
	if k <= 0 || k >= len(p) {
		return Status{}, false
	}
	st.Posted = msToTime(ms)
	p = p[k:]
	switch {
	case p == "\x00":
	case len(p) == 17 && p[0] == 1:
		st.Location = &Point{
			Lat: math.Float64frombits(binary.LittleEndian.Uint64([]byte(p[1:9]))),
			Lon: math.Float64frombits(binary.LittleEndian.Uint64([]byte(p[9:17]))),
		}
	default:
		return Status{}, false
	}
	return st, true
}

// Status returns status id in one round trip (none with [WithStatusCache]
// when it is cached), or [ErrNoStatus] if it does not exist (or was
// deleted).
func (n *Network) Status(ctx context.Context, id string) (Status, error) {
	if _, _, err := checkStatusID(id); err != nil {
		return Status{}, fmt.Errorf("social: status: %w", err)
	}
	got, err := n.statuses(ctx, []string{id})
	if err != nil {
		return Status{}, fmt.Errorf("social: status %q: %w", id, err)
	}
	if len(got) == 0 {
		return Status{}, fmt.Errorf("social: status %q: %w", id, ErrNoStatus)
	}
	return got[0], nil
}

// Follows reports whether user uid follows user other, in one round trip.
// It reads uid's side (its following), which a Follow writes first and an
// Unfollow last (see "Follows between two slots" in the package doc). An
// unknown user follows nobody; nobody follows itself.
func (n *Network) Follows(ctx context.Context, uid, other string) (bool, error) {
	uid, err := checkUID("user", uid)
	if err == nil {
		other, err = checkUID("other user", other)
	}
	if err != nil {
		return false, fmt.Errorf("social: follows: %w", err)
	}
	err = n.rdb.ZScore(ctx, n.followingKey(uid), other).Err()
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, redis.Nil):
		return false, nil
	}
	return false, fmt.Errorf("social: follows %q %q: %w", uid, other, script.WrongType(ctx, n.rdb, err, n.followingKey(uid), "social following", "zset"))
}

// Followers returns up to count (1 to [MaxPage]) followers of user uid
// from position offset, in the order they followed, in one round trip.
func (n *Network) Followers(ctx context.Context, uid string, offset, count int) ([]string, error) {
	return n.members(ctx, "followers", uid, offset, count, n.followersKey, "social followers")
}

// Following returns up to count (1 to [MaxPage]) users that user uid
// follows from position offset, in the order it followed them, in one
// round trip.
func (n *Network) Following(ctx context.Context, uid string, offset, count int) ([]string, error) {
	return n.members(ctx, "following", uid, offset, count, n.followingKey, "social following")
}

func (n *Network) members(ctx context.Context, op, uid string, offset, count int, key func(string) string, role string) ([]string, error) {
	uid, err := checkUID("user", uid)
	if err != nil {
		return nil, fmt.Errorf("social: %s: %w", op, err)
	}
	if count < 1 || count > MaxPage || offset < 0 || offset > 1<<30 {
		return nil, fmt.Errorf("social: %s %q: offset %d, count %d: want offset >= 0 and count between 1 and %d", op, uid, offset, count, MaxPage)
	}
	m, err := n.rdb.ZRange(ctx, key(uid), int64(offset), int64(offset+count-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("social: %s %q: %w", op, uid, script.WrongType(ctx, n.rdb, err, key(uid), role, "zset"))
	}
	return m, nil
}

func msToTime(ms int64) time.Time { return time.UnixMilli(ms) }

// ErrRegenerating is returned by [Network.Page] for the home timeline of
// a user who was inactive ([WithInactiveAfter]): the timeline is being
// regenerated by a [TaskRegenerate] task; read it again shortly.
var ErrRegenerating = errors.New("social: home timeline is being regenerated")

// homeFirst reads the first part of a page of uid's home timeline with
// home.lua, which records the read; if the timeline is being regenerated
// it (re-)enqueues the regeneration and reports it. One round trip, plus
// one to enqueue.
func (n *Network) homeFirst(ctx context.Context, uid string, start, want int) ([]string, bool, error) {
	v, err := homeScript.Run(ctx, n.rdb, []string{n.userKey(uid), n.homeKey(uid)}, start, start+want-1, n.seenEvery())
	if err != nil {
		return nil, false, script.Unknown(err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, false, fmt.Errorf("script %s: unexpected reply %v", homeScript.Name(), v)
	}
	if arr[0] == int64(1) {
		return nil, true, n.regenerate(ctx, uid)
	}
	ids := make([]string, 0, len(arr)-1)
	for _, x := range arr[1:] {
		id, _ := x.(string)
		ids = append(ids, id)
	}
	return ids, false, nil
}

// seenEvery is how old (ms) a recorded read of a home timeline may be
// before a read records itself again (home_seen).
func (n *Network) seenEvery() int64 { return min(n.idle/4, time.Minute).Milliseconds() }

// regenerate enqueues the regeneration of uid's home timeline (one task
// per user at a time), in one round trip.
func (n *Network) regenerate(ctx context.Context, uid string) error {
	// The ID ends in ":r": a queue ID must not end in ":a" or ":e", which a
	// user ID may.
	return n.enqueue(ctx, n.task(TaskRegenerate, TaskRegenerate+":"+uid+":r", regen{User: uid}))
}
