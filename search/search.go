package search

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed common.lua
	commonLua string
	//go:embed add.lua
	addLua string
	//go:embed remove.lua
	removeLua string
	//go:embed search.lua
	searchLua string
	//go:embed page.lua
	pageLua string

	//go:embed stats.lua
	statsLua string

	addScript    = script.NewOnce("search add", script.BytesLua+commonLua+"local CHECK_ONLY = false\n"+addLua)
	removeScript = script.NewOnce("search remove", script.BytesLua+commonLua+"local CHECK_ONLY = false\n"+removeLua)
	// The check passes of a sharded Add and Remove: the same scripts,
	// which return before their first write.
	addCheckScript    = script.New("search add check", script.BytesLua+commonLua+"local CHECK_ONLY = true\n"+addLua)
	removeCheckScript = script.New("search remove check", script.BytesLua+commonLua+"local CHECK_ONLY = true\n"+removeLua)
	searchScript      = script.New("search search", script.BytesLua+commonLua+searchLua)
	pageScript        = script.New("search page", script.BytesLua+commonLua+pageLua)
	statsScript       = script.New("search stats", script.BytesLua+commonLua+statsLua)
)

// MaxFieldBytes is the longest value of a sort field.
const MaxFieldBytes = 1024

// MaxBatch bounds the documents (or IDs) of one [Index.Add] or
// [Index.Remove] call.
const MaxBatch = 10000

// Document is what [Index.Add] indexes.
type Document struct {
	// ID names the document: 1 to [MaxIDBytes] bytes of valid UTF-8.
	ID string
	// Text is analyzed into the document's terms.
	Text string
	// Fields are the values of declared sort fields ([WithFields]): a
	// Numeric field's value must parse as a finite float64
	// (strconv.ParseFloat); a Text field's is at most [MaxFieldBytes].
	// A re-indexed document's fields are replaced.
	Fields map[string]string
	// Scores are the document's values of declared scores ([WithScores]),
	// finite. A re-indexed document keeps the scores it is not given.
	Scores map[string]float64
}

// Add indexes docs, or re-indexes those whose ID is already indexed: a
// re-indexed document's postings become exactly those of its new text
// (the terms it no longer has lose it), its fields are replaced and its
// given scores set. Each shard's part of the batch is one atomic script;
// all shards go in one pipeline: one round trip per node.
//
// A new document takes the next document number, which orders results by
// default (index order); a re-indexed one keeps its number. A sharded
// index reserves the batch's numbers first (HINCRBY on shard 0's stats:
// one more round trip; a number for every document of the batch, new or
// not, and kept if the batch then fails), so that its order is the one an
// unsharded index gives to the same Adds. Documents of concurrent Adds
// take their places when their shard's script runs. When the batch spans
// several shards, each shard's script first runs its checks without
// writing, in the same round trip as the reservation (the check pass).
//
// It returns how many documents were new and how many replaced. Bad
// input (an empty, long or repeated ID, an undeclared field or score, a
// value that is not a finite number, a document over the [Limits]) is an
// error matching [ErrInvalid], [ErrUnknownField] or [ErrTooLarge], and
// nothing is written. A key of the index holding another type, or a
// malformed value, is a *ria.KeyError, and nothing is written when the
// key is there before the Add. Only each shard's part is atomic: a
// key that another client writes between the check pass and the writes,
// or that only the writes reach (the hash of a document number the Add
// reserved), fails that shard's part after other shards may have written
// theirs; the error then names the shards that failed ("shard 1: ..."),
// and added and replaced count the parts that were applied. When every
// re-send of a shard's script lost its reply, the error wraps
// ria.ErrOutcomeUnknown.
func (x *Index) Add(ctx context.Context, docs ...Document) (added, replaced int, err error) {
	if len(docs) == 0 {
		return 0, 0, nil
	}
	if len(docs) > MaxBatch {
		return 0, 0, fmt.Errorf("search: add %d documents: %w: at most %d per call", len(docs), ErrTooLarge, MaxBatch)
	}
	perShard := make([][]any, len(x.shards))
	counts := make([]int, len(x.shards))
	seen := make(map[string]bool, len(docs))
	all := make([][]any, len(docs))
	for i, d := range docs {
		args, err := x.docArgs(d)
		if err != nil {
			return 0, 0, err
		}
		all[i] = args
		if seen[d.ID] {
			return 0, 0, fmt.Errorf("search: add %q: %w: document given twice", d.ID, ErrInvalid)
		}
		seen[d.ID] = true
	}
	at := make([]int, len(docs)) // where each document's number goes in its shard's args
	for i, d := range docs {
		s := shardOf(d.ID, len(x.shards))
		at[i] = len(perShard[s]) + 1
		perShard[s] = append(perShard[s], all[i][0], int64(0)) // 0: the shard numbers it
		perShard[s] = append(perShard[s], all[i][1:]...)
		counts[s]++
	}
	var shards []int // the shards of the batch
	for i, n := range counts {
		if n > 0 {
			shards = append(shards, i)
		}
	}
	args := func(i int) []any { return append([]any{x.bitmapMin, counts[i]}, perShard[i]...) }
	if len(x.shards) > 1 {
		// Reserve the batch's numbers and, when the batch spans shards,
		// check every shard's part (the scripts without their writes), in
		// one pipeline: a part that would fail fails the Add before any
		// shard writes.
		k := x.shards[0].stats
		var reserve *redis.Cmd
		also := func(p redis.Pipeliner) { reserve = p.Do(ctx, "HINCRBY", k, "gseq", len(docs)) }
		var checks []*script.Call
		if len(shards) > 1 {
			for _, i := range shards {
				checks = append(checks, addCheckScript.Call(x.shards[i].scriptKeys(), args(i)...))
			}
		}
		script.SendWith(ctx, x.rdb, also, checks)
		var errs []error
		end, err := reserve.Int64()
		if err != nil {
			if strings.Contains(err.Error(), "not an integer") {
				err = &ria.KeyError{Role: "search index stats field gseq", Key: k, Got: "not an integer",
					Want: "an integer", Err: ria.ErrCorrupt}
			}
			err = script.WrongType(ctx, x.rdb, err, k, "search index stats", "hash")
			errs = append(errs, fmt.Errorf("reserve numbers: %w", err))
		}
		if err := x.shardErrs(shards, checks); err != nil {
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			return 0, 0, fmt.Errorf("search: add %d documents: %w", len(docs), err)
		}
		if end > 4294967295 { // SETBIT's last bit, as add.lua checks a shard's own seq
			return 0, 0, fmt.Errorf("search: add %d documents: reserve numbers: %w", len(docs), &ria.KeyError{
				Role: "search index stats field gseq", Key: k, Got: strconv.FormatInt(end, 10),
				Want: "document numbers below 2^32", Err: ria.ErrCorrupt})
		}
		// The numbers reserved: base, base+1, ... in the order of docs.
		base := end - int64(len(docs)) + 1
		for i, d := range docs {
			perShard[shardOf(d.ID, len(x.shards))][at[i]] = base + int64(i)
		}
	}
	ttl := script.ReplayWindow(x.rdb)
	calls := make([]*script.Call, len(shards))
	for j, i := range shards {
		calls[j] = addScript.Prepare(x.shards[i].onceKey(), ttl, x.shards[i].scriptKeys(), args(i)...)
	}
	script.Send(ctx, x.rdb, calls)
	for _, c := range calls {
		if c.Err != nil {
			continue
		}
		n, err := addScript.AsInt64s(c.Val)
		if err != nil || len(n) != 2 {
			c.Err = fmt.Errorf("bad reply %v: %w", c.Val, err)
			continue
		}
		added += int(n[0])
		replaced += int(n[1])
	}
	if err := x.shardErrs(shards, calls); err != nil {
		return added, replaced, fmt.Errorf("search: add %d documents: %w", len(docs), err)
	}
	return added, replaced, nil
}

// scriptKeys are the KEYS of add.lua and remove.lua.
func (k shardKeys) scriptKeys() []string {
	return []string{k.ids, k.stats, k.docPrefix, k.setPrefix, k.scorePrefix, k.nums}
}

// docArgs checks d and returns its part of add.lua's ARGV.
func (x *Index) docArgs(d Document) ([]any, error) {
	if err := checkID(d.ID); err != nil {
		return nil, fmt.Errorf("search: add: %w", err)
	}
	fail := func(err error, format string, args ...any) ([]any, error) {
		return nil, fmt.Errorf("search: add %q: %w: "+format, append([]any{d.ID, err}, args...)...)
	}
	if len(d.Text) > x.limits.MaxTextBytes {
		return fail(ErrTooLarge, "text of %d bytes: at most %d", len(d.Text), x.limits.MaxTextBytes)
	}
	terms := x.analyzer.Terms(d.Text)
	tf := map[string]int{}
	for _, t := range terms {
		if err := CheckTerm(t); err != nil {
			return fail(ErrInvalid, "the analyzer's term: %v", err)
		}
		tf[t]++
	}
	if len(tf) > x.limits.MaxTerms {
		return fail(ErrTooLarge, "%d distinct terms: at most %d", len(tf), x.limits.MaxTerms)
	}
	args := []any{d.ID, len(terms), len(tf)}
	for _, t := range slices.Sorted(maps.Keys(tf)) {
		args = append(args, termTok(t), tf[t])
	}
	args = append(args, len(d.Fields))
	for _, name := range slices.Sorted(maps.Keys(d.Fields)) {
		v := d.Fields[name]
		kind, ok := x.fields[name]
		if !ok {
			return fail(ErrUnknownField, "field %q is not declared (WithFields)", name)
		}
		switch kind {
		case Numeric:
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return fail(ErrInvalid, "numeric field %q: %q is not a finite number", name, v)
			}
			v = strconv.FormatFloat(f, 'g', -1, 64)
		case Text:
			if len(v) > MaxFieldBytes || !utf8.ValidString(v) {
				return fail(ErrInvalid, "text field %q: want valid UTF-8 of at most %d bytes", name, MaxFieldBytes)
			}
		}
		args = append(args, "s:"+name, v)
	}
	args = append(args, len(d.Scores))
	for _, name := range slices.Sorted(maps.Keys(d.Scores)) {
		v := d.Scores[name]
		if !slices.Contains(x.scores, name) {
			return fail(ErrUnknownField, "score %q is not declared (WithScores)", name)
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return fail(ErrInvalid, "score %q: %v is not finite", name, v)
		}
		args = append(args, name, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return args, nil
}

// checkID checks a document ID.
func checkID(id string) error {
	if id == "" || len(id) > MaxIDBytes || !utf8.ValidString(id) {
		return fmt.Errorf("document ID %q: %w: want 1 to %d bytes of valid UTF-8", trunc(id), ErrInvalid, MaxIDBytes)
	}
	return nil
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// CheckTerm returns an error if term cannot be an index term: empty, over
// [MaxTermBytes], invalid UTF-8 or holding a control character.
func CheckTerm(term string) error {
	if term == "" || len(term) > MaxTermBytes || !utf8.ValidString(term) {
		return fmt.Errorf("term %q: want 1 to %d bytes of valid UTF-8", trunc(term), MaxTermBytes)
	}
	for _, r := range term {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("term %q: control character %q", trunc(term), r)
		}
	}
	return nil
}

// Remove removes the documents ids from the index: their postings, stored
// fields and declared scores ([WithScores]) go, and nothing of theirs is
// left. IDs that are not indexed are skipped. It returns how many
// documents were removed. One atomic script per shard, all in one
// pipeline: one round trip per node, after a check pass (the scripts
// without their writes, one more round trip) when the IDs span several
// shards. Errors as for [Index.Add].
func (x *Index) Remove(ctx context.Context, ids ...string) (int, error) {
	if len(ids) > MaxBatch {
		return 0, fmt.Errorf("search: remove %d documents: %w: at most %d per call", len(ids), ErrTooLarge, MaxBatch)
	}
	perShard := make([][]any, len(x.shards))
	seen := map[string]bool{}
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return 0, fmt.Errorf("search: remove: %w", err)
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		s := shardOf(id, len(x.shards))
		perShard[s] = append(perShard[s], id)
	}
	var shards []int // the shards of the IDs
	for i := range x.shards {
		if len(perShard[i]) > 0 {
			shards = append(shards, i)
		}
	}
	if len(shards) == 0 {
		return 0, nil
	}
	args := func(i int) []any {
		a := append([]any{len(perShard[i])}, perShard[i]...)
		a = append(a, len(x.scores))
		for _, s := range x.scores {
			a = append(a, s)
		}
		return a
	}
	if len(shards) > 1 {
		checks := make([]*script.Call, len(shards))
		for j, i := range shards {
			checks[j] = removeCheckScript.Call(x.shards[i].scriptKeys(), args(i)...)
		}
		script.Send(ctx, x.rdb, checks)
		if err := x.shardErrs(shards, checks); err != nil {
			return 0, fmt.Errorf("search: remove %d documents: %w", len(ids), err)
		}
	}
	ttl := script.ReplayWindow(x.rdb)
	calls := make([]*script.Call, len(shards))
	for j, i := range shards {
		calls[j] = removeScript.Prepare(x.shards[i].onceKey(), ttl, x.shards[i].scriptKeys(), args(i)...)
	}
	script.Send(ctx, x.rdb, calls)
	removed := 0
	for _, c := range calls {
		if c.Err != nil {
			continue
		}
		n, err := removeScript.AsInt64(c.Val)
		if err != nil {
			c.Err = err
			continue
		}
		removed += int(n)
	}
	if err := x.shardErrs(shards, calls); err != nil {
		return removed, fmt.Errorf("search: remove %d documents: %w", len(ids), err)
	}
	return removed, nil
}

// shardErrs joins the errors of calls, the scripts of shards (in the same
// order); on a sharded index each names its shard.
func (x *Index) shardErrs(shards []int, calls []*script.Call) error {
	var errs []error
	for j, c := range calls {
		switch {
		case c.Err == nil:
		case len(x.shards) > 1:
			errs = append(errs, fmt.Errorf("shard %d: %w", shards[j], c.Err))
		default:
			errs = append(errs, c.Err)
		}
	}
	return errors.Join(errs...)
}
