package social

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/script"
)

// ErrSelf is returned by [Network.Follow] and [Network.Unfollow] when a
// user names itself.
var ErrSelf = errors.New("social: a user cannot follow itself")

// Follow makes user uid follow user other and returns true, or false if it
// already did (a repeated Follow completes one that was cut in half: see
// "Follows between two slots" in the package doc). other's most recent
// statuses (up to the timeline cap) are copied into uid's home timeline,
// which is then trimmed to the cap. Three round trips: a read-only script
// in other's slot (other exists, its keys' types, its recent statuses),
// then a script in uid's slot (add the followee, count it, copy the
// statuses), then one in other's (add the follower, count it, return what
// other posted meanwhile, and, if other deleted a status meanwhile, which
// of the copied ones are gone); plus one, rarely, to copy the new ones and
// remove the gone ones (with a tombstone, as a clean leaves). No status is
// missed: a post before the third step is in the profile the third step
// reads, a post after it is fanned out to uid; and no deleted one stays:
// a delete before the third step is seen by it, one after it is cleaned
// from uid's timeline by its clean task. Both writing steps are
// once-scripts (see "Lost replies" in the package doc): a step re-sent
// after a lost reply answers as it first did and writes nothing again, so
// an Unfollow that saw the follow's writes stays done. It returns
// [ErrNoUser] if either user does not exist and [ErrSelf] if they are the
// same, having written nothing.
func (n *Network) Follow(ctx context.Context, uid, other string) (bool, error) {
	uid, other, err := checkPair("follow", uid, other)
	if err != nil {
		return false, err
	}
	recent, read, err := n.profile(ctx, other, n.followersKey(other), "social followers")
	if err != nil {
		return false, fmt.Errorf("social: follow %q %q: %w", uid, other, err)
	}
	args := append([]any{other, n.cap}, recent...)
	keys := []string{n.userKey(uid), n.followingKey(uid), n.homeKey(uid), n.goneKey(uid)}
	v, err := followScript.RunOnce(ctx, n.rdb, n.onceKey(uid), keys, args...)
	if err != nil {
		err = refusal(err)
		if errors.Is(err, ErrNoUser) {
			err = fmt.Errorf("%q: %w", uid, err)
		}
		return false, fmt.Errorf("social: follow %q %q: %w", uid, other, err)
	}
	added, err := followScript.AsInt64(v)
	if err != nil {
		return false, fmt.Errorf("social: follow %q %q: %w", uid, other, err)
	}
	v, err = followedScript.RunOnce(ctx, n.rdb, n.onceKey(other), []string{n.userKey(other), n.followersKey(other), n.profileKey(other)}, append([]any{uid, n.cap}, read...)...)
	if err != nil {
		return false, fmt.Errorf("social: follow %q %q: %w", uid, other, script.Unknown(err))
	}
	if err := n.copyNew(ctx, other, n.homeKey(uid), n.followingKey(uid), n.goneKey(uid), "", recent, followedScript, v); err != nil {
		return false, fmt.Errorf("social: follow %q %q: %w", uid, other, err)
	}
	return added == 1, nil
}

// profile runs the read-only first step of a follow or a list add in
// author's slot (set is its followers or listed key, of role role): it
// returns author's recent statuses as id, score arguments, and what the
// third step (followed.lua, listed.lua) takes after its cap: the score of
// the newest ('-inf' if none), author's deletes count, and the score of
// the oldest ("" if none); or [ErrNoUser].
func (n *Network) profile(ctx context.Context, author, set, role string) (recent, read []any, err error) {
	v, err := profileScript.Run(ctx, n.rdb, []string{n.userKey(author), set, n.profileKey(author)}, n.cap, role)
	if err != nil {
		return nil, nil, err
	}
	arr, ok := v.([]any)
	// {0} first: it has an odd length, and would fail the length check.
	if ok && len(arr) == 1 && arr[0] == int64(0) {
		return nil, nil, fmt.Errorf("%q: %w", author, ErrNoUser)
	}
	if !ok || len(arr) < 2 || len(arr)%2 != 0 || arr[0] != int64(1) {
		return nil, nil, fmt.Errorf("script %s: unexpected reply %v", profileScript.Name(), v)
	}
	deletes, ok := arr[1].(int64)
	if !ok {
		return nil, nil, fmt.Errorf("script %s: unexpected reply %v", profileScript.Name(), v)
	}
	recent = arr[2:]
	newest, oldest := any("-inf"), any("")
	if len(recent) > 0 {
		newest, oldest = recent[1], recent[len(recent)-1]
	}
	return recent, []any{newest, deletes, oldest}, nil
}

// copyNew checks the reply v of followed.lua or listed.lua (s), and
// copies the statuses of author it returns, posted during the follow, into
// the timeline tl guarded by members, and removes from tl those of seen it
// says were deleted during the follow (see copy.lua), in one round trip
// when there are some. seen is the reply of the first step (id, score...):
// statuses there were copied already.
func (n *Network) copyNew(ctx context.Context, author, tl, members, gone, kind string, seen []any, s *script.Script, v any) error {
	arr, ok := v.([]any)
	if ok && len(arr) == 1 && arr[0] == int64(0) { // {0} before the length check: it is odd
		return fmt.Errorf("%q: %w", author, ErrNoUser) // a user is never deleted: not seen
	}
	var window []any // the profile from seen's oldest on, if a status was deleted
	if ok {
		if i := slices.Index(arr, any("*")); i >= 0 {
			arr, window = arr[:i], arr[i+1:]
		}
	}
	if !ok || len(arr) < 2 || len(arr)%2 != 0 {
		return fmt.Errorf("script %s: unexpected reply %v", s.Name(), v)
	}
	args := []any{author, n.cap, kind, n.tombTTL.Milliseconds(), 0}
	for i := 2; i < len(arr); i += 2 {
		if !slices.Contains(seen, arr[i]) { // the first step read it: copied
			args = append(args, arr[i], arr[i+1])
		}
	}
	args[4] = (len(args) - 5) / 2
	if window != nil {
		now := make(map[any]bool, len(window))
		for _, id := range window {
			now[id] = true
		}
		for i := 0; i < len(seen); i += 2 {
			if !now[seen[i]] { // deleted since the first step
				args = append(args, seen[i])
			}
		}
	}
	if len(args) == 5 {
		return nil
	}
	_, err := copyScript.Run(ctx, n.rdb, []string{tl, members, gone}, args...)
	return script.Unknown(err)
}

// Unfollow makes user uid stop following user other and returns true, or
// false if it did not follow it (then nothing changes; an unknown user
// follows no one). Every status of
// other leaves uid's home timeline ([Network.Refill] tops it up again).
// Three round trips: the read-only check of [Network.Follow], a script in
// other's slot (remove the follower, count it), then one in uid's (remove
// the followee, count it, drop its statuses); both writing steps are
// once-scripts, as Follow's are. A repeated Unfollow completes one that
// was cut in half. It returns [ErrSelf] if the users are the same.
func (n *Network) Unfollow(ctx context.Context, uid, other string) (bool, error) {
	uid, other, err := n.pair(ctx, "unfollow", uid, other)
	if errors.Is(err, ErrNoUser) {
		return false, nil // an unknown user follows no one
	}
	if err != nil {
		return false, err
	}
	// NOTFOLLOWING (nothing written): uid's side may still hold other.
	_, err = unfollowedScript.RunOnce(ctx, n.rdb, n.onceKey(other), []string{n.userKey(other), n.followersKey(other)}, uid)
	if err != nil && !errors.Is(refusal(err), errNotFollowing) {
		return false, fmt.Errorf("social: unfollow %q %q: %w", uid, other, script.Unknown(err))
	}
	v, err := unfollowScript.RunOnce(ctx, n.rdb, n.onceKey(uid), []string{n.userKey(uid), n.followingKey(uid), n.homeKey(uid)}, other)
	if errors.Is(refusal(err), errNotFollowing) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("social: unfollow %q %q: %w", uid, other, err)
	}
	removed, err := unfollowScript.AsInt64(v)
	if err != nil {
		return false, fmt.Errorf("social: unfollow %q %q: %w", uid, other, err)
	}
	return removed == 1, nil
}

// checkPair checks the two users of a follow.
func checkPair(op, uid, other string) (string, string, error) {
	uid, err := checkUID("user", uid)
	if err != nil {
		return "", "", fmt.Errorf("social: %s: %w", op, err)
	}
	if other, err = checkUID("followed user", other); err != nil {
		return "", "", fmt.Errorf("social: %s: %w", op, err)
	}
	if uid == other {
		return "", "", fmt.Errorf("social: %s %q: %w", op, uid, ErrSelf)
	}
	return uid, other, nil
}

// pair checks the two users of an unfollow and that uid exists.
func (n *Network) pair(ctx context.Context, op, uid, other string) (string, string, error) {
	uid, other, err := checkPair(op, uid, other)
	if err != nil {
		return "", "", err
	}
	// Users are never deleted, so a user that exists now exists when the
	// third step runs; its keys are checked before the second step writes.
	ex, err := precheckScript.Run(ctx, n.rdb, []string{n.userKey(uid), n.followingKey(uid), n.homeKey(uid), n.goneKey(uid)})
	if err != nil {
		return "", "", fmt.Errorf("social: %s %q %q: %w", op, uid, other, err)
	}
	if ex != int64(1) {
		return "", "", fmt.Errorf("social: %s %q %q: %q: %w", op, uid, other, uid, ErrNoUser)
	}
	return uid, other, nil
}

// refillChunk is how many followed users' profiles one pipeline of
// [Network.Refill] reads.
const refillChunk = 500

// Refill rebuilds user uid's home timeline from the profiles of the users
// it follows (refill_timeline): after an unfollow emptied it, or for a
// timeline that lost entries. The most recent statuses, up to the cap, of
// all followed users are merged into it; statuses already there stay. It
// returns the timeline's length. Round trips: 1 per 500 followed users
// (at least 1) to list them (the first also counts them, so a last chunk
// of exactly 500 ends the listing), 1 per node per 500 followed users to
// read their profiles, and 1 for the script that adds the statuses (only
// of users still followed then, and not cleaned since; it runs for a user
// following nobody too, and trims the timeline). Not a snapshot: a status
// posted or deleted meanwhile is handled by its own fan-out or clean, and
// a user followed meanwhile copied its statuses itself.
func (n *Network) Refill(ctx context.Context, uid string) (int64, error) {
	uid, err := checkUID("user", uid)
	if err != nil {
		return 0, fmt.Errorf("social: refill: %w", err)
	}
	type entry struct {
		author, id string
		score      float64
	}
	var best []entry
	var total int64 // the followed users' count, read with the first chunk
	for start := int64(0); ; start += refillChunk {
		var authors []string
		var err error
		if start == 0 {
			// The count with the first chunk (no extra round trip), so
			// that a full last chunk ends the loop without one more read.
			var zr *redis.StringSliceCmd
			var zc *redis.IntCmd
			_, err = n.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
				zr = pl.ZRange(ctx, n.followingKey(uid), 0, refillChunk-1)
				zc = pl.ZCard(ctx, n.followingKey(uid))
				return nil
			})
			authors, total = zr.Val(), zc.Val()
		} else {
			authors, err = n.rdb.ZRange(ctx, n.followingKey(uid), start, start+refillChunk-1).Result()
		}
		if err != nil {
			return 0, fmt.Errorf("social: refill %q: %w", uid, script.WrongType(ctx, n.rdb, err, n.followingKey(uid), "social following", "zset"))
		}
		if len(authors) == 0 {
			break
		}
		cmds := make([]*redis.ZSliceCmd, len(authors))
		_, err = n.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
			for i, a := range authors {
				cmds[i] = pl.ZRevRangeWithScores(ctx, n.profileKey(a), 0, int64(n.cap)-1)
			}
			return nil
		})
		for i, c := range cmds {
			if redis.HasErrorPrefix(c.Err(), "WRONGTYPE") {
				return 0, fmt.Errorf("social: refill %q: %w", uid, script.WrongType(ctx, n.rdb, c.Err(), n.profileKey(authors[i]), "social profile timeline", "zset"))
			}
		}
		if err != nil {
			return 0, fmt.Errorf("social: refill %q: %w", uid, err)
		}
		for i, c := range cmds {
			for _, z := range c.Val() {
				best = append(best, entry{authors[i], z.Member.(string), z.Score})
			}
		}
		slices.SortFunc(best, func(a, b entry) int { return cmp.Compare(b.score, a.score) })
		best = best[:min(len(best), n.cap)]
		// Users followed after the count was read copied their own
		// statuses when they were followed.
		if len(authors) < refillChunk || start+refillChunk >= total {
			break
		}
	}
	args := make([]any, 0, 1+3*len(best))
	args = append(args, n.cap)
	for _, e := range best {
		args = append(args, e.author, e.id, strconv.FormatFloat(e.score, 'f', -1, 64))
	}
	v, err := refillScript.Run(ctx, n.rdb, []string{n.followingKey(uid), n.homeKey(uid), n.goneKey(uid)}, args...)
	if err != nil {
		return 0, fmt.Errorf("social: refill %q: %w", uid, err)
	}
	return refillScript.AsInt64(v)
}
