package search

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
)

var (
	//go:embed get.lua
	getLua string

	getScript = script.New("search get", script.BytesLua+commonLua+getLua)
)

// Stored is what the index holds for one document ([Index.Get]). The
// document's text is not stored: only what was analyzed from it.
type Stored struct {
	// ID is the document's ID.
	ID string
	// Terms is the number of terms its text was analyzed into, repeats
	// included (its length for [ByRelevance]).
	Terms int
	// Fields are the values of the declared sort fields ([WithFields])
	// the document has, by name, as stored: a Numeric field's value
	// formatted back from its float64 (strconv 'g', shortest: "1e+06"
	// for "1000000"), a Text field's as given.
	Fields map[string]string
	// Scores are the values of the declared scores ([WithScores]) the
	// document has, by name.
	Scores map[string]float64
}

// Get returns what the index holds for document id: its number of terms,
// its declared sort fields and its declared scores (an undeclared field
// or score it may hold from an earlier declaration is left out). One
// read-only script on the document's shard: one round trip.
//
// A document that is not indexed is an error matching [ErrNotFound]. An
// invalid ID (empty, over [MaxIDBytes], invalid UTF-8) is an error
// matching [ErrInvalid], and nothing is sent. A key of the index holding
// another type is a *ria.KeyError matching ria.ErrWrongType; a malformed
// document number or document hash one matching ria.ErrCorrupt.
func (x *Index) Get(ctx context.Context, id string) (*Stored, error) {
	if err := checkID(id); err != nil {
		return nil, fmt.Errorf("search: get: %w", err)
	}
	fail := func(err error) (*Stored, error) {
		return nil, fmt.Errorf("search: get %q: %w", trunc(id), err)
	}
	k := x.shards[shardOf(id, len(x.shards))]
	keys := make([]string, 0, 2+len(x.scores))
	keys = append(keys, k.ids, k.docPrefix)
	for _, s := range x.scores {
		keys = append(keys, k.scorePrefix+s)
	}
	args := make([]any, 0, 1+len(x.fieldList))
	args = append(args, id)
	for _, f := range x.fieldList {
		args = append(args, "s:"+f)
	}
	call := getScript.Call(keys, args...)
	script.Send(ctx, x.rdb, []*script.Call{call})
	if call.Err != nil {
		return fail(call.Err)
	}
	if call.Val == nil {
		return fail(ErrNotFound)
	}
	bad := func() (*Stored, error) {
		return fail(fmt.Errorf("script %s: bad reply %v", getScript.Name(), call.Val))
	}
	arr, ok := call.Val.([]any)
	if !ok || len(arr) != 3 {
		return bad()
	}
	terms, ok1 := arr[0].(int64)
	fields, ok2 := arr[1].([]any)
	scores, ok3 := arr[2].([]any)
	if !ok1 || !ok2 || !ok3 || len(fields) > len(x.fieldList) || len(scores) > len(x.scores) {
		return bad()
	}
	d := &Stored{ID: id, Terms: int(terms), Fields: map[string]string{}, Scores: map[string]float64{}}
	// A missing field or score is nil (Lua's false).
	for i, v := range fields {
		if s, ok := v.(string); ok {
			d.Fields[x.fieldList[i]] = s
		}
	}
	for i, v := range scores {
		s, ok := v.(string)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad()
		}
		d.Scores[x.scores[i]] = f
	}
	return d, nil
}

// Count returns the number of documents in the index: the sum of its
// shards' counts (stats "docs"), read in one pipeline (one round trip per
// node). A sharded count is not one snapshot across shards: documents
// added or removed meanwhile may be counted or not.
//
// A stats key holding another type is a *ria.KeyError matching
// ria.ErrWrongType; a count that is not a non-negative integer one
// matching ria.ErrCorrupt.
func (x *Index) Count(ctx context.Context) (int, error) {
	cmds := make([]*redis.StringCmd, len(x.shards))
	_, _ = x.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range x.shards {
			cmds[i] = p.HGet(ctx, k.stats, "docs")
		}
		return nil
	})
	total := 0
	for i, c := range cmds {
		v, err := c.Result()
		if errors.Is(err, redis.Nil) {
			continue // no document yet
		}
		if err != nil {
			reads := make([]script.Read, len(cmds))
			for j, c := range cmds {
				reads[j] = script.Read{Cmd: c, Key: x.shards[j].stats, Role: "search index stats", Want: "hash"}
			}
			return 0, fmt.Errorf("search: count: %w", script.PipeWrongType(ctx, x.rdb, err, reads...))
		}
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 0 {
			return 0, fmt.Errorf("search: count: %w", &ria.KeyError{Role: "search index stats field docs",
				Key: x.shards[i].stats, Got: strconv.Quote(trunc(v)), Want: "a count", Err: ria.ErrCorrupt})
		}
		total += n
	}
	return total, nil
}
