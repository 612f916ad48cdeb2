package chat_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

// looseInts are stored values Lua's tonumber (or a pattern like
// '^%-?%d+$') takes for integers but that no script of this package
// writes: each must be refused as corrupt, with nothing written.
var looseInts = []string{"1e3", " 12", "0x10", "inf", "nan", "1.5", "99999999999999999999", "-0", "007"}

// assertCorrupt checks that err is a *ria.KeyError (ErrCorrupt) naming key.
func assertCorrupt(t *testing.T, err error, key string) {
	t.Helper()
	var kerr *ria.KeyError
	if assert.True(t, errors.As(err, &kerr), "want a *ria.KeyError, got %v", err) {
		assert.ErrorIs(t, err, ria.ErrCorrupt)
		assert.Equal(t, key, kerr.Key)
	}
}

// A message id counter out of the ids a send can give (negative, or past
// 2^53 where Lua's numbers and ZSET scores stop being exact) is corrupt:
// Send and Join refuse it and write nothing. (A counter of -1 used to make
// message 0, which no member ever fetches; one past 2^53 gave two messages
// one id.)
func TestChat_idsOutOfRange(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		ids := key(b, "c", "ids")
		for _, v := range []string{"-1", "-5", "9007199254740992", "9007199254740993", "9223372036854775806"} {
			b.Flush()
			_, err := cs.Create(ctx, "c", "a", []string{"b"}, "hi")
			require.NoError(t, err)
			require.NoError(t, b.Client.Set(ctx, ids, v, 0).Err())
			before := state(b)
			_, err = cs.Send(ctx, "c", "a", "x")
			assertCorrupt(t, err, ids)
			assert.Equal(t, before, state(b), "send, ids %s", v)
			err = cs.Join(ctx, "c", "d")
			assertCorrupt(t, err, ids)
			assert.Equal(t, before, state(b), "join, ids %s", v)
		}
	})
}

// corruptingReader yields n bytes; before its first read past the first
// chunk, it runs corrupt once (the sender has stored chunk 1 by then).
type corruptingReader struct {
	r       io.Reader
	read    int
	corrupt func()
}

func (c *corruptingReader) Read(p []byte) (int, error) {
	if c.read >= chat.ChunkSize && c.corrupt != nil {
		c.corrupt()
		c.corrupt = nil
	}
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

// A transfer whose last or size field is corrupt refuses the next chunk
// of its sender (ErrCorrupt, nothing written) instead of dropping chunks
// ("last" read as 1000), waiting for ever ("size" read as inf) or writing
// a wrong size back.
func TestFileSend_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, field := range []string{"last", "size"} {
			for _, v := range append([]string{"-1"}, looseInts...) {
				b.Flush()
				cs := newChats(t, b, nil)
				_, err := cs.Create(ctx, "chat", "a", []string{"b"}, "hi")
				require.NoError(t, err)
				var before map[string]string
				var meta string
				r := &corruptingReader{r: bytes.NewReader(make([]byte, 3*chat.ChunkSize)), corrupt: func() {
					ids, err := cs.Files(ctx, "chat")
					require.NoError(t, err)
					require.Len(t, ids, 1)
					meta = key(b, "chat", "file:"+ids[0])
					require.NoError(t, b.Client.HSet(ctx, meta, field, v).Err())
					before = state(b)
				}}
				// A bound for a regression into waiting for ever.
				sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err = cs.SendFile(sctx, "chat", "a", "f", r)
				cancel()
				assertCorrupt(t, err, meta)
				assert.Equal(t, before, state(b), "%s %q", field, v)
			}
		}
	})
}

// A file read meets a loosely integer or out-of-range field of the
// transfer: it fails with ErrCorrupt, having written nothing, instead of
// writing it back wrong (size 1e+20), running a loop of 200,000 deletes
// (low -200000) or moving positions past the chunks stored.
func TestFileRead_corruptLoose(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cases := map[string][]string{
			"size":  append([]string{"-1"}, looseInts...),
			"low":   append([]string{"-200000", "0", "5"}, looseInts...),
			"last":  append([]string{"-1", "1000"}, looseInts...),
			"pos:b": append([]string{"0", "-3", "1000"}, looseInts...),
		}
		for field, vals := range cases {
			for _, v := range vals {
				cs, id, meta := sentFile(t, b)
				fr, err := cs.OpenFile(ctx, "chat", "b", id)
				require.NoError(t, err)
				buf := make([]byte, chat.ChunkSize)
				_, err = io.ReadFull(fr, buf) // chunk 1, all of it
				require.NoError(t, err)
				require.NoError(t, b.Client.HSet(ctx, meta, field, v).Err())
				before := state(b)
				_, err = fr.Read(buf) // chunk 2: moves b's position, frees chunk 1
				assertCorrupt(t, err, meta)
				assert.Equal(t, before, state(b), "%s %q", field, v)
			}
		}
	})
}

// OpenFile meets a receiver's chunk position or byte offset that its
// scripts never write (a sign, a leading zero, below range): ErrCorrupt,
// having written nothing, instead of an Offset of -5 that the next Read
// would write back.
func TestFileOpen_corrupt(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cases := map[string][]string{
			"off:b": append([]string{"-5", "+7"}, looseInts...),
			"pos:b": append([]string{"0", "-3", "+1"}, looseInts...),
		}
		for field, vals := range cases {
			for _, v := range vals {
				cs, id, meta := sentFile(t, b)
				require.NoError(t, b.Client.HSet(ctx, meta, field, v).Err())
				before := state(b)
				_, err := cs.OpenFile(ctx, "chat", "b", id)
				assertCorrupt(t, err, meta)
				assert.Equal(t, before, state(b), "%s %q", field, v)
			}
		}
	})
}

// sentFile flushes b, then sends a file of two chunks and a byte from a
// to b in chat "chat"; it returns the Chats, the file's ID and its meta
// key.
func sentFile(t *testing.T, b *redistest.Backend) (cs *chat.Chats, id, meta string) {
	t.Helper()
	ctx := t.Context()
	b.Flush()
	cs = newChats(t, b, nil)
	_, err := cs.Create(ctx, "chat", "a", []string{"b"}, "hi")
	require.NoError(t, err)
	id, err = cs.SendFile(ctx, "chat", "a", "f", bytes.NewReader(make([]byte, 2*chat.ChunkSize+1)))
	require.NoError(t, err)
	return cs, id, key(b, "chat", "file:"+id)
}
