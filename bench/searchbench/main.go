// Command searchbench compares ria's search package with RediSearch 1.2
// (Debian's redis-redisearch, loaded into its own redis-server) side by
// side in one run, on Debian's English long package descriptions read at
// bench time (apt's Translation-en lists; generated text, labelled so,
// when apt has none): indexing documents/s next to a pipelined SADD of
// the same postings (the posting-rate limit) and the book's
// index_document (one pipeline per document), index memory (INFO
// used_memory delta), and queries/s with p50/p99 at 1 and 8 clients for
// 1-, 2- and 3-word AND queries and queries with an exclusion, next to
// the book's parse_and_search and search_and_sort over the SADD postings.
// It prints figures and ratios, not verdicts.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/bench/internal/report"
	"github.com/ria-go/ria/bench/internal/server"
	"github.com/ria-go/ria/search"
)

var (
	nDocs    = flag.Int("docs", 0, "documents to index (0: the whole corpus)")
	dur      = flag.Duration("d", 2*time.Second, "length of each query run")
	nQueries = flag.Int("queries", 300, "queries per class")
	batch    = flag.Int("batch", 500, "documents per pipeline (both systems)")
	bookDocs = flag.Int("bookdocs", 5000, "documents the book's index_document indexes")
)

func main() {
	flag.Parse()
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) (err error) {
	docs, source := readCorpus(*nDocs)
	e, err := server.Open(ctx, "searchbench", 1)
	if err != nil {
		return err
	}
	defer func() { err = e.Finish(ctx, err); err = joinClose(err, e.Close()) }()
	ms, err := startModule(ctx)
	if err != nil {
		return err
	}
	defer ms.stop()
	rs := redis.NewClient(&redis.Options{Addr: ms.addr, PoolSize: server.PoolSize})
	defer rs.Close()
	rdb := e.Clients[0]

	mods, _ := rs.Do(ctx, "MODULE", "LIST").Result()
	fmt.Printf("searchbench: ria search (this repository) vs RediSearch (%s, MODULE LIST %v) on its own redis-server at %s\n",
		moduleFile, mods, ms.addr)
	fmt.Printf("Redis %s at %s (%s); %s; %s %s/%s, GOMAXPROCS=%d, %d CPUs shared by clients and both servers\n",
		e.Version, e.Server.Addr(), e.Origin(), report.ModVersion("github.com/redis/go-redis/v9"),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Println("RediSearch schema: body TEXT NOSTEM, NOOFFSETS (ria has no phrase queries), the book's stop words; FT.ADD NOSAVE; FT.SEARCH NOCONTENT VERBATIM LIMIT 0 10")
	words := 0
	for _, d := range docs {
		words += len(strings.Fields(d.text))
	}
	fmt.Printf("corpus: %s: %d documents, %d words (mean %d)\n", source, len(docs), words, words/max(1, len(docs)))

	// Indexing.
	report.Heading(os.Stdout, "index", "documents/s, one client, pipelines of -batch documents")
	x, err := search.New(rdb, "bench", search.WithPrefix(e.Prefix))
	if err != nil {
		return err
	}
	riaRate, riaMem, err := measure(ctx, e.Admin, func() error {
		for c := range slices.Chunk(docs, *batch) {
			ds := make([]search.Document, len(c))
			for i, d := range c {
				ds[i] = search.Document{ID: d.id, Text: d.text}
			}
			if _, _, err := x.Add(ctx, ds...); err != nil {
				return err
			}
		}
		return nil
	}, len(docs))
	if err != nil {
		return fmt.Errorf("ria index: %w", err)
	}
	stop := append([]any{"FT.CREATE", "idx", "NOOFFSETS", "STOPWORDS", len(search.BookStopWords)}, anys(search.BookStopWords)...)
	stop = append(stop, "SCHEMA", "body", "TEXT", "NOSTEM")
	if err := rs.Do(ctx, stop...).Err(); err != nil {
		return fmt.Errorf("FT.CREATE: %w", err)
	}
	rsAdmin := rs
	rsRate, rsMem, err := measure(ctx, rsAdmin, func() error {
		for c := range slices.Chunk(docs, *batch) {
			p := rs.Pipeline()
			for _, d := range c {
				p.Do(ctx, "FT.ADD", "idx", d.id, 1.0, "NOSAVE", "FIELDS", "body", d.text)
			}
			if _, err := p.Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	}, len(docs))
	if err != nil {
		return fmt.Errorf("RediSearch index: %w", err)
	}
	// The posting-rate limit: the same postings as pipelined SADDs.
	toks := make([][]string, len(docs))
	for i, d := range docs {
		toks[i] = search.Tokenize(d.text)
	}
	saddRate, saddMem, err := measure(ctx, e.Admin, func() error {
		for lo := 0; lo < len(docs); lo += *batch {
			p := rdb.Pipeline()
			for i := lo; i < min(lo+*batch, len(docs)); i++ {
				for _, t := range toks[i] {
					p.SAdd(ctx, e.Prefix+"sadd:"+t, i)
				}
			}
			if _, err := p.Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	}, len(docs))
	if err != nil {
		return fmt.Errorf("SADD: %w", err)
	}
	nb := min(*bookDocs, len(docs))
	bookRate, _, err := measure(ctx, e.Admin, func() error { // book 7.1.1: one MULTI pipeline per document
		for i := range nb {
			_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				for _, t := range toks[i] {
					p.SAdd(ctx, e.Prefix+"book:idx:"+t, docs[i].id)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}, nb)
	if err != nil {
		return fmt.Errorf("book index_document: %w", err)
	}
	report.Table(os.Stdout, [][]string{
		{"system", "docs/s", "used_memory delta", "bytes/doc"},
		{"ria search.Add", f0(riaRate), mib(riaMem), f0(float64(riaMem) / float64(len(docs)))},
		{"RediSearch FT.ADD NOSAVE", f0(rsRate), mib(rsMem), f0(float64(rsMem) / float64(len(docs)))},
		{"pipelined SADD (postings only)", f0(saddRate), mib(saddMem), f0(float64(saddMem) / float64(len(docs)))},
		{fmt.Sprintf("book index_document (%d docs)", nb), f0(bookRate), "-", "-"},
	})
	fmt.Printf("indexing: ria/RediSearch = %s (target >= 3x); ria/SADD limit = %s; ria/book = %s\n",
		report.Ratio(riaRate, rsRate), report.Ratio(riaRate, saddRate), report.Ratio(riaRate, bookRate))
	fmt.Printf("memory: ria/RediSearch = %s (target <= 3x); ria/SADD postings = %s\n",
		report.Ratio(float64(riaMem), float64(rsMem)), report.Ratio(float64(riaMem), float64(saddMem)))

	// Queries.
	classes := queryClasses(toks, *nQueries)
	for _, cl := range classes {
		report.Heading(os.Stdout, cl.name, fmt.Sprintf("%d queries like %q, first page of 10", len(cl.queries), cl.queries[0]))
		agree, both, err := compare(ctx, x, rs, cl.queries)
		if err != nil {
			return err
		}
		rows := [][]string{{"system", "clients", "queries/s", "p50 µs", "p99 µs"}}
		var lines []string
		for _, clients := range []int{1, 8} {
			r, err := load(ctx, clients, cl.queries, func(q string) error {
				_, err := x.Search(ctx, q, search.Limit(0, 10))
				return err
			})
			if err != nil {
				return fmt.Errorf("ria %s: %w", cl.name, err)
			}
			s, err := load(ctx, clients, cl.queries, func(q string) error {
				return rs.Do(ctx, "FT.SEARCH", "idx", q, "NOCONTENT", "VERBATIM", "LIMIT", 0, 10).Err()
			})
			if err != nil {
				return fmt.Errorf("RediSearch %s: %w", cl.name, err)
			}
			var tmp atomic.Int64
			bk, err := load(ctx, clients, cl.queries, func(q string) error {
				return bookSearch(ctx, rdb, e.Prefix+"sadd:", e.Prefix+"book:tmp:"+strconv.FormatInt(tmp.Add(1), 10), q)
			})
			if err != nil {
				return fmt.Errorf("book %s: %w", cl.name, err)
			}
			rows = append(rows, r.row("ria Search", clients), s.row("RediSearch FT.SEARCH", clients),
				bk.row("book parse_and_search+sort", clients))
			lines = append(lines, fmt.Sprintf("%s, %d clients: ria/RediSearch queries/s = %s (target >= 1x), p50 %s, p99 %s; ria/book = %s", cl.name, clients,
				report.Ratio(r.qps, s.qps), report.Ratio(r.p50, s.p50), report.Ratio(r.p99, s.p99), report.Ratio(r.qps, bk.qps)))
		}
		report.Table(os.Stdout, rows)
		fmt.Println(strings.Join(lines, "\n"))
		fmt.Printf("same totals: %d of %d queries; same ids (totals <= 10): %d of %d\n", agree.totals, len(cl.queries), agree.ids, both)
	}
	fmt.Println()
	return nil
}

// bookSearch is the book's parse_and_search (7.1.2: each union,
// intersection and difference a MULTI/EXEC of its own, results kept 30 s)
// then search_and_sort (SCARD, SORT ... LIMIT 0 10, EXPIRE in one
// MULTI/EXEC), over the pipelined-SADD postings (members are document
// numbers, so SORT by the member is index order, as ria's default). A
// one-word query sorts the word's posting itself, not expired here.
func bookSearch(ctx context.Context, rdb redis.UniversalClient, postings, tmp, query string) error {
	q, err := search.Parse(nil, query)
	if err != nil {
		return err
	}
	n := 0
	op := func(cmd string, keys []string) (string, error) { // _set_common
		n++
		dest := tmp + ":" + strconv.Itoa(n)
		_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Do(ctx, append([]any{cmd, dest}, anys(keys)...)...)
			p.Expire(ctx, dest, 30*time.Second)
			return nil
		})
		return dest, err
	}
	var inter []string
	for _, g := range q.Groups {
		if len(g) == 1 {
			inter = append(inter, postings+g[0])
			continue
		}
		var ks []string
		for _, t := range g {
			ks = append(ks, postings+t)
		}
		u, err := op("SUNIONSTORE", ks)
		if err != nil {
			return err
		}
		inter = append(inter, u)
	}
	id := inter[0]
	if len(inter) > 1 {
		if id, err = op("SINTERSTORE", inter); err != nil {
			return err
		}
	}
	if len(q.Exclude) > 0 {
		ks := []string{id}
		for _, t := range q.Exclude {
			ks = append(ks, postings+t)
		}
		if id, err = op("SDIFFSTORE", ks); err != nil {
			return err
		}
	}
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SCard(ctx, id)
		p.Sort(ctx, id, &redis.Sort{Offset: 0, Count: 10})
		if n > 0 { // the book would expire a one-word query's posting itself
			p.Expire(ctx, id, 30*time.Second)
		}
		return nil
	})
	return err
}

type agreement struct{ totals, ids, shown int }

// compare runs each query once on both systems and counts the equal
// totals, and the equal id sets where both return the whole result.
func compare(ctx context.Context, x *search.Index, rs *redis.Client, qs []string) (a agreement, whole int, err error) {
	for _, q := range qs {
		r, err := x.Search(ctx, q, search.Limit(0, 10))
		if err != nil {
			return a, 0, err
		}
		v, err := rs.Do(ctx, "FT.SEARCH", "idx", q, "NOCONTENT", "VERBATIM", "LIMIT", 0, 10).Slice()
		if err != nil {
			return a, 0, fmt.Errorf("FT.SEARCH %q: %w", q, err)
		}
		total, _ := v[0].(int64)
		if int(total) == r.Total {
			a.totals++
		} else if a.shown < 2 {
			a.shown++
			fmt.Printf("  differs: %q: ria %d, RediSearch %d\n", q, r.Total, total)
		}
		if r.Total <= 10 && total <= 10 {
			whole++
			var ids []string
			for _, id := range v[1:] {
				ids = append(ids, fmt.Sprint(id))
			}
			if slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(r.IDs))) {
				a.ids++
			}
		}
	}
	return a, whole, nil
}

type class struct {
	name    string
	queries []string
}

var plain = regexp.MustCompile(`^[a-z]{3,}$`) // words both query languages read alike

// queryClasses draws the queries from the documents: words of one
// document (so most queries match), an exclusion from another.
func queryClasses(toks [][]string, n int) []class {
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func(k int) []string {
		for {
			ws := slices.DeleteFunc(slices.Clone(toks[rng.IntN(len(toks))]), func(w string) bool { return !plain.MatchString(w) })
			if len(ws) < k {
				continue
			}
			rng.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
			return ws[:k]
		}
	}
	out := []class{{name: "1 word"}, {name: "2 words"}, {name: "3 words"}, {name: "2 words -exclusion"}}
	for range n {
		out[0].queries = append(out[0].queries, pick(1)[0])
		out[1].queries = append(out[1].queries, strings.Join(pick(2), " "))
		out[2].queries = append(out[2].queries, strings.Join(pick(3), " "))
		ex := pick(1)[0]
		w := pick(2)
		for slices.Contains(w, ex) {
			ex = pick(1)[0]
		}
		out[3].queries = append(out[3].queries, strings.Join(w, " ")+" -"+ex)
	}
	return out
}

type loadResult struct{ qps, p50, p99 float64 }

func (r loadResult) row(name string, clients int) []string {
	return []string{name, strconv.Itoa(clients), f0(r.qps), f0(r.p50), f0(r.p99)}
}

// load runs fn over qs from clients goroutines for -d and returns the
// rate and the latency percentiles in µs.
func load(ctx context.Context, clients int, qs []string, fn func(string) error) (loadResult, error) {
	var mu sync.Mutex
	var lat []float64
	var first error
	var wg sync.WaitGroup
	t0 := time.Now()
	end := t0.Add(*dur)
	for c := range clients {
		wg.Go(func() {
			var mine []float64
			for i := c * 7; time.Now().Before(end); i++ {
				s := time.Now()
				if err := fn(qs[i%len(qs)]); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
					return
				}
				mine = append(mine, float64(time.Since(s).Microseconds()))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	el := time.Since(t0).Seconds()
	if first != nil {
		return loadResult{}, first
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	return loadResult{qps: float64(len(lat)) / el, p50: pct(0.5), p99: pct(0.99)}, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// measure runs fn, which handles n documents, and returns documents/s
// and the growth of the server's used_memory.
func measure(ctx context.Context, admin *redis.Client, fn func() error, n int) (rate float64, mem int64, err error) {
	before, err := usedMemory(ctx, admin)
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	if err := fn(); err != nil {
		return 0, 0, err
	}
	el := time.Since(t0).Seconds()
	after, err := usedMemory(ctx, admin)
	if err != nil {
		return 0, 0, err
	}
	return float64(n) / el, after - before, nil
}

func usedMemory(ctx context.Context, c *redis.Client) (int64, error) {
	s, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO memory: no used_memory")
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func f0(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func joinClose(err, cerr error) error {
	if err != nil {
		return err
	}
	return cerr
}
