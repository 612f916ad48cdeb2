package chat

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed fopen.lua
	fopenLua string
	//go:embed fput.lua
	fputLua string
	//go:embed fget.lua
	fgetLua string

	// fopenScript opens a transfer and announces it: a once-script, as
	// its announcement is a message (send_msg of lib.lua).
	fopenScript = script.NewOnce("chat file open", libLua+fopenLua)
	fputScript  = script.New("chat file put", fputLua)
	// fendScript is fput.lua's end-of-file write as a once-script: the
	// receivers may finish and delete the transfer before a re-send.
	fendScript = script.NewOnce("chat file end", fputLua)
	fgetScript = script.New("chat file get", fgetLua)
)

var (
	// ErrNoFile is wrapped by the error of [Chats.OpenFile] for a transfer
	// that does not exist or that every receiver has finished, and by the
	// error of [Chats.SendFile] and [FileReader.Read] for a transfer deleted
	// with its chat before its end.
	ErrNoFile = errors.New("chat: no such file")
	// ErrNotReceiver is wrapped by the error of [Chats.OpenFile] for a
	// user who was not a receiver of the file.
	ErrNotReceiver = errors.New("chat: not a receiver")
	// ErrStaleReader is wrapped by the error of [FileReader.Read] when
	// another reader of the same receiver (another device, or an older
	// process still running) has read further: the chunks it passed may be
	// deleted, so this reader stops rather than skip them. Open the file
	// again ([Chats.OpenFile]) to read on from that reader's position.
	ErrStaleReader = errors.New("chat: another reader of this receiver is ahead")
)

const (
	// ChunkSize is the size of the chunks a file travels in.
	ChunkSize = 64 << 10
	// DefaultFileWindow is how many bytes of a file may wait in Redis for
	// its slowest receiver unless [WithFileWindow] says otherwise.
	DefaultFileWindow = 4 << 20
)

// FileRef is the payload of the chat message that announces a file:
// JSON {"file":"<id>","name":"<name>"} whatever the [Codec], so that
// [Chats.SendFile] works with every codec. With [JSON] (the default)
// [Message.Decode] reads it; with any codec [Message.File] does.
type FileRef struct {
	File string `json:"file"`
	Name string `json:"name"`
}

// File reports whether m announces a file ([Chats.SendFile]) and returns
// its reference: m's payload is the JSON of a [FileRef] with no other
// field and both fields set. It does not use the codec.
func (m Message) File() (FileRef, bool) {
	var ref FileRef
	d := json.NewDecoder(bytes.NewReader(m.Payload))
	d.DisallowUnknownFields()
	if d.Decode(&ref) != nil || d.More() || ref.File == "" || ref.Name == "" {
		return FileRef{}, false
	}
	return ref, true
}

// SendFile sends the content of r to the other members of chat as a file
// named name (Redis in Action's copy_logs_to_redis): it opens the transfer
// and sends a message announcing it, whose payload is a [FileRef] in JSON
// whatever the codec (see [Message.File]), in one script, then sends the
// content in chunks of [ChunkSize], then marks its end. Back-pressure:
// while the chunks not yet read by every receiver hold the file window
// ([WithFileWindow]) or more, the sender waits (polling, 1 to 50ms) — r
// may be of any size, Redis holds at most the window plus a chunk per
// transfer. It returns the file id. Round trips: 1 to start, 1 per chunk,
// 1 per wait and 1 for the end.
//
// Unknown chats give [ErrNoChat], a sender who is not a member
// [ErrNotMember]; a chat with no other member, a bad id or name is an
// error; a chat key of another Redis type gives a *ria.KeyError; in each
// case nothing is written. An error of r or ctx leaves the transfer
// unfinished: receivers wait for the rest, until the chat is deleted (its
// last [Chats.Leave] deletes its transfers). When that happens during the
// transfer, the next chunk fails with [ErrNoFile].
func (c *Chats) SendFile(ctx context.Context, chat, sender, name string, r io.Reader) (string, error) {
	if err := checkPair(chat, sender); err != nil {
		return "", fmt.Errorf("chat: send file: %w", err)
	}
	if err := checkID("file name", name); err != nil {
		return "", fmt.Errorf("chat: send file to %q: %w", chat, err)
	}
	id := NewID()
	ref, err := json.Marshal(FileRef{File: id, Name: name})
	if err != nil { // cannot happen: two strings
		return "", fmt.Errorf("chat: send file to %q: encode file ref: %w", chat, err)
	}
	meta, data := c.fileKeys(chat, id)
	keys := append(c.chatKeys(chat), c.filesKey(chat), meta)
	v, err := fopenScript.RunOnce(ctx, c.rdb, c.keys.Once(chat), keys, sender, id, name, ref, c.wakePrefix())
	if err != nil {
		return "", fmt.Errorf("chat: send file to %q: %w", chat, err)
	}
	ns, err := fopenScript.AsInt64s(v)
	switch {
	case err != nil || len(ns) == 0:
		return "", fmt.Errorf("chat: send file to %q: %w: reply %v", chat, ria.ErrCorrupt, v)
	case ns[0] == -1:
		return "", fmt.Errorf("chat: send file to %q: %w", chat, ErrNoChat)
	case ns[0] == -2:
		return "", fmt.Errorf("chat: send file to %q by %q: %w", chat, sender, ErrNotMember)
	case ns[0] == 0:
		return "", fmt.Errorf("chat: send file to %q: no other member: %w", chat, ErrInvalid)
	case ns[0] > 0 && len(ns) != 3, ns[0] < -3:
		return "", fmt.Errorf("chat: send file to %q: %w: reply %v", chat, ria.ErrCorrupt, v)
	}
	buf := make([]byte, ChunkSize)
	for seq := int64(1); ; seq++ {
		k, rerr := io.ReadFull(r, buf)
		if k > 0 {
			if err := c.put(ctx, meta, data, seq, buf[:k]); err != nil {
				return id, fmt.Errorf("chat: send file to %q: %w", chat, err)
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return id, fmt.Errorf("chat: send file to %q: read: %w", chat, rerr)
		}
	}
	if err := c.finish(ctx, chat, meta, data); err != nil {
		return id, fmt.Errorf("chat: send file to %q: %w", chat, err)
	}
	return id, nil
}

// finish marks the end of the file, so that its receivers finish once
// they have read every chunk.
func (c *Chats) finish(ctx context.Context, chat, meta, data string) error {
	v, err := fendScript.RunOnce(ctx, c.rdb, c.keys.Once(chat), []string{meta, data}, 0, "", c.window)
	if err != nil {
		return fmt.Errorf("end of file: %w", err)
	}
	n, err := fendScript.AsInt64(v)
	switch {
	case err != nil:
		return fmt.Errorf("end of file: %w", err)
	case n == -1:
		return fmt.Errorf("end of file: transfer gone: %w", ErrNoFile)
	}
	return nil
}

// put stores chunk seq (from 1), waiting while the window is full.
func (c *Chats) put(ctx context.Context, meta, data string, seq int64, chunk []byte) error {
	wait := time.Millisecond
	for {
		n, err := fputScript.Int64(ctx, c.rdb, []string{meta, data}, seq, chunk, c.window)
		switch {
		case err != nil:
			return script.Unknown(err)
		case n == -1:
			return fmt.Errorf("chunk %d: transfer gone: %w", seq, ErrNoFile)
		case n == 1:
			return nil
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Files returns the ids of chat's transfers that some receiver has not
// finished. A receiver that restarts opens each again ([Chats.OpenFile]
// answers [ErrNotReceiver] for the others). One round trip.
func (c *Chats) Files(ctx context.Context, chat string) ([]string, error) {
	if err := checkID("chat", chat); err != nil {
		return nil, fmt.Errorf("chat: files: %w", err)
	}
	key := c.filesKey(chat)
	ids, err := c.rdb.SMembers(ctx, key).Result()
	if err != nil {
		return nil, fmt.Errorf("chat: files of %q: %w", chat, script.WrongType(ctx, c.rdb, err, key, "chat files", "set"))
	}
	return ids, nil
}

// FileReader reads one file of a chat as one receiver. It is not safe for
// concurrent use.
type FileReader struct {
	c                *Chats
	ctx              context.Context
	chat, user, id   string
	meta, data, list string
	seq, off, start  int64
	buf              []byte
	eof              bool
}

// OpenFile opens file id of chat for user, one of its receivers, where
// they left it: at the start, or, after a restart, at the chunk they were
// reading ([FileReader.Offset] says at which byte). Reading a chunk
// finishes the one before it; chunks every receiver has finished are
// deleted, and the whole transfer once every receiver has read to its end
// (process_logs_from_redis). Round trips: 1 to open, then 1 per chunk,
// 1 per wait for one the sender has not written yet (polling, 1 to 50ms)
// and 1 for the end of file.
//
// A transfer that does not exist (or is done) gives [ErrNoFile], a user
// who is not a receiver [ErrNotReceiver]. A transfer deleted with its chat
// while it is read makes the next Read fail with [ErrNoFile], not end.
// Two readers of one receiver may read at once, each getting every chunk
// in order, until one gets ahead of the other: the one behind then fails
// with [ErrStaleReader] (the chunks it needs may be deleted), never
// skipping data.
// A corrupt integer field of the transfer gives a *ria.KeyError wrapping
// ria.ErrCorrupt, having written nothing.
func (c *Chats) OpenFile(ctx context.Context, chat, user, id string) (*FileReader, error) {
	if err := checkPair(chat, user); err != nil {
		return nil, fmt.Errorf("chat: open file: %w", err)
	}
	if err := checkID("file", id); err != nil {
		return nil, fmt.Errorf("chat: open file: %w", err)
	}
	meta, data := c.fileKeys(chat, id)
	vals, err := c.rdb.HMGet(ctx, meta, "last", "pos:"+user, "off:"+user).Result()
	if err != nil {
		return nil, fmt.Errorf("chat: open file %q: %w", id, script.WrongType(ctx, c.rdb, err, meta, "chat file", "hash"))
	}
	if vals[0] == nil {
		return nil, fmt.Errorf("chat: open file %q of %q: %w", id, chat, ErrNoFile)
	}
	if vals[1] == nil {
		return nil, fmt.Errorf("chat: open file %q of %q for %q: %w", id, chat, user, ErrNotReceiver)
	}
	// As fopen.lua and fget.lua write them: a chunk from 1, a byte offset
	// from 0, canonical integers within 2^53 (fget.lua refuses others).
	pos, _ := vals[1].(string)
	offs, _ := vals[2].(string)
	seq, ok1 := script.ParseCount(pos)
	off, ok2 := script.ParseCount(offs)
	if !ok1 || !ok2 || seq < 1 || off < 0 {
		return nil, fmt.Errorf("chat: open file %q: %w", id, &ria.KeyError{Role: "chat file", Key: meta,
			Got: fmt.Sprintf("position %v at %v", vals[1], vals[2]), Want: "a chunk from 1 at a byte from 0", Err: ria.ErrCorrupt})
	}
	return &FileReader{c: c, ctx: ctx, chat: chat, user: user, id: id, meta: meta, data: data,
		list: c.filesKey(chat), seq: seq, off: off, start: off}, nil
}

// Offset returns the byte of the file where this reader started: 0, or
// after a restart the start of the chunk the receiver was reading.
func (f *FileReader) Offset() int64 { return f.start }

// Read implements io.Reader. Its errors are those of [Chats.OpenFile]'s
// reader: [ErrNoFile], [ErrStaleReader], ctx's error, and a *ria.KeyError
// for a transfer of another type or corrupt.
func (f *FileReader) Read(p []byte) (int, error) {
	wait := time.Millisecond
	for len(f.buf) == 0 {
		if f.eof {
			return 0, io.EOF
		}
		// The record key answers a re-send of a read that reached the end.
		r, err := fgetScript.Run(f.ctx, f.c.rdb, []string{f.meta, f.data, f.list, f.c.keys.Once(f.chat)},
			f.user, f.seq, f.off, f.id, script.ReplayWindow(f.c.rdb).Milliseconds())
		if err != nil {
			return 0, fmt.Errorf("chat: read file %q: %w", f.id, err)
		}
		arr, _ := r.([]any)
		code := int64(-9)
		if len(arr) > 0 {
			code, _ = arr[0].(int64)
		}
		switch code {
		case 1:
			s, _ := arr[1].(string)
			f.buf = []byte(s)
			f.seq++
			f.off += int64(len(s))
		case 0:
			if err := sleep(f.ctx, wait); err != nil {
				return 0, fmt.Errorf("chat: read file %q: %w", f.id, err)
			}
			wait = min(2*wait, 50*time.Millisecond)
		case 2:
			f.eof = true
		case -1: // not a re-sent last read: that one is answered 2 (fget.lua)
			return 0, fmt.Errorf("chat: read file %q of %q: transfer gone before this reader's end (chat deleted, or another reader of %q finished it): %w", f.id, f.chat, f.user, ErrNoFile)
		case -2:
			return 0, fmt.Errorf("chat: read file %q: %w", f.id, ErrNotReceiver)
		case -3:
			return 0, fmt.Errorf("chat: read file %q of %q for %q at chunk %d (byte %d): %w", f.id, f.chat, f.user, f.seq, f.off, ErrStaleReader)
		default:
			return 0, fmt.Errorf("chat: read file %q: %w: reply %v", f.id, ria.ErrCorrupt, r)
		}
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}
