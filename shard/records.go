package shard

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

// maxString is the largest value Redis stores in a string (512 MB).
const maxString = 512 << 20

// Records keeps a fixed-width record of bytes per numeric id, packed into
// strings (book 9.3, set_location): the record of id i is at byte
// (i mod n)·width of string i/n, where n is the ids per string
// ([WithIDsPerShard]). A record never written reads as zero bytes. Each
// string has a hash tag of its own, so the strings of one Records spread
// over a Cluster. It is safe for concurrent use.
type Records struct {
	rdb                    Client
	name                   string
	keys                   keys.Space
	width, perShard, block int64
	max                    atomic.Int64 // highest string this process knows was counted in the max key
}

var (
	//go:embed raise.lua
	raiseLua    string
	raiseScript = script.New("shard records max", raiseLua)
)

// NewRecords returns the records name, of width bytes each. It takes
// [WithPrefix], [WithIDsPerShard] and [WithBlockSize]. The first NewRecords
// of a name stores its width and ids per string; later ones must agree
// ([ErrMismatch]). One round trip for existing records, two for new ones.
func NewRecords(ctx context.Context, rdb Client, name string, width int, opts ...Option) (*Records, error) {
	return newRecords(ctx, rdb, "records", name, width, nil, opts)
}

func newRecords(ctx context.Context, rdb Client, kind, name string, width int, extra []param, opts []Option) (*Records, error) {
	if rdb == nil {
		return nil, fmt.Errorf("shard: %s %q: nil client", kind, name)
	}
	o, ks, err := newOptions(kind, opts, "WithIDsPerShard", "WithBlockSize")
	if err != nil {
		return nil, err
	}
	if err := keys.CheckEntity("shard: "+kind+" name", name); err != nil {
		return nil, err
	}
	if width < 1 || width > maxString {
		return nil, fmt.Errorf("shard: %s %q: %w: record width %d, want 1 to %d bytes", kind, name, ErrSize, width, maxString)
	}
	per := o.perShard
	if o.set["WithIDsPerShard"] && per < 1 {
		return nil, fmt.Errorf("shard: %s %q: %w: ids per string %d, want at least 1", kind, name, ErrSize, per)
	}
	if per == 0 {
		per = min(1<<20, maxString/int64(width))
	}
	if per > maxString/int64(width) {
		return nil, fmt.Errorf("shard: %s %q: %w: %d ids of %d bytes exceed a string's 512 MB", kind, name, ErrSize, per, width)
	}
	block := o.block
	if o.set["WithBlockSize"] && block < int64(width) {
		return nil, fmt.Errorf("shard: %s %q: %w: block size %d, want at least one record (%d bytes)", kind, name, ErrSize, block, width)
	}
	if block == 0 {
		block = 1 << 20
	}
	ps := append([]param{{name: "width", value: int64(width), explicit: true},
		{name: "per", value: per, explicit: o.set["WithIDsPerShard"]}}, extra...)
	ps, err = loadMeta(ctx, rdb, kind, name, ks.Key(name, "records:meta"), ps, func([]param) error { return nil })
	if err != nil {
		return nil, err
	}
	// As newRecords stores it: 0 would divide by zero, a negative count
	// map ids to negative strings.
	if p := ps[1].value; p < 1 || p > maxString/ps[0].value {
		return nil, fmt.Errorf("shard: %s %q: %w", kind, name, corrupt(ks.Key(name, "records:meta"), "shard meta",
			"per="+strconv.FormatInt(p, 10), fmt.Sprintf("ids per string from 1 to %d", maxString/ps[0].value)))
	}
	r := &Records{rdb: rdb, name: name, keys: ks, width: ps[0].value, perShard: ps[1].value}
	r.block = max(block/r.width, 1) * r.width
	r.max.Store(-1)
	return r, nil
}

// Width returns the bytes per record.
func (r *Records) Width() int { return int(r.width) }

// shardKey is string n: a STRING of packed records.
func (r *Records) shardKey(n int64) string {
	return r.keys.Key(r.name+":"+strconv.FormatInt(n, 10), "records")
}

// maxKey is a STRING: the highest string number written to.
func (r *Records) maxKey() string { return r.keys.Key(r.name, "records:max") }

const recordsRole = "shard records"

func (r *Records) place(id int64) (key string, off int64, err error) {
	if id < 0 {
		return "", 0, fmt.Errorf("shard: %s: id %d, want 0 or more", r.name, id)
	}
	if id/r.perShard >= MaxShards {
		return "", 0, fmt.Errorf("shard: %s: %w: id %d, want below %d (MaxShards strings of %d ids)", r.name, ErrSize, id, MaxShards*r.perShard, r.perShard)
	}
	return r.shardKey(id / r.perShard), (id % r.perShard) * r.width, nil
}

// Put writes the record of id: one SETRANGE (one round trip), idempotent.
// The first Put of a process into a string beyond those it knows first
// raises the records' max string number (one more round trip), so that
// [Records.Scan] reads it. rec must be exactly [Records.Width] bytes. id
// must be from 0 to [MaxShards]·(ids per string) - 1 (an error wrapping
// [ErrSize] past that, for Get and GetMany too).
func (r *Records) Put(ctx context.Context, id int64, rec []byte) error {
	if int64(len(rec)) != r.width {
		return fmt.Errorf("shard: records %q: put %d: record of %d bytes, want %d", r.name, id, len(rec), r.width)
	}
	k, off, err := r.place(id)
	if err != nil {
		return err
	}
	if n := id / r.perShard; n > r.max.Load() {
		m, err := raiseScript.Int64(ctx, r.rdb, []string{r.maxKey()}, n)
		if err != nil {
			return fmt.Errorf("shard: records %q: put %d: %w", r.name, id, script.Unknown(err))
		}
		r.learnMax(m)
	}
	if err := r.rdb.Do(ctx, "setrange", k, off, rec).Err(); err != nil {
		return fmt.Errorf("shard: records %q: put %d: %w", r.name, id, script.Unknown(wrongType(ctx, r.rdb, err, k, recordsRole, "string")))
	}
	return nil
}

func (r *Records) learnMax(m int64) {
	for {
		cur := r.max.Load()
		if m <= cur || r.max.CompareAndSwap(cur, m) {
			return
		}
	}
}

// Get returns the record of id (zero bytes if never written). One round
// trip.
func (r *Records) Get(ctx context.Context, id int64) ([]byte, error) {
	recs, err := r.GetMany(ctx, id)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// GetMany returns the records of ids, in order (the book's
// aggregate_location_list): one GETRANGE per id, pipelined by 10,000 ids
// (one round trip per server per 10,000 ids).
func (r *Records) GetMany(ctx context.Context, ids ...int64) ([][]byte, error) {
	out := make([][]byte, len(ids))
	for lo := 0; lo < len(ids); lo += pipelineChunk {
		hi := min(lo+pipelineChunk, len(ids))
		p := r.rdb.Pipeline()
		for _, id := range ids[lo:hi] {
			k, off, err := r.place(id)
			if err != nil {
				return nil, fmt.Errorf("shard: records %q: get: %w", r.name, err)
			}
			p.Do(ctx, "getrange", k, off, off+r.width-1)
		}
		cmds, err := p.Exec(ctx)
		if err != nil {
			return nil, fmt.Errorf("shard: records %q: get: %w", r.name, batchErr(ctx, r.rdb, cmds, arg1, recordsRole, "string"))
		}
		for i, c := range cmds {
			s, _ := c.(*redis.Cmd).Text()
			rec := make([]byte, r.width)
			copy(rec, s)
			out[lo+i] = rec
		}
	}
	return out, nil
}

// scanWorkers is how many GETRANGEs Scan keeps in flight.
const scanWorkers = 4

// Scan reads every string of the records in blocks of the block size
// ([WithBlockSize]), with a few GETRANGEs in flight at once, and calls fn
// with each block and the id of its first record. Blocks come in no
// particular order; fn is called from one goroutine at a time and must not
// keep block after it returns. Scan stops at fn's first error and returns
// it, and at the end of ctx, returning its error. Round trips: one GET of
// the max string number, one pipeline of STRLEN per server per 10,000
// strings, then one GETRANGE per block. A max string number of [MaxShards]
// or more, which Put never writes, is a *ria.KeyError matching
// ria.ErrCorrupt.
func (r *Records) Scan(ctx context.Context, fn func(first int64, block []byte) error) error {
	maxS, err := r.rdb.Do(ctx, "get", r.maxKey()).Text()
	if err == redis.Nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("shard: records %q: scan: %w", r.name, wrongType(ctx, r.rdb, err, r.maxKey(), "shard records max", "string"))
	}
	maxN, err := strconv.ParseInt(maxS, 10, 64)
	if err != nil || maxN >= MaxShards {
		return fmt.Errorf("shard: records %q: scan: %w", r.name, corrupt(r.maxKey(), "shard records max", maxS,
			fmt.Sprintf("an integer below %d (MaxShards)", MaxShards)))
	}
	if maxN < 0 {
		return nil
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		first int64
		data  []byte
		err   error
	}
	next := make(chan scanJob)
	results := make(chan result, scanWorkers)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the jobs, from one STRLEN pipeline of pipelineChunk strings at a time
		defer wg.Done()
		defer close(next)
		if err := r.scanJobs(ctx, maxN, next); err != nil {
			select {
			case results <- result{err: err}:
			case <-ctx.Done():
			}
		}
	}()
	for range scanWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				s, err := r.rdb.Do(ctx, "getrange", j.key, j.off, j.off+j.size-1).Text()
				if err != nil {
					err = wrongType(ctx, r.rdb, err, j.key, recordsRole, "string")
				}
				b := []byte(s)
				b = b[:len(b)-len(b)%int(r.width)]
				select {
				case results <- result{first: j.first, data: b, err: err}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()
	var first error
	for res := range results {
		if first != nil {
			continue
		}
		if res.err != nil {
			first = fmt.Errorf("shard: records %q: scan: %w", r.name, res.err)
		} else {
			first = fn(res.first, res.data) // fn's own error, as it is
		}
		if first != nil {
			cancel()
		}
	}
	if first == nil && parent.Err() != nil {
		// The workers and the job feed stop at ctx's end without
		// reporting it: the scan may be incomplete.
		first = fmt.Errorf("shard: records %q: scan: %w", r.name, parent.Err())
	}
	return first
}

// scanJob is one GETRANGE of [Records.Scan].
type scanJob struct {
	key       string
	first     int64
	off, size int64
}

// scanJobs sends on next the GETRANGE jobs of strings 0 to maxN, from
// their lengths read pipelineChunk strings per pipeline, checking ctx
// between pipelines. It returns nil when ctx ends (Scan reports that).
func (r *Records) scanJobs(ctx context.Context, maxN int64, next chan<- scanJob) error {
	for lo := int64(0); lo <= maxN; lo += pipelineChunk {
		if ctx.Err() != nil {
			return nil
		}
		hi := min(lo+pipelineChunk, maxN+1)
		p := r.rdb.Pipeline()
		for n := lo; n < hi; n++ {
			p.Do(ctx, "strlen", r.shardKey(n))
		}
		cmds, err := p.Exec(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return batchErr(ctx, r.rdb, cmds, arg1, recordsRole, "string")
		}
		for i, c := range cmds {
			n := lo + int64(i)
			size, _ := c.(*redis.Cmd).Int64()
			size -= size % r.width // a partial record at the end is not one
			for off := int64(0); off < size; off += r.block {
				select {
				case next <- scanJob{key: r.shardKey(n), first: n*r.perShard + off/r.width, off: off, size: min(r.block, size-off)}:
				case <-ctx.Done():
					return nil
				}
			}
		}
	}
	return nil
}
