package main

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	gocache "github.com/go-redis/cache/v9"
	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ria-go/ria/bench/internal/block"
	"github.com/ria-go/ria/cache"
)

// ttl is every cache entry's TTL; window the guard's window.
const (
	ttl    = time.Hour
	window = time.Minute
)

// Job is the cached value: a small struct, 200-odd bytes in JSON, 150-odd
// in msgpack.
type Job struct {
	ID       int      `json:"id" msgpack:"id"`
	Title    string   `json:"title" msgpack:"title"`
	Company  string   `json:"company" msgpack:"company"`
	Location string   `json:"location" msgpack:"location"`
	Salary   int      `json:"salary" msgpack:"salary"`
	Remote   bool     `json:"remote" msgpack:"remote"`
	Tags     []string `json:"tags" msgpack:"tags"`
	Summary  string   `json:"summary" msgpack:"summary"`
}

func newJob(id int) Job {
	return Job{
		ID: id, Title: "Senior Gopher", Company: "Example Corp", Location: "Kyiv, Ukraine",
		Salary: 100000, Remote: true, Tags: []string{"go", "redis", "distributed-systems"},
		Summary: "Build and run the services behind the job board; on call one week in six.",
	}
}

// loader is the system of record: it counts its calls, and waits delay
// (a database query) before it answers.
type loader struct {
	loads atomic.Int64
	delay time.Duration
}

func (l *loader) load(id int) Job {
	l.loads.Add(1)
	if l.delay > 0 {
		block.For(l.delay) // a database query
	}
	return newJob(id)
}

// proc is one contender in one "process": its own library instance over one
// go-redis client.
type proc interface {
	// get reads key through the cache, loading it from l on a miss.
	get(ctx context.Context, key string, id int, l *loader) error
	// allow asks the once-per-window guard about key.
	allow(ctx context.Context, key string) (bool, error)
}

// contender is one library in one configuration.
type contender struct {
	name string
	note string
	// newProc returns the contender's instance for one process; prefix
	// starts every key it writes.
	newProc func(rdb *redis.Client, prefix string) (proc, error)
}

var errWrongValue = errors.New("wrong value read")

// ---- ria ----

type msgpackCodec struct{}

func (msgpackCodec) Marshal(v any) ([]byte, error)      { return msgpack.Marshal(v) }
func (msgpackCodec) Unmarshal(data []byte, v any) error { return msgpack.Unmarshal(data, v) }

type riaProc struct {
	c    *cache.Cache[Job]
	near bool // c has a near cache
	g    *cache.Guard
	l    *cache.Limiter
}

func riaCache(name, codecNote string, codec cache.Codec) contender {
	return contender{
		name: name,
		note: "cache.New[Job](WithTTL(1h), WithCodec(" + codecNote + ")).Get(ctx, key, load): SET val <lease> NX PX GET " +
			"(a hit answers as a GET does; a miss takes the lease), then the store script; waiters in other processes " +
			"register and block (BLMOVE) for the loader's value; same-process callers share one Get",
		newProc: func(rdb *redis.Client, prefix string) (proc, error) {
			c, err := cache.New[Job](rdb, "jobs", cache.WithPrefix(prefix+"ria:"), cache.WithTTL(ttl), cache.WithCodec(codec))
			return &riaProc{c: c}, err
		},
	}
}

// nearSize is the near (local) cache size of the near-hit scenarios: room
// for every hit key.
const nearSize = 2 * hitKeys

func riaNear(name, codecNote string, codec cache.Codec) contender {
	return contender{
		name: name,
		note: "cache.New[Job](WithTTL(1h), WithCodec(" + codecNote + "), WithNear(2000, 1m)).Get: a hit in the near cache " +
			"decodes the value kept encoded in memory (no round trip); every write publishes an invalidation that the " +
			"other processes' near caches hear (Pub/Sub), maxStale 1m bounds a lost one",
		newProc: func(rdb *redis.Client, prefix string) (proc, error) {
			c, err := cache.New[Job](rdb, "jobs", cache.WithPrefix(prefix+"ria:"), cache.WithTTL(ttl), cache.WithCodec(codec),
				cache.WithNear(nearSize, time.Minute))
			return &riaProc{c: c, near: true}, err
		},
	}
}

// waitReady waits until the near cache, if any, is subscribed (it serves
// hits only then).
func (p *riaProc) waitReady(ctx context.Context) error {
	for deadline := time.Now().Add(10 * time.Second); p.near && !p.c.NearReady(); {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.New("near cache not subscribed")
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

func (p *riaProc) close() {
	if p.c != nil {
		_ = p.c.Close()
	}
}

func riaGuard() contender {
	return contender{
		name: "ria",
		note: "cache.NewGuard(...).Allow(ctx, key, 1m): SET key <nonce> NX PX 60000 GET (a re-send after a lost reply finds its own nonce)",
		newProc: func(rdb *redis.Client, prefix string) (proc, error) {
			g, err := cache.NewGuard(rdb, "guard", cache.WithPrefix(prefix+"ria:"))
			return &riaProc{g: g}, err
		},
	}
}

func (p *riaProc) get(ctx context.Context, key string, id int, l *loader) error {
	j, err := p.c.Get(ctx, key, func(context.Context) (Job, error) { return l.load(id), nil })
	if err == nil && j.ID != id {
		err = errWrongValue
	}
	return err
}

// rateLimit is the GCRA limit of the rate scenarios: 100 a second per key,
// bursts of 100.
var rateLimit = cache.PerSecond(100)

func riaLimiter() contender {
	return contender{
		name: "ria",
		note: "cache.NewLimiter(...).Allow(ctx, key, PerSecond(100)): a GCRA script (TIME, GET, SET PX when allowed) in " +
			"MULTI/EXEC, which go-redis never re-sends (a lost reply is an unknown outcome, never a double count); calls made " +
			"while two transactions are on their way leave together in the next",
		newProc: func(rdb *redis.Client, prefix string) (proc, error) {
			l, err := cache.NewLimiter(rdb, "rate", cache.WithPrefix(prefix+"ria:"))
			return &riaProc{l: l}, err
		},
	}
}

func (p *riaProc) allow(ctx context.Context, key string) (bool, error) {
	if p.l != nil {
		r, err := p.l.Allow(ctx, key, rateLimit)
		return r.Allowed > 0, err
	}
	return p.g.Allow(ctx, key, window)
}

// ---- go-redis/cache ----

type goCacheProc struct {
	c      *gocache.Cache
	prefix string
}

// goCacheContender is go-redis/cache built with the options opt returns
// (called once per process, so that each has its own local cache), their
// Redis set to the process's client, its keys under keyPart.
func goCacheContender(name, note, keyPart string, opt func() gocache.Options) contender {
	return contender{
		name: name,
		note: note,
		newProc: func(rdb *redis.Client, prefix string) (proc, error) {
			o := opt()
			o.Redis = rdb
			return &goCacheProc{c: gocache.New(&o), prefix: prefix + keyPart}, nil
		},
	}
}

func goRedisCache() contender {
	return goCacheContender("go-redis/cache",
		"cache.New(&Options{Redis: rdb}).Once(&Item{Key, Value: &job, TTL: 1h, Do: load}), no local cache: "+
			"GET, on a miss Do + SET; singleflight within a process only; msgpack, s2-compressed from 64 bytes",
		"gocache:", func() gocache.Options { return gocache.Options{} })
}

// goRedisCacheJSON is go-redis/cache with ria's default codec
// (encoding/json, no compression): the like-for-like comparison of ria's
// default.
func goRedisCacheJSON() contender {
	return goCacheContender("go-redis/cache-json",
		"go-redis/cache as above with Options{Marshal: json.Marshal, Unmarshal: json.Unmarshal}: "+
			"encoding/json, no compression, as ria's default codec",
		"gocache-json:", func() gocache.Options { return gocache.Options{Marshal: json.Marshal, Unmarshal: json.Unmarshal} })
}

// goRedisCacheMsgpack is go-redis/cache with plain msgpack (no s2
// compression): the like-for-like comparison of ria with its msgpack codec.
func goRedisCacheMsgpack() contender {
	return goCacheContender("go-redis/cache-msgpack",
		"go-redis/cache as above with Options{Marshal: msgpack.Marshal, Unmarshal: msgpack.Unmarshal}: "+
			"msgpack, no compression, as ria-msgpack",
		"gocache-msgpack:", func() gocache.Options { return gocache.Options{Marshal: msgpack.Marshal, Unmarshal: msgpack.Unmarshal} })
}

func goRedisCacheLocal() contender {
	return goCacheContender("go-redis/cache+local",
		"cache.New(&Options{Redis: rdb, LocalCache: NewTinyLFU(2000, 1m)}).Once(...): a hit in the local "+
			"TinyLFU cache decodes the value kept encoded in memory (no round trip); no invalidation across processes "+
			"(a value changed elsewhere is served until its local TTL, 1m here)",
		"gocache:", func() gocache.Options {
			return gocache.Options{LocalCache: gocache.NewTinyLFU(nearSize, time.Minute)}
		})
}

func (p *goCacheProc) get(ctx context.Context, key string, id int, l *loader) error {
	var j Job
	err := p.c.Once(&gocache.Item{
		Ctx: ctx, Key: p.prefix + key, Value: &j, TTL: ttl,
		Do: func(*gocache.Item) (any, error) { return l.load(id), nil },
	})
	if err == nil && j.ID != id {
		err = errWrongValue
	}
	return err
}

func (p *goCacheProc) allow(context.Context, string) (bool, error) {
	return false, errors.New("go-redis/cache has no guard")
}

// ---- redis_rate ----

type rateProc struct {
	l      *redis_rate.Limiter
	prefix string
	limit  redis_rate.Limit
}

func redisRate() contender {
	return contender{
		name: "redis_rate",
		note: "redis_rate.NewLimiter(rdb).Allow(ctx, key, Limit{Rate: 1, Burst: 1, Period: 1m}): " +
			"a GCRA Lua script (TIME, GET, and SET EX when allowed)",
		newProc: func(rdb *redis.Client, prefix string) (proc, error) {
			return &rateProc{l: redis_rate.NewLimiter(rdb), prefix: prefix + "rate:",
				limit: redis_rate.Limit{Rate: 1, Burst: 1, Period: window}}, nil
		},
	}
}

func redisRateGCRA() contender {
	return contender{
		name: "redis_rate",
		note: "redis_rate.NewLimiter(rdb).Allow(ctx, key, PerSecond(100)): a GCRA Lua script (TIME, GET, and SET EX when allowed)",
		newProc: func(rdb *redis.Client, prefix string) (proc, error) {
			return &rateProc{l: redis_rate.NewLimiter(rdb), prefix: prefix + "rate:", limit: redis_rate.PerSecond(100)}, nil
		},
	}
}

func (p *rateProc) get(context.Context, string, int, *loader) error {
	return errors.New("redis_rate is not a cache")
}

func (p *rateProc) allow(ctx context.Context, key string) (bool, error) {
	res, err := p.l.Allow(ctx, p.prefix+key, p.limit)
	if err != nil {
		return false, err
	}
	return res.Allowed > 0, nil
}

// ---- the physical limit ----

// limitProc is no library: what the scenario costs at least on this machine
// and server, measured in the same run. A hit is a plain GET of the encoded
// value (not decoded); a miss a GET and a SET of the encoded value (not
// encoded per call); a stampede's key 32 GETs at once, then one caller's
// load and SET; the guard a SET NX PX.
type limitProc struct {
	rdb    redis.Cmdable
	prefix string
	value  []byte
	shared *limitShared
}

// limitShared is what the limit's "processes" share: which caller loads
// each stampede key.
type limitShared struct {
	mu      sync.Mutex
	loading map[string]bool
}

func physicalLimit() contender {
	shared := &limitShared{loading: map[string]bool{}}
	value, _ := json.Marshal(newJob(0))
	return contender{
		name: "limit",
		note: "plain go-redis at the same concurrency: hit GET (the value not decoded); miss GET + SET " +
			"(the value encoded once); stampede 32 GETs, then one load + SET per key; guard SET NX PX",
		newProc: func(rdb *redis.Client, prefix string) (proc, error) {
			return &limitProc{rdb: rdb, prefix: prefix + "limit:", value: value, shared: shared}, nil
		},
	}
}

// physicalLimitBatched is physicalLimit's commands sent through go-redis's
// own autopipelining (Client.AutoPipeline: commands that goroutines send
// at the same time leave in one pipeline): the limit of a library that
// batches, as ria's Limiter and Get's first command do.
func physicalLimitBatched() contender {
	c := physicalLimit()
	c.name = "limit-batched"
	c.note = "as limit, through go-redis's autopipelining (rdb.AutoPipeline(), default options): the commands " +
		"goroutines send at the same time share a pipeline"
	newProc := c.newProc
	c.newProc = func(rdb *redis.Client, prefix string) (proc, error) {
		p, err := newProc(rdb, prefix+"batched:")
		if err != nil {
			return nil, err
		}
		ap, err := rdb.AutoPipeline()
		if err != nil {
			return nil, err
		}
		lp := p.(*limitProc)
		lp.rdb = ap
		return &batchedLimitProc{limitProc: lp, ap: ap}, nil
	}
	return c
}

// batchedLimitProc is a limitProc on an AutoPipeliner, closed after the run.
type batchedLimitProc struct {
	*limitProc
	ap *redis.AutoPipeliner
}

func (p *batchedLimitProc) close() { _ = p.ap.Close() }

func (p *limitProc) get(ctx context.Context, key string, id int, l *loader) error {
	k := p.prefix + key
	_, err := p.rdb.Get(ctx, k).Bytes()
	switch {
	case err == nil:
		return nil
	case err != redis.Nil:
		return err
	}
	p.shared.mu.Lock()
	first := !p.shared.loading[k]
	p.shared.loading[k] = true
	p.shared.mu.Unlock()
	if !first { // a stampede: another caller loads
		return nil
	}
	l.load(id)
	return p.rdb.Set(ctx, k, p.value, ttl).Err()
}

func (p *limitProc) allow(ctx context.Context, key string) (bool, error) {
	return p.rdb.SetNX(ctx, p.prefix+key, "1", window).Result()
}
