// Package chat is group chat on Redis with pull delivery (Redis in Action
// 6.5, the multiple-recipient publish/subscribe replacement): a member
// does not need to be connected when a message is sent; they fetch what
// they have not seen, from every chat they are in, when they come back.
//
//	cs, err := chat.New(rdb)
//	m, err := cs.Create(ctx, "c1", "joe", []string{"jeff", "jenny"}, "message 1")
//	m, err = cs.Send(ctx, "c1", "joe", "message 2")
//	ms, err := cs.Fetch(ctx, "jeff")  // messages 1 and 2, now seen
//	ms, err = cs.Wait(ctx, "jenny")   // blocks until there is something
//
// # What it does
//
// [Chats.Create] makes a chat with its members and first message;
// [Chats.Send] adds a message; [Chats.Fetch] returns a user's unseen
// messages of all their chats and marks them seen; [Chats.Join] adds a
// member who sees only later messages; [Chats.Leave] removes one, and the
// chat is deleted with its last member, its file transfers included.
// Messages every member has seen are deleted (trimmed) by Fetch and
// Leave, as the book does.
// [Chats.Unread] counts unseen messages per chat, [Chats.History] pages a
// chat's messages by id, [Chats.Members] lists a chat's members with the
// last message each has seen (read receipts), [Chats.Wait] blocks until a
// user has something to fetch. [Chats.SendFile] distributes a file of any
// size to the other members and [Chats.OpenFile] reads it as a stream
// (book 6.6). A [Message] carries its chat, id, sender, the server's time
// and a payload encoded by a [Codec] ([JSON] by default, [Raw] for bytes).
// The message announcing a file is the JSON of a [FileRef] whatever the
// codec, so SendFile works with every codec; [Message.File] recognises it
// (with JSON, [Message.Decode] reads it too).
//
// # Guarantees
//
//   - Message ids are 1, 2, 3... per chat in the order sends reach Redis,
//     with no gap and no duplicate; no lock (the book takes one per send):
//     a send is one script.
//   - A member fetches every message sent while they were a member exactly
//     once (see Lost replies), in id order; a member who joins sees only
//     messages sent after.
//   - Wait wakes within a round trip of a send: every send publishes the
//     new id to each other member's channel. Create publishes message 1
//     only once the chat is on the members' lists (its second round trip,
//     each wake-up after its member's SADD), and Join wakes the joining
//     user after adding the chat to their list (a send between its two
//     steps woke them before), so a woken Wait always finds the chat.
//     Pub/sub only wakes; the data
//     is pulled from the seen ids, so a wake-up lost to a reconnect loses
//     no message (Wait fetches again on re-subscription, and every poll
//     interval in any case).
//   - File distribution: the sender blocks while the chunks not yet read
//     by every receiver hold [WithFileWindow] bytes (back-pressure, the
//     book's copy_logs_to_redis waits on used memory instead); a receiver
//     reads an io.Reader; chunks are deleted as soon as every receiver has
//     read past them, and the transfer once all reached its end; a
//     receiver that restarts lists the unfinished transfers
//     ([Chats.Files]) and reopens each at the chunk it was reading
//     ([FileReader.Offset] says from which byte). A reader never skips
//     data: when another reader of the same receiver (the old process
//     still running, another device) has read further, the one behind
//     fails with [ErrStaleReader]. Opening and announcing a transfer is
//     one script, so a refused SendFile writes nothing. Measured: 200 MB to two
//     receivers on a real server, peak Redis memory 5.7 MB above idle with
//     a 4 MB window.
//   - The last [Chats.Leave] deletes everything of the chat in the same
//     script: members, messages, id counter, the files set and every
//     transfer it lists (state and chunks, UNLINKed: freed in the
//     background), finished or not. Only reply records are left, which
//     expire with the retry window. A Leave of a chat with no member left
//     deletes what is there again, so a repeated Leave completes it (a
//     re-sent one is answered from its record, see Lost replies), and a
//     chat created again with the same id starts with no file. A
//     transfer deleted this way ends for its sender and readers with an
//     error wrapping [ErrNoFile] (never a short, clean end of file); a
//     read that reached the end and whose reply was lost is answered end
//     of file again from a record of the call.
//   - Bad input (empty or over-long ids, ids with braces or control
//     characters, no recipient other than the sender, more than
//     [MaxMembers] members, a Join to a full chat, payloads over
//     [MaxPayload], unknown chats, senders who are not members) is an
//     error wrapping a sentinel of this package, and nothing is written.
//
// # Lost replies
//
// go-redis re-sends a command whose reply was lost. The scripts of Create,
// Send, Join and Leave are once-scripts: the first run records its reply
// for the client's retry window under <prefix>{<chat>}:once:<nonce>, and
// a re-send is answered from it and writes nothing, so a lost reply
// neither doubles a message nor turns a create into [ErrExists], and a
// re-sent Join or Leave cannot undo a Leave or Join of the same user (from
// another device) made meanwhile, nor act on a chat created again with
// the same id. A refusal ([ErrExists], [ErrNoChat], [ErrNotMember],
// [ErrFull]) writes nothing but the record, which answers a re-send the
// same; a wrong type or corrupt value (a *ria.KeyError) is found before
// the script's first write and keeps no record. The client-side steps
// that follow (the SADD or SREM of the user's list with its wake-up,
// Leave's membership read) run on the answer, whether it came from the
// run or the record. Fetch's per-chat script records the messages it
// returned the same way, so a re-sent fetch returns them again instead
// of nothing. SendFile's first script (the transfer opened and announced
// by a message) is a once-script, and so is its end-of-file write: every
// receiver may have read the file to its end and deleted the transfer
// before the re-send, which is still answered "done". Its chunk writes,
// the file reads (a re-sent read gets the same chunk; one that reached the
// end is answered from a record) and the wake-ups of Create, Join and
// Leave are naturally idempotent (a repeated wake-up only makes a Wait
// fetch again). When every re-send fails, the error wraps
// ria.ErrOutcomeUnknown (Fetch then also returns the messages of the chats
// it did read; the chats in error may have been marked seen, and
// [Chats.History] has their messages until every other member has seen
// them).
//
// # Wrong types
//
// Every script checks the type of each key it uses, and the integers it
// reads, before its first write; a key of another type gives a
// *ria.KeyError naming the key and its role ("chat members", "chat
// messages", "chat ids", "chat user chats", "chat files", "chat file",
// "chat file data") and nothing is written. Integers must be canonical (no
// '+', no leading zero, no exponent, space, hex, inf or nan) and in range:
// the id counter 0 to 2^53-1 (so that ids stay exact in Lua and in ZSET
// scores), a transfer's last, size, low and positions within 2^53 and
// consistent with the chunks stored; another value is a *ria.KeyError
// wrapping ria.ErrCorrupt and nothing is written.
//
// # Round trips
//
// Send 1 (one script); History 1; Members 1; Create and Join 2 (a script
// in the chat's slot, then one pipeline of the members' lists in their own
// slots, each SADD followed by its member's wake-up: 1 per node holding a
// member's list on a Cluster, for Create); Leave
// 3 (its script, SREM, then ZSCORE: the user's membership read again, as
// a Join of theirs from another device, or a Create of the chat again,
// may have run between the script and the SREM; 4 when it did, SADD
// putting the chat back on their list, with a wake-up);
// Fetch and Unread 2 whatever the number of chats: SMEMBERS of the user's
// list, then one pipeline of one script per chat, which go-redis sends as
// one round trip per node on a Cluster (so at most 2 on any node); 1 for a
// user in no chat. The first run of fetch.lua or unread.lua on a server
// costs one more pipeline (EVALSHA answered NOSCRIPT, then EVAL).
// SendFile: 1 to start (one script opens the transfer and sends its
// announcement), then 1 per chunk of [ChunkSize], 1 per wait and 1 to
// mark the end (3 for a file of one chunk the window holds); a file read:
// 1 to open, 1 per chunk, 1 per wait and 1 answered end of file (3 for a
// file of one chunk, complete when read).
//
// The once-scripts cost no round trip: the record is read and written
// inside the script. Each Create, Send, Join and Leave leaves one record
// (a string of a few bytes in the chat's slot) for the client's retry
// window, none on a client that never re-sends (MaxRetries -1).
//
// # Key schema
//
//	<prefix>{<chat>}:members  ZSET member -> id of the last message they saw
//	<prefix>{<chat>}:msgs     ZSET '<id>:<ms>:<len(sender)>:<sender><payload>' -> id
//	<prefix>{<chat>}:ids      STRING last message id
//	<prefix>{<chat>}:once:<n> STRING a reply record (expires: retry window);
//	                          also a file read's end-of-file record
//	<prefix>{<chat>}:files    SET ids of unfinished file transfers
//	<prefix>{<chat>}:file:<f> HASH name, n, last, low, size, eof, pos:<user>, off:<user>
//	                          (pos last+2: the receiver has read the end)
//	<prefix>{<chat>}:file:<f>:data HASH chunk seq -> bytes
//	<prefix>{<user>}:chats    SET the user's chats
//	<prefix>{<user>}:wake     pub/sub channel: ids of new messages ("0": a
//	                          chat put on the user's list by Join or Leave)
//
// Every <prefix>{<chat>}:* key but the reply records is deleted by the
// last Leave; a file's keys are also deleted once every receiver has read
// its end. The default prefix is "chat:". User and chat ids share the hash-tag
// space but not the key names.
//
// # Cluster
//
// One chat lives in one slot (its hash tag), a user's list in the user's
// slot, so no call can get CROSSSLOT. A wake-up is published on the node
// of its channel's slot, the user's, in the pipeline of the SADD it
// follows (go-redis would send a PUBLISH to any node). Create, Join and
// Leave write two
// slots one after the other: an error between the two steps (a member's
// list of another type, an unknown outcome, a crash) leaves the chat side
// written; a new call of Join (or Leave) runs both steps again and
// completes it. A chat reference left on a user's list without
// membership is skipped by Fetch.
//
// A Send publishes its wake-ups from its script, on the chat's node: a
// Cluster passes every PUBLISH to every node, but a *redis.Ring (or
// independent servers behind one client) does not, so there a member
// whose user key lives on another server is not woken by a Send (nor by
// SendFile's announcement) and sees the message at its Wait's next poll
// ([WithPollInterval]). Create, Join and Leave publish from the client,
// on the user's server, and wake on every kind of client.
//
// # Limits
//
// A send publishes one wake-up per member (O(members)), hence
// [MaxMembers], which Create and Join enforce ([ErrFull]). Messages stay until every member has fetched them: a
// member who never fetches keeps the chat's history alive (Leave them).
// Fetch returns at most [WithFetchLimit] messages per chat per call. A
// file transfer goes at the pace of its slowest receiver: one that never
// reads keeps the sender waiting (until its ctx ends) and up to the window
// in Redis, even after leaving the chat; an abandoned transfer stays
// until its chat is deleted (the last Leave deletes it). That Leave costs
// O(unfinished transfers) key deletions in one script. File waits are
// polled (1 to 50ms), not pushed.
package chat
