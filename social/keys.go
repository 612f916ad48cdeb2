package social

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
// home timeline, by clean time (ms), capped at the timeline cap.
func (n *Network) goneKey(uid string) string { return n.ks.Key(uid, "gone") }

// onceKey is a new reply record key of a once-script run in uid's slot.
func (n *Network) onceKey(uid string) string { return n.ks.Once(uid) }
