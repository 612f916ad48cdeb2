package market

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/lock"
)

// Client is the subset of go-redis this package uses: scripts, pipelines,
// WATCH transactions and SET (to settle a transaction whose reply was
// lost), plus what package lock needs for [Market.BuyLocked] (scripts,
// BLMove, Do, Pipelined). *redis.Client, *redis.ClusterClient and
// *redis.Ring satisfy it.
type Client interface {
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd
	Watch(ctx context.Context, fn func(*redis.Tx) error, keys ...string) error
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	SetArgs(ctx context.Context, key string, value any, a redis.SetArgs) *redis.StatusCmd
	BLMove(ctx context.Context, source, destination, srcpos, destpos string, timeout time.Duration) *redis.StringCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)

	// A market hands its client to package lock.
	_ lock.Client = Client(nil)
)

var (
	// ErrNotListed means the item is not on the market: it was sold
	// already, taken back ([Market.Unlist]), or never listed by that
	// seller.
	ErrNotListed = errors.New("market: item not listed")
	// ErrInsufficientFunds means the buyer's funds are below the price.
	ErrInsufficientFunds = errors.New("market: insufficient funds")
	// ErrPriceTooHigh means the listing's price is above the most the buyer
	// agreed to pay (the book's check that the price did not change).
	ErrPriceTooHigh = errors.New("market: price above the buyer's limit")
	// ErrContended means the operation gave up at its [WithTimeout]
	// because others kept changing the market: WATCH kept failing
	// ([Market.BuyWatch], [Market.ListWatch], or [Market.BuyLocked] under
	// the lock while other variants write; the error also wraps
	// txn.ErrContended), or the market lock stayed busy
	// ([Market.BuyLocked]; the error also wraps lock.ErrNotObtained). It
	// never stands for an outage or an ended ctx.
	ErrContended = errors.New("market: contended")
	// ErrNotOwned means the seller does not hold the item in their
	// inventory (unknown item, listed already, or not theirs).
	ErrNotOwned = errors.New("market: item not in the seller's inventory")
	// ErrOwnListing means the buyer is the listing's seller. Buying your
	// own item is refused.
	ErrOwnListing = errors.New("market: buyer is the seller")
	// ErrUnknownUser means no user has that ID in this market.
	ErrUnknownUser = errors.New("market: unknown user")
	// ErrUserExists is returned by [Market.AddUser] for an ID in use.
	ErrUserExists = errors.New("market: user exists")
	// ErrItemExists is returned by [Market.AddItem] for an item ID that the
	// market already knows (item IDs are unique within a market).
	ErrItemExists = errors.New("market: item exists")
	// ErrMoneyLimit is returned by [Market.AddUser] and [Market.AddFunds]
	// for a deposit that would take the market's money supply (the sum of
	// every deposit, [Totals].Money) past [MaxFunds]; nothing changes, and
	// the market stays usable.
	ErrMoneyLimit = errors.New("market: the money supply would pass MaxFunds")
)

const (
	// MaxPrice is the highest price a listing can have: 2^53, the largest
	// integer up to which every integer is exact in a sorted set's score (a
	// float64). A purchase's price limit above it means "any price".
	MaxPrice = 1 << 53
	// MaxFunds bounds the money of a market: one deposit ([Market.AddUser]
	// funds, [Market.AddFunds] amount) and the money supply, the sum of
	// every deposit ([ErrMoneyLimit]), are at most 2^53. Trades conserve the
	// supply, so every balance stays within it too, and the scripts'
	// arithmetic (Lua numbers are float64) stays exact.
	MaxFunds = 1 << 53
)

var (
	//go:embed adduser.lua
	addUserLua    string
	addUserScript = script.NewOnce("market adduser", addUserLua)

	//go:embed addfunds.lua
	addFundsLua    string
	addFundsScript = script.NewOnce("market addfunds", addFundsLua)

	//go:embed additem.lua
	addItemLua    string
	addItemScript = script.NewOnce("market additem", addItemLua)

	//go:embed list.lua
	listLua    string
	listScript = script.NewOnce("market list", listLua)

	//go:embed buy.lua
	buyLua    string
	buyScript = script.NewOnce("market buy", buyLua)

	//go:embed unlist.lua
	unlistLua    string
	unlistScript = script.NewOnce("market unlist", unlistLua)
)

// The roles of the market's keys, as a *ria.KeyError names them.
const (
	roleUser      = "market user"
	roleInventory = "market inventory"
	roleListings  = "market listings"
	roleItems     = "market items"
	roleMoney     = "market money"
)

// Option configures a [Market].
type Option func(*options)

type options struct {
	prefix  string
	timeout time.Duration
	lockTTL time.Duration
}

// WithPrefix sets the key prefix. Default: "market:". It must not contain
// '{' or '}'. The market lock of [Market.BuyLocked] uses the prefix
// followed by "lock:".
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithTimeout sets how long an operation may be held up by others:
// [Market.BuyWatch] and [Market.ListWatch] retry WATCH/MULTI/EXEC until it
// passes, and [Market.BuyLocked] waits for the market lock (and retries
// under it) until it passes; then they return [ErrContended]. The ctx of
// each call bounds it too. Default: 10s, the book's purchase deadline.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithLockTTL sets the TTL of the market lock taken by [Market.BuyLocked].
// The lock is extended while held, so the TTL only bounds how long a
// crashed holder blocks the market. Default: 5s.
func WithLockTTL(d time.Duration) Option { return func(o *options) { o.lockTTL = d } }

// Market is one marketplace: users with funds and inventories, and items
// listed for sale at a price. It is safe for concurrent use. Markets of the
// same name and prefix share their data, whatever client or process uses
// them.
type Market struct {
	rdb     Client
	name    string
	keys    keySet
	locker  *lock.Locker
	timeout time.Duration
	lockTTL time.Duration
}

// New returns the market called name. Every key of a market carries the
// hash tag {name}, so a market lives in one Redis Cluster slot.
//
// New returns an error naming the bad argument if name is empty or holds
// '{' or '}', the prefix holds '{' or '}', the timeout is not positive or the
// lock TTL is under a millisecond. It panics if rdb is nil. Nothing reaches
// Redis.
func New(rdb Client, name string, opts ...Option) (*Market, error) {
	if rdb == nil {
		panic("market: New with a nil client")
	}
	o := options{prefix: "market:", timeout: 10 * time.Second, lockTTL: 5 * time.Second}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("market: new: %w", err)
	}
	if err := keys.CheckEntity("market name", name); err != nil {
		return nil, fmt.Errorf("market: new: %w", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("market: new %q: %w", name, err)
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("market: new %q: timeout %v: must be positive", name, o.timeout)
	}
	if o.lockTTL < time.Millisecond {
		return nil, fmt.Errorf("market: new %q: lock TTL %v: must be at least 1ms", name, o.lockTTL)
	}
	locker, err := lock.New(rdb, lock.WithPrefix(o.prefix+"lock:"))
	if err != nil {
		return nil, fmt.Errorf("market: new %q: %w", name, err)
	}
	return &Market{
		rdb:     rdb,
		name:    name,
		keys:    newKeySet(keys.New(o.prefix), name),
		locker:  locker,
		timeout: o.timeout,
		lockTTL: o.lockTTL,
	}, nil
}

// Name returns the market's name.
func (m *Market) Name() string { return m.name }

// User is a user's account.
type User struct {
	ID    string
	Name  string
	Funds int64
}

// Listing is an item on the market.
type Listing struct {
	Seller string
	Item   string
	Price  int64
}

// Totals are the market's conserved quantities.
type Totals struct {
	// Money is the sum of every deposit ([Market.AddUser] funds and
	// [Market.AddFunds] amounts). Trades move money, so the users' funds
	// always add up to it.
	Money int64
	// Items is the number of items ever added ([Market.AddItem]). Trades
	// move items, so the inventories and the listings always hold exactly
	// this many, each item in one place.
	Items int64
}

// AddUser creates user id with a display name and initial funds, in one
// round trip. Funds are whole units of the market's currency (cents, say),
// in [0, [MaxFunds]]. It returns [ErrUserExists] if id is taken and
// [ErrMoneyLimit] if the funds would take the money supply past
// [MaxFunds]; then nothing changes. After a lost reply go-redis re-sends
// the call, which is answered from the record of its first run (see "Lost
// replies" in the package doc); an error wrapping ria.ErrOutcomeUnknown
// means no reply came at all.
func (m *Market) AddUser(ctx context.Context, id, name string, funds int64) error {
	if err := checkUser("user", id); err != nil {
		return fmt.Errorf("market: add user: %w", err)
	}
	if name == "" {
		return fmt.Errorf("market: add user %q: name: empty", id)
	}
	if err := checkAmount("funds", funds, 0); err != nil {
		return fmt.Errorf("market: add user %q: %w", id, err)
	}
	v, err := addUserScript.RunOnce(ctx, m.rdb, m.once(), []string{m.keys.user(id), m.keys.money},
		name, funds, int64(MaxFunds))
	var n int64
	if err == nil {
		n, err = addUserScript.AsInt64(v)
	}
	switch {
	case err != nil:
		return fmt.Errorf("market: add user %q: %w", id, err)
	case n == 0:
		return fmt.Errorf("market: add user %q: %w", id, ErrUserExists)
	case n < 0:
		return fmt.Errorf("market: add user %q with funds %d: %w", id, funds, ErrMoneyLimit)
	}
	return nil
}

// AddFunds deposits amount, in [1, [MaxFunds]], on user id's account and
// returns the new balance, in one round trip. It returns [ErrUnknownUser]
// if there is no such user and [ErrMoneyLimit] if the deposit would take
// the money supply past [MaxFunds]; then nothing changes. A re-sent call
// deposits once and answers as the first run did (see "Lost replies" in
// the package doc).
func (m *Market) AddFunds(ctx context.Context, id string, amount int64) (int64, error) {
	if err := checkUser("user", id); err != nil {
		return 0, fmt.Errorf("market: add funds: %w", err)
	}
	if err := checkAmount("amount", amount, 1); err != nil {
		return 0, fmt.Errorf("market: add funds to %q: %w", id, err)
	}
	v, err := addFundsScript.RunOnce(ctx, m.rdb, m.once(), []string{m.keys.user(id), m.keys.money},
		amount, int64(MaxFunds))
	var r []int64
	if err == nil {
		r, err = addFundsScript.AsInt64s(v)
		if err == nil && len(r) != 2 {
			err = fmt.Errorf("script %s: want 2 values, got %d", addFundsScript.Name(), len(r))
		}
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("market: add funds to %q: %w", id, err)
	case r[0] == 0:
		return 0, fmt.Errorf("market: add funds to %q: %w", id, ErrUnknownUser)
	case r[0] < 0:
		return 0, fmt.Errorf("market: add funds %d to %q: %w (supply %d)", amount, id, ErrMoneyLimit, r[1])
	}
	return r[1], nil
}

// AddItem puts a new item in user's inventory, in one round trip. Item IDs
// are unique within a market and must not contain '.' (listings are named
// "<item>.<seller>", as in the book). It returns [ErrUnknownUser] if there
// is no such user and [ErrItemExists] if the market already knows the item;
// then nothing changes. A re-sent call answers as the first run did (see
// "Lost replies" in the package doc).
func (m *Market) AddItem(ctx context.Context, user, item string) error {
	if err := checkUser("user", user); err != nil {
		return fmt.Errorf("market: add item: %w", err)
	}
	if err := checkItem(item); err != nil {
		return fmt.Errorf("market: add item to %q: %w", user, err)
	}
	v, err := addItemScript.RunOnce(ctx, m.rdb, m.once(),
		[]string{m.keys.user(user), m.keys.inventory(user), m.keys.items}, item)
	var n int64
	if err == nil {
		n, err = addItemScript.AsInt64(v)
	}
	switch {
	case err != nil:
		return fmt.Errorf("market: add item %q to %q: %w", item, user, err)
	case n == 0:
		return fmt.Errorf("market: add item %q to %q: %w", item, user, ErrUnknownUser)
	case n < 0:
		return fmt.Errorf("market: add item %q to %q: %w", item, user, ErrItemExists)
	}
	return nil
}

// once returns a new reply record key for one call of a once-script or one
// WATCH transaction.
func (m *Market) once() string { return m.keys.space.Once(m.name) }

// User returns user id's account, in one round trip, or [ErrUnknownUser].
func (m *Market) User(ctx context.Context, id string) (User, error) {
	if err := checkUser("user", id); err != nil {
		return User{}, fmt.Errorf("market: user: %w", err)
	}
	var cmd *redis.SliceCmd
	if _, err := m.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = p.HMGet(ctx, m.keys.user(id), "name", "funds")
		return nil
	}); err != nil {
		return User{}, fmt.Errorf("market: user %q: %w", id, script.WrongType(ctx, m.rdb, err, m.keys.user(id), roleUser, "hash"))
	}
	v := cmd.Val()
	name, _ := v[0].(string)
	funds, ok := v[1].(string)
	if !ok {
		return User{}, fmt.Errorf("market: user %q: %w", id, ErrUnknownUser)
	}
	f, err := parseFunds(m.keys.user(id), funds)
	if err != nil {
		return User{}, fmt.Errorf("market: user %q: %w", id, err)
	}
	return User{ID: id, Name: name, Funds: f}, nil
}

// Funds returns user id's balance, in one round trip, or [ErrUnknownUser].
func (m *Market) Funds(ctx context.Context, id string) (int64, error) {
	u, err := m.User(ctx, id)
	if err != nil {
		return 0, err
	}
	return u.Funds, nil
}

// Inventory returns the items user id holds, sorted, in one round trip.
// Listed items are not in the inventory. It returns [ErrUnknownUser] if
// there is no such user.
func (m *Market) Inventory(ctx context.Context, id string) ([]string, error) {
	if err := checkUser("user", id); err != nil {
		return nil, fmt.Errorf("market: inventory: %w", err)
	}
	var (
		exists  *redis.IntCmd
		members *redis.StringSliceCmd
	)
	if _, err := m.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, m.keys.user(id))
		members = p.SMembers(ctx, m.keys.inventory(id))
		return nil
	}); err != nil {
		err = script.PipeWrongType(ctx, m.rdb, err, script.Read{Cmd: members, Key: m.keys.inventory(id), Role: roleInventory, Want: "set"})
		return nil, fmt.Errorf("market: inventory of %q: %w", id, err)
	}
	if exists.Val() == 0 {
		return nil, fmt.Errorf("market: inventory of %q: %w", id, ErrUnknownUser)
	}
	items := members.Val()
	slices.Sort(items)
	return items, nil
}

// Price returns the price of seller's listing of item, in one round trip,
// or [ErrNotListed].
func (m *Market) Price(ctx context.Context, seller, item string) (int64, error) {
	if err := checkListing(seller, item); err != nil {
		return 0, fmt.Errorf("market: price: %w", err)
	}
	var cmd *redis.FloatCmd
	if err := pipeErr(m.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = p.ZScore(ctx, m.keys.listings, member(seller, item))
		return nil
	})); err != nil {
		return 0, fmt.Errorf("market: price of %q from %q: %w", item, seller, script.WrongType(ctx, m.rdb, err, m.keys.listings, roleListings, "zset"))
	}
	price, err := m.listedPrice(cmd, member(seller, item))
	if err != nil {
		return 0, fmt.Errorf("market: price of %q from %q: %w", item, seller, err)
	}
	return price, nil
}

// Listings returns up to n listings, cheapest first, in one round trip.
// Listings at one price come in the byte order of their members
// "<item>.<seller>": by item, then seller, except that an item whose ID
// another item's ID extends with a byte below '.' ("a" and "a-b") comes
// after it.
func (m *Market) Listings(ctx context.Context, n int) ([]Listing, error) {
	if n < 1 {
		return nil, fmt.Errorf("market: listings: n %d: must be at least 1", n)
	}
	var cmd *redis.ZSliceCmd
	if _, err := m.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = p.ZRangeWithScores(ctx, m.keys.listings, 0, int64(n-1))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("market: listings: %w", script.WrongType(ctx, m.rdb, err, m.keys.listings, roleListings, "zset"))
	}
	zs := cmd.Val()
	out := make([]Listing, 0, len(zs))
	for _, z := range zs {
		mem, _ := z.Member.(string)
		item, seller, ok := strings.Cut(mem, ".")
		if !ok {
			return nil, fmt.Errorf("market: listings: %w", &ria.KeyError{Role: roleListings, Key: m.keys.listings,
				Got: fmt.Sprintf("member %q", mem), Want: `members "<item>.<seller>"`, Err: ria.ErrCorrupt})
		}
		price, err := m.scorePrice(z.Score, mem)
		if err != nil {
			return nil, fmt.Errorf("market: listings: %w", err)
		}
		out = append(out, Listing{Seller: seller, Item: item, Price: price})
	}
	return out, nil
}

// Totals returns the market's money supply and item count, in one round
// trip (see [Totals]).
func (m *Market) Totals(ctx context.Context) (Totals, error) {
	var (
		money *redis.StringCmd
		items *redis.IntCmd
	)
	if err := pipeErr(m.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		money = p.Get(ctx, m.keys.money)
		items = p.SCard(ctx, m.keys.items)
		return nil
	})); err != nil {
		err = script.PipeWrongType(ctx, m.rdb, err,
			script.Read{Cmd: money, Key: m.keys.money, Role: roleMoney, Want: "string"},
			script.Read{Cmd: items, Key: m.keys.items, Role: roleItems, Want: "set"})
		return Totals{}, fmt.Errorf("market: totals: %w", err)
	}
	t := Totals{Items: items.Val()}
	if money.Err() == nil {
		var ok bool
		// As the scripts read it: canonical, not negative.
		if t.Money, ok = script.ParseInt(money.Val()); !ok || t.Money < 0 {
			return Totals{}, fmt.Errorf("market: totals: %w", &ria.KeyError{Role: roleMoney, Key: m.keys.money,
				Got: strconv.Quote(clip(money.Val())), Want: "a non-negative integer", Err: ria.ErrCorrupt})
		}
	}
	return t, nil
}

// pipeErr returns the first error of a pipeline's commands other than
// redis.Nil (a missing key, which the caller reads from its command).
func pipeErr(cmds []redis.Cmder, err error) error {
	if err != redis.Nil {
		return err
	}
	for _, c := range cmds {
		if cerr := c.Err(); cerr != nil && cerr != redis.Nil {
			return cerr
		}
	}
	return nil
}

func checkUser(kind, id string) error {
	if id == "" {
		return fmt.Errorf("%s ID: empty", kind)
	}
	return nil
}

func checkItem(item string) error {
	if item == "" {
		return errors.New("item ID: empty")
	}
	if strings.Contains(item, ".") {
		return fmt.Errorf("item ID %q: must not contain '.'", item)
	}
	return nil
}

func checkListing(seller, item string) error {
	if err := checkUser("seller", seller); err != nil {
		return err
	}
	return checkItem(item)
}

// checkAmount checks a deposit: an integer in [least, MaxFunds].
func checkAmount(what string, v, least int64) error {
	if v < least || v > MaxFunds {
		return fmt.Errorf("%s %d: must be in [%d, %d]", what, v, least, int64(MaxFunds))
	}
	return nil
}

// parseFunds parses the funds field of the user hash key: an integer as
// Redis writes one (HINCRBY refuses "+1" or "0125") within ±2^53, as the
// scripts' check_hint wants it, so that no increment of it can fail.
func parseFunds(key, s string) (int64, error) {
	f, ok := script.ParseCount(s)
	if !ok {
		return 0, &ria.KeyError{Role: roleUser + " field funds", Key: key, Got: strconv.Quote(clip(s)),
			Want: "an integer within ±2^53", Err: ria.ErrCorrupt}
	}
	return f, nil
}

// clip shortens a value quoted in an error, as check.lua does.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// scorePrice converts the score of the listing mem to its price.
func (m *Market) scorePrice(score float64, mem string) (int64, error) {
	p := int64(score)
	if float64(p) != score || p < 1 || p > MaxPrice {
		return 0, m.malformedPrice(mem, strconv.FormatFloat(score, 'g', -1, 64))
	}
	return p, nil
}

// malformedPrice is the error for a listing whose score someone else set
// to something that is not a price.
func (m *Market) malformedPrice(mem, score string) error {
	return &ria.KeyError{Role: roleListings, Key: m.keys.listings,
		Got: fmt.Sprintf("price %s for %q", score, mem), Want: "an integer price in [1, 2^53]", Err: ria.ErrCorrupt}
}

// listedPrice returns the price of the listing mem that a ZSCORE found, or
// ErrNotListed.
func (m *Market) listedPrice(cmd *redis.FloatCmd, mem string) (int64, error) {
	score, err := cmd.Result()
	if err == redis.Nil {
		return 0, ErrNotListed
	}
	if err != nil {
		return 0, err
	}
	return m.scorePrice(score, mem)
}
