package chat_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

// The fault harness: every state-changing call (Create, Send, Join,
// Leave, Fetch) through a proxy that lets its script run on the server,
// then swallows the reply and cuts the connection, so that go-redis
// (default retries) re-sends it. Each answer must match the state: ids
// exact, no message lost or doubled, membership as reported.
func TestFaults_lostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		cs := newChats(t, b, rdb)
		reader := newChats(t, b, nil)
		// Cache the scripts.
		_, err := cs.Create(ctx, "warm", "x", []string{"y"}, "x")
		require.NoError(t, err)
		_, err = cs.Send(ctx, "warm", "x", "x")
		require.NoError(t, err)
		require.NoError(t, cs.Join(ctx, "warm", "z"))
		require.NoError(t, cs.Leave(ctx, "warm", "z"))
		_, err = cs.Fetch(ctx, "x")
		require.NoError(t, err)

		h := redistest.NewHarness(t, f, "chat writes")
		check := func(ok bool, format string, args ...any) { h.Check(ok, format, args...) }
		lose := func(n int, fn func() error) {
			h.Call(n, redistest.Scripts, func() { require.NoError(t, fn()) })
		}
		var m chat.Message
		lose(1, func() (err error) { m, err = cs.Create(ctx, "c", "a", []string{"b"}, "m1"); return err })
		check(m.ID == 1, "create: id %d", m.ID)
		_, err = reader.Create(ctx, "c", "a", []string{"b"}, "again")
		check(errors.Is(err, chat.ErrExists), "create again: %v", err)

		next, fetched := int64(2), int64(0) // next id; last id b fetched
		rng := rand.New(rand.NewPCG(3, 4))
		member := false // is d a member
		for i := range 40 {
			n := 1 + i%2
			switch rng.IntN(5) {
			case 0, 1:
				lose(n, func() (err error) { m, err = cs.Send(ctx, "c", "a", fmt.Sprintf("m%d", next)); return err })
				check(m.ID == next, "send: id %d, want %d", m.ID, next)
				next++
			case 2:
				var ms []chat.Message
				lose(n, func() (err error) { ms, err = cs.Fetch(ctx, "b"); return err })
				var ids []int64
				for _, m := range ms {
					ids = append(ids, m.ID)
				}
				var want []int64
				for id := fetched + 1; id < next; id++ {
					want = append(want, id)
				}
				check(slices.Equal(want, ids), "fetch: ids %v, want %v", ids, want)
				fetched = next - 1
			case 3:
				lose(n, func() error { return cs.Join(ctx, "c", "d") })
				member = true
			case 4:
				lose(n, func() error { return cs.Leave(ctx, "c", "d") })
				member = false
			}
			hist, err := reader.History(ctx, "c", 0, chat.MaxPage)
			require.NoError(t, err)
			check(len(hist) == 0 || hist[len(hist)-1].ID == next-1, "history ends at %v, want %d", hist[max(len(hist)-1, 0):], next-1)
			for j := 1; j < len(hist); j++ {
				check(hist[j].ID == hist[j-1].ID+1, "history ids %d then %d", hist[j-1].ID, hist[j].ID)
			}
			_, err = reader.Send(ctx, "c", "d", "probe")
			if err == nil {
				next++ // the probe is a message too
			}
			check(member == (err == nil), "d member %v, send: %v", member, err)
		}
	})
}

// Sends and fetches through replies held back, part of the time, longer
// than the read timeout: go-redis re-sends them. Every send that returned
// nil is stored once under the id it returned, ids have no gap or
// duplicate, a call with no reply says its outcome is unknown, and
// fetches that returned nil never return a message twice or out of order.
func TestFaults_delays(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const calls = 150
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = 2*time.Millisecond, time.Second, time.Minute
		})
		cs := newChats(t, b, rdb)
		reader := newChats(t, b, nil)
		_, err := reader.Create(ctx, "c", "a", []string{"b"}, "m0")
		require.NoError(t, err)
		_, err = reader.Send(ctx, "c", "a", "warm")
		require.NoError(t, err)
		_, err = reader.Fetch(ctx, "b")
		require.NoError(t, err)
		stop := f.Stall()
		var ok, unknown, failed, disagree int
		sent := map[int64]string{}
		var got []int64
		for i := range calls {
			text := fmt.Sprintf("m%d", i)
			m, err := cs.Send(ctx, "c", "a", text)
			switch {
			case err == nil:
				ok++
				sent[m.ID] = text
			case errors.Is(err, ria.ErrOutcomeUnknown):
				unknown++
			default:
				disagree++
				t.Errorf("send %d: %v", i, err)
			}
			ms, err := cs.Fetch(ctx, "b")
			switch {
			case err == nil:
				ok++
				for _, m := range ms {
					got = append(got, m.ID)
				}
			case errors.Is(err, ria.ErrOutcomeUnknown):
				unknown++
			default:
				// The read of the user's list failed: nothing was
				// marked seen.
				failed++
			}
		}
		stop()
		for j := 1; j < len(got); j++ {
			if got[j] <= got[j-1] {
				disagree++
				t.Errorf("fetched %d after %d", got[j], got[j-1])
			}
		}
		h, err := reader.History(ctx, "c", 0, chat.MaxPage) // a has fetched nothing: all there
		require.NoError(t, err)
		for j, m := range h {
			if m.ID != int64(j+1) {
				disagree++
				t.Errorf("history: id %d at %d", m.ID, j)
			}
		}
		byID := map[int64]string{}
		for _, m := range h {
			var s string
			require.NoError(t, m.Decode(&s))
			byID[m.ID] = s
		}
		for id, text := range sent {
			if byID[id] != text {
				disagree++
				t.Errorf("sent %q as %d, stored %q", text, id, byID[id])
			}
		}
		t.Logf("fault harness: chat send+fetch under 0-3ms stalls, ReadTimeout 2ms: calls=%d ok=%d unknown=%d failed-before-writing=%d disagreements=%d",
			2*calls, ok, unknown, failed, disagree)
		assert.Zero(t, disagree)
		assert.Positive(t, ok)
	})
}

// A file sent and read through lost replies (chunk writes and chunk reads
// re-sent by go-redis) arrives whole and once.
func TestFaults_files(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		cs := newChats(t, b, rdb, chat.WithFileWindow(chat.ChunkSize))
		_, err := cs.Create(ctx, "c", "s", []string{"r"}, "x")
		require.NoError(t, err)
		data := make([]byte, 20*chat.ChunkSize+123)
		for i := range data {
			data[i] = byte(i * 7)
		}
		sent := make(chan error, 1)
		go func() {
			_, err := cs.SendFile(ctx, "c", "s", "f", bytes.NewReader(data))
			sent <- err
		}()
		var ref chat.FileRef
		for ref.File == "" {
			ms, err := cs.Wait(ctx, "r")
			require.NoError(t, err)
			for _, m := range ms {
				_ = m.Decode(&ref)
			}
		}
		fr, err := cs.OpenFile(ctx, "c", "r", ref.File)
		require.NoError(t, err)
		// Lose replies of chunk writes and reads alike while it flows:
		// one at a time (go-redis re-sends a command up to 3 times).
		var got []byte
		buf := make([]byte, chat.ChunkSize/2)
		for {
			if f.Armed() == 0 {
				f.LoseReply(1, redistest.Scripts)
			}
			n, err := fr.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
		}
		f.Disarm()
		require.NoError(t, <-sent)
		disagree := 0
		if !bytes.Equal(data, got) {
			disagree++
			t.Errorf("received %d bytes, sent %d (equal prefix %v)", len(got), len(data), bytes.HasPrefix(data, got[:min(len(got), len(data))]))
		}
		t.Logf("fault harness: chat file: calls=%d lost=%d disagreements=%d", 2, f.Lost(), disagree)
		assert.Positive(t, f.Lost())
		assert.Zero(t, disagree)
	})
}

// The reply of SendFile's end-of-file write is lost, and before go-redis
// re-sends it the receiver reads the whole file, which deletes the
// transfer. The re-send is answered from the first run's record: SendFile
// succeeds (it used to find no transfer and fail with ErrNoFile for a file
// delivered in full). The re-send waits for the receiver on its new
// connection's dial: a synchronisation, not a timing.
func TestFaults_fileEndAfterReceiversFinished(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		finished := make(chan struct{})
		var f *redistest.Faults
		rdb, _, f2 := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.PoolSize = 1 // the cut connection is the only one: the re-send dials
			dial := o.Dialer
			o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
				if f.Lost() > 0 {
					select {
					case <-finished:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return dial(ctx, network, addr)
			}
		})
		f = f2
		sender := newChats(t, b, rdb)
		receiver := newChats(t, b, nil)
		_, err := sender.Create(ctx, "c", "s", []string{"r"}, "hi")
		require.NoError(t, err)
		// A warm-up file loads the scripts: the end-of-file write whose reply
		// is lost is then the EVALSHA that ran.
		_, err = sender.SendFile(ctx, "c", "s", "warm", bytes.NewReader([]byte("warm")))
		require.NoError(t, err)

		// the end-of-file write: EVALSHA sha n <meta> <data> [record] 0 ...
		isEnd := func(cmd []string) bool {
			if !redistest.Scripts(cmd) || len(cmd) < 6 {
				return false
			}
			n, err := strconv.Atoi(cmd[2])
			return err == nil && n >= 2 && len(cmd) > 3+n && strings.HasSuffix(cmd[4], ":data") && cmd[3+n] == "0"
		}
		f.LoseReply(1, isEnd)
		data := bytes.Repeat([]byte("0123456789"), 1000)
		sent := make(chan error, 1)
		go func() {
			_, err := sender.SendFile(ctx, "c", "s", "f", bytes.NewReader(data))
			sent <- err
		}()
		var ref chat.FileRef
		for ref.File == "" || ref.Name != "f" {
			ms, err := receiver.Wait(ctx, "r")
			require.NoError(t, err)
			for _, m := range ms {
				_ = m.Decode(&ref)
			}
		}
		fr, err := receiver.OpenFile(ctx, "c", "r", ref.File)
		require.NoError(t, err)
		got, err := io.ReadAll(fr) // ends once the end-of-file write has run
		require.NoError(t, err)
		assert.Equal(t, data, got, "the receiver got the whole file")
		files, err := receiver.Files(ctx, "c")
		require.NoError(t, err)
		assert.NotContains(t, files, ref.File, "the transfer is gone")
		close(finished)
		require.NoError(t, <-sent, "SendFile of a file its receiver read whole")
		assert.Equal(t, int64(1), f.Lost())
	})
}
