package market

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/wait"
	"github.com/ria-go/ria/lock"
)

// List moves item from seller's inventory to the market at price, in one
// round trip (one Lua script, so it never retries). price is in whole units
// and must be in [1, [MaxPrice]]. It returns [ErrNotOwned] if the seller
// does not hold the item (unknown item, listed already, or someone else's);
// then nothing changes. A re-sent call answers as its first run did (see
// "Lost replies" in the package doc).
func (m *Market) List(ctx context.Context, seller, item string, price int64) error {
	if err := checkList(seller, item, price); err != nil {
		return fmt.Errorf("market: list: %w", err)
	}
	v, err := listScript.RunOnce(ctx, m.rdb, m.once(), []string{m.keys.inventory(seller), m.keys.listings},
		item, member(seller, item), price)
	var n int64
	if err == nil {
		n, err = listScript.AsInt64(v)
	}
	if err == nil && n == 0 {
		err = ErrNotOwned
	}
	if err != nil {
		return fmt.Errorf("market: list %q by %q: %w", item, seller, err)
	}
	return nil
}

// Unlist takes seller's listing of item back: it removes the listing from
// the market and puts the item back in the seller's inventory, at once, in
// one round trip (one Lua script, so it never retries and is never
// contended). Relist it with [Market.List] at another price. It returns
// [ErrNotListed] if seller has no listing of item (sold already, taken
// back already, never listed, or listed by someone else); then nothing
// changes. Bad input (an empty ID, an item ID with '.') is refused before
// reaching Redis, as by List. A re-sent call (go-redis re-sends it when
// its reply is lost) takes the listing back once and answers as its first
// run did, never ErrNotListed for a listing it took back; an error
// wrapping ria.ErrOutcomeUnknown means no reply came at all: the listing
// may have been taken back (see "Lost replies" in the package doc).
func (m *Market) Unlist(ctx context.Context, seller, item string) error {
	if err := checkListing(seller, item); err != nil {
		return fmt.Errorf("market: unlist: %w", err)
	}
	v, err := unlistScript.RunOnce(ctx, m.rdb, m.once(), []string{m.keys.listings, m.keys.inventory(seller)},
		member(seller, item), item)
	var n int64
	if err == nil {
		n, err = unlistScript.AsInt64(v)
	}
	if err == nil && n == 0 {
		err = ErrNotListed
	}
	if err != nil {
		return fmt.Errorf("market: unlist %q by %q: %w", item, seller, err)
	}
	return nil
}

// ListWatch does what [Market.List] does the book's way (list_item):
// WATCH the seller's inventory (and the listings, whose type must hold
// until EXEC), check it holds the item, then ZADD and SREM in MULTI/EXEC,
// retrying while the watched keys change, until the [WithTimeout] time
// passes ([ErrContended]) or ctx ends. Uncontended it takes 3 round trips
// (WATCH; TYPE, TYPE, SISMEMBER; MULTI/EXEC); 3 also when it fails with
// [ErrNotOwned] (WATCH, reads, UNWATCH). A lost EXEC reply is settled
// exactly (see "Lost replies" in the package doc).
func (m *Market) ListWatch(ctx context.Context, seller, item string, price int64) error {
	if err := checkList(seller, item, price); err != nil {
		return fmt.Errorf("market: list: %w", err)
	}
	inv, listings := m.keys.inventory(seller), m.keys.listings
	want := []keyType{{inv, "set", roleInventory}, {listings, "zset", roleListings}}
	err := m.watched(ctx, m.timeout, []string{inv, listings}, func(tx *redis.Tx) (writesFunc, error) {
		var held *redis.BoolCmd
		types, err := readTypes(ctx, tx, want, func(p redis.Pipeliner) {
			held = p.SIsMember(ctx, inv, item)
		})
		if err != nil {
			return nil, err
		}
		if err := checkTypes(types, want); err != nil {
			return nil, err
		}
		if err := held.Err(); err != nil {
			return nil, err
		}
		if !held.Val() {
			return nil, ErrNotOwned
		}
		return func(p redis.Pipeliner) {
			p.ZAdd(ctx, listings, redis.Z{Score: float64(price), Member: member(seller, item)})
			p.SRem(ctx, inv, item)
		}, nil
	})
	if err != nil {
		return fmt.Errorf("market: list %q by %q: %w", item, seller, err)
	}
	return nil
}

// Buy makes buyer buy seller's listing of item, in one round trip (one Lua
// script: atomic, never retried, never contended). The purchase happens only
// if the item is listed at no more than maxPrice (the most the buyer agrees
// to pay; pass the price you saw; a limit above [MaxPrice] means any price)
// and the buyer's funds cover the price; then the price moves from buyer to
// seller, the item to the buyer's inventory, and the listing is removed, all
// at once. It returns the price paid.
//
// Errors: [ErrNotListed] (sold already or never listed), [ErrUnknownUser]
// (no such buyer), [ErrPriceTooHigh], [ErrInsufficientFunds],
// [ErrOwnListing] (buyer == seller, refused before reaching Redis), a
// *ria.KeyError for a key someone else wrote. After any of them nothing
// has changed. A re-sent call (go-redis re-sends it when its reply is
// lost) buys once and answers as its first run did; an error wrapping
// ria.ErrOutcomeUnknown means no reply came at all: the purchase may have
// happened (see "Lost replies" in the package doc).
func (m *Market) Buy(ctx context.Context, buyer, seller, item string, maxPrice int64) (int64, error) {
	if err := checkBuy(buyer, seller, item, maxPrice); err != nil {
		return 0, fmt.Errorf("market: buy: %w", err)
	}
	v, err := buyScript.RunOnce(ctx, m.rdb, m.once(),
		[]string{m.keys.listings, m.keys.user(buyer), m.keys.user(seller), m.keys.inventory(buyer)},
		member(seller, item), item, min(maxPrice, MaxPrice))
	if err == nil {
		var price int64
		if price, err = m.buyReply(v, maxPrice, member(seller, item)); err == nil {
			return price, nil
		}
	}
	return 0, buyErr(buyer, seller, item, err)
}

// buyReply decodes buy.lua's reply.
func (m *Market) buyReply(v any, maxPrice int64, mem string) (int64, error) {
	r, ok := v.([]any)
	if !ok || len(r) != 3 {
		return 0, fmt.Errorf("script %s: want 3 values, got %v", buyScript.Name(), v)
	}
	code, _ := r[0].(int64)
	price, _ := r[1].(int64)
	funds, _ := r[2].(string)
	switch code {
	case 0:
		return price, nil
	case 1:
		return 0, ErrNotListed
	case 2:
		return 0, ErrUnknownUser
	case 3:
		return 0, fmt.Errorf("%w: price %d, limit %d", ErrPriceTooHigh, price, maxPrice)
	case 4:
		return 0, fmt.Errorf("%w: price %d, funds %s", ErrInsufficientFunds, price, funds)
	case 5:
		return 0, m.malformedPrice(mem, funds)
	}
	return 0, fmt.Errorf("script %s: unknown code %d", buyScript.Name(), code)
}

// BuyWatch does what [Market.Buy] does the book's way (purchase_item):
// WATCH the listings and the buyer (and the seller and the buyer's
// inventory, whose types must hold until EXEC), read the price and the
// funds, check them, then move money and item in MULTI/EXEC. EXEC fails
// when a watched key changed meanwhile; it then retries, backing off with
// jitter, until the [WithTimeout] time passes, when it returns an error
// that is both [ErrContended] and txn.ErrContended (the book retries at
// once and returns the same false value for contention and refusal).
// Uncontended it takes 3 round trips (WATCH; TYPE x4, ZSCORE, HGET x2
// pipelined; MULTI/EXEC), 3 also when it fails a check (WATCH, reads,
// UNWATCH); each retry costs 3 more. Errors and guarantees are those of
// [Market.Buy]; a lost EXEC reply is settled exactly (see "Lost replies"
// in the package doc).
func (m *Market) BuyWatch(ctx context.Context, buyer, seller, item string, maxPrice int64) (int64, error) {
	if err := checkBuy(buyer, seller, item, maxPrice); err != nil {
		return 0, fmt.Errorf("market: buy: %w", err)
	}
	price, err := m.buyWatched(ctx, m.timeout, buyer, seller, item, maxPrice)
	if err != nil {
		return 0, buyErr(buyer, seller, item, err)
	}
	return price, nil
}

// BuyLocked does what [Market.Buy] does under the market lock, as the
// book's purchase_item_with_lock does, corrected: the lock (package lock)
// has a TTL, is extended while held and released only by its holder;
// waiters queue first come first served without polling, for at most the
// [WithTimeout] time ([ErrContended], also wrapping lock.ErrNotObtained).
// Under the lock it runs the WATCH purchase of [Market.BuyWatch], within
// what is left of the same [WithTimeout] (at least one attempt): the lock
// serialises BuyLocked callers, so its WATCH does not fail among them, and
// the WATCH keeps the purchase exact when the lock is lost (a holder stalled
// past the TTL) or when another variant ([Market.Buy], [Market.BuyWatch])
// changes the market at the same time, where the book's version could sell
// an item twice or overdraw the buyer.
//
// Uncontended it takes 5 round trips: acquire, WATCH, reads, MULTI/EXEC,
// release. A caller that finds the lock taken is queued by its acquire
// attempt and pays 1 more per blocking wait (one, when a release hands it
// the lock). If the purchase succeeded but releasing the lock failed, the
// purchase stands and BuyLocked reports success (the lock expires after its
// TTL). Errors are those of [Market.Buy] plus [ErrContended] (the lock
// stayed busy, or the WATCH kept failing), lock.ErrNotHeld joined in if the
// lock was lost before the purchase finished (the purchase itself is still
// all or nothing), lock.ErrNotObtained with ctx's error when ctx ended
// while waiting for the lock, and the lock's own error (an outage, never
// ErrContended) when Redis could not be reached while waiting. Only an
// error wrapping ria.ErrOutcomeUnknown leaves the purchase in doubt.
func (m *Market) BuyLocked(ctx context.Context, buyer, seller, item string, maxPrice int64) (int64, error) {
	if err := checkBuy(buyer, seller, item, maxPrice); err != nil {
		return 0, fmt.Errorf("market: buy: %w", err)
	}
	deadline := time.Now().Add(m.timeout)
	var (
		price       int64
		ran, bought bool
		fnErr       error
	)
	err := m.locker.Do(ctx, m.name, m.lockTTL, func(held context.Context, _ *lock.Lock) error {
		ran = true
		price, fnErr = m.buyWatched(held, max(time.Until(deadline), time.Millisecond), buyer, seller, item, maxPrice)
		bought = fnErr == nil
		return fnErr
	}, lock.WithWait(m.timeout))
	switch {
	case bought:
		return price, nil
	case !ran && ctx.Err() != nil:
		// Not the lock's error, which may name ctx's error twice.
		err = fmt.Errorf("market lock %q: %w: %w", m.name, lock.ErrNotObtained, context.Cause(ctx))
	case !ran && errors.Is(err, lock.ErrNotObtained) && !wait.Transient(err):
		err = fmt.Errorf("%w: %w", ErrContended, err)
	case !ran:
		// An outage: the purchase never started, whatever the lock's
		// error says about the lock itself.
		err = known{fmt.Errorf("market lock %q not obtained, nothing bought: %w", m.name, err)}
	case !errors.Is(fnErr, ria.ErrOutcomeUnknown):
		// fn's error says what became of the purchase; the lock's
		// troubles joined to it (a lost lock, a failed release) do not
		// make it unknown.
		err = known{err}
	}
	return 0, buyErr(buyer, seller, item, err)
}

// known is an error that does not match ria.ErrOutcomeUnknown whatever it
// wraps: the purchase's outcome is known (it did not happen), and the
// market lock's own doubts (package lock reports a give-back or a release
// it could not confirm as unknown) are not the purchase's.
type known struct{ err error }

func (e known) Error() string { return e.err.Error() }

// Is matches what the error wraps, except ria.ErrOutcomeUnknown.
func (e known) Is(target error) bool {
	return target != ria.ErrOutcomeUnknown && errors.Is(e.err, target)
}

// As finds what the error wraps.
func (e known) As(target any) bool { return errors.As(e.err, target) }

// buyWatched is the WATCH/MULTI/EXEC purchase, retried until timeout.
func (m *Market) buyWatched(ctx context.Context, timeout time.Duration, buyer, seller, item string, maxPrice int64) (int64, error) {
	listings, buyerKey, sellerKey, inv := m.keys.listings, m.keys.user(buyer), m.keys.user(seller), m.keys.inventory(buyer)
	mem := member(seller, item)
	want := []keyType{
		{listings, "zset", roleListings}, {buyerKey, "hash", roleUser},
		{sellerKey, "hash", roleUser}, {inv, "set", roleInventory},
	}
	var price int64
	err := m.watched(ctx, timeout, []string{listings, buyerKey, sellerKey, inv}, func(tx *redis.Tx) (writesFunc, error) {
		var (
			score              *redis.FloatCmd
			funds, sellerFunds *redis.StringCmd
		)
		types, err := readTypes(ctx, tx, want, func(p redis.Pipeliner) {
			score = p.ZScore(ctx, listings, mem)
			funds = p.HGet(ctx, buyerKey, "funds")
			sellerFunds = p.HGet(ctx, sellerKey, "funds")
		})
		if err != nil {
			return nil, err
		}
		if err := checkTypes(types, want); err != nil {
			return nil, err
		}
		// The checks of buy.lua, in its order: every value parsed before
		// MULTI, so that no command of the transaction can fail.
		for _, f := range []struct {
			key string
			cmd *redis.StringCmd
		}{{buyerKey, funds}, {sellerKey, sellerFunds}} {
			if err := f.cmd.Err(); err == nil {
				if _, err := parseFunds(f.key, f.cmd.Val()); err != nil {
					return nil, err
				}
			} else if err != redis.Nil {
				return nil, err
			}
		}
		p, err := m.listedPrice(score, mem)
		if err != nil {
			return nil, err
		}
		if funds.Err() == redis.Nil {
			return nil, ErrUnknownUser
		}
		balance, _ := strconv.ParseInt(funds.Val(), 10, 64) // parsed above
		if p > maxPrice {
			return nil, fmt.Errorf("%w: price %d, limit %d", ErrPriceTooHigh, p, maxPrice)
		}
		if balance < p {
			return nil, fmt.Errorf("%w: price %d, funds %d", ErrInsufficientFunds, p, balance)
		}
		price = p
		// Types and values checked under WATCH, and no balance can
		// overflow (the money supply bounds them): no command below fails.
		return func(pl redis.Pipeliner) {
			pl.HIncrBy(ctx, sellerKey, "funds", p)
			pl.HIncrBy(ctx, buyerKey, "funds", -p)
			pl.SAdd(ctx, inv, item)
			pl.ZRem(ctx, listings, mem)
		}, nil
	})
	if err != nil {
		return 0, err
	}
	return price, nil
}

func buyErr(buyer, seller, item string, err error) error {
	return fmt.Errorf("market: buy %q from %q for %q: %w", item, seller, buyer, err)
}

func checkList(seller, item string, price int64) error {
	if err := checkListing(seller, item); err != nil {
		return err
	}
	if price < 1 || price > MaxPrice {
		return fmt.Errorf("item %q: price %d: must be in [1, %s]", item, price, strconv.FormatInt(MaxPrice, 10))
	}
	return nil
}

func checkBuy(buyer, seller, item string, maxPrice int64) error {
	if err := checkUser("buyer", buyer); err != nil {
		return err
	}
	if err := checkListing(seller, item); err != nil {
		return err
	}
	if maxPrice < 1 {
		return fmt.Errorf("item %q: price limit %d: must be at least 1", item, maxPrice)
	}
	if buyer == seller {
		return fmt.Errorf("item %q, buyer %q: %w", item, buyer, ErrOwnListing)
	}
	return nil
}
