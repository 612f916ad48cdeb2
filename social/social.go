package social

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/near"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/queue"
)

// Client is the subset of go-redis this package uses: scripts, and
// pipelines for reads and for the per-user steps of a fan-out.
// *redis.Client, *redis.ClusterClient and *redis.Ring satisfy it. The
// [queue.Group] given to [New] has its own client.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd

	Do(ctx context.Context, args ...any) *redis.Cmd // TYPE, to name a key of another type
	HGetAll(ctx context.Context, key string) *redis.MapStringStringCmd
	ZRange(ctx context.Context, key string, start, stop int64) *redis.StringSliceCmd
	ZRevRange(ctx context.Context, key string, start, stop int64) *redis.StringSliceCmd
	ZScore(ctx context.Context, key, member string) *redis.FloatCmd
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)

	// The stream of statuses (Subscribe): SPUBLISH on a Cluster (whose
	// SSubscribe the package reaches through *redis.ClusterClient),
	// PUBLISH and SUBSCRIBE elsewhere.
	Publish(ctx context.Context, channel string, message any) *redis.IntCmd
	SPublish(ctx context.Context, channel string, message any) *redis.IntCmd
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

const (
	// MaxLoginLen is the longest login, in bytes.
	MaxLoginLen = 32
	// MaxNameLen is the longest display name, in bytes.
	MaxNameLen = 128
	// MaxStatusLen is the longest status message, in characters (runes).
	// A message must be valid UTF-8 and hold a non-space character.
	MaxStatusLen = 280
	// DefaultTimelineCap is how many statuses a profile or home timeline
	// keeps unless [WithTimelineCap] says otherwise (the book's
	// HOME_TIMELINE_SIZE).
	DefaultTimelineCap = 1000
	// MaxTimelineCap is the largest timeline cap.
	MaxTimelineCap = 10_000
	// DefaultFanoutBatch is how many followers one fan-out pass feeds
	// (each deferred task, and the first pass before [Network.Post]
	// returns unless [WithFirstPass] says otherwise) unless
	// [WithFanoutBatch] says otherwise (the book's POSTS_PER_PASS).
	DefaultFanoutBatch = 1000
	// MaxFanoutBatch is the largest fan-out batch.
	MaxFanoutBatch = 10_000
	// MaxPage is the most statuses or users one page read returns.
	MaxPage = 500
	// DefaultQueue is the queue of the [queue.Group] that deferred fan-out
	// and clean tasks go to unless [WithQueue] says otherwise.
	DefaultQueue = "social"
)

var (
	// ErrLoginTaken is returned by [Network.CreateUser] when a user with
	// the same login in any case exists.
	ErrLoginTaken = errors.New("social: login taken")
	// ErrNoUser is returned when a user does not exist.
	ErrNoUser = errors.New("social: no such user")
	// ErrNoStatus is returned by [Network.Delete] when the status does not
	// exist or is not the given user's.
	ErrNoStatus = errors.New("social: no such status")
)

var (
	//go:embed create.lua
	createLua string
	//go:embed post.lua
	postLua string
	//go:embed delete.lua
	deleteLua string
	//go:embed followed.lua
	followedLua string
	//go:embed follow.lua
	followLua string
	//go:embed unfollowed.lua
	unfollowedLua string
	//go:embed unfollow.lua
	unfollowLua string
	//go:embed precheck.lua
	precheckLua string
	//go:embed refill.lua
	refillLua string
	//go:embed fanout.lua
	fanoutLua string
	//go:embed deliver.lua
	deliverLua string
	//go:embed feed.lua
	feedLua string
	//go:embed bounds.lua
	boundsLua string
	//go:embed ranks.lua
	ranksLua string
	//go:embed clean.lua
	cleanLua string
	//go:embed home.lua
	homeLua string
	//go:embed seen.lua
	seenLua string
	//go:embed active.lua
	activeLua string
	//go:embed profile.lua
	profileLua string
	//go:embed copy.lua
	copyLua string
	//go:embed listcreate.lua
	listCreateLua string
	//go:embed listcheck.lua
	listCheckLua string
	//go:embed listed.lua
	listedLua string
	//go:embed listadd.lua
	listAddLua string
	//go:embed unlisted.lua
	unlistedLua string
	//go:embed listremove.lua
	listRemoveLua string
	//go:embed listpurge.lua
	listPurgeLua string
	//go:embed listdrop.lua
	listDropLua string
	//go:embed listgone.lua
	listGoneLua string
	//go:embed page.lua
	pageLua string

	createScript     = script.NewOnce("social create user", createLua)
	postScript       = script.NewOnce("social post", ranksLua+postLua)
	deleteScript     = script.NewOnce("social delete", deleteLua)
	followedScript   = script.NewOnce("social followed", followedLua)
	followScript     = script.NewOnce("social follow", followLua)
	unfollowedScript = script.NewOnce("social unfollowed", unfollowedLua)
	unfollowScript   = script.NewOnce("social unfollow", unfollowLua)
	refillScript     = script.New("social refill", refillLua)
	precheckScript   = script.New("social precheck", precheckLua)
	// feed (one server), deliver (elsewhere) and clean run in pipelines,
	// one call per group of targets (script.Send).
	deliverScript    = script.New("social deliver", fanoutLua+deliverLua)
	feedScript       = script.New("social feed", fanoutLua+feedLua)
	boundsScript     = script.New("social bounds", ranksLua+boundsLua)
	cleanScript      = script.New("social clean", cleanLua)
	homeScript       = script.New("social home", seenLua+homeLua)
	pageScript       = script.New("social page", seenLua+pageLua)
	activeScript     = script.New("social active", activeLua)
	profileScript    = script.New("social profile", profileLua)
	copyScript       = script.New("social copy", copyLua)
	listCreateScript = script.NewOnce("social create list", listCreateLua)
	listCheckScript  = script.New("social list check", listCheckLua)
	listedScript     = script.NewOnce("social listed", listedLua)
	listAddScript    = script.NewOnce("social add to list", listAddLua)
	unlistedScript   = script.NewOnce("social unlisted", unlistedLua)
	// unlisted.lua for DeleteList's member sides, pipelined (plain: see
	// DeleteList and "Lost replies" in doc.go).
	listedDropScript = script.New("social unlisted (delete list)", unlistedLua)
	listRemoveScript = script.NewOnce("social remove from list", listRemoveLua)
	listDropScript   = script.NewOnce("social delete list", listPurgeLua+listDropLua)
	listGoneScript   = script.New("social list members gone", listPurgeLua+listGoneLua)
)

// Option configures a [Network].
type Option func(*options)

type options struct {
	prefix string
	cap    int
	batch  int
	first  *int // nil: batch
	queue  string
	idle   time.Duration
	tomb   time.Duration
	// status cache (WithStatusCache): size 0 is off
	cacheSize  int
	cacheStale time.Duration
	cacheGiven bool
}

// WithPrefix sets the key prefix. Default: "social:".
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithTimelineCap sets how many statuses a profile or home timeline keeps,
// 1 to [MaxTimelineCap]. Default: [DefaultTimelineCap].
func WithTimelineCap(n int) Option { return func(o *options) { o.cap = n } }

// WithFanoutBatch sets how many followers one fan-out pass feeds, 1 to
// [MaxFanoutBatch]. Default: [DefaultFanoutBatch].
func WithFanoutBatch(n int) Option { return func(o *options) { o.batch = n } }

// WithFirstPass sets how many followers (and lists) [Network.Post] feeds
// before it returns, 0 to [MaxFanoutBatch]; the deferred tasks feed the
// rest, [WithFanoutBatch] at a time. Post's latency grows with it (one
// server: about 3 us of server time per follower). Default: the fan-out
// batch (the book's first pass of POSTS_PER_PASS).
func WithFirstPass(n int) Option { return func(o *options) { o.first = &n } }

// WithQueue names the queue of the [queue.Group] that deferred tasks go
// to. Default: [DefaultQueue].
func WithQueue(name string) Option { return func(o *options) { o.queue = name } }

// MaxInactiveAfter is the longest [WithInactiveAfter].
const MaxInactiveAfter = 365 * 24 * time.Hour

// WithInactiveAfter makes the fan-out skip the home timelines of users who
// have not read their home timeline (nor signed up) for d: such a timeline
// is dropped, and regenerated when its owner next reads it (see
// [ErrRegenerating]). 0, the default, feeds every timeline; else d is
// between a millisecond and [MaxInactiveAfter].
func WithInactiveAfter(d time.Duration) Option { return func(o *options) { o.idle = d } }

// DefaultTombstoneTTL is how long a follower keeps the tombstone of a
// deleted status cleaned from its timelines unless [WithTombstoneTTL] says
// otherwise; MinTombstoneTTL and MaxTombstoneTTL bound it.
const (
	DefaultTombstoneTTL = 24 * time.Hour
	MinTombstoneTTL     = time.Minute
	MaxTombstoneTTL     = 30 * 24 * time.Hour
)

// WithTombstoneTTL sets how long a tombstone is kept: the tombstone that
// the clean of a deleted status leaves at each follower (and list) it
// cleans, so that a fan-out of the status still running skips that
// timeline. It bounds how late a fan-out step may reach Redis: a feed of a
// deleted status that reaches a follower more than d after the fan-out
// read that the status existed can put it back into that timeline on a
// Cluster or Ring (pages still skip it, as its HASH is gone, and the cap
// trims it); see "Deletes and tombstones" in the package doc. A follower
// keeps the tombstones of the deletes cleaned from its timelines in the
// last d, however many. d is between [MinTombstoneTTL] and
// [MaxTombstoneTTL]. Default: [DefaultTombstoneTTL].
func WithTombstoneTTL(d time.Duration) Option { return func(o *options) { o.tomb = d } }

// MaxStatusCache is the largest [WithStatusCache] size, and
// MaxStatusCacheStale its longest max staleness.
const (
	MaxStatusCache      = near.MaxSize
	MaxStatusCacheStale = 24 * time.Hour
)

// WithStatusCache gives the Network an in-process cache of at most size
// statuses (1 to [MaxStatusCache]), each kept at most maxStale (1ms to
// [MaxStatusCacheStale]): a page whose statuses are all cached is one round
// trip (the timeline's ZREVRANGE). A status never changes once posted; a
// [Network.Delete] publishes its ID from its script, and every Network
// with a status cache on the same prefix drops it when it hears it: a
// deleted status can be shown by another process until then (the Pub/Sub
// delay), and never later than maxStale after it was read. See "Status
// cache" in the package doc. Call [Network.Close] to stop the cache's
// subscription. A *redis.Ring is refused (a message reaches one shard's
// subscribers).
func WithStatusCache(size int, maxStale time.Duration) Option {
	return func(o *options) { o.cacheSize, o.cacheStale, o.cacheGiven = size, maxStale, true }
}

// Network is a social network: users, statuses, timelines and follows. It
// is safe for concurrent use.
type Network struct {
	rdb   Client
	tasks *queue.Group
	ks    keys.Space
	cap   int
	batch int
	first int // followers fed by Post itself
	queue string
	idle  time.Duration
	// tombTTL is how long tombstones are kept (WithTombstoneTTL).
	tombTTL time.Duration
	near    *near.Cache // the status cache (WithStatusCache), or nil
}

// New returns a Network on rdb whose deferred fan-out and clean tasks go
// to tasks (a [queue.Group]; run a [queue.Worker] with the handlers of
// [Network.Handle] to carry them out). It returns an error for a nil
// client or group, a prefix holding '{' or '}', or an option out of range.
func New(rdb Client, tasks *queue.Group, opts ...Option) (*Network, error) {
	o := options{prefix: "social:", cap: DefaultTimelineCap, batch: DefaultFanoutBatch, queue: DefaultQueue, tomb: DefaultTombstoneTTL}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("social: new: %w", err)
	}
	switch {
	case rdb == nil:
		return nil, errors.New("social: new: nil client")
	case tasks == nil:
		return nil, errors.New("social: new: nil queue group")
	case o.cap < 1 || o.cap > MaxTimelineCap:
		return nil, fmt.Errorf("social: new: timeline cap %d: must be between 1 and %d", o.cap, MaxTimelineCap)
	case o.batch < 1 || o.batch > MaxFanoutBatch:
		return nil, fmt.Errorf("social: new: fan-out batch %d: must be between 1 and %d", o.batch, MaxFanoutBatch)
	case o.first != nil && (*o.first < 0 || *o.first > MaxFanoutBatch):
		return nil, fmt.Errorf("social: new: first pass %d: must be between 0 and %d", *o.first, MaxFanoutBatch)
	case o.queue == "":
		return nil, errors.New("social: new: queue name: empty name")
	case o.idle != 0 && (o.idle < time.Millisecond || o.idle > MaxInactiveAfter):
		return nil, fmt.Errorf("social: new: inactive after %v: must be 0 or between 1ms and %v", o.idle, MaxInactiveAfter)
	case o.tomb < MinTombstoneTTL || o.tomb > MaxTombstoneTTL:
		return nil, fmt.Errorf("social: new: tombstone TTL %v: must be between %v and %v", o.tomb, MinTombstoneTTL, MaxTombstoneTTL)
	case o.cacheGiven && (o.cacheSize < 1 || o.cacheSize > MaxStatusCache):
		return nil, fmt.Errorf("social: new: status cache size %d: must be between 1 and %d", o.cacheSize, MaxStatusCache)
	case o.cacheGiven && (o.cacheStale < time.Millisecond || o.cacheStale > MaxStatusCacheStale):
		return nil, fmt.Errorf("social: new: status cache max staleness %v: must be between 1ms and %v", o.cacheStale, MaxStatusCacheStale)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("social: new: %w", err)
	}
	first := o.batch
	if o.first != nil {
		first = *o.first
	}
	n := &Network{rdb: rdb, tasks: tasks, ks: keys.New(o.prefix), cap: o.cap, batch: o.batch, first: first, queue: o.queue, idle: o.idle, tombTTL: o.tomb}
	if o.cacheGiven {
		sub, err := near.SubscriberOf(rdb)
		if err != nil {
			return nil, fmt.Errorf("social: new: status cache: %w", err)
		}
		c, err := near.New(near.Config{Size: o.cacheSize, MaxStale: o.cacheStale, Channel: n.cacheChannel(), Name: "social"})
		if err != nil {
			return nil, fmt.Errorf("social: new: %w", err)
		}
		n.near = c
		c.Start(sub)
	}
	return n, nil
}

// cacheChannel is the Pub/Sub channel of the status cache's invalidations:
// <prefix>{statuses}:near (a channel, not a key).
func (n *Network) cacheChannel() string { return n.ks.Key("statuses", "near") }

// cacheArgs returns the last two arguments of delete.lua: the invalidation
// channel and message of status id. A Network without a status cache
// publishes too, so that other processes' caches hear its Deletes.
func (n *Network) cacheArgs(id string) (channel, message string) {
	if n.near == nil {
		return n.cacheChannel(), near.Message(id)
	}
	return n.near.Channel(), n.near.Message(id)
}

// StatusCacheReady reports whether n's status cache ([WithStatusCache]) is
// in use: its subscription to invalidations is confirmed. It is false
// until the first subscription is confirmed (shortly after New), while a
// lost one is being made again, after [Network.Close], and without
// WithStatusCache; pages then read every status from Redis.
func (n *Network) StatusCacheReady() bool { return n.near != nil && n.near.Ready() }

// Close stops the status cache ([WithStatusCache]): its subscriber
// goroutine ends (Close waits for it) and pages no longer use it. The
// Network still works without it, and its Deletes still publish
// invalidations. It returns nil; calling it again, or on a Network without
// a status cache, does nothing. Stream subscriptions ([Network.Subscribe])
// end with their own contexts, not with Close.
func (n *Network) Close() error {
	if n.near != nil {
		n.near.Stop()
	}
	return nil
}

// ID returns the user ID of login: the login in lower case. It does not
// check the login.
func ID(login string) string { return strings.ToLower(login) }

func checkLogin(login string) error {
	if login == "" {
		return errors.New("login: empty")
	}
	if len(login) > MaxLoginLen {
		return fmt.Errorf("login %.40q: longer than %d bytes", login, MaxLoginLen)
	}
	for _, r := range login {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return fmt.Errorf("login %q: only ASCII letters, digits, '_', '.' and '-' are allowed", login)
		}
	}
	return nil
}

// checkUID checks a user ID given to a call (a login in any case is
// accepted and folded to its ID).
func checkUID(what, uid string) (string, error) {
	if err := checkLogin(uid); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return ID(uid), nil
}

// CreateUser creates a user with login and display name name in one round
// trip, and returns its ID, the login in lower case. Logins are unique in
// any case: it returns [ErrLoginTaken] if the ID is taken. A login holds 1
// to [MaxLoginLen] ASCII letters, digits, '_', '.' or '-'; a name is valid
// UTF-8 of at most [MaxNameLen] bytes; anything else is an error naming it,
// and nothing is written. No lock is taken: the user's HASH is its ID's,
// so one script checks and creates it atomically.
func (n *Network) CreateUser(ctx context.Context, login, name string) (string, error) {
	if err := checkLogin(login); err != nil {
		return "", fmt.Errorf("social: create user: %w", err)
	}
	if len(name) > MaxNameLen || !utf8.ValidString(name) {
		return "", fmt.Errorf("social: create user %q: name: must be valid UTF-8 of at most %d bytes", login, MaxNameLen)
	}
	uid := ID(login)
	v, err := createScript.RunOnce(ctx, n.rdb, n.onceKey(uid), []string{n.userKey(uid)}, login, name)
	if err != nil {
		err = refusal(err)
		return "", fmt.Errorf("social: create user %q: %w", login, err)
	}
	if created, err := createScript.AsInt64(v); err != nil || created != 1 {
		return "", fmt.Errorf("social: create user %q: script %s: unexpected reply %v", login, createScript.Name(), v)
	}
	return uid, nil
}

// User is a user's record.
type User struct {
	ID, Login, Name string
	Followers       int64 // users following this one
	Following       int64 // users this one follows
	Posts           int64 // statuses posted and not deleted
	Signup          time.Time
}

// User returns the record of user uid in one round trip, or [ErrNoUser].
func (n *Network) User(ctx context.Context, uid string) (User, error) {
	uid, err := checkUID("user", uid)
	if err != nil {
		return User{}, fmt.Errorf("social: user: %w", err)
	}
	h, err := n.rdb.HGetAll(ctx, n.userKey(uid)).Result()
	if err != nil {
		return User{}, fmt.Errorf("social: user %q: %w", uid, script.WrongType(ctx, n.rdb, err, n.userKey(uid), "social user", "hash"))
	}
	if len(h) == 0 {
		return User{}, fmt.Errorf("social: user %q: %w", uid, ErrNoUser)
	}
	u := User{ID: uid, Login: h["login"], Name: h["name"]}
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"followers", &u.Followers}, {"following", &u.Following}, {"posts", &u.Posts}} {
		if *f.dst, err = strconv.ParseInt(h[f.name], 10, 64); err != nil {
			return User{}, fmt.Errorf("social: user %q: field %s %q: not an integer", uid, f.name, h[f.name])
		}
	}
	if ms, err := strconv.ParseInt(h["signup"], 10, 64); err == nil {
		u.Signup = time.UnixMilli(ms)
	}
	return u, nil
}

// Status is one status message.
type Status struct {
	ID      string // <author's ID>:<n>
	UID     string // author's ID
	Login   string // author's login as created
	Message string
	Posted  time.Time // server time, ms; later than the author's previous status
	// Location is where it was posted from ([At]), or nil.
	Location *Point
}

// Point is a place on Earth in decimal degrees.
type Point struct{ Lat, Lon float64 }

func (p *Point) check() error {
	if !(p.Lat >= -90 && p.Lat <= 90 && p.Lon >= -180 && p.Lon <= 180) {
		return fmt.Errorf("location %v,%v: want latitude -90..90 and longitude -180..180", p.Lat, p.Lon)
	}
	return nil
}

// parsePoint parses the lat and lon fields of a status, or returns nil.
func parsePoint(lat, lon string) *Point {
	la, err1 := strconv.ParseFloat(lat, 64)
	lo, err2 := strconv.ParseFloat(lon, 64)
	if err1 != nil || err2 != nil {
		return nil
	}
	return &Point{la, lo}
}

// PostOption configures one [Network.Post].
type PostOption func(*postOptions)

type postOptions struct{ at *Point }

// At records where a status was posted from (stream filters select by
// location boxes).
func At(lat, lon float64) PostOption { return func(o *postOptions) { o.at = &Point{lat, lon} } }

// errNotFollowing is the refusal of unfollow.lua (Unfollow answers false)
// and of unfollowed.lua (Unfollow goes on to the follower's side).
var errNotFollowing = errors.New("social: not following")

// refusal maps the error replies of the package's scripts that refuse a
// call, having written nothing, to their sentinels.
func refusal(err error) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return err
	}
	code, _, _ := strings.Cut(rerr.Error(), " ")
	switch code {
	case "TAKEN":
		return ErrLoginTaken
	case "NOUSER":
		return ErrNoUser
	case "NOSTATUS":
		return ErrNoStatus
	case "NOTFOLLOWING":
		return errNotFollowing
	case "LISTTAKEN":
		return ErrListTaken
	case "NOLIST":
		return ErrNoList
	case "TOOMANYLISTS":
		return ErrTooManyLists
	case "NOTMEMBER":
		return errNotMember
	}
	return err
}

func checkMessage(msg string) error {
	switch {
	case !utf8.ValidString(msg):
		return errors.New("message: not valid UTF-8")
	case strings.TrimSpace(msg) == "":
		return errors.New("message: empty")
	case utf8.RuneCountInString(msg) > MaxStatusLen:
		return fmt.Errorf("message: %d characters, more than %d", utf8.RuneCountInString(msg), MaxStatusLen)
	}
	return nil
}

// checkStatusID checks a status ID and returns its author and number.
func checkStatusID(id string) (uid, num string, err error) {
	uid, num, ok := strings.Cut(id, ":")
	if !ok || checkLogin(uid) != nil || uid != ID(uid) || num == "" || len(num) > 19 || strings.Trim(num, "0123456789") != "" || num[0] == '0' {
		return "", "", fmt.Errorf("status ID %.60q: want <user ID>:<number>", id)
	}
	return uid, num, nil
}
