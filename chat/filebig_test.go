package chat_test

import (
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/internal/redistest"
)

// patternReader yields n pseudo-random bytes without holding them.
type patternReader struct {
	rng *rand.Rand
	n   int64
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.n == 0 {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n)]
	for i := 0; i < len(b); i += 8 {
		v := p.rng.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	p.n -= int64(len(b))
	return len(b), nil
}

// usedMemory reads used_memory from INFO memory.
func usedMemory(ctx context.Context, b *redistest.Backend) int64 {
	s, err := b.Client.Info(ctx, "memory").Result()
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// A 200 MB file to two receivers on a real server: the memory Redis uses
// for the transfer stays under the window (plus a chunk and the server's
// allocation slack), the bytes hash equal, and nothing is left after.
func TestFiles_200MB(t *testing.T) {
	const size = 200 << 20
	const window = 4 << 20
	b := redistest.New(t, redistest.Standalone)
	ctx := t.Context()
	cs := newChats(t, b, nil, chat.WithFileWindow(window))
	_, err := cs.Create(ctx, "big", "s", []string{"a", "b"}, "x")
	require.NoError(t, err)
	base := usedMemory(ctx, b)
	require.Positive(t, base)
	var peak int64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tk := time.NewTicker(2 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				peak = max(peak, usedMemory(ctx, b)-base)
			}
		}
	})
	want := sha256.New()
	_, _ = io.Copy(want, &patternReader{rng: rand.New(rand.NewPCG(9, 9)), n: size})
	errs := make(chan error, 3)
	sums := make([][]byte, 2)
	var wg sync.WaitGroup
	started := time.Now()
	wg.Go(func() {
		if _, err := cs.SendFile(ctx, "big", "s", "big.bin", &patternReader{rng: rand.New(rand.NewPCG(9, 9)), n: size}); err != nil {
			errs <- err
		}
	})
	for i, u := range []string{"a", "b"} {
		wg.Go(func() {
			var ref chat.FileRef
			for ref.File == "" {
				ms, err := cs.Wait(ctx, u)
				if err != nil {
					errs <- err
					return
				}
				for _, m := range ms {
					_ = m.Decode(&ref)
				}
			}
			fr, err := cs.OpenFile(ctx, "big", u, ref.File)
			if err != nil {
				errs <- err
				return
			}
			h := sha256.New()
			if _, err := io.Copy(h, fr); err != nil {
				errs <- err
			}
			sums[i] = h.Sum(nil)
		})
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, want.Sum(nil), sums[0])
	assert.Equal(t, want.Sum(nil), sums[1])
	t.Logf("200 MB to 2 receivers in %v; peak Redis memory above the start: %.1f MB (window %d MB)",
		time.Since(started).Round(time.Millisecond), float64(peak)/(1<<20), window>>20)
	assert.Less(t, peak, int64(2*window+2*chat.ChunkSize), "the window bounds what Redis holds (jemalloc slack included)")
	for k := range state(b) {
		assert.NotContains(t, k, ":file", "a finished transfer leaves nothing")
	}
}
