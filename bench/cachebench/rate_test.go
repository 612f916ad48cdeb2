package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/bench/internal/server"
	"github.com/ria-go/ria/cache"
)

// ria's limiter and redis_rate answer the same sequence of requests alike:
// allowed and remaining exactly, retry-after and reset-after within the
// time that passes between the two calls of a pair. The limits leave
// milliseconds between requests let through, so that the microseconds
// between the two calls of a pair do not change an answer. One known
// difference: redis_rate computes in float seconds since 2017 and may
// truncate a remaining count one low (burst 20, one request: 18.99999 -> 18
// left); ria counts whole microseconds (19). Remaining may be one above
// redis_rate's, never below.
func TestLimiterMatchesRedisRate(t *testing.T) {
	ctx := context.Background()
	srv, err := server.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ria, err := cache.NewLimiter(rdb, "diff", cache.WithPrefix("t:ria:"))
	if err != nil {
		t.Fatal(err)
	}
	rr := redis_rate.NewLimiter(rdb)
	const tolerance = 20 * time.Millisecond
	near := func(a, b time.Duration) bool { return a-b < tolerance && b-a < tolerance }
	for li, l := range []cache.Limit{
		cache.PerSecond(5), cache.PerMinute(10), {Rate: 3, Burst: 7, Period: time.Hour}, {Rate: 50, Burst: 20, Period: time.Second},
	} {
		rl := redis_rate.Limit{Rate: l.Rate, Burst: l.Burst, Period: l.Period}
		key := fmt.Sprint("k", li)
		for i := range 40 {
			n := 1 + i%3
			a, err := ria.AllowN(ctx, key, l, n)
			if err != nil {
				t.Fatal(err)
			}
			b, err := rr.AllowN(ctx, "t:rr:"+key, rl, n)
			if err != nil {
				t.Fatal(err)
			}
			if a.Allowed != b.Allowed || (a.Remaining != b.Remaining && a.Remaining != b.Remaining+1) || !near(a.RetryAfter, b.RetryAfter) || !near(a.ResetAfter, b.ResetAfter) {
				t.Errorf("limit %+v request %d (n=%d): ria %+v, redis_rate %+v", l, i, n, a, *b)
			}
		}
	}
}
