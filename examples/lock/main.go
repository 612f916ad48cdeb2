// Command lock runs the book's marketplace purchase (Redis in Action 6.2.3,
// purchase_item_with_lock) protected by a ria lock: five buyers race for one
// item; the lock makes the check-then-transfer atomic, so exactly one buys it
// and no money is created or lost. Then readers and a seller share the
// catalog through a read/write lock.
//
//	go run ./examples/lock                       # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/lock
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/lock"
)

var errNotForSale = errors.New("item not for sale or too expensive")

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "lock example:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	ctx := context.Background()
	const prefix = "example:lock:"
	market, seller := prefix+"market:", prefix+"users:17"
	buyers := []string{"27", "28", "29", "30", "31"}

	// The seller lists ItemA for 10; each buyer has 125.
	pipe := rdb.TxPipeline()
	pipe.Del(ctx, market, seller)
	pipe.HSet(ctx, seller, "name", "Frank", "funds", 0)
	for _, b := range buyers {
		pipe.Del(ctx, prefix+"inventory:"+b)
		pipe.HSet(ctx, prefix+"users:"+b, "name", "buyer"+b, "funds", 125)
	}
	pipe.ZAdd(ctx, market, redis.Z{Member: "ItemA.17", Score: 10})
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}

	locker, err := lock.New(rdb, lock.WithPrefix(prefix+"lock:"))
	if err != nil {
		return err
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
	)
	for _, b := range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := purchase(ctx, rdb, locker, prefix, b, "ItemA", "17")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				winners = append(winners, b)
			case !errors.Is(err, errNotForSale):
				fmt.Println("buyer", b, "error:", err)
			}
		}()
	}
	wg.Wait()

	total := 0
	for _, u := range append([]string{"17"}, buyers...) {
		funds, err := rdb.HGet(ctx, prefix+"users:"+u, "funds").Int()
		if err != nil {
			return err
		}
		total += funds
	}
	left, err := rdb.ZCard(ctx, market).Result()
	if err != nil {
		return err
	}
	fmt.Printf("buyers that got ItemA: %d\n", len(winners))
	fmt.Printf("winner's funds: %s, seller's funds: %s\n",
		rdb.HGet(ctx, prefix+"users:"+winners[0], "funds").Val(), rdb.HGet(ctx, seller, "funds").Val())
	fmt.Printf("winner's inventory: %v\n", rdb.SMembers(ctx, prefix+"inventory:"+winners[0]).Val())
	fmt.Printf("items left on the market: %d, total funds: %d (was %d)\n", left, total, 125*len(buyers))
	if len(winners) != 1 || total != 125*len(buyers) || left != 0 {
		return errors.New("invariant broken")
	}
	return browse(ctx, rdb, locker, prefix)
}

// browse shares the market's catalog through a read/write lock: eight
// readers read it at once, while a seller relists it five times under the
// write lock, writing its two fields in two commands. No reader sees a
// half-made relisting (the two fields always agree).
func browse(ctx context.Context, rdb redis.UniversalClient, locker *lock.Locker, prefix string) error {
	catalog := prefix + "catalog"
	if err := rdb.HSet(ctx, catalog, "version", 0, "listed", 0).Err(); err != nil {
		return err
	}
	rw := locker.RW("catalog")
	var (
		wg          sync.WaitGroup
		mu          sync.Mutex
		reads, torn int
		errs        []error
	)
	for range 8 {
		wg.Go(func() {
			for range 10 {
				err := rw.DoRead(ctx, 10*time.Second, func(ctx context.Context, _ *lock.RWHold) error {
					v, err := rdb.HMGet(ctx, catalog, "version", "listed").Result()
					if err != nil {
						return err
					}
					mu.Lock()
					defer mu.Unlock()
					reads++
					if v[0] != v[1] {
						torn++
					}
					return nil
				}, lock.WithWait(10*time.Second))
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	for i := 1; i <= 5; i++ {
		err := rw.DoWrite(ctx, 10*time.Second, func(ctx context.Context, _ *lock.RWHold) error {
			if err := rdb.HSet(ctx, catalog, "version", i).Err(); err != nil {
				return err
			}
			return rdb.HSet(ctx, catalog, "listed", i).Err() // a second command: not atomic alone
		}, lock.WithWait(10*time.Second))
		if err != nil {
			return err
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Printf("catalog: %d reads by 8 readers beside 5 relistings, torn reads: %d\n", reads, torn)
	if torn != 0 {
		return errors.New("a reader saw a half-made relisting")
	}
	return nil
}

// purchase is the book's purchase_item_with_lock: under the market lock,
// check the price and the buyer's funds, then move money and item in one
// MULTI/EXEC. The lock is released whatever happens.
func purchase(ctx context.Context, rdb redis.UniversalClient, locker *lock.Locker, prefix, buyer, item, seller string) error {
	return locker.Do(ctx, "market", 10*time.Second, func(ctx context.Context, l *lock.Lock) error {
		member := item + "." + seller
		price, err := rdb.ZScore(ctx, prefix+"market:", member).Result()
		if errors.Is(err, redis.Nil) {
			return errNotForSale
		}
		if err != nil {
			return err
		}
		funds, err := rdb.HGet(ctx, prefix+"users:"+buyer, "funds").Float64()
		if err != nil {
			return err
		}
		if price > funds {
			return errNotForSale
		}
		_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HIncrBy(ctx, prefix+"users:"+seller, "funds", int64(price))
			p.HIncrBy(ctx, prefix+"users:"+buyer, "funds", -int64(price))
			p.SAdd(ctx, prefix+"inventory:"+buyer, item)
			p.ZRem(ctx, prefix+"market:", member)
			return nil
		})
		return err
	}, lock.WithWait(5*time.Second))
}
