package social

import "strings"

// The keys of one user are <prefix>{<uid>}:<part>, uid being the user's ID
// (its login in lower case). They share the {<uid>} hash tag, so one user's
// keys live in one Cluster slot and every script touches one user's keys
// only. An operation between two users (follow, fan-out) runs one step in
// each user's slot (see "Redis Cluster" in the package doc).

// userKey is the user's HASH: login, name, followers, following, posts,
// seq (last status number), fseq (last follower number), signup (ms).
func (n *Network) userKey(uid string) string { return n.ks.Key(uid, "user") }

// statusPrefix is the prefix of the user's status HASHes: status <uid>:<n>
// is statusPrefix(uid)+n.
func (n *Network) statusPrefix(uid string) string { return n.ks.Key(uid, "status:") }

// profileKey is the ZSET of the user's own status IDs by post time (ms).
func (n *Network) profileKey(uid string) string { return n.ks.Key(uid, "profile") }

// homeKey is the ZSET of the status IDs of the users the user follows, by
// post time (ms).
func (n *Network) homeKey(uid string) string { return n.ks.Key(uid, "home") }

// followersKey is the ZSET of the user's followers scored by a sequence
// number (fseq), in the order they followed.
func (n *Network) followersKey(uid string) string { return n.ks.Key(uid, "followers") }

// followingKey is the ZSET of the users the user follows, by follow time (ms).
func (n *Network) followingKey(uid string) string { return n.ks.Key(uid, "following") }

// goneKey is the ZSET of the tombstones of statuses cleaned from the user's
// home timeline and lists, by clean time (ms), each kept for the tombstone
// TTL (WithTombstoneTTL); the key expires a TTL after its last write.
func (n *Network) goneKey(uid string) string { return n.ks.Key(uid, "gone") }

// onceKey is a new reply record key of a once-script run in uid's slot.
func (n *Network) onceKey(uid string) string { return n.ks.Once(uid) }

// listsKey is the ZSET of the names of the user's lists, by creation time
// (ms).
func (n *Network) listsKey(uid string) string { return n.ks.Key(uid, "lists") }

// listKey is the ZSET of the members of the user's list name, by the time
// they were added (ms).
func (n *Network) listKey(uid, name string) string { return n.ks.Key(uid, "list:"+name+":members") }

// listTimelineKey is the ZSET of the status IDs of the members of the
// user's list name, by post time (ms).
func (n *Network) listTimelineKey(uid, name string) string {
	return n.ks.Key(uid, "list:"+name+":timeline")
}

// listedKey is the ZSET of the lists holding the user, as
// "<owner>/<list>", scored by the user's follower sequence (fseq), which
// it shares with followersKey so that one fan-out pass walks both.
func (n *Network) listedKey(uid string) string { return n.ks.Key(uid, "listed") }

// feedKeys returns the keys that deliver.lua and clean.lua use for one
// fan-out target (a follower's ID, or "<owner>/<list>"): the timeline, the
// set that must hold the author for the target to be fed, the tombstones,
// and the kind argument ('list' or ”).
func (n *Network) feedKeys(target string) (timeline, members, gone, kind string) {
	if owner, list, ok := strings.Cut(target, "/"); ok {
		return n.listTimelineKey(owner, list), n.listKey(owner, list), n.goneKey(owner), "list"
	}
	return n.homeKey(target), n.followingKey(target), n.goneKey(target), ""
}
