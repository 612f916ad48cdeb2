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
