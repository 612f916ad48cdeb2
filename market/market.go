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

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/internal/txn"
	"github.com/ria-go/ria/lock"
)

// Client is the subset of go-redis this package uses: scripts, pipelines
// and WATCH, plus what package lock needs for [Market.BuyLocked].
type Client interface {
	lock.Client // redis.Scripter, BLPop, Do, TxPipelined
	txn.Watcher // Watch
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

var (
	// ErrNotListed means the item is not on the market: it was sold
	// already, or never listed by that seller.
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
	// ([Market.BuyLocked]; the error also wraps lock.ErrNotObtained).
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
)

// MaxPrice is the highest price a listing can have: 2^53, the largest
// integer up to which every integer is exact in a sorted set's score (a
// float64).
const MaxPrice = 1 << 53

var (
	//go:embed adduser.lua
	addUserLua    string
	addUserScript = script.New("market adduser", addUserLua)

	//go:embed addfunds.lua
	addFundsLua    string
	addFundsScript = script.New("market addfunds", addFundsLua)

	//go:embed additem.lua
	addItemLua    string
	addItemScript = script.New("market additem", addItemLua)

	//go:embed list.lua
	listLua    string
	listScript = script.New("market list", listLua)

	//go:embed buy.lua
	buyLua    string
	buyScript = script.New("market buy", buyLua)
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
// New returns an error naming the bad argument if name is empty or starts
// with '}', the prefix holds '{' or '}', the timeout is not positive or the
// lock TTL is under a millisecond. It panics if rdb is nil. Nothing reaches
// Redis.
func New(rdb Client, name string, opts ...Option) (*Market, error) {
	if rdb == nil {
		panic("market: New with a nil client")
	}
	o := options{prefix: "market:", timeout: 10 * time.Second, lockTTL: 5 * time.Second}
	for _, opt := range opts {
		opt(&o)
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

// AddUser creates user id with a display name and initial funds (>= 0), in
// one round trip. It returns [ErrUserExists] if id is taken; then nothing
// changes. Funds are whole units of the market's currency (cents, say).
func (m *Market) AddUser(ctx context.Context, id, name string, funds int64) error {
	if err := checkUser("user", id); err != nil {
		return fmt.Errorf("market: add user: %w", err)
	}
	if name == "" {
		return fmt.Errorf("market: add user %q: name: empty", id)
	}
	if funds < 0 {
		return fmt.Errorf("market: add user %q: funds %d: must not be negative", id, funds)
	}
	n, err := addUserScript.Int64(ctx, m.rdb, []string{m.keys.user(id), m.keys.money}, name, funds)
	if err != nil {
		return fmt.Errorf("market: add user %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("market: add user %q: %w", id, ErrUserExists)
	}
	return nil
}

// AddFunds deposits amount (> 0) on user id's account and returns the new
// balance, in one round trip. It returns [ErrUnknownUser] if there is no
// such user; then nothing changes.
func (m *Market) AddFunds(ctx context.Context, id string, amount int64) (int64, error) {
	if err := checkUser("user", id); err != nil {
		return 0, fmt.Errorf("market: add funds: %w", err)
	}
	if amount < 1 {
		return 0, fmt.Errorf("market: add funds to %q: amount %d: must be at least 1", id, amount)
	}
	v, err := addFundsScript.Run(ctx, m.rdb, []string{m.keys.user(id), m.keys.money}, amount)
	if err != nil {
		return 0, fmt.Errorf("market: add funds to %q: %w", id, err)
	}
	if v == nil {
		return 0, fmt.Errorf("market: add funds to %q: %w", id, ErrUnknownUser)
	}
	s, _ := v.(string)
	funds, err := parseFunds(s)
	if err != nil {
		return 0, fmt.Errorf("market: add funds to %q: %w", id, err)
	}
	return funds, nil
}

// AddItem puts a new item in user's inventory, in one round trip. Item IDs
// are unique within a market and must not contain '.' (listings are named
// "<item>.<seller>", as in the book). It returns [ErrUnknownUser] if there
// is no such user and [ErrItemExists] if the market already knows the item;
// then nothing changes.
func (m *Market) AddItem(ctx context.Context, user, item string) error {
	if err := checkUser("user", user); err != nil {
		return fmt.Errorf("market: add item: %w", err)
	}
	if err := checkItem(item); err != nil {
		return fmt.Errorf("market: add item to %q: %w", user, err)
	}
	n, err := addItemScript.Int64(ctx, m.rdb,
		[]string{m.keys.user(user), m.keys.inventory(user), m.keys.items}, item)
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
		return User{}, fmt.Errorf("market: user %q: %w", id, err)
	}
	v := cmd.Val()
	name, _ := v[0].(string)
	funds, ok := v[1].(string)
	if !ok {
		return User{}, fmt.Errorf("market: user %q: %w", id, ErrUnknownUser)
	}
	f, err := parseFunds(funds)
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
		return 0, fmt.Errorf("market: price of %q from %q: %w", item, seller, err)
	}
	price, err := listedPrice(cmd)
	if err != nil {
		return 0, fmt.Errorf("market: price of %q from %q: %w", item, seller, err)
	}
	return price, nil
}

// Listings returns up to n listings, cheapest first (ties by item, then
// seller), in one round trip.
func (m *Market) Listings(ctx context.Context, n int) ([]Listing, error) {
	if n < 1 {
		return nil, fmt.Errorf("market: listings: n %d: must be at least 1", n)
	}
	var cmd *redis.ZSliceCmd
	if _, err := m.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = p.ZRangeWithScores(ctx, m.keys.listings, 0, int64(n-1))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("market: listings: %w", err)
	}
	zs := cmd.Val()
	out := make([]Listing, 0, len(zs))
	for _, z := range zs {
		mem, _ := z.Member.(string)
		item, seller, ok := strings.Cut(mem, ".")
		price, perr := scorePrice(z.Score)
		if !ok || perr != nil {
			return nil, fmt.Errorf("market: listings: malformed listing %q (price %v)", mem, z.Score)
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
		return Totals{}, fmt.Errorf("market: totals: %w", err)
	}
	t := Totals{Items: items.Val()}
	if money.Err() == nil {
		var err error
		if t.Money, err = strconv.ParseInt(money.Val(), 10, 64); err != nil {
			return Totals{}, fmt.Errorf("market: totals: malformed money supply %q", money.Val())
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

func parseFunds(s string) (int64, error) {
	f, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed funds %q", s)
	}
	return f, nil
}

// scorePrice converts a listing's score to its price.
func scorePrice(score float64) (int64, error) {
	p := int64(score)
	if float64(p) != score || p < 1 || p > MaxPrice {
		return 0, fmt.Errorf("malformed price %v", score)
	}
	return p, nil
}

// listedPrice returns the price a ZSCORE found, or ErrNotListed.
func listedPrice(cmd *redis.FloatCmd) (int64, error) {
	score, err := cmd.Result()
	if err == redis.Nil {
		return 0, ErrNotListed
	}
	if err != nil {
		return 0, err
	}
	return scorePrice(score)
}
