package market

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/txn"
	"github.com/ria-go/ria/internal/wait"
	"github.com/ria-go/ria/lock"
)

// List moves item from seller's inventory to the market at price, in one
// round trip (one Lua script, so it never retries). price is in whole units
// and must be in [1, [MaxPrice]]. It returns [ErrNotOwned] if the seller
// does not hold the item (unknown item, listed already, or someone else's);
// then nothing changes.
func (m *Market) List(ctx context.Context, seller, item string, price int64) error {
	if err := checkList(seller, item, price); err != nil {
		return fmt.Errorf("market: list: %w", err)
	}
	n, err := listScript.Int64(ctx, m.rdb, []string{m.keys.inventory(seller), m.keys.listings},
		item, member(seller, item), price)
	if err == nil && n == 0 {
		err = ErrNotOwned
	}
	if err != nil {
		return fmt.Errorf("market: list %q by %q: %w", item, seller, err)
	}
	return nil
}

// ListWatch does what [Market.List] does the book's way (list_item):
// WATCH the seller's inventory, check it holds the item, then ZADD and SREM
// in MULTI/EXEC, retrying while the inventory changes under it, until the
// [WithTimeout] time passes ([ErrContended]) or ctx ends. Uncontended it
// takes 3 round trips (WATCH, SISMEMBER, MULTI/EXEC); 3 also when it fails
// with [ErrNotOwned] (WATCH, SISMEMBER, UNWATCH).
func (m *Market) ListWatch(ctx context.Context, seller, item string, price int64) error {
	if err := checkList(seller, item, price); err != nil {
		return fmt.Errorf("market: list: %w", err)
	}
	inv := m.keys.inventory(seller)
	err := txn.Watch(ctx, m.rdb, m.timeout, func(tx *redis.Tx) error {
		held, err := tx.SIsMember(ctx, inv, item).Result()
		if err != nil {
			return err
		}
		if !held {
			return ErrNotOwned
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, m.keys.listings, redis.Z{Score: float64(price), Member: member(seller, item)})
			p.SRem(ctx, inv, item)
			return nil
		})
		return err
	}, inv)
	if err != nil {
		return fmt.Errorf("market: list %q by %q: %w", item, seller, contended(err))
	}
	return nil
}

// Buy makes buyer buy seller's listing of item, in one round trip (one Lua
// script: atomic, never retried, never contended). The purchase happens only
// if the item is listed at no more than maxPrice (the most the buyer agrees
// to pay; pass the price you saw) and the buyer's funds cover the price;
// then the price moves from buyer to seller, the item to the buyer's
// inventory, and the listing is removed, all at once. It returns the price
// paid.
//
// Errors: [ErrNotListed] (sold already or never listed), [ErrUnknownUser]
// (no such buyer), [ErrPriceTooHigh], [ErrInsufficientFunds],
// [ErrOwnListing] (buyer == seller, refused before reaching Redis). After a
// refusal nothing has changed; after a transport error the purchase may have
// happened.
func (m *Market) Buy(ctx context.Context, buyer, seller, item string, maxPrice int64) (int64, error) {
	if err := checkBuy(buyer, seller, item, maxPrice); err != nil {
		return 0, fmt.Errorf("market: buy: %w", err)
	}
	v, err := buyScript.Run(ctx, m.rdb,
		[]string{m.keys.listings, m.keys.user(buyer), m.keys.user(seller), m.keys.inventory(buyer)},
		member(seller, item), item, maxPrice)
	if err == nil {
		var price int64
		if price, err = buyReply(v, maxPrice); err == nil {
			return price, nil
		}
	}
	return 0, buyErr(buyer, seller, item, err)
}

// buyReply decodes buy.lua's reply.
func buyReply(v any, maxPrice int64) (int64, error) {
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
		return 0, fmt.Errorf("script %s: malformed listing price %q", buyScript.Name(), funds)
	}
	return 0, fmt.Errorf("script %s: unknown code %d", buyScript.Name(), code)
}

// BuyWatch does what [Market.Buy] does the book's way (purchase_item):
// WATCH the listings and the buyer, read the price and the buyer's funds,
// check them, then move money and item in MULTI/EXEC. EXEC fails when any
// listing or the buyer changed meanwhile; it then retries, backing off with
// jitter, until the [WithTimeout] time passes, when it returns an error that
// is both [ErrContended] and txn.ErrContended (the book retries at once and
// returns the same false value for contention and refusal). Uncontended it
// takes 3 round trips (WATCH; ZSCORE+HGET pipelined; MULTI/EXEC), 3 also
// when it fails a check (WATCH, reads, UNWATCH); each retry costs 3 more.
// Errors and guarantees are those of [Market.Buy].
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
// Under the lock it runs the WATCH purchase of [Market.BuyWatch]: the lock
// serialises BuyLocked callers, so its WATCH does not fail among them, and
// the WATCH keeps the purchase exact when the lock is lost (a holder stalled
// past the TTL) or when another variant ([Market.Buy], [Market.BuyWatch])
// changes the market at the same time, where the book's version could sell
// an item twice or overdraw the buyer.
//
// Uncontended it takes 5 round trips: acquire, WATCH, reads, MULTI/EXEC,
// release. A caller that finds the lock taken is queued by its acquire
// attempt and pays 1 more per blocking wait (one, when a release hands it
// the lock). If the purchase succeeded but releasing the lock
// failed, the purchase stands and BuyLocked reports success (the lock
// expires after its TTL). Errors are those of [Market.Buy] plus
// [ErrContended] (the lock stayed busy, or the WATCH kept failing), and
// lock.ErrNotHeld if the lock was lost before the purchase finished (the
// purchase itself is still all or nothing).
func (m *Market) BuyLocked(ctx context.Context, buyer, seller, item string, maxPrice int64) (int64, error) {
	if err := checkBuy(buyer, seller, item, maxPrice); err != nil {
		return 0, fmt.Errorf("market: buy: %w", err)
	}
	deadline := time.Now().Add(m.timeout)
	var (
		price  int64
		bought bool
	)
	err := m.locker.Do(ctx, m.name, m.lockTTL, func(held context.Context, _ *lock.Lock) error {
		var err error
		price, err = m.buyWatched(held, max(time.Until(deadline), time.Millisecond), buyer, seller, item, maxPrice)
		bought = err == nil
		return err
	}, lock.WithWait(m.timeout))
	if bought {
		return price, nil
	}
	if errors.Is(err, lock.ErrNotObtained) && !errors.Is(err, ErrContended) && ctx.Err() == nil &&
		!wait.Transient(err) {
		err = fmt.Errorf("%w: %w", ErrContended, err)
	}
	return 0, buyErr(buyer, seller, item, err)
}

// buyWatched is the WATCH/MULTI/EXEC purchase, retried until timeout.
func (m *Market) buyWatched(ctx context.Context, timeout time.Duration, buyer, seller, item string, maxPrice int64) (int64, error) {
	listings, buyerKey, mem := m.keys.listings, m.keys.user(buyer), member(seller, item)
	var paid int64
	err := txn.Watch(ctx, m.rdb, timeout, func(tx *redis.Tx) error {
		var (
			score *redis.FloatCmd
			funds *redis.StringCmd
		)
		if err := pipeErr(tx.Pipelined(ctx, func(p redis.Pipeliner) error {
			score = p.ZScore(ctx, listings, mem)
			funds = p.HGet(ctx, buyerKey, "funds")
			return nil
		})); err != nil {
			return err
		}
		price, err := listedPrice(score)
		if err != nil {
			return err
		}
		if funds.Err() == redis.Nil {
			return ErrUnknownUser
		}
		balance, err := parseFunds(funds.Val())
		if err != nil {
			return err
		}
		if price > maxPrice {
			return fmt.Errorf("%w: price %d, limit %d", ErrPriceTooHigh, price, maxPrice)
		}
		if balance < price {
			return fmt.Errorf("%w: price %d, funds %d", ErrInsufficientFunds, price, balance)
		}
		// The seller's balance cannot overflow (it never exceeds the money
		// supply), so no command of the transaction can fail on its own.
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HIncrBy(ctx, m.keys.user(seller), "funds", price)
			p.HIncrBy(ctx, buyerKey, "funds", -price)
			p.SAdd(ctx, m.keys.inventory(buyer), item)
			p.ZRem(ctx, listings, mem)
			return nil
		})
		if err == nil {
			paid = price
		}
		return err
	}, listings, buyerKey)
	return paid, contended(err)
}

// contended marks txn.Watch's give-up error with [ErrContended].
func contended(err error) error {
	if errors.Is(err, txn.ErrContended) {
		return fmt.Errorf("%w: %w", ErrContended, err)
	}
	return err
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
