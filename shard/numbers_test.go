package shard_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// A list end beyond ±2^53, which no push writes, is not read as the
// nearest double (the shard next to it): push, pop and len refuse it as
// corrupt and change nothing. Read loosely, a pop found the end shard
// empty and deleted both ends (orphaning the values), a push filled a
// shard outside the list and wrote its end back as a float, and len
// counted the wrong shard (or, read as 1e17 or 2^53, never ended). The
// ends stay within ±2^52, far from where a step to the next shard does
// not move.
func TestList_endBeyond2p53(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		key := func(part string) string { return b.Prefix + "{l}:" + part }
		for _, end := range []string{"9007199254740993", "-9007199254740993", "99999999999999999", "4503599627370496"} {
			l := must(shard.NewList(ctx, b.Client, "l", shard.WithShardSize(2), shard.WithPrefix(b.Prefix)))
			setup := func() {
				b.Flush()
				l = must(shard.NewList(ctx, b.Client, "l", shard.WithShardSize(2), shard.WithPrefix(b.Prefix)))
				require.NoError(t, b.Client.Set(ctx, key("first"), end, 0).Err())
				require.NoError(t, b.Client.Set(ctx, key("last"), end, 0).Err())
				require.NoError(t, b.Client.RPush(ctx, key(end), "a").Err())
			}
			for name, call := range map[string]func() error{
				"PopLeft":   func() error { _, _, err := l.PopLeft(ctx); return err },
				"PopRight":  func() error { _, _, err := l.PopRight(ctx); return err },
				"PushLeft":  func() error { _, err := l.PushLeft(ctx, "x", "y", "z"); return err },
				"PushRight": func() error { _, err := l.PushRight(ctx, "x", "y", "z"); return err },
				"Len":       func() error { _, err := l.Len(ctx); return err },
			} {
				if name == "Len" && end[0] != '-' {
					continue // read loosely, its loop over the shards does not end
				}
				setup()
				before := b.Snapshot()
				err := call()
				assert.ErrorIs(t, err, ria.ErrCorrupt, "%s %s", name, end)
				assert.Equal(t, before, b.Snapshot(), "%s %s: nothing changed", name, end)
			}
		}
	})
}

// A list's stored shard size below 1, which no NewList writes, is refused
// as corrupt by NewList. Read as is, a push found no room in any shard and
// its search for one never ended (the script held the server for ever).
func TestNewList_corruptSize(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, size := range []string{"0", "-3"} {
			b.Flush()
			must(shard.NewList(ctx, b.Client, "l", shard.WithPrefix(b.Prefix)))
			require.NoError(t, b.Client.HSet(ctx, b.Prefix+"{l}:list:meta", "size", size).Err())
			_, err := shard.NewList(ctx, b.Client, "l", shard.WithPrefix(b.Prefix))
			assert.ErrorIs(t, err, ria.ErrCorrupt, "%q", size)
		}
	})
}

// Records' stored ids per string outside 1 to what a string holds, which
// no NewRecords writes, are refused as corrupt by NewRecords. Read as is,
// 0 made Put panic (an integer division by zero) and a negative count
// mapped ids to negative strings.
func TestNewRecords_corruptPerShard(t *testing.T) {
	run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, per := range []string{"0", "-4", "536870912"} {
			b.Flush()
			must(shard.NewRecords(ctx, b.Client, "r", 4, shard.WithPrefix(b.Prefix)))
			require.NoError(t, b.Client.HSet(ctx, b.Prefix+"{r}:records:meta", "per", per).Err())
			r, err := shard.NewRecords(ctx, b.Client, "r", 4, shard.WithPrefix(b.Prefix))
			if !assert.ErrorIs(t, err, ria.ErrCorrupt, "%q", per) {
				assert.NotPanics(t, func() { _ = r.Put(ctx, 1, []byte("abcd")) }, "%q", per)
			}
		}
	})
}
