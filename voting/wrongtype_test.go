package voting_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/voting"
)

// Every script-backed operation checks every key it relies on before its
// first write: a key of another type makes it fail with a *ria.KeyError
// naming the key and its role, and changes nothing (no half article in the
// score pages, no voter recorded without the score).
func TestSite_wrongTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		kr := func(part, typ, role string) redistest.KeyRole {
			return redistest.KeyRole{Key: key(b, part), Type: typ, Role: role}
		}
		posted := func() {
			post(t, s, "alice", "one") // article 1
		}

		t.Run("Post", func(t *testing.T) {
			b.CheckWrongTypes(t, posted, func() error { _, err := s.Post(ctx, "bob", "two", "http://x"); return err },
				kr("seq", "string", "voting article ID counter"),
				kr("time", "zset", "voting time index"),
				kr("score", "zset", "voting score index"),
				kr("article:2", "hash", "voting article"), // the next article's keys, built in the script
				kr("voted:2", "set", "voting up-voters"),
			)
		})
		t.Run("Vote", func(t *testing.T) {
			setup := func() {
				posted()
				_, err := s.Vote(ctx, "1", "bob", voting.Down)
				require.NoError(t, err)
			}
			for _, d := range []voting.Direction{voting.Up, voting.Down} {
				b.CheckWrongTypes(t, setup, func() error { _, err := s.Vote(ctx, "1", "carol", d); return err },
					kr("time", "zset", "voting time index"),
					kr("score", "zset", "voting score index"),
					kr("article:1", "hash", "voting article"),
					kr("voted:1", "set", "voting up-voters"),
					kr("downvoted:1", "set", "voting down-voters"),
				)
			}
		})
		t.Run("Unvote", func(t *testing.T) {
			// carol holds a vote either way, so the call would write.
			for _, d := range []voting.Direction{voting.Up, voting.Down} {
				setup := func() {
					posted()
					_, err := s.Vote(ctx, "1", "carol", d)
					require.NoError(t, err)
				}
				b.CheckWrongTypes(t, setup, func() error { _, err := s.Unvote(ctx, "1", "carol"); return err },
					kr("time", "zset", "voting time index"),
					kr("score", "zset", "voting score index"),
					kr("article:1", "hash", "voting article"),
					kr("voted:1", "set", "voting up-voters"),
					kr("downvoted:1", "set", "voting down-voters"),
				)
			}
		})
		t.Run("VoteOf", func(t *testing.T) {
			setup := func() {
				posted()
				_, err := s.Vote(ctx, "1", "carol", voting.Down)
				require.NoError(t, err)
			}
			for _, user := range []string{"alice", "carol", "dave"} {
				b.CheckWrongTypes(t, setup, func() error { _, err := s.VoteOf(ctx, "1", user); return err },
					kr("time", "zset", "voting time index"),
					kr("voted:1", "set", "voting up-voters"),
					kr("downvoted:1", "set", "voting down-voters"),
				)
			}
		})
		t.Run("UpdateGroups", func(t *testing.T) {
			setup := func() {
				posted()
				require.NoError(t, s.UpdateGroups(ctx, "1", []string{"g"}, nil))
				for _, o := range []voting.Order{voting.ByScore, voting.ByTime} {
					_, err := s.GroupPage(ctx, "g", o, 1, 10)
					require.NoError(t, err)
				}
			}
			b.CheckWrongTypes(t, setup, func() error { return s.UpdateGroups(ctx, "1", []string{"h"}, []string{"g"}) },
				kr("time", "zset", "voting time index"),
				kr("group:h", "set", "voting group"),
				kr("cache:score:h", "zset", "voting group cache"),
				kr("cache:time:h", "zset", "voting group cache"),
				kr("group:g", "set", "voting group"),
				kr("cache:score:g", "zset", "voting group cache"),
				kr("cache:time:g", "zset", "voting group cache"),
			)
		})
		// The plain reads name the key too (a WRONGTYPE reply, then TYPE).
		t.Run("Get", func(t *testing.T) {
			b.CheckWrongTypes(t, posted, func() error { _, err := s.Get(ctx, "1"); return err },
				kr("article:1", "hash", "voting article"),
				kr("score", "zset", "voting score index"),
			)
		})
		t.Run("Page", func(t *testing.T) {
			for o, index := range map[voting.Order]string{voting.ByScore: "score", voting.ByTime: "time"} {
				b.CheckWrongTypes(t, posted, func() error { _, err := s.Page(ctx, o, 1, 10); return err },
					kr(index, "zset", "voting "+index+" index"),
					kr("article:1", "hash", "voting article"),
				)
			}
		})
		t.Run("GroupPage", func(t *testing.T) {
			setup := func() {
				posted()
				require.NoError(t, s.UpdateGroups(ctx, "1", []string{"g"}, nil))
			}
			for o, index := range map[voting.Order]string{voting.ByScore: "score", voting.ByTime: "time"} {
				b.CheckWrongTypes(t, setup, func() error { _, err := s.GroupPage(ctx, "g", o, 1, 10); return err },
					kr("cache:"+index+":g", "zset", "voting group cache"),
					kr("group:g", "set", "voting group"),
					kr(index, "zset", "voting "+index+" index"),
				)
			}
		})
	})
}

// Values a script parses are checked before its first write too: a
// counter that is not a non-negative integer, one at its limit or one that
// lags behind the articles (it would merge two articles), and vote
// counters that are not integers.
func TestSite_corruptValues(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		id := post(t, s, "alice", "one")
		orig := b.Client.HGetAll(ctx, key(b, "article:"+id)).Val()
		for _, c := range []struct {
			name string
			set  func()
			call func() error
			key  string
			want string
		}{
			{"seq not a number", func() { b.Client.Set(ctx, key(b, "seq"), "abc", 0) },
				func() error { _, err := s.Post(ctx, "bob", "t", "l"); return err }, "seq", "voting article ID counter"},
			{"seq negative", func() { b.Client.Set(ctx, key(b, "seq"), "-3", 0) },
				func() error { _, err := s.Post(ctx, "bob", "t", "l"); return err }, "seq", "voting article ID counter"},
			{"seq leading zero", func() { b.Client.Set(ctx, key(b, "seq"), "01", 0) },
				func() error { _, err := s.Post(ctx, "bob", "t", "l"); return err }, "seq", "voting article ID counter"},
			{"seq at its limit", func() { b.Client.Set(ctx, key(b, "seq"), "9223372036854775807", 0) },
				func() error { _, err := s.Post(ctx, "bob", "t", "l"); return err }, "seq", "voting article ID counter"},
			{"seq behind the articles", func() { b.Client.Set(ctx, key(b, "seq"), "0", 0) },
				func() error { _, err := s.Post(ctx, "bob", "t", "l"); return err }, "seq", "voting article ID counter"},
			{"votes not a number", func() { b.Client.HSet(ctx, key(b, "article:"+id), "votes", "x") },
				func() error { _, err := s.Vote(ctx, id, "bob", voting.Up); return err }, "article:" + id, "voting article field votes"},
			{"downvotes not a number", func() { b.Client.HSet(ctx, key(b, "article:"+id), "downvotes", "1.5") },
				func() error { _, err := s.Vote(ctx, id, "bob", voting.Down); return err }, "article:" + id, "voting article field downvotes"},
			{"votes not a number, unvote", func() { b.Client.HSet(ctx, key(b, "article:"+id), "votes", "1e3") },
				func() error { _, err := s.Unvote(ctx, id, "alice"); return err }, "article:" + id, "voting article field votes"},
			{"downvotes not a number, unvote", func() { b.Client.HSet(ctx, key(b, "article:"+id), "downvotes", "") },
				func() error { _, err := s.Unvote(ctx, id, "alice"); return err }, "article:" + id, "voting article field downvotes"},
			// integers HINCRBY refuses, or one an increment takes past 64
			// bits: the voter set was written, then the count failed
			{"votes with a leading zero", func() { b.Client.HSet(ctx, key(b, "article:"+id), "votes", "01") },
				func() error { _, err := s.Vote(ctx, id, "bob", voting.Up); return err }, "article:" + id, "voting article field votes"},
			{"votes at 64 bits' limit", func() { b.Client.HSet(ctx, key(b, "article:"+id), "votes", "9223372036854775807") },
				func() error { _, err := s.Vote(ctx, id, "bob", voting.Up); return err }, "article:" + id, "voting article field votes"},
			{"votes with a leading zero, unvote", func() { b.Client.HSet(ctx, key(b, "article:"+id), "votes", "01") },
				func() error { _, err := s.Unvote(ctx, id, "alice"); return err }, "article:" + id, "voting article field votes"},
		} {
			c.set()
			corrupt := b.Snapshot()
			err := c.call()
			var kerr *ria.KeyError
			if assert.ErrorAs(t, err, &kerr, c.name) {
				assert.ErrorIs(t, err, ria.ErrCorrupt, c.name)
				assert.Equal(t, key(b, c.key), kerr.Key, c.name)
				assert.Equal(t, c.want, kerr.Role, c.name)
			}
			assert.Equal(t, corrupt, b.Snapshot(), "%s: nothing changed", c.name)
			// Put the values back for the next case.
			require.NoError(t, b.Client.Set(ctx, key(b, "seq"), "1", 0).Err())
			require.NoError(t, b.Client.HSet(ctx, key(b, "article:"+id), orig).Err())
		}
	})
}
