package voting_test

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/voting"
)

// The fault harness: every state-changing call of the package, through a
// proxy that lets the call's command run on the server and then swallows
// its reply and cuts the connection, so that go-redis (default retries)
// re-sends it. After each call the test compares the caller's answer with
// the server's state; an answer that disagrees with it counts as a
// disagreement. Each test logs one line of counts.

// articles returns the number of articles in the time index.
func articles(t *testing.T, b *redistest.Backend) int64 {
	t.Helper()
	n, err := b.Client.ZCard(t.Context(), key(b, "time")).Result()
	require.NoError(t, err)
	return n
}

// Post whose reply is lost once, twice, or on every attempt (go-redis
// makes 4 with its default 3 retries): one article, the ID answered is
// that article's, and a call with no reply at all says its outcome is
// unknown.
func TestFaults_Post(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newSite(t, b, rdb)
		post(t, s, "warm", "warm") // the script cached on the server
		h := redistest.NewHarness(t, f, "voting Post")
		want := int64(1)
		for i, lose := range []int{1, 1, 2, 3, 1, 2} {
			title := "t" + strconv.Itoa(i)
			var id string
			var err error
			h.Call(lose, redistest.Scripts, func() { id, err = s.Post(ctx, "alice", title, "http://example.com") })
			require.NoError(t, err)
			want++
			h.Check(articles(t, b) == want, "after post %d: %d articles, want %d", i, articles(t, b), want)
			h.Check(id == strconv.FormatInt(want, 10), "post %d answered ID %s, want %d", i, id, want)
			a, err := s.Get(ctx, id)
			require.NoError(t, err)
			h.Check(a.Title == title && a.Votes == 1, "article %s: %+v", id, a)
		}

		// Every attempt loses its reply: the outcome is unknown, not an
		// error that says nothing happened; it did happen, once.
		var err error
		h.Call(4, redistest.Scripts, func() { _, err = s.Post(ctx, "alice", "lost", "http://example.com") })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "no reply at all: %v", err)
		want++
		h.Check(articles(t, b) == want, "after the unanswered post: %d articles, want %d", articles(t, b), want)
	})
}

// Votes whose replies are lost: a vote that counted says so, one that did
// not says so, and the counters, the voters' sets and the score are exact.
func TestFaults_Vote(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newSite(t, b, rdb)
		id := post(t, s, "alice", "t")
		_, err := s.Vote(ctx, id, "warm", voting.Up) // the script cached on the server
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "voting Vote")
		up, down := int64(2), int64(0)
		standing := map[string]voting.Direction{"alice": voting.Up, "warm": voting.Up}
		for i := range 24 {
			user := "u" + strconv.Itoa(i%8) // each user votes three times
			d := voting.Up
			if i%3 == 1 {
				d = voting.Down
			}
			wantCounted := standing[user] != d
			if wantCounted {
				switch {
				case standing[user] == 0 && d == voting.Up:
					up++
				case standing[user] == 0:
					down++
				case d == voting.Up:
					up, down = up+1, down-1
				default:
					up, down = up-1, down+1
				}
				standing[user] = d
			}
			var counted bool
			h.Call(1+i%2, redistest.Scripts, func() { counted, err = s.Vote(ctx, id, user, d) })
			require.NoError(t, err)
			h.Check(counted == wantCounted, "vote %d (%s %v) answered counted=%v, want %v", i, user, d, counted, wantCounted)
			a := get(t, s, id)
			h.Check(a.Votes == up && a.Downvotes == down, "after vote %d: %d/%d, want %d/%d", i, a.Votes, a.Downvotes, up, down)
			h.Check(b.Client.SCard(ctx, key(b, "voted:"+id)).Val() == up, "up-voters")
			h.Check(b.Client.SCard(ctx, key(b, "downvoted:"+id)).Val() == down, "down-voters")
			wantScore(t, b, a, up-down)
		}

		// A refused vote: the re-send is refused alike, and nothing (not
		// even a record) is written.
		before := b.Snapshot()
		h.Call(1, redistest.Scripts, func() { _, err = s.Vote(ctx, "99", "bob", voting.Up) })
		h.Check(errors.Is(err, voting.ErrNoArticle), "unknown article: %v", err)
		h.Check(fmt.Sprint(before) == fmt.Sprint(b.Snapshot()), "a refused vote wrote something")

		// No reply at all: the outcome is unknown, never "not counted".
		var counted bool
		h.Call(4, redistest.Scripts, func() { counted, err = s.Vote(ctx, id, "late", voting.Down) })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown) && !counted, "no reply at all: %v %v", counted, err)
		h.Check(b.Client.SIsMember(ctx, key(b, "downvoted:"+id), "late").Val(), "the vote ran")
		counted, err = s.Vote(ctx, id, "late", voting.Down)
		require.NoError(t, err)
		h.Check(!counted, "voting again after an unknown outcome counts once")
		a := get(t, s, id)
		h.Check(a.Downvotes == down+1, "downvotes %d, want %d", a.Downvotes, down+1)
	})
}

// Withdrawals (and votes) whose replies are lost: a vote withdrawn says
// so, never "had not voted"; a user with no vote hears so; and the
// counters, the voters' sets and the score are exact.
func TestFaults_Unvote(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newSite(t, b, rdb)
		id := post(t, s, "alice", "t")
		// The scripts cached on the server.
		_, err := s.Vote(ctx, id, "warm", voting.Up)
		require.NoError(t, err)
		_, err = s.Unvote(ctx, id, "warm")
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "voting Unvote")
		standing := map[string]voting.Direction{"alice": voting.Up}
		check := func(i int) {
			t.Helper()
			var up, down int64
			for _, d := range standing {
				switch d {
				case voting.Up:
					up++
				case voting.Down:
					down++
				}
			}
			a := get(t, s, id)
			h.Check(a.Votes == up && a.Downvotes == down, "after step %d: %d/%d, want %d/%d", i, a.Votes, a.Downvotes, up, down)
			h.Check(b.Client.SCard(ctx, key(b, "voted:"+id)).Val() == up, "step %d: up-voters", i)
			h.Check(b.Client.SCard(ctx, key(b, "downvoted:"+id)).Val() == down, "step %d: down-voters", i)
			wantScore(t, b, a, up-down)
		}
		for i := range 30 {
			user := "u" + strconv.Itoa(i%6)
			if i%5 == 0 {
				user = "alice" // the poster's own vote too
			}
			if i%3 == 2 { // a vote, so that there is something to withdraw
				d := voting.Up
				if i%2 == 0 {
					d = voting.Down
				}
				var counted bool
				h.Call(1+i%2, redistest.Scripts, func() { counted, err = s.Vote(ctx, id, user, d) })
				require.NoError(t, err)
				h.Check(counted == (standing[user] != d), "step %d: vote %s %v answered counted=%v", i, user, d, counted)
				standing[user] = d
				check(i)
				continue
			}
			wantWithdrawn := standing[user] != 0
			var withdrawn bool
			h.Call(1+i%2, redistest.Scripts, func() { withdrawn, err = s.Unvote(ctx, id, user) })
			require.NoError(t, err)
			h.Check(withdrawn == wantWithdrawn, "step %d: unvote %s answered withdrawn=%v, want %v", i, user, withdrawn, wantWithdrawn)
			delete(standing, user)
			check(i)
		}

		// A refused withdrawal: the re-send is refused alike, and nothing
		// (not even a record) is written.
		before := b.Snapshot()
		h.Call(1, redistest.Scripts, func() { _, err = s.Unvote(ctx, "99", "bob") })
		h.Check(errors.Is(err, voting.ErrNoArticle), "unknown article: %v", err)
		h.Check(fmt.Sprint(before) == fmt.Sprint(b.Snapshot()), "a refused withdrawal wrote something")

		// No reply at all: the outcome is unknown, never "had not voted".
		_, err = s.Vote(ctx, id, "late", voting.Down)
		require.NoError(t, err)
		var withdrawn bool
		h.Call(4, redistest.Scripts, func() { withdrawn, err = s.Unvote(ctx, id, "late") })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown) && !withdrawn, "no reply at all: %v %v", withdrawn, err)
		h.Check(!b.Client.SIsMember(ctx, key(b, "downvoted:"+id), "late").Val(), "the withdrawal ran")
		d, err := s.VoteOf(ctx, id, "late")
		require.NoError(t, err)
		h.Check(d == 0, "after an unknown outcome VoteOf tells: %v", d)
		withdrawn, err = s.Unvote(ctx, id, "late")
		require.NoError(t, err)
		h.Check(!withdrawn, "withdrawing again after an unknown outcome changes nothing")
		check(-1)
	})
}

// Group updates whose replies are lost: the script is naturally
// idempotent, so the re-send changes nothing more and answers the same.
func TestFaults_UpdateGroups(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _, f := b.FaultyClient()
		s := newSite(t, b, rdb)
		a1, a2 := post(t, s, "alice", "one"), post(t, s, "alice", "two")
		require.NoError(t, s.UpdateGroups(ctx, a1, []string{"warm"}, nil)) // the script cached
		h := redistest.NewHarness(t, f, "voting UpdateGroups/GroupPage")
		members := func(g string) []string { return sorted(b.Client.SMembers(ctx, key(b, "group:"+g)).Val()) }
		for i, c := range []struct {
			id          string
			add, remove []string
			want        map[string][]string
		}{
			{a1, []string{"go", "db"}, nil, map[string][]string{"go": {a1}, "db": {a1}}},
			{a2, []string{"go"}, []string{"db"}, map[string][]string{"go": {a1, a2}, "db": {a1}}},
			{a1, nil, []string{"db", "go"}, map[string][]string{"go": {a2}, "db": {}}},
			{a1, []string{"go"}, nil, map[string][]string{"go": {a1, a2}}},
		} {
			var err error
			h.Call(1+i%2, redistest.Scripts, func() { err = s.UpdateGroups(ctx, c.id, c.add, c.remove) })
			require.NoError(t, err)
			for g, want := range c.want {
				h.Check(fmt.Sprint(want) == fmt.Sprint(members(g)), "update %d: group %s holds %v, want %v", i, g, members(g), want)
			}
			// The group page, whose script fills the cache, through a lost
			// reply too: the re-send reads the cache the first run filled.
			var page []voting.Article
			h.Call(1, redistest.Scripts, func() { page, err = s.GroupPage(ctx, "go", voting.ByTime, 1, 10) })
			require.NoError(t, err)
			got := sorted(ids(page))
			h.Check(fmt.Sprint(got) == fmt.Sprint(members("go")), "update %d: group page %v, group %v", i, got, members("go"))
		}
		var err error
		h.Call(4, redistest.Scripts, func() { err = s.UpdateGroups(ctx, a2, nil, []string{"go"}) })
		h.Check(errors.Is(err, ria.ErrOutcomeUnknown), "no reply at all: %v", err)
		h.Check(fmt.Sprint([]string{a1}) == fmt.Sprint(members("go")), "the update ran: %v", members("go"))
	})
}

// delayedClient is a faulty client whose read timeout (2ms) is shorter than
// the stalls stall injects, with go-redis's default retries; its long pool
// timeout makes the reply records outlive the test.
func delayedClient(b *redistest.Backend) (redis.UniversalClient, *redistest.Faults) {
	rdb, _, f := b.FaultyClient(func(o *redis.UniversalOptions) {
		o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = 2*time.Millisecond, time.Second, time.Minute
	})
	return rdb, f
}

// Posts, votes and withdrawals from four goroutines through replies held
// back longer than the read timeout: go-redis re-sends, and every answer matches the
// server. A call that got no reply says its outcome is unknown.
func TestFaults_delays(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const (
			calls      = 200
			goroutines = 4
		)
		ctx := t.Context()
		rdb, f := delayedClient(b)
		s := newSite(t, b, rdb)
		reader := newSite(t, b, b.Client) // reads the outcome without faults
		// The scripts cached on the server (through the reader: the 2ms
		// read timeout may be too short for anything on a loaded machine).
		id := post(t, reader, "alice", "hot")
		post(t, reader, "alice", "warm")
		_, err := reader.Vote(ctx, id, "warm", voting.Up)
		require.NoError(t, err)

		type answer struct {
			id      string // Post
			counted bool   // Vote
			unknown bool
		}
		var (
			mu      sync.Mutex
			posts   = map[string]answer{} // by title
			votes   = map[string]answer{} // by user
			unvotes = map[string]answer{} // by user: every third withdraws
			next    atomic.Int64
			wg      sync.WaitGroup
			failure = make(chan error, 2*calls)
		)
		stop := f.Stall()
		for range goroutines {
			wg.Go(func() {
				for i := next.Add(1); i <= calls; i = next.Add(1) {
					n := strconv.FormatInt(i, 10)
					pid, err := s.Post(ctx, "bob", "p"+n, "http://example.com")
					switch {
					case err == nil || errors.Is(err, ria.ErrOutcomeUnknown):
						mu.Lock()
						posts["p"+n] = answer{id: pid, unknown: err != nil}
						mu.Unlock()
					default:
						failure <- err
					}
					counted, err := s.Vote(ctx, id, "v"+n, voting.Up)
					switch {
					case err == nil || errors.Is(err, ria.ErrOutcomeUnknown):
						mu.Lock()
						votes["v"+n] = answer{counted: counted, unknown: err != nil}
						mu.Unlock()
					default:
						failure <- err
					}
					if i%3 != 0 {
						continue
					}
					withdrawn, err := s.Unvote(ctx, id, "v"+n)
					switch {
					case err == nil || errors.Is(err, ria.ErrOutcomeUnknown):
						mu.Lock()
						unvotes["v"+n] = answer{counted: withdrawn, unknown: err != nil}
						mu.Unlock()
					default:
						failure <- err
					}
				}
			})
		}
		wg.Wait()
		stop()
		close(failure)
		for err := range failure {
			t.Errorf("a call failed: %v", err)
		}

		disagree, unknown := 0, 0
		// Posts: each title is posted at most once; each answered ID is the
		// article with that title.
		titles := map[string]int{}
		all, err := reader.Page(ctx, voting.ByTime, 1, 2*calls)
		require.NoError(t, err)
		byID := map[string]voting.Article{}
		for _, a := range all {
			titles[a.Title]++
			byID[a.ID] = a
		}
		for title, a := range posts {
			if a.unknown {
				unknown++
				if titles[title] > 1 {
					disagree++
				}
				continue
			}
			if titles[title] != 1 || byID[a.id].Title != title {
				disagree++
			}
		}
		// Votes: each user votes once, so an answer is "counted" and the
		// user is in the up-voters' set, unless they withdrew it. A
		// withdrawal answers "withdrawn" after a vote that counted, and
		// leaves the user out of the set.
		voters := map[string]bool{}
		for _, u := range b.Client.SMembers(ctx, key(b, "voted:"+id)).Val() {
			voters[u] = true
		}
		for user, a := range votes {
			w, withdrew := unvotes[user]
			switch {
			case a.unknown:
				unknown++
			case !a.counted:
				disagree++
			case withdrew && !w.unknown && !w.counted:
				disagree++ // the vote counted, so there was one to withdraw
			case !withdrew && !voters[user]:
				disagree++
			}
			if withdrew && w.unknown {
				unknown++
			}
			if withdrew && !w.unknown && voters[user] {
				disagree++
			}
		}
		hot := get(t, reader, id)
		if hot.Votes != int64(len(voters)) || hot.Downvotes != 0 {
			disagree++
		}
		t.Logf("fault harness: voting Post+Vote+Unvote under 0-3ms stalls, ReadTimeout 2ms, %d goroutines: calls=%d unknown=%d articles=%d votes=%d withdrawals=%d disagreements=%d",
			goroutines, 2*calls+len(unvotes), unknown, len(all)-2, hot.Votes-2, len(unvotes), disagree)
		assert.Zero(t, disagree)
		assert.Len(t, posts, calls)
		assert.Len(t, votes, calls)
		assert.Len(t, unvotes, calls/3)
		wantScore(t, b, hot, hot.Votes)
	})
}
