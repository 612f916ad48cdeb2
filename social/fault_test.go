package social_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// The fault harness: every state-changing call through a proxy that lets
// its scripts run on the server, then swallows their replies and cuts the
// connection, so that go-redis (default retries) re-sends them. Each
// answer must match the state read back on a plain client: users created
// once and never reported taken, statuses posted once under the ID
// answered, counts exact, follows and unfollows reported as they happened.
func TestFaults_lostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		n, _ := newNet(t, b, rdb)
		reader, _ := newNet(t, b, b.Client)
		h := redistest.NewHarness(t, f, "social writes")
		// Cache the scripts.
		mustUser(t, reader, "warm1")
		mustUser(t, reader, "warm2")
		mustFollow(t, n, "warm1", "warm2")
		st := mustPost(t, n, "warm2", "warm")
		require.NoError(t, n.Delete(ctx, "warm2", st.ID))
		_, err := n.Unfollow(ctx, "warm1", "warm2")
		require.NoError(t, err)

		for _, login := range []string{"Ann", "Bob", "Cid"} {
			var uid string
			h.Call(1, redistest.Scripts, func() { uid, err = n.CreateUser(ctx, login, login+" name") })
			h.Check(err == nil && uid == social.ID(login), "create %s: %q, %v", login, uid, err)
			h.Call(1, redistest.Scripts, func() { _, err = n.CreateUser(ctx, login, "again") })
			h.Check(errors.Is(err, social.ErrLoginTaken), "create %s again: %v", login, err)
		}
		// bob follows ann: three scripts (check, ann's side, bob's side),
		// every reply lost once.
		var ok bool
		h.Call(3, redistest.Scripts, func() { ok, err = n.Follow(ctx, "bob", "ann") })
		h.Check(err == nil && ok, "follow: %v, %v", ok, err)
		h.Call(3, redistest.Scripts, func() { ok, err = n.Follow(ctx, "bob", "ann") })
		h.Check(err == nil && !ok, "follow again: %v, %v", ok, err)
		h.Check(user(t, reader, "ann").Followers == 1 && user(t, reader, "bob").Following == 1, "follow counts")

		var posted []string // ann's live statuses, oldest first
		for i := range 12 {
			switch {
			case i%4 == 3 && len(posted) > 0: // delete the oldest
				id := posted[0]
				h.Call(1, redistest.Scripts, func() { err = n.Delete(ctx, "ann", id) })
				h.Check(err == nil, "delete %s: %v", id, err)
				h.Call(1, redistest.Scripts, func() { err = n.Delete(ctx, "ann", id) })
				h.Check(errors.Is(err, social.ErrNoStatus), "delete %s again: %v", id, err)
				posted = posted[1:]
			default: // post: the post script and the feed of bob, both lost
				var st social.Status
				h.Call(2, redistest.Scripts, func() { st, err = n.Post(ctx, "ann", fmt.Sprintf("m%d", i)) })
				h.Check(err == nil && st.ID != "", "post %d: %+v, %v", i, st, err)
				posted = append(posted, st.ID)
			}
			want := slices.Clone(posted)
			slices.Reverse(want)
			h.Check(slices.Equal(want, page(t, reader, "ann", social.Profile, 100)), "profile %v, want %v", page(t, reader, "ann", social.Profile, 100), want)
			h.Check(slices.Equal(want, page(t, reader, "bob", social.Home, 100)), "bob's home %v, want %v", page(t, reader, "bob", social.Home, 100), want)
			h.Check(user(t, reader, "ann").Posts == int64(len(posted)), "posts %d, want %d", user(t, reader, "ann").Posts, len(posted))
		}

		h.Call(3, redistest.Scripts, func() { ok, err = n.Unfollow(ctx, "bob", "ann") })
		h.Check(err == nil && ok, "unfollow: %v, %v", ok, err)
		h.Call(3, redistest.Scripts, func() { ok, err = n.Unfollow(ctx, "bob", "ann") })
		h.Check(err == nil && !ok, "unfollow again: %v, %v", ok, err)
		h.Check(user(t, reader, "ann").Followers == 0 && user(t, reader, "bob").Following == 0, "unfollow counts")
		h.Check(len(page(t, reader, "bob", social.Home, 100)) == 0, "bob's home after unfollow: %v", page(t, reader, "bob", social.Home, 100))
	})
}

// Posts through replies held back, part of the time, longer than the read
// timeout: go-redis re-sends them. A post that answered is on the profile
// once under the ID it answered, one whose reply never came says its
// outcome is unknown, and the posts count equals the statuses there.
func TestFaults_delays(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const calls = 100
		ctx := t.Context()
		rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
			o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = 2*time.Millisecond, time.Second, time.Minute
		})
		n, _ := newNet(t, b, rdb, social.WithTimelineCap(social.MaxTimelineCap))
		reader, _ := newNet(t, b, b.Client)
		mustUser(t, reader, "ann")
		mustPost(t, reader, "ann", "warm") // caches the script
		stop := f.Stall()
		var ok, unknown, disagree int
		answered := map[string]bool{}
		for i := range calls {
			st, err := n.Post(ctx, "ann", fmt.Sprintf("m%d", i))
			switch {
			case err == nil:
				ok++
				answered[st.ID] = true
			case errors.Is(err, ria.ErrOutcomeUnknown):
				unknown++
			default:
				disagree++
				t.Errorf("post %d: %v", i, err)
			}
		}
		stop()
		ids, _, err := reader.Page(ctx, "ann", social.Profile, 0, social.MaxPage)
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, s := range ids {
			if seen[s.ID] {
				disagree++
				t.Errorf("status %s twice", s.ID)
			}
			seen[s.ID] = true
		}
		for id := range answered {
			if !seen[id] {
				disagree++
				t.Errorf("posted %s is not on the profile", id)
			}
		}
		if u := user(t, reader, "ann"); u.Posts != int64(len(ids)) {
			disagree++
			t.Errorf("posts count %d, profile holds %d", u.Posts, len(ids))
		}
		t.Logf("fault harness: social Post under 0-3ms stalls, ReadTimeout 2ms: calls=%d ok=%d unknown=%d disagreements=%d", calls, ok, unknown, disagree)
		assert.Zero(t, disagree)
		assert.Equal(t, calls, ok+unknown)
	})
}
