package chat_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

func lines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "log line %d: something happened\n", i)
	}
	return b.Bytes()
}

// The book's file distribution: files of 1 and 10,000 lines and a gzip
// file of 100,000 lines reach two receivers with those line counts, with
// a window small enough that the sender waits for them; nothing is left.
func TestFiles_book(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil, chat.WithFileWindow(chat.ChunkSize))
		_, err := cs.Create(ctx, "logs", "sender", []string{"r1", "r2"}, "hello")
		require.NoError(t, err)
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		_, _ = w.Write(lines(100000))
		require.NoError(t, w.Close())
		files := []struct {
			name  string
			data  []byte
			lines int
			gzip  bool
		}{{"one.txt", lines(1), 1, false}, {"ten-thousand.txt", lines(10000), 10000, false}, {"big.txt.gz", gz.Bytes(), 100000, true}}
		for _, f := range files {
			var wg sync.WaitGroup
			counts := make([]int, 2)
			errs := make(chan error, 3)
			wg.Go(func() {
				if _, err := cs.SendFile(ctx, "logs", "sender", f.name, bytes.NewReader(f.data)); err != nil {
					errs <- err
				}
			})
			for i, r := range []string{"r1", "r2"} {
				wg.Go(func() {
					// The receiver learns of the file from the chat.
					var ref chat.FileRef
					for ref.File == "" {
						ms, err := cs.Wait(ctx, r)
						if err != nil {
							errs <- err
							return
						}
						for _, m := range ms {
							var fr chat.FileRef
							if m.Decode(&fr) == nil && fr.File != "" {
								ref = fr
							}
						}
					}
					fr, err := cs.OpenFile(ctx, "logs", r, ref.File)
					if err != nil {
						errs <- err
						return
					}
					var src io.Reader = fr
					if f.gzip {
						zr, err := gzip.NewReader(fr)
						if err != nil {
							errs <- err
							return
						}
						src = zr
					}
					sc := bufio.NewScanner(src)
					for sc.Scan() {
						counts[i]++
					}
					if err := sc.Err(); err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err, f.name)
			}
			assert.Equal(t, []int{f.lines, f.lines}, counts, f.name)
		}
		ids, err := cs.Files(ctx, "logs")
		require.NoError(t, err)
		assert.Empty(t, ids)
		for k := range state(b) {
			assert.NotContains(t, k, ":file", "a finished transfer leaves nothing")
		}
	})
}

// A receiver that stops halfway and opens the file again continues where
// it was (Offset), and the bytes it assembles hash equal to the sent ones.
func TestFiles_resume(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil, chat.WithFileWindow(4*chat.ChunkSize))
		_, err := cs.Create(ctx, "c", "s", []string{"a", "b"}, "x")
		require.NoError(t, err)
		data := lines(60000) // about 2 MB
		sent := make(chan error, 1)
		var id string
		var mu sync.Mutex
		go func() {
			i, err := cs.SendFile(ctx, "c", "s", "f", bytes.NewReader(data))
			mu.Lock()
			id = i
			mu.Unlock()
			sent <- err
		}()
		var ref chat.FileRef
		for ref.File == "" {
			ms, err := cs.Wait(ctx, "a")
			require.NoError(t, err)
			for _, m := range ms {
				_ = m.Decode(&ref)
			}
		}
		// b reads all of it meanwhile.
		bDone := make(chan []byte, 1)
		go func() {
			fr, err := cs.OpenFile(ctx, "c", "b", ref.File)
			if err != nil {
				bDone <- nil
				return
			}
			got, _ := io.ReadAll(fr)
			bDone <- got
		}()
		// a reads 700 KB, then "crashes" (drops its reader).
		fr, err := cs.OpenFile(ctx, "c", "a", ref.File)
		require.NoError(t, err)
		first := make([]byte, 700000)
		_, err = io.ReadFull(fr, first)
		require.NoError(t, err)
		ids, err := cs.Files(ctx, "c")
		require.NoError(t, err)
		assert.Contains(t, ids, ref.File)
		fr2, err := cs.OpenFile(ctx, "c", "a", ref.File)
		require.NoError(t, err)
		off := fr2.Offset()
		assert.Positive(t, off)
		assert.LessOrEqual(t, off, int64(len(first)))
		rest, err := io.ReadAll(fr2)
		require.NoError(t, err)
		got := append(first[:off:off], rest...)
		assert.Equal(t, sha256.Sum256(data), sha256.Sum256(got), "a's bytes")
		assert.Equal(t, sha256.Sum256(data), sha256.Sum256(<-bDone), "b's bytes")
		require.NoError(t, <-sent)
		mu.Lock()
		assert.Equal(t, ref.File, id)
		mu.Unlock()
		_, err = cs.OpenFile(ctx, "c", "a", ref.File)
		assert.ErrorIs(t, err, chat.ErrNoFile, "done by every receiver")
		_, err = cs.OpenFile(ctx, "c", "zed", ref.File)
		assert.Error(t, err)
		_, err = cs.SendFile(ctx, "c", "zed", "f", strings.NewReader("x"))
		assert.ErrorIs(t, err, chat.ErrNotMember)
		_, err = cs.SendFile(ctx, "nope", "s", "f", strings.NewReader("x"))
		assert.ErrorIs(t, err, chat.ErrNoChat)
	})
}

// SendFile works with every codec: the announcement is the JSON of a
// FileRef whatever the codec, which Message.File recognises. With Raw,
// which cannot encode a FileRef, SendFile used to fail after it had
// written the transfer (left listed by Files until the chat's deletion).
func TestSendFile_rawCodec(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil, chat.WithCodec(chat.Raw))
		_, err := cs.Create(ctx, "c", "s", []string{"r"}, "hi")
		require.NoError(t, err)
		data := bytes.Repeat([]byte("raw bytes "), 10000)
		id, err := cs.SendFile(ctx, "c", "s", "f.bin", bytes.NewReader(data))
		require.NoError(t, err)

		ms, err := cs.Fetch(ctx, "r")
		require.NoError(t, err)
		require.Len(t, ms, 2)
		_, ok := ms[0].File()
		assert.False(t, ok, "message 1 is no file")
		ref, ok := ms[1].File()
		require.True(t, ok, "message 2 announces the file: %q", ms[1].Payload)
		assert.Equal(t, chat.FileRef{File: id, Name: "f.bin"}, ref)
		fr, err := cs.OpenFile(ctx, "c", "r", ref.File)
		require.NoError(t, err)
		got, err := io.ReadAll(fr)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data, got))
		files, err := cs.Files(ctx, "c")
		require.NoError(t, err)
		assert.Empty(t, files)
	})
}

// Message.File recognises a FileRef's JSON alone.
func TestMessage_File(t *testing.T) {
	for _, c := range []struct {
		payload string
		ok      bool
	}{
		{`{"file":"f","name":"n"}`, true},
		{`{"name":"n","file":"f"}`, true},
		{`{"file":"f"}`, false},
		{`{"file":"","name":"n"}`, false},
		{`{"file":"f","name":"n","x":1}`, false},
		{`{"file":"f","name":"n"} {}`, false},
		{`"hi"`, false},
		{`raw bytes`, false},
		{``, false},
	} {
		ref, ok := chat.Message{Payload: []byte(c.payload)}.File()
		assert.Equal(t, c.ok, ok, c.payload)
		if ok {
			assert.Equal(t, chat.FileRef{File: "f", Name: "n"}, ref)
		}
	}
}

// Two readers of one receiver (another device, or a process that
// restarted while the old one still ran): the one ahead moves the
// receiver's position, the chunks below it are deleted, and the one
// behind fails with ErrStaleReader. It used to get each deleted chunk as
// an empty one and go on: a file with chunks missing and no error.
func TestFileRead_staleReader(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		cs := newChats(t, b, nil)
		_, err := cs.Create(ctx, "c", "s", []string{"r", "q"}, "hi")
		require.NoError(t, err)
		data := make([]byte, 5*chat.ChunkSize)
		for i := range data {
			data[i] = byte(i * 13)
		}
		id, err := cs.SendFile(ctx, "c", "s", "f", bytes.NewReader(data)) // within the window
		require.NoError(t, err)

		// q reads the whole file: only r holds chunks back.
		fq, err := cs.OpenFile(ctx, "c", "q", id)
		require.NoError(t, err)
		gq, err := io.ReadAll(fq)
		require.NoError(t, err)
		require.Equal(t, data, gq)

		// r's first reader reads chunk 1.
		r1, err := cs.OpenFile(ctx, "c", "r", id)
		require.NoError(t, err)
		buf := make([]byte, chat.ChunkSize)
		_, err = io.ReadFull(r1, buf)
		require.NoError(t, err)
		require.Equal(t, data[:chat.ChunkSize], buf)

		// r's second reader reads chunks 1 to 3 and asks for 4: r's
		// position is 4, chunks 1 to 3 are deleted.
		r2, err := cs.OpenFile(ctx, "c", "r", id)
		require.NoError(t, err)
		for range 3 {
			_, err = io.ReadFull(r2, buf)
			require.NoError(t, err)
		}
		_, err = r2.Read(buf[:1])
		require.NoError(t, err)

		// The first reader asks for chunk 2: refused, again and again.
		for range 2 {
			n, err := r1.Read(buf)
			assert.Zero(t, n)
			assert.ErrorIs(t, err, chat.ErrStaleReader)
		}
		// A reader opened again starts at chunk 4; the second reader goes
		// on to chunk 5, the third is then behind too.
		r3, err := cs.OpenFile(ctx, "c", "r", id)
		require.NoError(t, err)
		assert.Equal(t, int64(3*chat.ChunkSize), r3.Offset())
		_, err = io.ReadFull(r2, buf)
		require.NoError(t, err)
		assert.Equal(t, data[3*chat.ChunkSize+1:4*chat.ChunkSize+1], buf)
		_, err = io.ReadAll(r3)
		assert.ErrorIs(t, err, chat.ErrStaleReader, "r2 has read further")
		rest, err := io.ReadAll(r2)
		require.NoError(t, err)
		assert.Equal(t, data[4*chat.ChunkSize+1:], rest)

		// A reader behind one that read the end but holding every chunk
		// itself gets the end of file.
		id, err = cs.SendFile(ctx, "c", "s", "g", bytes.NewReader(data[:10]))
		require.NoError(t, err)
		a, err := cs.OpenFile(ctx, "c", "r", id)
		require.NoError(t, err)
		c, err := cs.OpenFile(ctx, "c", "r", id)
		require.NoError(t, err)
		_, err = io.ReadFull(a, buf[:10])
		require.NoError(t, err)
		_, err = io.ReadFull(c, buf[:10])
		require.NoError(t, err)
		got, err := io.ReadAll(a)
		require.NoError(t, err)
		assert.Empty(t, got)
		got, err = io.ReadAll(c)
		require.NoError(t, err, "c has every chunk: its end of file")
		assert.Empty(t, got)
	})
}
