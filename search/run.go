package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

// ErrExpired means a search ID whose cached result is gone (its TTL
// passed, see [WithCacheTTL]): search again.
var ErrExpired = errors.New("search: result expired")

// SearchOption configures [Index.Search].
type SearchOption func(*searchOptions)

type searchOptions struct {
	mode    string // doc, id, field, z, rel
	field   string
	desc    bool
	weights map[string]float64
	offset  int
	count   int
}

// ByID sorts the results by document ID (bytes, ascending). Every
// matching document's ID is read to order them: slower than the default
// index order on large results.
func ByID() SearchOption {
	return func(o *searchOptions) { o.mode, o.desc = "id", false }
}

// ByField sorts the results by the stored field name ([WithFields]):
// numerically for a Numeric field, by bytes for a Text field, descending
// when desc (the book's search_and_sort, sort="-updated"). A document
// without the field sorts as 0 or "" (as Redis SORT does). Ties go by
// document ID, ascending.
func ByField(name string, desc bool) SearchOption {
	return func(o *searchOptions) { o.mode, o.field, o.desc = "field", name, desc }
}

// ByScores sorts the results by the weighted sum of their scores
// ([WithScores]; a missing score counts 0), highest first unless asc: the
// book's search_and_zsort (update time and votes, weights 1 and 0 by
// default there; here every weight is given). Ties go by document ID. A
// sum that is no number (inf - inf, when scores near the float64 limit
// meet weights of both signs) counts as 0.
func ByScores(weights map[string]float64, asc bool) SearchOption {
	return func(o *searchOptions) { o.mode, o.weights, o.desc = "z", weights, !asc }
}

// ByRelevance orders the results best match first by BM25 (k1 1.2, b
// 0.75) over the query's wanted terms (synonyms included), computed in
// Redis from the documents' term counts and lengths and the terms'
// document frequencies. Ties go by document ID. On a sharded index the
// statistics are the whole index's (read first, in one more round trip
// per node), so the order is the one an unsharded index gives.
func ByRelevance() SearchOption {
	return func(o *searchOptions) { o.mode, o.desc = "rel", true }
}

// Limit sets the page a search returns: count results from offset
// (default 0 and 10, the book's 0 and 20 aside). offset >= 0, count 1 to
// [MaxPageSize].
func Limit(offset, count int) SearchOption {
	return func(o *searchOptions) { o.offset, o.count = offset, count }
}

// Result is one page of a search.
type Result struct {
	// ID names the cached result set: pass it to [Index.Page] and
	// [Index.Refresh] while it lives ([WithCacheTTL], renewed by each).
	ID string
	// Total is the number of documents the query matches.
	Total int
	// Offset is the position of IDs[0] in the whole result.
	Offset int
	// IDs are the document IDs of the page, in order.
	IDs []string
}

// Search runs query (see [Parse]) and returns its first page (see
// [Limit]), in index order (the order the documents were first added;
// re-indexing keeps a document's place) unless [ByID], [ByField],
// [ByScores] or [ByRelevance] says otherwise. Only the entries up to the
// page are put in order (the first bits of a bitmap, or a bounded heap);
// the result is cached under Result.ID for later pages
// ([Index.Page], which orders the rest the first time a page goes past
// them; see the package doc). One round trip per node (each shard's
// script in one pipeline).
//
// A malformed query is a *ParseError ([ErrSyntax], [ErrEmptyQuery],
// [ErrOnlyExclusions]); an undeclared sort field or score is
// [ErrUnknownField]; a bad page is [ErrInvalid]; nothing is written then.
// A key of the index holding another type is a *ria.KeyError.
func (x *Index) Search(ctx context.Context, query string, opts ...SearchOption) (*Result, error) {
	o := searchOptions{mode: "doc", count: 10}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("search: search %q: %w: %w", trunc(query), err, ErrInvalid)
	}
	fail := func(err error) (*Result, error) {
		return nil, fmt.Errorf("search: search %q: %w", trunc(query), err)
	}
	if err := checkPage(o.offset, o.count); err != nil {
		return fail(err)
	}
	q, err := Parse(x.analyzer, query)
	if err != nil {
		return nil, err
	}
	args := []any{x.ttl.Milliseconds(), 0, 0}
	mode := o.mode
	switch o.mode {
	case "field":
		kind, ok := x.fields[o.field]
		if !ok {
			return fail(fmt.Errorf("%w: sort field %q is not declared (WithFields)", ErrUnknownField, o.field))
		}
		mode = map[FieldKind]string{Numeric: "num", Text: "text"}[kind]
	case "rel":
	case "z":
		if len(o.weights) == 0 {
			return fail(fmt.Errorf("%w: ByScores without weights", ErrInvalid))
		}
		for name, w := range o.weights {
			if !slices.Contains(x.scores, name) {
				return fail(fmt.Errorf("%w: score %q is not declared (WithScores)", ErrUnknownField, name))
			}
			if math.IsInf(w, 0) || math.IsNaN(w) {
				return fail(fmt.Errorf("%w: weight of %q: %v is not finite", ErrInvalid, name, w))
			}
		}
	}
	desc := "0"
	if o.desc {
		desc = "1"
	}
	args = append(args, mode, o.field, desc, len(q.Groups))
	for _, g := range q.Groups {
		args = append(args, len(g))
		for _, t := range g {
			args = append(args, termTok(t))
		}
	}
	args = append(args, len(q.Exclude))
	for _, t := range q.Exclude {
		args = append(args, termTok(t))
	}
	args = append(args, len(o.weights))
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range o.weights {
			if !yield(k) {
				return
			}
		}
	}) {
		args = append(args, name, strconv.FormatFloat(o.weights[name], 'g', -1, 64))
	}
	if mode == "rel" {
		var wanted []string
		for _, g := range q.Groups {
			for _, t := range g {
				wanted = append(wanted, termTok(t))
			}
		}
		wanted = slices.Compact(slices.Sorted(slices.Values(wanted)))
		args = append(args, len(wanted))
		for _, t := range wanted {
			args = append(args, t)
		}
		if len(x.shards) == 1 {
			args = append(args, "local")
		} else {
			g, err := x.globalStats(ctx, wanted)
			if err != nil {
				return fail(err)
			}
			args = append(args, "global")
			args = append(args, g...)
		}
	}
	// The search ID says how to merge the shards' pages: <mode><desc>.<nonce>.
	sid := mode + desc + "." + script.Nonce()
	skip, take := x.window(o.offset, o.count)
	args[1], args[2] = skip, take
	calls := make([]*script.Call, len(x.shards))
	for i, k := range x.shards {
		calls[i] = searchScript.Call([]string{k.docPrefix, k.setPrefix, k.scorePrefix, k.cachePrefix + sid, k.stats, k.nums}, args...)
	}
	script.Send(ctx, x.rdb, calls)
	r, err := x.merge(sid, o.offset, o.count, calls)
	if err != nil {
		return fail(err)
	}
	return r, nil
}

// window returns what each shard returns for a page: a single shard skips
// to offset; several shards each return their first offset+count entries,
// merged in Go.
func (x *Index) window(offset, count int) (skip, take int) {
	if len(x.shards) == 1 {
		return offset, count
	}
	return 0, offset + count
}

func checkPage(offset, count int) error {
	if offset < 0 || count < 1 || count > MaxPageSize || offset > math.MaxInt32 {
		return fmt.Errorf("%w: page offset %d count %d: want offset >= 0, count 1 to %d", ErrInvalid, offset, count, MaxPageSize)
	}
	return nil
}

type entry struct {
	id, key string
	n       float64
}

// merge reads the shards' replies {total, {id, key, ...}} and returns the
// page [offset, offset+count) of their merged order.
func (x *Index) merge(sid string, offset, count int, calls []*script.Call) (*Result, error) {
	mode, desc := sid[:len(sid)-len(strings.TrimLeft(sid, "abcdefghijklmnopqrstuvwxyz"))], false
	if len(sid) > len(mode) {
		desc = sid[len(mode)] == '1'
	}
	numeric := mode == "num" || mode == "z" || mode == "rel" || mode == "doc"
	r := &Result{ID: sid, Offset: offset}
	lists := make([][]entry, 0, len(calls))
	var errs []error
	for _, c := range calls {
		if c.Err != nil {
			errs = append(errs, c.Err)
			continue
		}
		arr, ok := c.Val.([]any)
		if !ok || len(arr) < 1 {
			errs = append(errs, fmt.Errorf("bad reply %v", c.Val))
			continue
		}
		total, ok := arr[0].(int64)
		if !ok {
			errs = append(errs, fmt.Errorf("bad reply %v", c.Val))
			continue
		}
		if total < 0 {
			errs = append(errs, fmt.Errorf("%w: search ID %q", ErrExpired, sid))
			continue
		}
		r.Total += int(total)
		items, _ := arr[1].([]any)
		var l []entry
		for i := 0; i+1 < len(items); i += 2 {
			id, _ := items[i].(string)
			key, _ := items[i+1].(string)
			e := entry{id: id, key: key}
			if numeric {
				e.n, _ = strconv.ParseFloat(key, 64)
			}
			l = append(l, e)
		}
		lists = append(lists, l)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(x.shards) == 1 {
		for _, e := range lists[0] {
			r.IDs = append(r.IDs, e.id)
		}
		return r, nil
	}
	less := func(a, b entry) bool {
		var c int
		if numeric {
			c = cmp.Compare(a.n, b.n)
		} else {
			c = strings.Compare(a.key, b.key)
		}
		if desc {
			c = -c
		}
		if c != 0 {
			return c < 0
		}
		return a.id < b.id
	}
	// Merge the shards' lists, each taken in its own order: a list is
	// sorted, except when documents were re-indexed between a search and
	// a Page that ordered the rest of its shard's result by the keys of
	// then. Taken in order, the first n merged entries depend only on the
	// first n of each list, so every page of a result comes from one
	// merged order: no ID on two pages.
	heads := make([]int, len(lists))
	for n := 0; n < offset+count; n++ {
		best := -1
		for i, l := range lists {
			if heads[i] < len(l) && (best < 0 || less(l[heads[i]], lists[best][heads[best]])) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		if n >= offset {
			r.IDs = append(r.IDs, lists[best][heads[best]].id)
		}
		heads[best]++
	}
	return r, nil
}

// checkSID checks a search ID given back by a caller.
func checkSID(sid string) error {
	for _, m := range []string{"doc0.", "id0.", "id1.", "num0.", "num1.", "text0.", "text1.", "z0.", "z1.", "rel0.", "rel1."} {
		if rest, ok := strings.CutPrefix(sid, m); ok && rest != "" && len(sid) <= 128 && !strings.ContainsAny(rest, "{}*: \t\r\n") {
			return nil
		}
	}
	return fmt.Errorf("%w: search ID %q is not one Search returned", ErrInvalid, trunc(sid))
}

// Page returns the page of count results from offset of the cached result
// sid (a [Result.ID]) and keeps it for another TTL. The first page past
// the search's own entries orders the rest of the result (in the same
// script). One round trip per node. It returns [ErrExpired] when the result is gone, [ErrInvalid] for
// a malformed ID or page.
func (x *Index) Page(ctx context.Context, sid string, offset, count int) (*Result, error) {
	if err := checkSID(sid); err != nil {
		return nil, fmt.Errorf("search: page: %w", err)
	}
	if err := checkPage(offset, count); err != nil {
		return nil, fmt.Errorf("search: page %q: %w", sid, err)
	}
	skip, take := x.window(offset, count)
	r, err := x.page(ctx, sid, skip, take, offset, count)
	if err != nil {
		return nil, fmt.Errorf("search: page %q: %w", sid, err)
	}
	return r, nil
}

func (x *Index) page(ctx context.Context, sid string, skip, take, offset, count int) (*Result, error) {
	calls := make([]*script.Call, len(x.shards))
	for i, k := range x.shards {
		p := k.cachePrefix + sid
		calls[i] = pageScript.Call([]string{p + ":c", p + ":s", p + ":b", k.docPrefix, k.scorePrefix, k.nums},
			x.ttl.Milliseconds(), skip, take)
	}
	script.Send(ctx, x.rdb, calls)
	return x.merge(sid, offset, count, calls)
}

// Refresh keeps the cached result sid for another TTL from now and
// returns its total, or [ErrExpired] when it is gone. One round trip per
// node.
func (x *Index) Refresh(ctx context.Context, sid string) (total int, err error) {
	if err := checkSID(sid); err != nil {
		return 0, fmt.Errorf("search: refresh: %w", err)
	}
	r, err := x.page(ctx, sid, 0, 0, 0, 0)
	if err != nil {
		return 0, fmt.Errorf("search: refresh %q: %w", sid, err)
	}
	return r.Total, nil
}

// globalStats returns the document count, total length and the
// document frequencies of tokens over every shard: one script per shard
// (a posting is a SET or a bitmap), in one pipeline.
func (x *Index) globalStats(ctx context.Context, tokens []string) ([]any, error) {
	calls := make([]*script.Call, len(x.shards))
	for i, k := range x.shards {
		ks := []string{k.stats}
		for _, t := range tokens {
			ks = append(ks, k.setPrefix+t)
		}
		calls[i] = statsScript.Call(ks)
	}
	script.Send(ctx, x.rdb, calls)
	sums := make([]int64, 2+len(tokens))
	for _, c := range calls {
		if c.Err != nil {
			return nil, fmt.Errorf("index statistics: %w", c.Err)
		}
		v, err := statsScript.AsInt64s(c.Val)
		if err != nil || len(v) != len(sums) {
			return nil, fmt.Errorf("index statistics: bad reply %v: %w", c.Val, err)
		}
		for j := range v {
			sums[j] += v[j]
		}
	}
	out := make([]any, len(sums))
	for i, v := range sums {
		out[i] = v
	}
	return out, nil
}
