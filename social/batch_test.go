package social_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/slot"
	"github.com/ria-go/ria/social"
)

// Fan-out sends one call per 100 followers on one server (feed.lua), and
// one per slot on a Cluster (deliver.lua): Post's commands count them.
func TestNetwork_fanoutBatched(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, g := newNet(t, b, b.Client, social.WithFanoutBatch(250))
		author := mustUser(t, n, "author")
		lone := mustUser(t, n, "lone")
		fs := addFollowers(t, b, author, 250, 0)
		slots := map[int]bool{}
		for _, f := range fs {
			slots[slot.Of(key(b, f, "home"))] = true
		}
		mustPost(t, n, author, "warm") // scripts cached on every node
		mustPost(t, n, lone, "warm")
		_, base := b.Count.Delta(func() { mustPost(t, n, lone, "no followers") })
		var st social.Status
		_, cmds := b.Count.Delta(func() { st = mustPost(t, n, author, "250 followers") })
		calls := int64(3) // 250 followers, 100 per call
		if b.Kind == redistest.Cluster {
			calls = int64(len(slots))
		}
		assert.Equal(t, base+calls, cmds, "deliver calls")
		t.Logf("Post to 250 followers: %d commands (%d without followers)", cmds, base)
		for _, f := range fs {
			require.Equal(t, st.ID, page(t, n, f, social.Home, 1)[0], f)
		}
		require.NoError(t, n.Delete(ctx, author, st.ID))
		_, cmds = b.Count.Delta(func() { drain(t, n, g) })
		t.Logf("clean of 250 followers: %d commands in all", cmds)
		for _, f := range fs {
			require.NotContains(t, page(t, n, f, social.Home, 10), st.ID, f)
		}
	})
}

// A follower whose key holds another type, in the middle of a batch that
// shares its call on one server, is skipped, changing nothing of its own,
// and the others of the call are fed and cleaned; the call reports the
// *ria.KeyError.
func TestNetwork_fanoutBatchWrongType(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, c := range []struct {
			name, key, role string
			bad             func(f string) error
			opts            []social.Option
		}{
			{"home", "home", "social home timeline", func(f string) error {
				return b.Client.Set(ctx, key(b, f, "home"), "wrong", 0).Err()
			}, nil},
			{"following", "following", "social following", func(f string) error {
				if err := b.Client.Del(ctx, key(b, f, "following")).Err(); err != nil {
					return err
				}
				return b.Client.LPush(ctx, key(b, f, "following"), "author").Err()
			}, nil},
			{"gone", "gone", "social tombstones", func(f string) error {
				return b.Client.SAdd(ctx, key(b, f, "gone"), "wrong").Err()
			}, nil},
			{"user hint", "user", "social user field seen", func(f string) error {
				return b.Client.HSet(ctx, key(b, f, "user"), "seen", "soon").Err()
			}, []social.Option{social.WithInactiveAfter(social.MaxInactiveAfter)}},
			// Digits, but past 2^53: read as -1e20, they made the
			// follower look inactive for ever (marked, home deleted).
			{"user hint huge", "user", "social user field seen", func(f string) error {
				return b.Client.HSet(ctx, key(b, f, "user"), "seen", "-99999999999999999999").Err()
			}, []social.Option{social.WithInactiveAfter(social.MaxInactiveAfter)}},
			{"user hint huge signup", "user", "social user field signup", func(f string) error {
				return b.Client.HSet(ctx, key(b, f, "user"), "signup", "-99999999999999999999").Err()
			}, []social.Option{social.WithInactiveAfter(social.MaxInactiveAfter)}},
		} {
			t.Run(c.name, func(t *testing.T) {
				b.Flush()
				n, g := newNet(t, b, b.Client, append(c.opts, social.WithFanoutBatch(10))...)
				author := mustUser(t, n, "author")
				var fs []string
				for i := range 10 {
					f := mustUser(t, n, fmt.Sprint("f", i))
					mustFollow(t, n, f, author)
					fs = append(fs, f)
				}
				require.NoError(t, c.bad(fs[5]))
				// On one server a fan-out reads the status HASH instead of
				// each follower's tombstones (none can exist while the
				// status does), and the author's followers instead of each
				// follower's following: those keys are not relied on, so
				// fs[5] is fed, and only the clean, which reads the
				// tombstones, fails.
				statusMode := (c.key == "gone" || c.key == "following") && b.Kind != redistest.Cluster
				before := b.Snapshot()
				st := mustPost(t, n, author, "x") // the whole batch fails: its pass is enqueued
				for i, f := range fs {
					if i != 5 || statusMode {
						require.Equal(t, []string{st.ID}, page(t, n, f, social.Home, 10), "fed before Post returned: %s", f)
					}
				}
				after := b.Snapshot()
				for k, v := range before {
					if !statusMode && k == key(b, fs[5], "home") || k == key(b, fs[5], "following") || k == key(b, fs[5], "gone") || k == key(b, fs[5], "user") {
						assert.Equal(t, v, after[k], "the bad follower's %s is unchanged", k)
					}
				}
				dead := func(want int) string {
					t.Helper()
					d := runUntilDead(t, b, n, g, want)
					return d[0].Error + " | " + d[len(d)-1].Error
				}
				if statusMode {
					drain(t, n, g) // nothing dies
					require.NoError(t, n.Delete(ctx, author, st.ID))
					if c.key == "following" { // not read by the clean either
						drain(t, n, g)
						s, err := g.Stats(ctx, social.DefaultQueue)
						require.NoError(t, err)
						require.Zero(t, s.Dead, "no fan-out or clean task died")
						for _, f := range fs {
							require.Empty(t, page(t, n, f, social.Home, 10), "cleaned: %s", f)
						}
						return
					}
					msg := dead(1)
					assert.Contains(t, msg, key(b, fs[5], c.key), "the dead clean names the key")
					assert.Contains(t, msg, c.role)
					for i, f := range fs {
						if i != 5 {
							require.Empty(t, page(t, n, f, social.Home, 10), "cleaned: %s", f)
						}
					}
					return
				}
				msg := dead(1)
				assert.Contains(t, msg, key(b, fs[5], c.key), "the dead fan-out names the key")
				assert.Contains(t, msg, c.role)
				require.NoError(t, n.Delete(ctx, author, st.ID))
				if c.key == "home" || c.key == "gone" { // the clean reports it too
					msg = dead(2)
					assert.Equal(t, 2, strings.Count(msg, key(b, fs[5], c.key)), msg)
				} else {
					dead(1)
				}
				for i, f := range fs {
					if i != 5 {
						require.Empty(t, page(t, n, f, social.Home, 10), "cleaned: %s", f)
					}
				}
			})
		}
	})
}

// On a Ring, followers are grouped by the shard the ring maps their keys
// to: every key is written on its own shard, so every follower reads the
// status through the ring.
func TestNetwork_fanoutRing(t *testing.T) {
	n, ring := ringNet(t, social.WithFanoutBatch(300))
	author := mustUser(t, n, "author")
	var fs []string
	for i := range 300 {
		f := mustUser(t, n, fmt.Sprint("f", i))
		mustFollow(t, n, f, author)
		fs = append(fs, f)
	}
	st := mustPost(t, n, author, "to the ring")
	on := map[string]int{}
	for _, f := range fs {
		require.Equal(t, []string{st.ID}, page(t, n, f, social.Home, 10), f)
		c, err := ring.GetShardClientForKey("social:{" + f + "}:home")
		require.NoError(t, err)
		on[c.Options().Addr]++
	}
	assert.Len(t, on, 2, "followers on both shards")
}

// A fan-out task that meets the author's own followers or listed key
// holding another type dies with an error naming the key and its role (a
// *ria.KeyError), not a bare WRONGTYPE reply.
func TestNetwork_fanoutTaskAuthorWrongType(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, c := range []struct{ part, role string }{
			{"listed", "social listed"},
			{"followers", "social followers"},
		} {
			b.Flush()
			n, g := newNet(t, b, b.Client, social.WithFanoutBatch(10))
			author := mustUser(t, n, "author")
			for i := range 12 {
				mustFollow(t, n, mustUser(t, n, fmt.Sprint("f", i)), author)
			}
			mustPost(t, n, author, "x") // feeds 10, enqueues the rest
			k := key(b, author, c.part)
			require.NoError(t, b.Client.Del(ctx, k).Err())
			require.NoError(t, b.Client.Set(ctx, k, "wrong", 0).Err())
			d := runUntilDead(t, b, n, g, 1)
			assert.Contains(t, d[0].Error, k, c.part)
			assert.Contains(t, d[0].Error, c.role, c.part)
		}
	})
}
