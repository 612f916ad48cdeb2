package voting_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/voting"
)

const site = "news"

// newSite returns the site "news" on rdb under the test's prefix.
func newSite(t *testing.T, b *redistest.Backend, rdb voting.Client, opts ...voting.Option) *voting.Site {
	t.Helper()
	s, err := voting.New(rdb, site, append([]voting.Option{voting.WithPrefix(b.Prefix)}, opts...)...)
	require.NoError(t, err)
	return s
}

// key returns the name of one of the site's keys (see doc.go).
func key(b *redistest.Backend, part string) string {
	return b.Prefix + "{" + site + "}:" + part
}

func post(t *testing.T, s *voting.Site, poster, title string) string {
	t.Helper()
	id, err := s.Post(t.Context(), poster, title, "http://example.com/"+title)
	require.NoError(t, err)
	return id
}

func get(t *testing.T, s *voting.Site, id string) *voting.Article {
	t.Helper()
	a, err := s.Get(t.Context(), id)
	require.NoError(t, err)
	return a
}

func ids(as []voting.Article) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

// unix is t in Unix seconds, as the indexes score it.
func unix(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

// wantScore checks a's score against its post time and counters, and the
// score index against a.
func wantScore(t *testing.T, b *redistest.Backend, a *voting.Article, net int64) {
	t.Helper()
	want := unix(a.Posted) + float64(voting.VoteScore*net)
	assert.InDelta(t, want, a.Score, 1e-3, "score of article %s", a.ID)
	assert.Equal(t, net, a.Votes-a.Downvotes, "net votes of article %s", a.ID)
	got, err := b.Client.ZScore(t.Context(), key(b, "score"), a.ID).Result()
	require.NoError(t, err)
	assert.InDelta(t, want, got, 1e-3, "score index of article %s", a.ID)
}

// The book's scenario: post, another user votes, the article ranks in the
// score and time pages and in its group.
func TestSite_bookScenario(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		before := time.Now()
		id := post(t, s, "username", "A title")
		after := time.Now()
		assert.Equal(t, "1", id, "IDs come from a counter")

		a := get(t, s, id)
		assert.Equal(t, "A title", a.Title)
		assert.Equal(t, "http://example.com/A title", a.Link)
		assert.Equal(t, "username", a.Poster)
		assert.Equal(t, int64(1), a.Votes, "the poster's own vote")
		assert.Equal(t, int64(0), a.Downvotes)
		if b.Real() { // miniredis's TIME is the harness's frozen clock
			// Posted between the call and its return (same machine's
			// clock; a millisecond for rounding).
			assert.False(t, a.Posted.Before(before.Add(-time.Millisecond)), "posted %v, called at %v", a.Posted, before)
			assert.False(t, a.Posted.After(after.Add(time.Millisecond)), "posted %v, returned at %v", a.Posted, after)
		}
		wantScore(t, b, a, 1)

		counted, err := s.Vote(ctx, id, "other_user", voting.Up)
		require.NoError(t, err)
		assert.True(t, counted)
		a = get(t, s, id)
		assert.Greater(t, a.Votes, int64(1))
		wantScore(t, b, a, 2)

		for _, o := range []voting.Order{voting.ByScore, voting.ByTime} {
			page, err := s.Page(ctx, o, 1, 10)
			require.NoError(t, err)
			require.Len(t, page, 1, o)
			assert.Equal(t, *a, page[0], o)
		}

		require.NoError(t, s.UpdateGroups(ctx, id, []string{"new-group"}, nil))
		for _, o := range []voting.Order{voting.ByScore, voting.ByTime} {
			page, err := s.GroupPage(ctx, "new-group", o, 1, 10)
			require.NoError(t, err)
			require.Len(t, page, 1, o)
			assert.Equal(t, *a, page[0], o)
		}
		page, err := s.GroupPage(ctx, "other-group", voting.ByScore, 1, 10)
		require.NoError(t, err)
		assert.Empty(t, page)
	})
}

// The keys and their types and TTLs are those doc.go documents.
func TestSite_keys(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client, voting.WithGroupCacheTTL(time.Hour))
		id := post(t, s, "alice", "t")
		_, err := s.Vote(ctx, id, "bob", voting.Down)
		require.NoError(t, err)
		require.NoError(t, s.UpdateGroups(ctx, id, []string{"g"}, nil))
		_, err = s.GroupPage(ctx, "g", voting.ByScore, 1, 10)
		require.NoError(t, err)
		_, err = s.GroupPage(ctx, "g", voting.ByTime, 1, 10)
		require.NoError(t, err)

		a := get(t, s, id)
		closes := a.Posted.Add(voting.VotingWindow)
		for _, c := range []struct {
			part, typ string
			ttl       time.Duration // -1: none
		}{
			{"seq", "string", -1},
			{"article:" + id, "hash", -1},
			{"time", "zset", -1},
			{"score", "zset", -1},
			{"voted:" + id, "set", voting.VotingWindow},
			{"downvoted:" + id, "set", voting.VotingWindow},
			{"group:g", "set", -1},
			{"cache:score:g", "zset", time.Hour},
			{"cache:time:g", "zset", time.Hour},
		} {
			k := key(b, c.part)
			assert.Equal(t, c.typ, b.Client.Type(ctx, k).Val(), k)
			ttl := b.Client.PTTL(ctx, k).Val()
			if c.ttl < 0 {
				assert.Equal(t, time.Duration(-1), ttl, "%s has no TTL", k)
				continue
			}
			// Set to c.ttl when the key was written, a moment ago.
			assert.LessOrEqual(t, ttl, c.ttl, "%s TTL", k)
			assert.Greater(t, ttl, c.ttl-time.Minute, "%s TTL", k)
			if c.ttl == voting.VotingWindow && b.Real() {
				at := b.Client.PExpireTime(ctx, k).Val()
				assert.InDelta(t, float64(closes.UnixMilli()), float64(at.Milliseconds()), 2, "%s expires when voting closes", k)
			}
		}
		assert.Equal(t, "1", b.Client.Get(ctx, key(b, "seq")).Val())
		assert.Equal(t, []string{"alice"}, b.Client.SMembers(ctx, key(b, "voted:"+id)).Val())
		assert.Equal(t, []string{"bob"}, b.Client.SMembers(ctx, key(b, "downvoted:"+id)).Val())
		assert.Equal(t, []string{id}, b.Client.SMembers(ctx, key(b, "group:g")).Val())
		h := b.Client.HGetAll(ctx, key(b, "article:"+id)).Val()
		assert.Equal(t, map[string]string{
			"title": "t", "link": "http://example.com/t", "poster": "alice",
			"time": h["time"], "votes": "1", "downvotes": "1",
		}, h)
		assert.Regexp(t, `^\d+\.\d{6}$`, h["time"])
		tm, err := b.Client.ZScore(ctx, key(b, "time"), id).Result()
		require.NoError(t, err)
		assert.InDelta(t, unix(a.Posted), tm, 1e-6)
		cs, err := b.Client.ZScore(ctx, key(b, "cache:score:g"), id).Result()
		require.NoError(t, err)
		assert.InDelta(t, a.Score, cs, 1e-6, "the cache holds the exact score")
		ct, err := b.Client.ZScore(ctx, key(b, "cache:time:g"), id).Result()
		require.NoError(t, err)
		assert.InDelta(t, tm, ct, 1e-6, "the cache holds the exact time")
	})
}

func TestSite_Vote_oncePerUser(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		id := post(t, s, "alice", "t")

		counted, err := s.Vote(ctx, id, "alice", voting.Up)
		require.NoError(t, err)
		assert.False(t, counted, "the poster has voted already")
		for range 3 {
			counted, err = s.Vote(ctx, id, "bob", voting.Up)
			require.NoError(t, err)
		}
		assert.False(t, counted, "bob's later votes do not count")
		a := get(t, s, id)
		assert.Equal(t, int64(2), a.Votes)
		wantScore(t, b, a, 2)

		other := post(t, s, "carol", "u")
		counted, err = s.Vote(ctx, other, "bob", voting.Up)
		require.NoError(t, err)
		assert.True(t, counted, "one vote per user per article")
		assert.Equal(t, int64(2), get(t, s, other).Votes)
		assert.Equal(t, int64(2), get(t, s, id).Votes)
	})
}

// The down-vote exercise: down-votes, switching sides both ways, and
// repeats that change nothing.
func TestSite_Vote_down(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		id := post(t, s, "alice", "t")
		vote := func(user string, d voting.Direction) bool {
			t.Helper()
			counted, err := s.Vote(ctx, id, user, d)
			require.NoError(t, err)
			return counted
		}
		check := func(votes, down int64, msg string) {
			t.Helper()
			a := get(t, s, id)
			assert.Equal(t, votes, a.Votes, msg)
			assert.Equal(t, down, a.Downvotes, msg)
			wantScore(t, b, a, votes-down)
			assert.Equal(t, votes, b.Client.SCard(ctx, key(b, "voted:"+id)).Val(), msg)
			assert.Equal(t, down, b.Client.SCard(ctx, key(b, "downvoted:"+id)).Val(), msg)
		}

		assert.True(t, vote("bob", voting.Down))
		check(1, 1, "bob down")
		assert.False(t, vote("bob", voting.Down))
		check(1, 1, "bob down again: no-op")
		assert.True(t, vote("bob", voting.Up))
		check(2, 0, "bob switches up: +2 votes of score")
		assert.False(t, vote("bob", voting.Up))
		check(2, 0, "bob up again: no-op")
		assert.True(t, vote("bob", voting.Down))
		check(1, 1, "bob switches down again")
		assert.True(t, vote("alice", voting.Down))
		check(0, 2, "the poster switches too")
		assert.True(t, vote("carol", voting.Down))
		check(0, 3, "score below the post time")
		assert.True(t, vote("alice", voting.Up))
		check(1, 2, "the poster switches back")
	})
}

// backdate moves article id's post time in the time index (the key doc.go
// documents as the start of the voting window) to ago before its post time.
func backdate(t *testing.T, b *redistest.Backend, a *voting.Article, ago time.Duration) {
	t.Helper()
	n, err := b.Client.ZAddXX(t.Context(), key(b, "time"),
		redis.Z{Score: unix(a.Posted.Add(-ago)), Member: a.ID}).Result()
	require.NoError(t, err)
	require.Zero(t, n, "XX updates the score")
}

// Voting closes a week after posting, by the server's clock. The post time
// that counts is the time index's score (as in the book), which the test
// back-dates on every backend; on miniredis the server's clock also moves
// forward.
func TestSite_Vote_closed(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		id := post(t, s, "alice", "t")
		a := get(t, s, id)

		backdate(t, b, a, voting.VotingWindow-time.Minute)
		counted, err := s.Vote(ctx, id, "bob", voting.Up)
		require.NoError(t, err, "a minute left")
		assert.True(t, counted)

		backdate(t, b, a, voting.VotingWindow+time.Second)
		for _, d := range []voting.Direction{voting.Up, voting.Down} {
			for _, user := range []string{"carol", "bob", "alice"} {
				counted, err = s.Vote(ctx, id, user, d)
				assert.ErrorIs(t, err, voting.ErrVotingClosed, "%s %v", user, d)
				assert.ErrorContains(t, err, `voting: vote on article "`+id+`"`)
				assert.False(t, counted)
			}
		}
		a = get(t, s, id)
		assert.Equal(t, int64(2), a.Votes, "closed votes wrote nothing")
		assert.Equal(t, int64(0), a.Downvotes)
		wantScore(t, b, a, 2)
		assert.Equal(t, []string{"alice", "bob"}, sorted(b.Client.SMembers(ctx, key(b, "voted:"+id)).Val()))
		assert.Zero(t, b.Client.Exists(ctx, key(b, "downvoted:"+id)).Val())

		if b.Mini == nil {
			return // a real server's clock cannot be moved from here
		}
		// Let the server's clock run to the end of the window.
		id = post(t, s, "alice", "u")
		b.FastForward(voting.VotingWindow - time.Second)
		counted, err = s.Vote(ctx, id, "bob", voting.Down)
		require.NoError(t, err, "a second left")
		assert.True(t, counted)
		b.FastForward(time.Second)
		_, err = s.Vote(ctx, id, "carol", voting.Up)
		assert.ErrorIs(t, err, voting.ErrVotingClosed, "closed exactly a week after posting")
		b.FastForward(time.Second)
		assert.Zero(t, b.Client.Exists(ctx, key(b, "voted:"+id), key(b, "downvoted:"+id)).Val(),
			"the voters' sets expired with the window")
		_, err = s.Vote(ctx, id, "bob", voting.Up)
		assert.ErrorIs(t, err, voting.ErrVotingClosed)
		a = get(t, s, id)
		assert.Equal(t, int64(1), a.Votes)
		assert.Equal(t, int64(1), a.Downvotes)
		wantScore(t, b, a, 0)
	})
}

// expire makes the cache keys, which expire after ttl, expire: on miniredis
// by moving its clock past ttl, on a real server (whose clock cannot be
// moved) by cutting their TTL to a millisecond, and then waits until they
// are gone.
func expire(t *testing.T, b *redistest.Backend, ttl time.Duration, keys ...string) {
	t.Helper()
	ctx := t.Context()
	for _, k := range keys {
		left, err := b.Client.PTTL(ctx, k).Result()
		require.NoError(t, err)
		require.Greater(t, left, time.Duration(0), "%s expires", k)
		require.LessOrEqual(t, left, ttl, "%s expires within the TTL", k)
	}
	if b.Mini != nil {
		b.FastForward(ttl)
	} else {
		for _, k := range keys {
			require.NoError(t, b.Client.PExpire(ctx, k, time.Millisecond).Err())
		}
	}
	require.Eventually(t, func() bool { return b.Client.Exists(ctx, keys...).Val() == 0 },
		10*time.Second, time.Millisecond, "the keys expired")
}

func sorted(ss []string) []string {
	out := append([]string(nil), ss...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Many goroutines on two clients vote on one article, some users twice at
// once, then switch sides, then vote, switch and withdraw at once; the
// counters, the score and the voters' sets match the distinct voters (a
// model of every user's standing vote) exactly.
func TestSite_Vote_concurrent(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const (
			upVoters   = 60 // 20 of them vote twice at once
			downVoters = 30 // 10 of them vote twice at once
			twice      = 3  // every third voter
			switchers  = 10 // vote up and down at once, 4 times each
		)
		ctx := t.Context()
		other, _ := b.NewClient()
		sites := []*voting.Site{newSite(t, b, b.Client), newSite(t, b, other)}
		id := post(t, sites[0], "poster", "hot")

		type ballot struct {
			user string
			d    voting.Direction
		}
		var ballots []ballot
		for i := range upVoters {
			u := fmt.Sprintf("up%d", i)
			ballots = append(ballots, ballot{u, voting.Up})
			if i%twice == 0 {
				ballots = append(ballots, ballot{u, voting.Up})
			}
		}
		for i := range downVoters {
			u := fmt.Sprintf("down%d", i)
			ballots = append(ballots, ballot{u, voting.Down})
			if i%twice == 0 {
				ballots = append(ballots, ballot{u, voting.Down})
			}
		}

		var counted atomic.Int64
		errs := make(chan error, len(ballots))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, bl := range ballots {
			wg.Go(func() {
				<-start
				ok, err := sites[i%2].Vote(ctx, id, bl.user, bl.d)
				if err != nil {
					errs <- err
					return
				}
				if ok {
					counted.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		assert.Equal(t, int64(upVoters+downVoters), counted.Load(), "each user's vote counted once")
		a := get(t, sites[0], id)
		assert.Equal(t, int64(1+upVoters), a.Votes)
		assert.Equal(t, int64(downVoters), a.Downvotes)
		wantScore(t, b, a, 1+upVoters-downVoters)

		// Users switching sides concurrently: whatever order the server
		// runs them in, each ends with one vote and everything agrees.
		var wg2 sync.WaitGroup
		errs = make(chan error, switchers*8)
		for i := range switchers {
			for j := range 8 {
				d := voting.Up
				if j%2 == 1 {
					d = voting.Down
				}
				wg2.Go(func() {
					if _, err := sites[j%2].Vote(ctx, id, fmt.Sprintf("sw%d", i), d); err != nil {
						errs <- err
					}
				})
			}
		}
		wg2.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		a = get(t, sites[0], id)
		assert.Equal(t, int64(1+upVoters+downVoters+switchers), a.Votes+a.Downvotes, "one vote per distinct user")
		assert.Equal(t, a.Votes, b.Client.SCard(ctx, key(b, "voted:"+id)).Val())
		assert.Equal(t, a.Downvotes, b.Client.SCard(ctx, key(b, "downvoted:"+id)).Val())
		assert.Zero(t, b.Client.SInterCard(ctx, 0, key(b, "voted:"+id), key(b, "downvoted:"+id)).Val(),
			"no user on both sides")
		wantScore(t, b, a, a.Votes-a.Downvotes)

		// Votes, switches and withdrawals at once. The model holds every
		// user's standing vote: the switchers' as the server ordered them.
		model := map[string]voting.Direction{"poster": voting.Up}
		for i := range upVoters {
			model[fmt.Sprintf("up%d", i)] = voting.Up
		}
		for i := range downVoters {
			model[fmt.Sprintf("down%d", i)] = voting.Down
		}
		for i := range switchers {
			u := fmt.Sprintf("sw%d", i)
			model[u] = voteOf(t, sites[0], id, u)
		}
		const (
			sequential = 20 // users voting and withdrawing in turn, each from one goroutine
			steps      = 9
			contended  = 5 // users voting and withdrawing from 6 goroutines at once
			hammers    = 6
		)
		// Withdraw twice at once (exactly one counts): the poster and every
		// third up-voter, down-voter and switcher.
		withdrawers := []string{"poster"}
		for _, g := range []struct {
			name string
			n    int
		}{{"up", upVoters}, {"down", downVoters}, {"sw", switchers}} {
			for i := 0; i < g.n; i += 3 {
				withdrawers = append(withdrawers, fmt.Sprintf("%s%d", g.name, i))
			}
		}
		var (
			mu        sync.Mutex
			withdrawn = map[string]int{}
			final     = map[string]voting.Direction{} // of the sequential users
			wg3       sync.WaitGroup
		)
		errs = make(chan error, 2*len(withdrawers)+sequential*steps+contended*hammers*steps)
		for _, u := range withdrawers {
			for j := range 2 {
				wg3.Go(func() {
					ok, err := sites[j].Unvote(ctx, id, u)
					if err != nil {
						errs <- err
						return
					}
					if ok {
						mu.Lock()
						withdrawn[u]++
						mu.Unlock()
					}
				})
			}
		}
		for i := range sequential {
			wg3.Go(func() {
				u := fmt.Sprintf("seq%d", i)
				var held voting.Direction
				for j := range steps {
					site := sites[(i+j)%2]
					switch op := (i*7 + j*3) % 4; op {
					case 0, 1: // up or down
						d := voting.Up
						if op == 1 {
							d = voting.Down
						}
						ok, err := site.Vote(ctx, id, u, d)
						if err == nil && ok != (held != d) {
							err = fmt.Errorf("%s step %d: vote %v counted=%v while holding %v", u, j, d, ok, held)
						}
						if err != nil {
							errs <- err
							return
						}
						held = d
					default: // withdraw
						ok, err := site.Unvote(ctx, id, u)
						if err == nil && ok != (held != 0) {
							err = fmt.Errorf("%s step %d: unvote withdrawn=%v while holding %v", u, j, ok, held)
						}
						if err != nil {
							errs <- err
							return
						}
						held = 0
					}
				}
				mu.Lock()
				final[u] = held
				mu.Unlock()
			})
		}
		for i := range contended {
			for j := range hammers {
				wg3.Go(func() {
					u := fmt.Sprintf("con%d", i)
					for k := range steps {
						var err error
						switch (j + k) % 3 {
						case 0:
							_, err = sites[k%2].Vote(ctx, id, u, voting.Up)
						case 1:
							_, err = sites[k%2].Vote(ctx, id, u, voting.Down)
						default:
							_, err = sites[k%2].Unvote(ctx, id, u)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
		}
		wg3.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		for _, u := range withdrawers {
			assert.Equal(t, 1, withdrawn[u], "%s withdrew twice at once: one counts", u)
			delete(model, u)
		}
		require.Len(t, final, sequential)
		for u, d := range final {
			if d != 0 {
				model[u] = d
			}
		}
		for i := range contended { // whatever order the server ran them in
			u := fmt.Sprintf("con%d", i)
			if d := voteOf(t, sites[1], id, u); d != 0 {
				model[u] = d
			}
		}
		var up, down []string
		for u, d := range model {
			if d == voting.Up {
				up = append(up, u)
			} else {
				down = append(down, u)
			}
		}
		for _, u := range append(withdrawers, "seq0", "seq1", "seq2", "nobody") {
			assert.Equal(t, model[u], voteOf(t, sites[0], id, u), "the vote of %s", u)
		}
		a = get(t, sites[0], id)
		assert.Equal(t, int64(len(up)), a.Votes, "the model's up-votes")
		assert.Equal(t, int64(len(down)), a.Downvotes, "the model's down-votes")
		assert.Equal(t, sorted(up), sorted(b.Client.SMembers(ctx, key(b, "voted:"+id)).Val()))
		assert.Equal(t, sorted(down), sorted(b.Client.SMembers(ctx, key(b, "downvoted:"+id)).Val()))
		wantScore(t, b, a, int64(len(up)-len(down)))
	})
}

// Pages in score and time order, and their bounds.
func TestSite_Page(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		var all []string
		for i := range 5 {
			all = append(all, post(t, s, "alice", "t"+strconv.Itoa(i)))
			b.FastForward(time.Millisecond) // distinct post times on miniredis
		}
		newest := []string{all[4], all[3], all[2], all[1], all[0]}
		pages := func(o voting.Order) [][]string {
			var out [][]string
			for p := 1; p <= 4; p++ {
				page, err := s.Page(ctx, o, p, 2)
				require.NoError(t, err)
				out = append(out, ids(page))
			}
			return out
		}
		want := [][]string{newest[0:2], newest[2:4], newest[4:], {}}
		assert.Equal(t, want, pages(voting.ByTime))
		assert.Equal(t, want, pages(voting.ByScore), "equal votes: newest first")

		// The oldest rises to the top with one more vote, the newest sinks
		// below all with two down-votes.
		_, err := s.Vote(ctx, all[0], "bob", voting.Up)
		require.NoError(t, err)
		for _, u := range []string{"bob", "carol"} {
			_, err = s.Vote(ctx, all[4], u, voting.Down)
			require.NoError(t, err)
		}
		assert.Equal(t, [][]string{{all[0], all[3]}, {all[2], all[1]}, {all[4]}, {}}, pages(voting.ByScore))
		assert.Equal(t, want, pages(voting.ByTime), "votes leave the time order alone")

		page, err := s.Page(ctx, voting.ByScore, 1, 100)
		require.NoError(t, err)
		require.Len(t, page, 5)
		for i := 1; i < len(page); i++ {
			assert.GreaterOrEqual(t, page[i-1].Score, page[i].Score)
		}
		assert.Equal(t, int64(2), page[0].Votes)
		assert.Equal(t, int64(2), page[4].Downvotes)
	})
}

// Group pages: membership, the cache and its invalidation.
func TestSite_GroupPage(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		// Long enough that no cache expires between its fill and its
		// check, however loaded the machine; expiry is brought about below.
		const ttl = time.Hour
		s := newSite(t, b, b.Client, voting.WithGroupCacheTTL(ttl))
		a1 := post(t, s, "alice", "one")
		b.FastForward(time.Millisecond)
		a2 := post(t, s, "alice", "two")
		b.FastForward(time.Millisecond)
		a3 := post(t, s, "alice", "three")
		require.NoError(t, s.UpdateGroups(ctx, a1, []string{"go", "db"}, nil))
		require.NoError(t, s.UpdateGroups(ctx, a2, []string{"go"}, nil))
		require.NoError(t, s.UpdateGroups(ctx, a3, []string{"db"}, nil))
		group := func(g string, o voting.Order) []string {
			t.Helper()
			page, err := s.GroupPage(ctx, g, o, 1, 10)
			require.NoError(t, err)
			return ids(page)
		}
		assert.Equal(t, []string{a2, a1}, group("go", voting.ByScore))
		assert.Equal(t, []string{a3, a1}, group("db", voting.ByTime))

		// A vote lifts a1 above a2: the live score shows at once, the
		// cached order until the cache expires.
		_, err := s.Vote(ctx, a1, "bob", voting.Up)
		require.NoError(t, err)
		page, err := s.GroupPage(ctx, "go", voting.ByScore, 1, 10)
		require.NoError(t, err)
		assert.Equal(t, []string{a2, a1}, ids(page), "cached order")
		assert.Greater(t, page[1].Score, page[0].Score, "live scores")
		expire(t, b, ttl, key(b, "cache:score:go"))
		assert.Equal(t, []string{a1, a2}, group("go", voting.ByScore), "recomputed after the TTL")

		// Membership changes show at once: they drop the group's caches.
		require.NoError(t, s.UpdateGroups(ctx, a3, []string{"go"}, []string{"db"}))
		assert.Equal(t, []string{a1, a3, a2}, group("go", voting.ByScore))
		assert.Equal(t, []string{a3, a2, a1}, group("go", voting.ByTime))
		assert.Equal(t, []string{a1}, group("db", voting.ByTime))
		require.NoError(t, s.UpdateGroups(ctx, a1, nil, []string{"go", "db", "nowhere"}))
		assert.Equal(t, []string{a3, a2}, group("go", voting.ByScore))
		assert.Empty(t, group("db", voting.ByScore))
		require.NoError(t, s.UpdateGroups(ctx, a2, []string{"go", "go"}, nil), "already in: no-op")
		assert.Equal(t, []string{a3, a2}, group("go", voting.ByScore))

		// Paging through a group.
		for i := range 3 {
			require.NoError(t, s.UpdateGroups(ctx, post(t, s, "bob", "x"+strconv.Itoa(i)), []string{"go"}, nil))
		}
		var seen []string
		for p := 1; ; p++ {
			page, err := s.GroupPage(ctx, "go", voting.ByTime, p, 2)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			seen = append(seen, ids(page)...)
		}
		assert.Equal(t, []string{"6", "5", "4", a3, a2}, seen)
	})
}

// Bad input is an error naming it, before anything reaches Redis, and
// writes nothing.
func TestSite_badInput(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, c := range []struct {
			site string
			opts []voting.Option
			want string
		}{
			{"", nil, "voting: new: site: empty name"},
			{"}x", nil, "site"},
			{"a{b}", nil, `site "a{b}": must not contain '{' or '}'`},
			{site, []voting.Option{voting.WithPrefix("a{b")}, "prefix"},
			{site, []voting.Option{voting.WithGroupCacheTTL(0)}, "group cache TTL 0s"},
			{site, []voting.Option{voting.WithGroupCacheTTL(-time.Second)}, "group cache TTL -1s"},
			{site, []voting.Option{voting.WithGroupCacheTTL(time.Microsecond)}, "group cache TTL 1µs"},
		} {
			s, err := voting.New(b.Client, c.site, c.opts...)
			assert.Nil(t, s)
			assert.ErrorContains(t, err, c.want)
		}
		assert.Panics(t, func() { _, _ = voting.New(nil, site) })

		s := newSite(t, b, b.Client)
		for _, c := range []struct {
			op    string
			fn    func() error
			want  string
			noArt bool // the error is ErrNoArticle
		}{
			{"post no poster", func() error { _, err := s.Post(ctx, "", "t", "l"); return err }, "poster: empty", false},
			{"post no title", func() error { _, err := s.Post(ctx, "u", "", "l"); return err }, "title: empty", false},
			{"post no link", func() error { _, err := s.Post(ctx, "u", "t", ""); return err }, "link: empty", false},
			{"vote no user", func() error { _, err := s.Vote(ctx, "1", "", voting.Up); return err }, "user: empty", false},
			{"vote no direction", func() error { _, err := s.Vote(ctx, "1", "u", 0); return err }, "direction Direction(0)", false},
			{"vote empty ID", func() error { _, err := s.Vote(ctx, "", "u", voting.Up); return err }, "empty ID", true},
			{"vote ID abc", func() error { _, err := s.Vote(ctx, "abc", "u", voting.Up); return err }, "malformed ID", true},
			{"vote ID 0", func() error { _, err := s.Vote(ctx, "0", "u", voting.Up); return err }, "malformed ID", true},
			{"vote ID -1", func() error { _, err := s.Vote(ctx, "-1", "u", voting.Up); return err }, "malformed ID", true},
			{"vote ID 01", func() error { _, err := s.Vote(ctx, "01", "u", voting.Up); return err }, "malformed ID", true},
			{"unvote no user", func() error { _, err := s.Unvote(ctx, "1", ""); return err }, "user: empty", false},
			{"unvote empty ID", func() error { _, err := s.Unvote(ctx, "", "u"); return err }, "empty ID", true},
			{"unvote ID abc", func() error { _, err := s.Unvote(ctx, "abc", "u"); return err }, "malformed ID", true},
			{"unvote ID 0", func() error { _, err := s.Unvote(ctx, "0", "u"); return err }, "malformed ID", true},
			{"unvote ID -1", func() error { _, err := s.Unvote(ctx, "-1", "u"); return err }, "malformed ID", true},
			{"unvote ID 01", func() error { _, err := s.Unvote(ctx, "01", "u"); return err }, "malformed ID", true},
			{"vote of no user", func() error { _, err := s.VoteOf(ctx, "1", ""); return err }, "user: empty", false},
			{"vote of empty ID", func() error { _, err := s.VoteOf(ctx, "", "u"); return err }, "empty ID", true},
			{"vote of ID abc", func() error { _, err := s.VoteOf(ctx, "abc", "u"); return err }, "malformed ID", true},
			{"vote of ID 0", func() error { _, err := s.VoteOf(ctx, "0", "u"); return err }, "malformed ID", true},
			{"vote of ID +1", func() error { _, err := s.VoteOf(ctx, "+1", "u"); return err }, "malformed ID", true},
			{"get ID x", func() error { _, err := s.Get(ctx, "x"); return err }, "malformed ID", true},
			{"page 0", func() error { _, err := s.Page(ctx, voting.ByScore, 0, 10); return err }, "page 0: must be at least 1", false},
			{"page -1", func() error { _, err := s.Page(ctx, voting.ByTime, -1, 10); return err }, "page -1", false},
			{"size 0", func() error { _, err := s.Page(ctx, voting.ByScore, 1, 0); return err }, "page size 0", false},
			{"order 7", func() error { _, err := s.Page(ctx, 7, 1, 10); return err }, "order Order(7)", false},
			{"page overflow", func() error { _, err := s.Page(ctx, voting.ByScore, 1<<62, 4); return err }, "beyond any rank", false},
			{"group page no group", func() error { _, err := s.GroupPage(ctx, "", voting.ByScore, 1, 10); return err }, "group: empty", false},
			{"group page 0", func() error { _, err := s.GroupPage(ctx, "g", voting.ByScore, 0, 10); return err }, "page 0", false},
			{"group page size -1", func() error { _, err := s.GroupPage(ctx, "g", voting.ByTime, 1, -1); return err }, "page size -1", false},
			{"groups none", func() error { return s.UpdateGroups(ctx, "1", nil, nil) }, "no groups", false},
			{"groups empty add", func() error { return s.UpdateGroups(ctx, "1", []string{"g", ""}, nil) }, "group to add: empty", false},
			{"groups empty remove", func() error { return s.UpdateGroups(ctx, "1", nil, []string{""}) }, "group to remove: empty", false},
			{"groups both", func() error { return s.UpdateGroups(ctx, "1", []string{"g"}, []string{"g"}) }, `group "g": both added and removed`, false},
			{"groups ID x", func() error { return s.UpdateGroups(ctx, "x", []string{"g"}, nil) }, "malformed ID", true},
		} {
			rt, _ := b.Count.Delta(func() {
				err := c.fn()
				assert.ErrorContains(t, err, c.want, c.op)
				assert.ErrorContains(t, err, "voting: ", c.op)
				if c.noArt {
					assert.ErrorIs(t, err, voting.ErrNoArticle, c.op)
				} else {
					assert.NotErrorIs(t, err, voting.ErrNoArticle, c.op)
				}
			})
			assert.Zero(t, rt, "%s reached Redis", c.op)
		}

		// Well-formed IDs of articles that do not exist reach Redis, and
		// are refused there.
		_, err := s.Vote(ctx, "1", "u", voting.Up)
		assert.ErrorIs(t, err, voting.ErrNoArticle)
		assert.ErrorContains(t, err, `voting: vote on article "1": voting: no such article`)
		_, err = s.Vote(ctx, "42", "u", voting.Down)
		assert.ErrorIs(t, err, voting.ErrNoArticle)
		ok, err := s.Unvote(ctx, "1", "u")
		assert.ErrorIs(t, err, voting.ErrNoArticle)
		assert.ErrorContains(t, err, `voting: unvote on article "1": voting: no such article`)
		assert.False(t, ok)
		d, err := s.VoteOf(ctx, "42", "u")
		assert.ErrorIs(t, err, voting.ErrNoArticle)
		assert.ErrorContains(t, err, `voting: vote of "u" on article "42": voting: no such article`)
		assert.Zero(t, d)
		_, err = s.Get(ctx, "1")
		assert.ErrorIs(t, err, voting.ErrNoArticle)
		assert.ErrorIs(t, s.UpdateGroups(ctx, "1", []string{"g"}, []string{"h"}), voting.ErrNoArticle)
		page, err := s.Page(ctx, voting.ByScore, 1, 10)
		require.NoError(t, err)
		assert.Empty(t, page)
		page, err = s.GroupPage(ctx, "g", voting.ByScore, 1, 10)
		require.NoError(t, err)
		assert.Empty(t, page)

		assert.Empty(t, b.Keys(""), "nothing was written")
	})
}

// An unknown article on a live site changes nothing.
func TestSite_Vote_unknownArticle(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		id := post(t, s, "alice", "t")
		before := b.Keys("")
		a := get(t, s, id)

		_, err := s.Vote(ctx, "2", "bob", voting.Up)
		assert.ErrorIs(t, err, voting.ErrNoArticle)
		_, err = s.Unvote(ctx, "2", "alice")
		assert.ErrorIs(t, err, voting.ErrNoArticle)
		_, err = s.VoteOf(ctx, "2", "alice")
		assert.ErrorIs(t, err, voting.ErrNoArticle)
		assert.ErrorIs(t, s.UpdateGroups(ctx, "2", []string{"g"}, nil), voting.ErrNoArticle)
		assert.ElementsMatch(t, before, b.Keys(""), "no key created")
		assert.Equal(t, a, get(t, s, id), "the existing article is untouched")
		next := post(t, s, "alice", "u")
		assert.Equal(t, "2", next, "the counter did not move")
	})
}

func TestSite_roundTrips(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		// Warm up: the first call of each script may take two round trips
		// (EVALSHA answered by NOSCRIPT, then EVAL).
		id := post(t, s, "alice", "warm")
		_, err := s.Vote(ctx, id, "bob", voting.Up)
		require.NoError(t, err)
		_, err = s.Unvote(ctx, id, "bob")
		require.NoError(t, err)
		_, err = s.VoteOf(ctx, id, "bob")
		require.NoError(t, err)
		require.NoError(t, s.UpdateGroups(ctx, id, []string{"g"}, nil))
		_, err = s.GroupPage(ctx, "g", voting.ByScore, 1, 10)
		require.NoError(t, err)

		for _, id := range []string{post(t, s, "alice", "a"), post(t, s, "alice", "b")} {
			require.NoError(t, s.UpdateGroups(ctx, id, []string{"g"}, nil))
		}
		for _, c := range []struct {
			op       string
			rt, cmds int64
			fn       func()
		}{
			{"Post", 1, 1, func() { id = post(t, s, "carol", "c") }},
			{"Vote", 1, 1, func() { ok, err := s.Vote(ctx, id, "dave", voting.Up); require.NoError(t, err); require.True(t, ok) }},
			{"Vote repeated", 1, 1, func() { ok, err := s.Vote(ctx, id, "dave", voting.Up); require.NoError(t, err); require.False(t, ok) }},
			{"Vote switch", 1, 1, func() { ok, err := s.Vote(ctx, id, "dave", voting.Down); require.NoError(t, err); require.True(t, ok) }},
			{"Vote unknown", 1, 1, func() { _, err := s.Vote(ctx, "99", "dave", voting.Up); require.ErrorIs(t, err, voting.ErrNoArticle) }},
			{"VoteOf down", 1, 1, func() { d, err := s.VoteOf(ctx, id, "dave"); require.NoError(t, err); require.Equal(t, voting.Down, d) }},
			{"VoteOf up", 1, 1, func() { d, err := s.VoteOf(ctx, id, "carol"); require.NoError(t, err); require.Equal(t, voting.Up, d) }},
			{"VoteOf none", 1, 1, func() { d, err := s.VoteOf(ctx, id, "erin"); require.NoError(t, err); require.Zero(t, d) }},
			{"VoteOf unknown", 1, 1, func() { _, err := s.VoteOf(ctx, "99", "dave"); require.ErrorIs(t, err, voting.ErrNoArticle) }},
			{"Unvote", 1, 1, func() { ok, err := s.Unvote(ctx, id, "dave"); require.NoError(t, err); require.True(t, ok) }},
			{"Unvote repeated", 1, 1, func() { ok, err := s.Unvote(ctx, id, "dave"); require.NoError(t, err); require.False(t, ok) }},
			{"Unvote unknown", 1, 1, func() { _, err := s.Unvote(ctx, "99", "dave"); require.ErrorIs(t, err, voting.ErrNoArticle) }},
			{"Vote again", 1, 1, func() { ok, err := s.Vote(ctx, id, "dave", voting.Down); require.NoError(t, err); require.True(t, ok) }},
			{"Get", 1, 2, func() { get(t, s, id) }},
			{"Page of 4", 2, 1 + 2*4, func() { p, err := s.Page(ctx, voting.ByScore, 1, 10); require.NoError(t, err); require.Len(t, p, 4) }},
			{"Page of 2", 2, 1 + 2*2, func() { p, err := s.Page(ctx, voting.ByTime, 2, 2); require.NoError(t, err); require.Len(t, p, 2) }},
			{"Page empty", 1, 1, func() { p, err := s.Page(ctx, voting.ByTime, 3, 2); require.NoError(t, err); require.Empty(t, p) }},
			{"UpdateGroups", 1, 1, func() { require.NoError(t, s.UpdateGroups(ctx, id, []string{"g", "h"}, []string{"i"})) }},
			{"GroupPage computed", 2, 1 + 2*4, func() {
				p, err := s.GroupPage(ctx, "g", voting.ByTime, 1, 10)
				require.NoError(t, err)
				require.Len(t, p, 4)
			}},
			{"GroupPage cached", 2, 1 + 2*4, func() {
				p, err := s.GroupPage(ctx, "g", voting.ByTime, 1, 10)
				require.NoError(t, err)
				require.Len(t, p, 4)
			}},
			{"GroupPage empty", 1, 1, func() {
				p, err := s.GroupPage(ctx, "none", voting.ByTime, 1, 10)
				require.NoError(t, err)
				require.Empty(t, p)
			}},
		} {
			rt, cmds := b.Count.Delta(c.fn)
			assert.Equal(t, c.rt, rt, c.op+" round trips")
			assert.Equal(t, c.cmds, cmds, c.op+" commands")
		}
	})
}

// A group's cached order carries each article's exact score, even below 1
// (a heavily down-voted article), where the book's AGGREGATE MAX would give
// every such article the group set's score of 1.
func TestSite_GroupPage_lowScores(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := newSite(t, b, b.Client)
		a := post(t, s, "alice", "a")
		z := post(t, s, "alice", "z")
		require.NoError(t, s.UpdateGroups(ctx, a, []string{"g"}, nil))
		require.NoError(t, s.UpdateGroups(ctx, z, []string{"g"}, nil))
		// Stand in for millions of down-votes, through the documented key.
		require.NoError(t, b.Client.ZAddXX(ctx, key(b, "score"),
			redis.Z{Score: 0.5, Member: a}, redis.Z{Score: -1000, Member: z}).Err())

		page, err := s.GroupPage(ctx, "g", voting.ByScore, 1, 10)
		require.NoError(t, err)
		assert.Equal(t, []string{a, z}, ids(page))
		got, err := b.Client.ZScore(ctx, key(b, "cache:score:g"), z).Result()
		require.NoError(t, err)
		assert.Equal(t, -1000.0, got)
	})
}
