package autocomplete_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/autocomplete"
	"github.com/ria-go/ria/internal/redistest"
)

// redisearch is where Debian's redis-redisearch puts the module.
const redisearch = "/usr/lib/redis/modules/redisearch.so"

// benchNames returns n distinct ASCII names of 6 to 12 letters.
func benchNames(n int) []string {
	rng := rand.New(rand.NewPCG(5, 6))
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		b := make([]byte, 6+rng.IntN(7))
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		if s := string(b); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// BenchmarkComplete is one completion of a 2-letter prefix (10 names) in
// a set of 10,000 and of 1,000,000 names, on a real server, while another
// client joins and leaves names in the same set: this package's Complete;
// the same ZRANGEBYLEX ... LIMIT sent by hand (the limit); and the book's
// autocomplete_on_prefix (two sentinel members added under WATCH, ZRANK,
// ZRANGE, sentinels removed in MULTI; retried when a join or leave
// touches the set).
func BenchmarkComplete(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := context.Background()
	for _, size := range []int{10000, 1000000} {
		names := benchNames(size)
		set := "s" + strconv.Itoa(size)
		ac, err := autocomplete.New(be.Client, autocomplete.WithPrefix(be.Prefix))
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(names); i += autocomplete.MaxBatch {
			if err := ac.Join(ctx, set, names[i:min(i+autocomplete.MaxBatch, len(names))]...); err != nil {
				b.Fatal(err)
			}
		}
		// The book's set: plain names, score 0.
		bookKey := be.Prefix + "book:" + set
		for i := 0; i < len(names); i += 10000 {
			zs := make([]redis.Z, 0, 10000)
			for _, n := range names[i:min(i+10000, len(names))] {
				zs = append(zs, redis.Z{Member: n})
			}
			if err := be.Client.ZAdd(ctx, bookKey, zs...).Err(); err != nil {
				b.Fatal(err)
			}
		}
		prefixes := make([]string, 256)
		for i := range prefixes {
			prefixes[i] = names[i*7%len(names)][:2]
		}
		churn := func(b *testing.B, join func(name string), leave func(name string)) (stop func()) {
			done := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-done:
						return
					default:
					}
					n := "zz" + strconv.Itoa(i%100)
					join(n)
					leave(n)
				}
			})
			return func() { close(done); wg.Wait() }
		}

		b.Run(fmt.Sprintf("ria/n=%d", size), func(b *testing.B) {
			stop := churn(b, func(n string) { _ = ac.Join(ctx, set, n) }, func(n string) { _ = ac.Leave(ctx, set, n) })
			defer stop()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				got, err := ac.Complete(ctx, set, prefixes[i%len(prefixes)], 10)
				if err != nil || len(got) == 0 {
					b.Fatal(got, err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("limit-zrangebylex/n=%d", size), func(b *testing.B) {
			stop := churn(b, func(n string) { _ = ac.Join(ctx, set, n) }, func(n string) { _ = ac.Leave(ctx, set, n) })
			defer stop()
			key := be.Prefix + "{" + set + "}:members"
			i := 0
			for b.Loop() {
				p := prefixes[i%len(prefixes)]
				got, err := be.Client.ZRangeByLex(ctx, key, &redis.ZRangeBy{Min: "[" + p + "\x00", Max: "(" + p + "\xff", Count: 10}).Result()
				if err != nil || len(got) == 0 {
					b.Fatal(got, err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("redisearch-sugget/n=%d", size), func(b *testing.B) {
			if _, err := os.Stat(redisearch); err != nil {
				b.Skipf("no RediSearch module at %s (Debian redis-redisearch)", redisearch)
			}
			srv := redistest.StartServer(b, "--loadmodule", redisearch)
			rs := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			defer rs.Close()
			for i := 0; i < len(names); i += 10000 {
				p := rs.Pipeline()
				for _, n := range names[i:min(i+10000, len(names))] {
					p.Do(ctx, "FT.SUGADD", "ac", n, 1)
				}
				if _, err := p.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
			stop := churn(b, func(n string) { rs.Do(ctx, "FT.SUGADD", "ac", n, 1) }, func(n string) { rs.Do(ctx, "FT.SUGDEL", "ac", n) })
			defer stop()
			i := 0
			for b.Loop() {
				got, err := rs.Do(ctx, "FT.SUGGET", "ac", prefixes[i%len(prefixes)], "MAX", 10).StringSlice()
				if err != nil || len(got) == 0 {
					b.Fatal(got, err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("book-sentinel/n=%d", size), func(b *testing.B) {
			stop := churn(b, func(n string) { be.Client.ZAdd(ctx, bookKey, redis.Z{Member: n}) }, func(n string) { be.Client.ZRem(ctx, bookKey, n) })
			defer stop()
			var retries atomic.Int64
			i := 0
			for b.Loop() {
				got, err := bookComplete(ctx, be.Client, bookKey, prefixes[i%len(prefixes)], &retries)
				if err != nil || len(got) == 0 {
					b.Fatal(got, err)
				}
				i++
			}
			b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/op")
		})
	}
}

// bookComplete is Redis in Action's autocomplete_on_prefix for a-z names.
func bookComplete(ctx context.Context, rdb redis.UniversalClient, key, prefix string, retries *atomic.Int64) ([]string, error) {
	last := prefix[len(prefix)-1]
	start := prefix[:len(prefix)-1] + string(rune(last-1)) + "{"
	end := prefix + "{"
	id := strconv.FormatUint(rand.Uint64(), 36)
	start, end = start+id, end+id
	if err := rdb.ZAdd(ctx, key, redis.Z{Member: start}, redis.Z{Member: end}).Err(); err != nil {
		return nil, err
	}
	for {
		var items []string
		err := rdb.Watch(ctx, func(tx *redis.Tx) error {
			si, err := tx.ZRank(ctx, key, start).Result()
			if err != nil {
				return err
			}
			ei, err := tx.ZRank(ctx, key, end).Result()
			if err != nil {
				return err
			}
			erange := min(si+9, ei-2)
			var rng *redis.StringSliceCmd
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.ZRem(ctx, key, start, end)
				rng = p.ZRange(ctx, key, si, erange)
				return nil
			})
			if err != nil {
				return err
			}
			items = rng.Val()
			return nil
		}, key)
		if err == redis.TxFailedErr {
			retries.Add(1)
			continue
		}
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(items, func(s string) bool { return s[len(s)-1] == '{' }), nil
	}
}

// wordLists are Debian's word lists (wamerican-insane, wfrench, wpolish;
// `make bench` installs them): English, and accented French and Polish.
var wordLists = []string{"/usr/share/dict/american-english-insane", "/usr/share/dict/french", "/usr/share/dict/polish"}

// readWords returns the distinct words of the lists present, at most
// perList of each (the Polish list has 4.3 million).
func readWords(b *testing.B, perList int) []string {
	seen := map[string]bool{}
	var out []string
	for _, path := range wordLists {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Logf("no word list %s: %v", path, err)
			continue
		}
		n := 0
		for w := range strings.Lines(string(data)) {
			w = strings.TrimSpace(w)
			if w == "" || seen[w] || !utf8.ValidString(w) {
				continue
			}
			seen[w] = true
			out = append(out, w)
			if n++; n == perList {
				break
			}
		}
	}
	return out
}

// BenchmarkCompleteWords is one completion of a 2-letter prefix of a
// dictionary word (10 names) over the words of English, French and Polish
// dictionaries (about 1.3 million, accented ones included) on a real
// server: this package's Complete, the same ZRANGEBYLEX sent by hand (the
// limit), and RediSearch's FT.SUGGET over the same words. The book's
// sentinel method handles a-z only and is left out.
func BenchmarkCompleteWords(b *testing.B) {
	words := readWords(b, 400000)
	if len(words) == 0 {
		b.Skip("no word lists: apt-get install wamerican-insane wfrench wpolish (make bench does)")
	}
	be := redistest.New(b, redistest.Standalone)
	ctx := context.Background()
	ac, err := autocomplete.New(be.Client, autocomplete.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(words); i += autocomplete.MaxBatch {
		if err := ac.Join(ctx, "words", words[i:min(i+autocomplete.MaxBatch, len(words))]...); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(8, 9))
	prefixes := make([]string, 0, 256)
	for len(prefixes) < cap(prefixes) {
		if r := []rune(words[rng.IntN(len(words))]); len(r) >= 2 {
			prefixes = append(prefixes, string(r[:2]))
		}
	}
	b.Logf("%d words", len(words))
	b.Run("ria", func(b *testing.B) {
		i := 0
		for b.Loop() {
			got, err := ac.Complete(ctx, "words", prefixes[i%len(prefixes)], 10)
			if err != nil || len(got) == 0 {
				b.Fatal(prefixes[i%len(prefixes)], got, err)
			}
			i++
		}
	})
	b.Run("limit-zrangebylex", func(b *testing.B) {
		key := be.Prefix + "{words}:members"
		i := 0
		for b.Loop() {
			p := autocomplete.Fold(prefixes[i%len(prefixes)])
			got, err := be.Client.ZRangeByLex(ctx, key, &redis.ZRangeBy{Min: "[" + p + "\x00", Max: "(" + p + "\xff", Count: 10}).Result()
			if err != nil || len(got) == 0 {
				b.Fatal(got, err)
			}
			i++
		}
	})
	b.Run("redisearch-sugget", func(b *testing.B) {
		if _, err := os.Stat(redisearch); err != nil {
			b.Skipf("no RediSearch module at %s (Debian redis-redisearch)", redisearch)
		}
		srv := redistest.StartServer(b, "--loadmodule", redisearch)
		rs := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		defer rs.Close()
		for i := 0; i < len(words); i += 10000 {
			p := rs.Pipeline()
			for _, w := range words[i:min(i+10000, len(words))] {
				p.Do(ctx, "FT.SUGADD", "ac", w, 1)
			}
			if _, err := p.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
		i := 0
		for b.Loop() {
			if err := rs.Do(ctx, "FT.SUGGET", "ac", prefixes[i%len(prefixes)], "MAX", 10).Err(); err != nil && err != redis.Nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
