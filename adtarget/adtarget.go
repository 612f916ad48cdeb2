package adtarget

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/search"
)

var (
	//go:embed common.lua
	commonLua string
	//go:embed index.lua
	indexLua string
	//go:embed remove.lua
	removeLua string
	//go:embed target.lua
	targetLua string
	//go:embed click.lua
	clickLua string
	//go:embed stats.lua
	statsLua string
	//go:embed ads.lua
	adsLua string

	indexScript  = script.NewOnce("adtarget index", commonLua+indexLua)
	removeScript = script.NewOnce("adtarget remove", commonLua+removeLua)
	targetScript = script.NewOnce("adtarget target", script.BytesLua+commonLua+targetLua)
	clickScript  = script.NewOnce("adtarget click", commonLua+clickLua)
	statsScript  = script.New("adtarget stats", commonLua+statsLua)
	adsScript    = script.New("adtarget ads", commonLua+adsLua)
)

// Limits of what a Targeter accepts.
const (
	// MaxNameBytes bounds an ad ID, a location and a word.
	MaxNameBytes = 256
	// MaxLocations bounds the locations of an ad or a request.
	MaxLocations = 100
	// MaxWords bounds the distinct words of an ad's or a page's content.
	MaxWords = 1000
	// MaxContentBytes bounds an ad's or a page's content.
	MaxContentBytes = 64 << 10
	// MaxValue bounds a bid value.
	MaxValue = 1e6
	// MaxAdsPage bounds the n of [Targeter.Ads].
	MaxAdsPage = 10000
	// DefaultMatchTTL is how long a targeting waits for its click (the
	// book's 900 s); see [WithMatchTTL].
	DefaultMatchTTL = 15 * time.Minute
)

var (
	// ErrInvalid means a malformed argument: an empty or long ID or
	// location, no location, an unknown bid type, a value that is not a
	// positive finite number up to [MaxValue], content over the limits.
	ErrInvalid = errors.New("adtarget: invalid argument")
	// ErrUnknownAd means the ad is not indexed.
	ErrUnknownAd = errors.New("adtarget: unknown ad")
	// ErrNotCPA means an action recorded on an ad that is not paid per
	// action.
	ErrNotCPA = errors.New("adtarget: action on an ad that is not CPA")
	// ErrNoTargeting means a click or an action whose targeting ID is no
	// live targeting of the ad: never served, of another ad, or older than
	// the match TTL.
	ErrNoTargeting = errors.New("adtarget: no live targeting of the ad")
)

// Bid is how an ad pays.
type Bid int

// The bid types of the book.
const (
	// CPC pays per click: eCPM = 1000 × value × clicks / views.
	CPC Bid = iota + 1
	// CPA pays per action: eCPM = 1000 × value × actions / views.
	CPA
	// CPM pays per thousand views: eCPM = value.
	CPM
)

var bidNames = map[Bid]string{CPC: "cpc", CPA: "cpa", CPM: "cpm"}

// String returns "cpc", "cpa" or "cpm".
func (b Bid) String() string {
	if s, ok := bidNames[b]; ok {
		return s
	}
	return "Bid(" + strconv.Itoa(int(b)) + ")"
}

func parseBid(s string) (Bid, bool) {
	for b, n := range bidNames {
		if n == s {
			return b, true
		}
	}
	return 0, false
}

// Client is the subset of go-redis this package uses. *redis.Client,
// *redis.ClusterClient and *redis.Ring satisfy it.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// Option configures a [Targeter].
type Option func(*options)

type options struct {
	prefix   string
	analyzer search.Analyzer
	matchTTL time.Duration
}

// WithPrefix sets the key prefix. Default: "adtarget:".
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithAnalyzer sets how content is split into words, for ads and pages
// alike. Default: the search package's standard analyzer (the book's
// tokenize, Unicode-aware, with its stop words).
func WithAnalyzer(a search.Analyzer) Option { return func(o *options) { o.analyzer = a } }

// WithMatchTTL sets how long a targeting (its ad and the words it matched)
// waits for its click, after which a click is refused with
// [ErrNoTargeting]; an action on a CPA ad may come that long after its
// last click. Default: [DefaultMatchTTL].
func WithMatchTTL(d time.Duration) Option { return func(o *options) { o.matchTTL = d } }

// Targeter indexes ads and picks the best one for each request, learning
// from views, clicks and actions. A Targeter is safe for concurrent use.
type Targeter struct {
	rdb      Client
	space    keys.Space
	name     string
	prefix   string // <prefix>{<name>}:
	analyzer search.Analyzer
	ttlMS    int64
}

// New returns the targeter name backed by rdb. It returns an error for an
// empty name, a name or prefix holding '{' or '}', a nil analyzer or a
// match TTL under a second. It panics if rdb is nil.
func New(rdb Client, name string, opts ...Option) (*Targeter, error) {
	if rdb == nil {
		panic("adtarget: nil client")
	}
	o := options{prefix: "adtarget:", analyzer: search.NewStandard(), matchTTL: DefaultMatchTTL}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("adtarget: %w", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("adtarget: %w", err)
	}
	if err := keys.CheckEntity("targeter name", name); err != nil {
		return nil, fmt.Errorf("adtarget: %w", err)
	}
	if o.analyzer == nil {
		return nil, fmt.Errorf("adtarget: %w: nil analyzer", ErrInvalid)
	}
	if o.matchTTL < time.Second {
		return nil, fmt.Errorf("adtarget: %w: match TTL %v under a second", ErrInvalid, o.matchTTL)
	}
	ks := keys.New(o.prefix)
	return &Targeter{rdb: rdb, space: ks, name: name, prefix: ks.Key(name, ""), analyzer: o.analyzer,
		ttlMS: o.matchTTL.Milliseconds()}, nil
}

// Ad is what [Targeter.Index] indexes.
type Ad struct {
	// ID is 1 to [MaxNameBytes] bytes of valid UTF-8.
	ID string
	// Locations are where the ad may be shown: 1 to [MaxLocations].
	Locations []string
	// Content is the ad's text: its words earn it a bonus on pages that
	// hold them.
	Content string
	// Bid is how it pays, Value how much (per click, action or thousand
	// views): a positive finite number up to [MaxValue].
	Bid   Bid
	Value float64
}

// Targeting is the result of a [Targeter.Target].
type Targeting struct {
	// ID identifies the targeting for [Targeter.Click] and
	// [Targeter.Action].
	ID int64
	// Ad is the ad picked.
	Ad string
	// ECPM is its estimated eCPM for this request, content bonus included.
	ECPM float64
}

// Stats is what an ad is and has learned.
type Stats struct {
	Bid   Bid
	Value float64
	// ECPM is the ad's base eCPM, as learned (the book's idx:ad:value:).
	ECPM                   float64
	Views, Clicks, Actions int64
}

func checkName(kind, s string) error {
	if s == "" || len(s) > MaxNameBytes || !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s %q: want 1 to %d bytes of UTF-8", ErrInvalid, kind, trunc(s), MaxNameBytes)
	}
	return nil
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// locArgs checks locations and appends them (deduplicated) with their
// count.
func locArgs(args []any, locations []string) ([]any, error) {
	if len(locations) == 0 {
		return nil, fmt.Errorf("%w: no location", ErrInvalid)
	}
	if len(locations) > MaxLocations {
		return nil, fmt.Errorf("%w: %d locations, at most %d", ErrInvalid, len(locations), MaxLocations)
	}
	seen := make(map[string]bool, len(locations))
	var ls []any
	for _, l := range locations {
		if err := checkName("location", l); err != nil {
			return nil, err
		}
		if !seen[l] {
			seen[l] = true
			ls = append(ls, l)
		}
	}
	return append(append(args, len(ls)), ls...), nil
}

// wordArgs analyzes content and appends its distinct words with their
// count.
func (t *Targeter) wordArgs(args []any, content string) ([]any, error) {
	if len(content) > MaxContentBytes {
		return nil, fmt.Errorf("%w: content of %d bytes, at most %d", ErrInvalid, len(content), MaxContentBytes)
	}
	seen := map[string]bool{}
	var ws []any
	for _, w := range t.analyzer.Terms(content) {
		if seen[w] {
			continue
		}
		if err := checkName("word", w); err != nil {
			return nil, err
		}
		seen[w] = true
		ws = append(ws, w)
	}
	if len(ws) > MaxWords {
		return nil, fmt.Errorf("%w: %d distinct words, at most %d", ErrInvalid, len(ws), MaxWords)
	}
	return append(append(args, len(ws)), ws...), nil
}

// Index indexes ad, or re-indexes it if its ID is indexed (replacing its
// locations, content and bid, and starting its learning over), in one
// atomic script: one round trip. Its first eCPM is the book's: its value
// times its type's clicks (actions) per thousand views so far, or its
// value before any. It reports whether the ad was new.
//
// Bad input (see [ErrInvalid]) is an error and nothing is written; a key
// holding another type is a *ria.KeyError and nothing is written. When
// every re-send lost its reply, the error wraps ria.ErrOutcomeUnknown.
func (t *Targeter) Index(ctx context.Context, ad Ad) (added bool, err error) {
	if err := checkName("ad ID", ad.ID); err != nil {
		return false, fmt.Errorf("adtarget: index: %w", err)
	}
	typ, ok := bidNames[ad.Bid]
	if !ok {
		return false, fmt.Errorf("adtarget: index %q: %w: unknown bid type %v", trunc(ad.ID), ErrInvalid, ad.Bid)
	}
	if !(ad.Value > 0 && ad.Value <= MaxValue) { // NaN fails too
		return false, fmt.Errorf("adtarget: index %q: %w: value %v not in (0, %g]", trunc(ad.ID), ErrInvalid, ad.Value, MaxValue)
	}
	args := []any{ad.ID, typ, strconv.FormatFloat(ad.Value, 'g', -1, 64)}
	if args, err = locArgs(args, ad.Locations); err == nil {
		args, err = t.wordArgs(args, ad.Content)
	}
	if err != nil {
		return false, fmt.Errorf("adtarget: index %q: %w", trunc(ad.ID), err)
	}
	v, err := indexScript.RunOnce(ctx, t.rdb, t.space.Once(t.name), []string{t.prefix}, args...)
	if err != nil {
		return false, fmt.Errorf("adtarget: index %q: %w", trunc(ad.ID), err)
	}
	n, err := indexScript.AsInt64(v)
	if err != nil {
		return false, fmt.Errorf("adtarget: index %q: %w", trunc(ad.ID), err)
	}
	return n == 1, nil
}

// Remove removes ad id and everything learned about it (the type
// statistics keep its views and clicks), in one atomic script, and
// reports whether it was indexed. Errors as [Targeter.Index].
func (t *Targeter) Remove(ctx context.Context, id string) (bool, error) {
	if err := checkName("ad ID", id); err != nil {
		return false, fmt.Errorf("adtarget: remove: %w", err)
	}
	v, err := removeScript.RunOnce(ctx, t.rdb, t.space.Once(t.name), []string{t.prefix}, id)
	if err != nil {
		return false, fmt.Errorf("adtarget: remove %q: %w", trunc(id), err)
	}
	n, err := removeScript.AsInt64(v)
	if err != nil {
		return false, fmt.Errorf("adtarget: remove %q: %w", trunc(id), err)
	}
	return n == 1, nil
}

// Target picks the ad for a request from locations showing a page with
// content: among the ads targeting any of the locations, the one with the
// highest eCPM plus half its smallest and half its largest bonus among
// the page's words it holds (the book's finish_scoring; ties go to the
// greatest ID). It records the targeting as the book's
// record_targeting_result does (views of the ad, of its matched words and
// of its type; every 100th view of an ad relearns its eCPM) in the same
// atomic script: one round trip. ok is false when no ad targets the
// locations (nothing is recorded).
//
// No location, a long location or content over the limits is an error
// matching [ErrInvalid]; a key holding another type is a *ria.KeyError;
// in both cases nothing is recorded. When every re-send lost its reply,
// the error wraps ria.ErrOutcomeUnknown (the view was recorded or not).
func (t *Targeter) Target(ctx context.Context, locations []string, content string) (tg Targeting, ok bool, err error) {
	args, err := locArgs([]any{t.ttlMS}, locations)
	if err == nil {
		args, err = t.wordArgs(args, content)
	}
	if err != nil {
		return Targeting{}, false, fmt.Errorf("adtarget: target: %w", err)
	}
	v, err := targetScript.RunOnce(ctx, t.rdb, t.space.Once(t.name), []string{t.prefix}, args...)
	if err != nil {
		return Targeting{}, false, fmt.Errorf("adtarget: target: %w", err)
	}
	if v == nil {
		return Targeting{}, false, nil
	}
	arr, _ := v.([]any)
	if len(arr) != 3 {
		return Targeting{}, false, fmt.Errorf("adtarget: target: bad reply %v", v)
	}
	id, ok1 := arr[0].(int64)
	ad, ok2 := arr[1].(string)
	es, ok3 := arr[2].(string)
	ecpm, perr := strconv.ParseFloat(es, 64)
	if !ok1 || !ok2 || !ok3 || perr != nil {
		return Targeting{}, false, fmt.Errorf("adtarget: target: bad reply %v", v)
	}
	return Targeting{ID: id, Ad: ad, ECPM: ecpm}, true, nil
}

// Click records a click on ad after targeting tid (the book's
// record_click): the ad's and its type's clicks, and a click for each
// word the targeting matched; then it relearns the ad's eCPM and word
// bonuses (update_cpms). One atomic script: one round trip. It returns
// [ErrUnknownAd] if the ad is not indexed, and [ErrNoTargeting] if tid is
// not a targeting that picked ad within the match TTL ([WithMatchTTL]),
// recording nothing; other errors as [Targeter.Index]. Each call counts
// a click (a re-send after a lost reply does not: see the package doc).
func (t *Targeter) Click(ctx context.Context, tid int64, ad string) error {
	return t.click(ctx, "click", tid, ad, 0)
}

// Action records an action (a purchase, a sign-up) on CPA ad after
// targeting tid, as [Targeter.Click] records a click; CPA ads learn their
// eCPM from actions. It returns [ErrNotCPA] for an ad of another bid
// type, [ErrUnknownAd] for an ad not indexed and [ErrNoTargeting] as
// Click does, recording nothing.
func (t *Targeter) Action(ctx context.Context, tid int64, ad string) error {
	return t.click(ctx, "action", tid, ad, 1)
}

func (t *Targeter) click(ctx context.Context, op string, tid int64, ad string, action int) error {
	if err := checkName("ad ID", ad); err != nil {
		return fmt.Errorf("adtarget: %s: %w", op, err)
	}
	if tid < 1 {
		return fmt.Errorf("adtarget: %s %q: %w: targeting ID %d", op, trunc(ad), ErrInvalid, tid)
	}
	v, err := clickScript.RunOnce(ctx, t.rdb, t.space.Once(t.name), []string{t.prefix}, tid, ad, action, t.ttlMS)
	if err != nil {
		return fmt.Errorf("adtarget: %s %q: %w", op, trunc(ad), err)
	}
	n, err := clickScript.AsInt64(v)
	switch {
	case err != nil:
		return fmt.Errorf("adtarget: %s %q: %w", op, trunc(ad), err)
	case n == 0:
		return fmt.Errorf("adtarget: %s %q: %w", op, trunc(ad), ErrUnknownAd)
	case n == -1:
		return fmt.Errorf("adtarget: %s %q: %w", op, trunc(ad), ErrNotCPA)
	case n == -2:
		return fmt.Errorf("adtarget: %s %q: targeting %d: %w", op, trunc(ad), tid, ErrNoTargeting)
	case n != 1:
		return fmt.Errorf("adtarget: %s %q: bad reply %d", op, trunc(ad), n)
	}
	return nil
}

// Stats returns what ad id is and has learned, read at one instant (one
// read-only script), or [ErrUnknownAd].
func (t *Targeter) Stats(ctx context.Context, id string) (Stats, error) {
	if err := checkName("ad ID", id); err != nil {
		return Stats{}, fmt.Errorf("adtarget: stats: %w", err)
	}
	v, err := statsScript.Run(ctx, t.rdb, []string{t.prefix}, id)
	if err != nil {
		return Stats{}, fmt.Errorf("adtarget: stats %q: %w", trunc(id), err)
	}
	if v == nil {
		return Stats{}, fmt.Errorf("adtarget: stats %q: %w", trunc(id), ErrUnknownAd)
	}
	arr, _ := v.([]any)
	if len(arr) != 6 {
		return Stats{}, fmt.Errorf("adtarget: stats %q: bad reply %v", trunc(id), v)
	}
	var s Stats
	var f [5]float64
	for i := range 6 {
		str, ok := arr[i].(string)
		if !ok {
			return Stats{}, fmt.Errorf("adtarget: stats %q: bad reply %v", trunc(id), v)
		}
		if i == 0 {
			if s.Bid, ok = parseBid(str); !ok {
				return Stats{}, fmt.Errorf("adtarget: stats %q: bad bid type %q", trunc(id), str)
			}
			continue
		}
		if f[i-1], err = strconv.ParseFloat(str, 64); err != nil || math.IsNaN(f[i-1]) {
			return Stats{}, fmt.Errorf("adtarget: stats %q: bad reply %v", trunc(id), v)
		}
	}
	s.Value, s.ECPM = f[0], f[1]
	s.Views, s.Clicks, s.Actions = int64(f[2]), int64(f[3]), int64(f[4])
	return s, nil
}

// Ads returns a page of the IDs of the indexed ads (an operator's listing,
// a migration): call it with cursor 0, then with each next it returns,
// until next is 0. It is one HSCAN ... COUNT n of the types HASH (where
// [Targeter.Index] records an ad and [Targeter.Remove] deletes it), in a
// script that only reads: one round trip. A page holds about n IDs, in no
// particular order; a targeter whose types HASH is in the compact
// encoding (up to hash-max-listpack-entries ads, 128 by default) comes
// whole in one page.
//
// Under concurrent Index and Remove calls (HSCAN's guarantees): an ad
// indexed from the first page to the last is listed; one indexed or
// removed meanwhile may or may not be; an ID may be listed twice (in two
// pages, when the HASH is resized between them), so deduplicate if that
// matters. The cursor is the server's: pass back next as it is.
//
// An n outside 1 to [MaxAdsPage] is an error matching [ErrInvalid]; a
// types key holding another Redis type is a *ria.KeyError.
func (t *Targeter) Ads(ctx context.Context, cursor uint64, n int) (ids []string, next uint64, err error) {
	if n < 1 || n > MaxAdsPage {
		return nil, 0, fmt.Errorf("adtarget: ads: %w: n %d, want 1 to %d", ErrInvalid, n, MaxAdsPage)
	}
	v, err := adsScript.Run(ctx, t.rdb, []string{t.prefix}, strconv.FormatUint(cursor, 10), n)
	if err != nil {
		return nil, 0, fmt.Errorf("adtarget: ads: %w", err)
	}
	arr, _ := v.([]any)
	if len(arr) != 2 {
		return nil, 0, fmt.Errorf("adtarget: ads: bad reply %v", v)
	}
	cs, _ := arr[0].(string)
	if next, err = strconv.ParseUint(cs, 10, 64); err != nil {
		return nil, 0, fmt.Errorf("adtarget: ads: bad cursor %v", arr[0])
	}
	if ids, err = adsScript.AsStrings(arr[1]); err != nil {
		return nil, 0, fmt.Errorf("adtarget: ads: %w", err)
	}
	return ids, next, nil
}
