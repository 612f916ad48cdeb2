package logs_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/logs"
)

// bookLogCommon is the book's log_common (listing 5.2) with its
// log_recent: WATCH the hour's start key, GET it, then MULTI: rotate if the
// hour changed, ZINCRBY, LPUSH, LTRIM, EXEC; again on a WatchError. Three
// round trips when nobody else writes.
func bookLogCommon(ctx context.Context, rdb *redis.Client, prefix, name, severity, message string) error {
	dest := prefix + "common:" + name + ":" + severity
	startKey := dest + ":start"
	recent := prefix + "recent:" + name + ":" + severity
	for {
		err := rdb.Watch(ctx, func(tx *redis.Tx) error {
			hourStart := time.Now().UTC().Truncate(time.Hour).Format("2006-01-02T15:04:05")
			existing, err := tx.Get(ctx, startKey).Result()
			if err != nil && err != redis.Nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				if existing != "" && existing < hourStart {
					p.Rename(ctx, dest, dest+":last")
					p.Rename(ctx, startKey, dest+":pstart")
					p.Set(ctx, startKey, hourStart, 0)
				} else if existing == "" {
					p.Set(ctx, startKey, hourStart, 0)
				}
				p.ZIncrBy(ctx, dest, 1, message)
				p.LPush(ctx, recent, time.Now().Format(time.ANSIC)+" "+message)
				p.LTrim(ctx, recent, 0, 99)
				return nil
			})
			return err
		}, startKey)
		if !errors.Is(err, redis.TxFailedErr) {
			return err
		}
	}
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// BenchmarkLogCommon_vsBook interleaves, in each iteration (a round),
// 300 ms windows of ria's LogCommon, of the book's log_common and of a plain
// go-redis LPUSH loop (the one-round-trip limit), at one client on a real
// redis-server, and reports the medians of their writes/s and the ratios.
// Run it with -benchtime Nx for N rounds.
func BenchmarkLogCommon_vsBook(b *testing.B) {
	be := redistest.New(b, redistest.Standalone)
	ctx := b.Context()
	rdb := redis.NewClient(&redis.Options{Addr: be.Addrs()[0]})
	b.Cleanup(func() { _ = rdb.Close() })
	l, err := logs.New(rdb, logs.WithPrefix(be.Prefix))
	if err != nil {
		b.Fatal(err)
	}
	e := logs.Entry{Severity: logs.Info, Message: "request served"}
	ops := map[string]func() error{
		"ria":   func() error { return l.LogCommon(ctx, "app", e) },
		"book":  func() error { return bookLogCommon(ctx, rdb, be.Prefix+"book:", "app", logs.Info, e.Message) },
		"lpush": func() error { return rdb.LPush(ctx, be.Prefix+"plain", e.Message).Err() },
	}
	for _, op := range ops {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	const window = 300 * time.Millisecond
	got := map[string][]float64{}
	for b.Loop() {
		for _, name := range []string{"ria", "book", "lpush"} {
			n, start := 0, time.Now()
			for time.Since(start) < window {
				if err := ops[name](); err != nil {
					b.Fatal(err)
				}
				n++
			}
			got[name] = append(got[name], float64(n)/time.Since(start).Seconds())
		}
	}
	for name, v := range got {
		b.ReportMetric(median(v), name+"_ops/s")
	}
	b.ReportMetric(median(got["ria"])/median(got["book"]), "ria/book")
	b.ReportMetric(median(got["ria"])/median(got["lpush"]), "ria/lpush")
}
