package search_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/search"
)

// On a server under a language locale, where Lua's string < ignores case
// and punctuation first, results sorted by ID or by a text field are still
// in byte order, on the first page and on the later ones.
func TestSearch_byteOrderUnderLocale(t *testing.T) {
	srv := redistest.StartCollatingServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	x, err := search.New(rdb, "docs", search.WithFields(search.TextField("t")))
	require.NoError(t, err)
	ids := []string{"a", "B", "_x", "Z", "a b", "ab", "é", "-1", "0", "aa", "A"}
	field := map[string]string{} // each document's field: another ID
	var docs []search.Document
	for i, id := range ids {
		field[id] = ids[len(ids)-1-i]
		docs = append(docs, search.Document{ID: id, Text: "word", Fields: map[string]string{"t": field[id]}})
	}
	_, _, err = x.Add(ctx, docs...)
	require.NoError(t, err)

	byID := slices.Clone(ids)
	slices.Sort(byID) // Go orders strings by bytes
	byField := slices.Clone(ids)
	slices.SortFunc(byField, func(a, b string) int { return strings.Compare(field[a], field[b]) })
	for name, c := range map[string]struct {
		opt  search.SearchOption
		want []string
	}{"ByID": {search.ByID(), byID}, "ByField": {search.ByField("t", false), byField}} {
		r, err := x.Search(ctx, "word", c.opt, search.Limit(0, 4))
		require.NoError(t, err, name)
		got := slices.Clone(r.IDs)
		for len(got) < r.Total {
			p, err := x.Page(ctx, r.ID, len(got), 4)
			require.NoError(t, err, name)
			require.NotEmpty(t, p.IDs, name)
			got = append(got, p.IDs...)
		}
		assert.Equal(t, c.want, got, name)
	}
}
