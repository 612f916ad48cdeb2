package autocomplete

// recentKey is a LIST of user's recent contacts, the most recent first, as
// they were spelled; at most the Completer's recent length.
func (c *Completer) recentKey(user string) string { return c.keys.Key(user, "recent") }

// membersKey is a ZSET of the members of set, every score 0, each member
// Fold(name) + "\x00" + name, so that ZRANGEBYLEX over it runs in folded
// order and a range of folded prefixes finds the names that start with a
// prefix.
func (c *Completer) membersKey(set string) string { return c.keys.Key(set, "members") }

// onceKey is a new reply record key of one call of a write on entity (a
// user or a set), <prefix>{<entity>}:once:<nonce>: a STRING holding the
// reply of the call's script, living for the client's retry window, so
// that a re-send of the call is answered from it (script.RunOnce).
func (c *Completer) onceKey(entity string) string { return c.keys.Once(entity) }

// member returns the ZSET member of name.
func member(name string) string { return Fold(name) + "\x00" + name }

// spelling returns the name a ZSET member holds.
func spelling(m string) (string, bool) {
	for i := 0; i < len(m); i++ {
		if m[i] == 0 {
			return m[i+1:], true
		}
	}
	return "", false
}
