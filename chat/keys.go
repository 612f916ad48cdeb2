package chat

// membersKey is a ZSET of chat's members, each scored by the id of the last
// message of chat they have seen (the book's chat:<id>).
func (c *Chats) membersKey(chat string) string { return c.keys.Key(chat, "members") }

// msgsKey is a ZSET of chat's messages not yet seen by every member, each
// '<id>:<ms>:<len(sender)>:<sender><payload>' scored by its id (msgs:<id>).
func (c *Chats) msgsKey(chat string) string { return c.keys.Key(chat, "msgs") }

// idsKey is a STRING, the last message id of chat (ids:<id>).
func (c *Chats) idsKey(chat string) string { return c.keys.Key(chat, "ids") }

// chatsKey is a SET of the chats user is a member of, in user's slot (the
// book's seen:<user>, whose seen ids live in the chats' members keys here).
func (c *Chats) chatsKey(user string) string { return c.keys.Key(user, "chats") }

// wakePrefix starts the pub/sub channel <prefix>{<user>}:wake on which
// every send publishes the new id to each other member.
func (c *Chats) wakePrefix() string { return c.keys.Prefix() }

// wakeChannel is user's wake-up channel.
func (c *Chats) wakeChannel(user string) string { return c.keys.Key(user, "wake") }

// chatKeys are the keys of chat the scripts take: members, msgs, ids.
func (c *Chats) chatKeys(chat string) []string {
	return []string{c.membersKey(chat), c.msgsKey(chat), c.idsKey(chat)}
}

// filesKey is a SET of the ids of chat's unfinished file transfers.
func (c *Chats) filesKey(chat string) string { return c.keys.Key(chat, "files") }

// fileKeys are the HASH of a transfer's state (name, last chunk, lowest
// chunk kept, bytes kept, eof, each receiver's pos:<user> chunk and
// off:<user> byte) and the HASH of its chunks (seq -> bytes).
func (c *Chats) fileKeys(chat, id string) (meta, data string) {
	p := c.filePrefix(chat)
	return p + id, p + id + ":data"
}

// filePrefix starts the keys of chat's transfers, <prefix>{<chat>}:file:,
// for leave.lua, which deletes the transfers listed in the files key.
func (c *Chats) filePrefix(chat string) string { return c.keys.Key(chat, "file:") }
