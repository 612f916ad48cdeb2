package voting

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

// Client is the subset of go-redis this package uses: scripts, one range
// query and pipelines. *redis.Client, *redis.ClusterClient and *redis.Ring
// satisfy it.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd

	ZRevRange(ctx context.Context, key string, start, stop int64) *redis.StringSliceCmd
	Pipeline() redis.Pipeliner
	Do(ctx context.Context, args ...any) *redis.Cmd // TYPE, to name a key of another type
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

const (
	// VoteScore is what one vote adds to (an up-vote) or takes from (a
	// down-vote) an article's score: a day in seconds divided by the 200
	// votes the book deems a day's worth of interest.
	VoteScore = 86400 / 200
	// VotingWindow is how long after its posting an article takes votes.
	VotingWindow = 7 * 24 * time.Hour
	// DefaultGroupCacheTTL is how long a group's page order is cached
	// unless [WithGroupCacheTTL] says otherwise.
	DefaultGroupCacheTTL = time.Minute
)

var (
	// ErrNoArticle means that the article does not exist (or its ID is not
	// one this package mints: a positive decimal integer).
	ErrNoArticle = errors.New("voting: no such article")
	// ErrVotingClosed means that the article was posted [VotingWindow] or
	// more ago, by the server's clock, so its votes can no longer be cast,
	// switched, withdrawn or read (its voters are forgotten).
	ErrVotingClosed = errors.New("voting: voting closed")
)

var (
	//go:embed post.lua
	postLua string
	//go:embed votable.lua
	votableLua string
	//go:embed vote.lua
	voteLua string
	//go:embed unvote.lua
	unvoteLua string
	//go:embed voteof.lua
	voteOfLua string
	//go:embed groups.lua
	groupsLua string
	//go:embed grouppage.lua
	groupPageLua string

	postScript      = script.NewOnce("voting post", postLua)
	voteScript      = script.NewOnce("voting vote", votableLua+voteLua)
	unvoteScript    = script.NewOnce("voting unvote", votableLua+unvoteLua)
	voteOfScript    = script.New("voting vote of", votableLua+voteOfLua)
	groupsScript    = script.NewOnce("voting groups", groupsLua)
	groupPageScript = script.New("voting group page", groupPageLua)
)

// Direction is the side of a vote: [Up] or [Down].
type Direction int

const (
	// Up is an up-vote: it adds [VoteScore] to the article's score.
	Up Direction = 1
	// Down is a down-vote: it takes [VoteScore] from the article's score.
	Down Direction = -1
)

// String returns "up" or "down".
func (d Direction) String() string {
	switch d {
	case Up:
		return "up"
	case Down:
		return "down"
	}
	return "Direction(" + strconv.Itoa(int(d)) + ")"
}

// Order is the order of a page of articles: [ByScore] or [ByTime].
type Order int

const (
	// ByScore ranks articles by score, highest first.
	ByScore Order = iota
	// ByTime ranks articles by post time, newest first.
	ByTime
)

// String returns "score" or "time".
func (o Order) String() string {
	switch o {
	case ByScore:
		return "score"
	case ByTime:
		return "time"
	}
	return "Order(" + strconv.Itoa(int(o)) + ")"
}

// Article is one posted article as stored in its hash, plus its score.
type Article struct {
	// ID is the article's ID, minted by [Site.Post].
	ID string
	// Title, Link and Poster are as given to [Site.Post].
	Title, Link, Poster string
	// Posted is the post time, by the server's clock.
	Posted time.Time
	// Votes counts the up-votes, the poster's own included; Downvotes the
	// down-votes.
	Votes, Downvotes int64
	// Score is the article's current score: the post time in Unix seconds
	// plus [VoteScore] × (Votes − Downvotes).
	Score float64
}

// Option configures a [Site].
type Option func(*options)

type options struct {
	prefix   string
	cacheTTL time.Duration
}

// WithPrefix sets the key prefix. Default: "voting:". It must not contain
// '{' or '}', which would break the keys' Cluster hash tag.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithGroupCacheTTL sets how long [Site.GroupPage] caches a group's order
// before computing it again. Default: [DefaultGroupCacheTTL] (the book's
// 60 s). It is rounded down to whole milliseconds and must be at least 1ms.
func WithGroupCacheTTL(d time.Duration) Option { return func(o *options) { o.cacheTTL = d } }

// Site is one voting site: its articles, their votes and groups. It is safe
// for concurrent use, and any number of Sites (in any number of processes)
// with the same name and prefix share the same articles.
type Site struct {
	rdb      Client
	name     string
	cacheTTL int64 // milliseconds
	keys     keySet
}

// New returns the site called site, whose keys all carry the hash tag
// {site} (see the package doc's Cluster notes). Nothing reaches Redis.
//
// New returns an error naming the bad argument if site is empty or holds
// '{' or '}' (which could make two sites share a key), the prefix holds
// '{' or '}', or the group cache TTL is less than a millisecond. It panics
// if rdb is nil.
func New(rdb Client, site string, opts ...Option) (*Site, error) {
	if rdb == nil {
		panic("voting: New with a nil client")
	}
	o := options{prefix: "voting:", cacheTTL: DefaultGroupCacheTTL}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("voting: new: %w", err)
	}
	if err := keys.CheckEntity("site", site); err != nil {
		return nil, fmt.Errorf("voting: new: %w", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("voting: new %q: %w", site, err)
	}
	if o.cacheTTL < time.Millisecond {
		return nil, fmt.Errorf("voting: new %q: group cache TTL %v: must be at least 1ms", site, o.cacheTTL)
	}
	return &Site{
		rdb:      rdb,
		name:     site,
		cacheTTL: o.cacheTTL.Milliseconds(),
		keys:     newKeySet(keys.New(o.prefix), site),
	}, nil
}

// Name returns the site's name, its keys' hash tag.
func (s *Site) Name() string { return s.name }

// Post posts an article and returns its ID, in one round trip: it mints the
// ID (a counter), stores the article, indexes it by time and score, and
// counts the poster's own up-vote, all in one script timed by the server's
// clock. A re-send of the call by go-redis (after a lost reply) is answered
// from a record of the first run, so one article is posted and its ID
// returned (see the package doc's "Lost replies"); when no reply came at
// all, the error wraps [ria.ErrOutcomeUnknown] and the article may or may
// not have been posted.
//
// It returns an error naming the argument, and writes nothing, if poster,
// title or link is empty. A key of the site holding something this package
// did not write there (another type, a counter that is not a non-negative
// integer or lags behind the articles) is a [*ria.KeyError], and nothing is
// written.
func (s *Site) Post(ctx context.Context, poster, title, link string) (string, error) {
	for _, a := range []struct{ name, v string }{{"poster", poster}, {"title", title}, {"link", link}} {
		if a.v == "" {
			return "", fmt.Errorf("voting: post: %s: empty", a.name)
		}
	}
	v, err := postScript.RunOnce(ctx, s.rdb, s.keys.onceKey(),
		[]string{s.keys.seq, s.keys.time, s.keys.score, s.keys.articlePrefix, s.keys.votedPrefix},
		title, link, poster, VoteScore, int64(VotingWindow/time.Second))
	if err != nil {
		return "", fmt.Errorf("voting: post: %w", err)
	}
	id, ok := v.(string)
	if !ok || checkID(id) != nil {
		return "", fmt.Errorf("voting: post: script %s: want an article ID, got %v", postScript.Name(), v)
	}
	return id, nil
}

// Vote records user's vote in direction d on article id, in one round trip
// (one script), and reports whether it counted. A user holds at most one
// vote per article:
//
//   - a first vote counts: it adds 1 to the article's votes (or downvotes)
//     and moves its score by [VoteScore];
//   - a vote on the other side than the user's standing one counts: it
//     moves the user's vote, so votes and downvotes change by 1 each and the
//     score by 2 × [VoteScore];
//   - a vote on the side the user already voted does not count and changes
//     nothing.
//
// The poster's own up-vote is a vote like any other. A re-send of the call
// by go-redis (after a lost reply) is answered from a record of the first
// run: a vote that counted says true (see the package doc's "Lost
// replies"). When no reply came at all, the error wraps
// [ria.ErrOutcomeUnknown]: the vote may or may not have counted (voting
// again the same way is harmless: it cannot count twice).
//
// Vote returns [ErrNoArticle] if there is no article id, and
// [ErrVotingClosed] if it was posted [VotingWindow] or more ago by the
// server's clock; in both cases nothing is written. An id that is not a
// positive decimal integer cannot name an article: it gets [ErrNoArticle]
// without reaching Redis. An empty user or a d other than [Up] or [Down] is
// an error naming it, and does not reach Redis either. A key of the article
// or the site holding something this package did not write there is a
// [*ria.KeyError], and nothing is written.
func (s *Site) Vote(ctx context.Context, id, user string, d Direction) (bool, error) {
	if err := checkID(id); err != nil {
		return false, fmt.Errorf("voting: vote on article %q: %w", id, err)
	}
	if user == "" {
		return false, fmt.Errorf("voting: vote on article %q: user: empty", id)
	}
	if d != Up && d != Down {
		return false, fmt.Errorf("voting: vote on article %q: direction %v: must be Up or Down", id, d)
	}
	v, err := voteScript.RunOnce(ctx, s.rdb, s.keys.onceKey(),
		[]string{s.keys.time, s.keys.score, s.keys.articleKey(id), s.keys.votedKey(id), s.keys.downvotedKey(id)},
		id, user, d.String(), VoteScore, int64(VotingWindow/time.Second))
	if err != nil {
		return false, fmt.Errorf("voting: vote on article %q: %w", id, refusal(err))
	}
	r, err := voteScript.AsInt64(v)
	switch {
	case err != nil:
		return false, fmt.Errorf("voting: vote on article %q: %w", id, err)
	case r < 0 || r > 2:
		return false, fmt.Errorf("voting: vote on article %q: script %s: unexpected reply %d", id, voteScript.Name(), r)
	}
	return r > 0, nil
}

// Unvote withdraws user's vote on article id, in one round trip (one
// script), and reports whether there was one to withdraw. It undoes
// exactly what the vote did: an up-vote takes 1 from the article's votes
// and [VoteScore] from its score, a down-vote takes 1 from its downvotes
// and gives the [VoteScore] back, and the user leaves the voters' set, free
// to vote again either way. The poster's own up-vote can be withdrawn like
// any other. A user who holds no vote on the article gets false, and
// nothing changes.
//
// Votes can be withdrawn only while voting is open, the [VotingWindow] in
// which [Site.Vote] takes them: the voters' sets expire when it closes (as
// in the book), so who voted, and thus what to withdraw, is no longer
// known, and the counters and score are final. Unvote then returns
// [ErrVotingClosed] for every user, voter or not.
//
// A re-send of the call by go-redis (after a lost reply) is answered from a
// record of the first run: a vote withdrawn says true, never "had not
// voted" (see the package doc's "Lost replies"). When no reply came at
// all, the error wraps [ria.ErrOutcomeUnknown]: the vote may or may not
// have been withdrawn (withdrawing again is harmless: [Site.VoteOf] or a
// second Unvote tells).
//
// Unvote returns [ErrNoArticle] if there is no article id, and
// [ErrVotingClosed] if it was posted [VotingWindow] or more ago by the
// server's clock; in both cases nothing is written. Its input rules are
// [Site.Vote]'s: an id that is not a positive decimal integer gets
// [ErrNoArticle], and an empty user is an error naming it, neither
// reaching Redis. A key of the article or the site holding something this
// package did not write there is a [*ria.KeyError], and nothing is written.
func (s *Site) Unvote(ctx context.Context, id, user string) (bool, error) {
	if err := checkID(id); err != nil {
		return false, fmt.Errorf("voting: unvote on article %q: %w", id, err)
	}
	if user == "" {
		return false, fmt.Errorf("voting: unvote on article %q: user: empty", id)
	}
	v, err := unvoteScript.RunOnce(ctx, s.rdb, s.keys.onceKey(),
		[]string{s.keys.time, s.keys.score, s.keys.articleKey(id), s.keys.votedKey(id), s.keys.downvotedKey(id)},
		id, user, VoteScore, int64(VotingWindow/time.Second))
	if err != nil {
		return false, fmt.Errorf("voting: unvote on article %q: %w", id, refusal(err))
	}
	r, err := unvoteScript.AsInt64(v)
	switch {
	case err != nil:
		return false, fmt.Errorf("voting: unvote on article %q: %w", id, err)
	case r < 0 || r > 2:
		return false, fmt.Errorf("voting: unvote on article %q: script %s: unexpected reply %d", id, unvoteScript.Name(), r)
	}
	return r > 0, nil
}

// VoteOf returns user's vote on article id while voting on it is open, in
// one round trip (one script, which writes nothing): [Up], [Down], or 0 if
// the user holds no vote (never voted, or withdrew it with [Site.Unvote]).
// The poster holds an up-vote from the start. A UI shows its vote buttons'
// state from it.
//
// VoteOf returns [ErrNoArticle] if there is no article id, and
// [ErrVotingClosed] once voting on it has closed ([VotingWindow] after
// posting, by the server's clock): the voters' sets expire then, so a 0
// would claim a user did not vote when that is no longer known; a UI shows
// the buttons disabled. Its input rules are [Site.Vote]'s: an id that is
// not a positive decimal integer gets [ErrNoArticle], and an empty user is
// an error naming it, neither reaching Redis. A key holding something this
// package did not write there is a [*ria.KeyError].
func (s *Site) VoteOf(ctx context.Context, id, user string) (Direction, error) {
	if err := checkID(id); err != nil {
		return 0, fmt.Errorf("voting: vote of %q on article %q: %w", user, id, err)
	}
	if user == "" {
		return 0, fmt.Errorf("voting: vote of %q on article %q: user: empty", user, id)
	}
	v, err := voteOfScript.Run(ctx, s.rdb,
		[]string{s.keys.time, s.keys.votedKey(id), s.keys.downvotedKey(id)},
		id, user, int64(VotingWindow/time.Second))
	if err != nil {
		return 0, fmt.Errorf("voting: vote of %q on article %q: %w", user, id, refusal(err))
	}
	r, err := voteOfScript.AsInt64(v)
	switch {
	case err != nil:
		return 0, fmt.Errorf("voting: vote of %q on article %q: %w", user, id, err)
	case r != 0 && Direction(r) != Up && Direction(r) != Down:
		return 0, fmt.Errorf("voting: vote of %q on article %q: script %s: unexpected reply %d", user, id, voteOfScript.Name(), r)
	}
	return Direction(r), nil
}

// refusal maps the refusals of the vote scripts (error replies NOARTICLE
// and VOTINGCLOSED) to [ErrNoArticle] and [ErrVotingClosed]; other errors
// come back as they are.
func refusal(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		switch code, _, _ := strings.Cut(rerr.Error(), " "); code {
		case "NOARTICLE":
			return ErrNoArticle
		case "VOTINGCLOSED":
			return ErrVotingClosed
		}
	}
	return err
}

// Get returns article id, in one round trip (HGETALL and ZSCORE
// pipelined). It returns [ErrNoArticle] if there is none.
func (s *Site) Get(ctx context.Context, id string) (*Article, error) {
	if err := checkID(id); err != nil {
		return nil, fmt.Errorf("voting: get article %q: %w", id, err)
	}
	as, err := s.fetch(ctx, []string{id})
	switch {
	case err != nil:
		return nil, fmt.Errorf("voting: get article %q: %w", id, err)
	case len(as) == 0:
		return nil, fmt.Errorf("voting: get article %q: %w", id, ErrNoArticle)
	}
	return &as[0], nil
}

// Page returns page number page (from 1) of the site's articles, size per
// page, in order o (the book's get_articles). It takes two round trips: one
// ZREVRANGE for the page's IDs, then one pipeline for their hashes and
// scores; one when the page is empty (past the last article). The two are
// not atomic: an article's counters and score are read just after its rank,
// so a vote in between can show a score that no longer matches the order.
//
// A page below 1, a size below 1 or an unknown o is an error naming it and
// does not reach Redis.
func (s *Site) Page(ctx context.Context, o Order, page, size int) ([]Article, error) {
	start, stop, err := pageRange(o, page, size)
	if err != nil {
		return nil, fmt.Errorf("voting: page: %w", err)
	}
	ids, err := s.rdb.ZRevRange(ctx, s.keys.orderKey(o), start, stop).Result()
	if err != nil {
		err = script.WrongType(ctx, s.rdb, err, s.keys.orderKey(o), "voting "+o.String()+" index", "zset")
		return nil, fmt.Errorf("voting: page %d by %v: %w", page, o, err)
	}
	as, err := s.fetch(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("voting: page %d by %v: %w", page, o, err)
	}
	return as, nil
}

// UpdateGroups adds article id to the groups in add and removes it from
// those in remove (the book's add_remove_groups), in one round trip (one
// script). Adding to a group the article is in, or removing it from one it
// is not in, is a no-op. Every group whose membership changes has its cached
// pages dropped, so the next [Site.GroupPage] sees the change at once.
//
// A re-send of the call by go-redis (after a lost reply) adds and removes
// the same members again, which changes nothing: the script is naturally
// idempotent. When no reply came at all, the error wraps
// [ria.ErrOutcomeUnknown]: the update may or may not have been made
// (calling again is harmless).
//
// It returns [ErrNoArticle], writing nothing, if there is no article id. An
// empty group name, or a group in both add and remove, is an error naming
// it and does not reach Redis; so is nothing at all to do. A key holding
// something this package did not write there is a [*ria.KeyError], and
// nothing is written.
func (s *Site) UpdateGroups(ctx context.Context, id string, add, remove []string) error {
	if err := checkID(id); err != nil {
		return fmt.Errorf("voting: update groups of article %q: %w", id, err)
	}
	if len(add)+len(remove) == 0 {
		return fmt.Errorf("voting: update groups of article %q: no groups to add or remove", id)
	}
	adding := make(map[string]bool, len(add))
	groups := make([]string, 0, len(add)+len(remove))
	for _, g := range add {
		if g == "" {
			return fmt.Errorf("voting: update groups of article %q: group to add: empty", id)
		}
		if !adding[g] {
			adding[g] = true
			groups = append(groups, g)
		}
	}
	nadd := len(groups)
	removing := make(map[string]bool, len(remove))
	for _, g := range remove {
		switch {
		case g == "":
			return fmt.Errorf("voting: update groups of article %q: group to remove: empty", id)
		case adding[g]:
			return fmt.Errorf("voting: update groups of article %q: group %q: both added and removed", id, g)
		case !removing[g]:
			removing[g] = true
			groups = append(groups, g)
		}
	}
	ks := make([]string, 0, 1+3*len(groups))
	ks = append(ks, s.keys.time)
	for _, g := range groups {
		ks = append(ks, s.keys.groupKey(g), s.keys.cacheKey(ByScore, g), s.keys.cacheKey(ByTime, g))
	}
	v, err := groupsScript.RunOnce(ctx, s.rdb, s.keys.onceKey(), ks, id, nadd)
	if err == nil {
		_, err = groupsScript.AsInt64(v)
	}
	if err != nil {
		return fmt.Errorf("voting: update groups of article %q: %w", id, refusal(err))
	}
	return nil
}

// GroupPage returns page number page (from 1) of the articles in group,
// size per page, in order o (the book's get_group_articles). The group's
// order is cached on the server: when the cache is missing, the same script
// that reads the page computes it (ZINTERSTORE of the group with the site's
// score or time index) and keeps it for the group cache TTL (see
// [WithGroupCacheTTL]); [Site.UpdateGroups] drops it when the group
// changes. Votes cast meanwhile change the articles' Score at once but
// their order only when the cache expires.
//
// It takes two round trips: the script, then one pipeline for the
// articles' hashes and scores; one when the page is empty. A group that
// does not exist is empty. An empty group name, a page below 1, a size
// below 1 or an unknown o is an error naming it and does not reach Redis.
// A cache, group or index key holding something this package did not
// write there is a [*ria.KeyError], and nothing is written.
func (s *Site) GroupPage(ctx context.Context, group string, o Order, page, size int) ([]Article, error) {
	if group == "" {
		return nil, errors.New("voting: group page: group: empty")
	}
	start, stop, err := pageRange(o, page, size)
	if err != nil {
		return nil, fmt.Errorf("voting: group page %q: %w", group, err)
	}
	v, err := groupPageScript.Run(ctx, s.rdb,
		[]string{s.keys.cacheKey(o, group), s.keys.groupKey(group), s.keys.orderKey(o)},
		s.cacheTTL, start, stop, "voting "+o.String()+" index")
	if err != nil {
		return nil, fmt.Errorf("voting: group page %q %d by %v: %w", group, page, o, err)
	}
	ids, err := groupPageScript.AsStrings(v)
	if err != nil {
		return nil, fmt.Errorf("voting: group page %q %d by %v: %w", group, page, o, err)
	}
	as, err := s.fetch(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("voting: group page %q %d by %v: %w", group, page, o, err)
	}
	return as, nil
}

// fetch reads the articles ids in one pipeline (none if ids is empty), in
// the order given, skipping any that does not exist.
func (s *Site) fetch(ctx context.Context, ids []string) ([]Article, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	hashes := make([]*redis.MapStringStringCmd, len(ids))
	scores := make([]*redis.FloatCmd, len(ids))
	for i, id := range ids {
		hashes[i] = pipe.HGetAll(ctx, s.keys.articleKey(id))
		scores[i] = pipe.ZScore(ctx, s.keys.score, id)
	}
	// Exec reports the first failed command, and a missing score is
	// redis.Nil, which may come before a wrong-type hash: look for the
	// first other failure.
	_, err := pipe.Exec(ctx)
	if errors.Is(err, redis.Nil) {
		err = nil
		for i := range ids {
			if e := hashes[i].Err(); e != nil {
				err = e
				break
			}
			if e := scores[i].Err(); e != nil && !errors.Is(e, redis.Nil) {
				err = e
				break
			}
		}
	}
	if err != nil {
		reads := make([]script.Read, 0, 2*len(ids))
		for i, id := range ids {
			reads = append(reads,
				script.Read{Cmd: hashes[i], Key: s.keys.articleKey(id), Role: "voting article", Want: "hash"},
				script.Read{Cmd: scores[i], Key: s.keys.score, Role: "voting score index", Want: "zset"})
		}
		return nil, script.PipeWrongType(ctx, s.rdb, err, reads...)
	}
	out := make([]Article, 0, len(ids))
	for i, id := range ids {
		h, err := hashes[i].Result()
		if err != nil {
			return nil, err
		}
		if len(h) == 0 {
			continue // not (or no longer) there
		}
		a, err := s.parseArticle(id, h)
		if err != nil {
			return nil, err
		}
		switch score, err := scores[i].Result(); {
		case err == nil:
			a.Score = score
		case !errors.Is(err, redis.Nil):
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// parseArticle decodes the hash h of article id; a field it cannot parse
// is a *ria.KeyError matching ria.ErrCorrupt.
func (s *Site) parseArticle(id string, h map[string]string) (Article, error) {
	a := Article{ID: id, Title: h["title"], Link: h["link"], Poster: h["poster"]}
	corrupt := func(field, want string) error {
		return &ria.KeyError{Role: "voting article", Key: s.keys.articleKey(id),
			Got: fmt.Sprintf("%s %.40q", field, h[field]), Want: field + " " + want, Err: ria.ErrCorrupt}
	}
	var err error
	if a.Posted, err = parseUnix(h["time"]); err != nil {
		return Article{}, corrupt("time", "in Unix seconds")
	}
	if a.Votes, err = strconv.ParseInt(h["votes"], 10, 64); err != nil {
		return Article{}, corrupt("votes", "an integer")
	}
	if a.Downvotes, err = strconv.ParseInt(h["downvotes"], 10, 64); err != nil {
		return Article{}, corrupt("downvotes", "an integer")
	}
	return a, nil
}

// parseUnix parses Unix seconds with a decimal fraction ("1700000000.123456")
// to the microsecond, exactly.
func parseUnix(s string) (time.Time, error) {
	whole, frac, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	if len(frac) > 6 {
		frac = frac[:6]
	}
	var usec int64
	if frac != "" {
		if usec, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil || usec < 0 {
			return time.Time{}, errors.New("malformed fraction")
		}
	}
	if sec < 0 {
		usec = -usec
	}
	return time.Unix(sec, usec*1000), nil
}

// checkID reports whether id can be an article ID: IDs are minted by a
// counter, so anything but a positive decimal integer cannot exist.
func checkID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty ID", ErrNoArticle)
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != id {
		return fmt.Errorf("%w: malformed ID", ErrNoArticle)
	}
	return nil
}

// pageRange returns the ranks of page number page of size articles.
func pageRange(o Order, page, size int) (start, stop int64, err error) {
	switch {
	case o != ByScore && o != ByTime:
		return 0, 0, fmt.Errorf("order %v: must be ByScore or ByTime", o)
	case page < 1:
		return 0, 0, fmt.Errorf("page %d: must be at least 1", page)
	case size < 1:
		return 0, 0, fmt.Errorf("page size %d: must be at least 1", size)
	case int64(page-1) > (math.MaxInt64-int64(size))/int64(size):
		return 0, 0, fmt.Errorf("page %d of size %d: beyond any rank", page, size)
	}
	start = int64(page-1) * int64(size)
	return start, start + int64(size) - 1, nil
}
