package ria_test

import (
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/adtarget"
	"github.com/ria-go/ria/autocomplete"
	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/config"
	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/geoip"
	"github.com/ria-go/ria/jobsearch"
	"github.com/ria-go/ria/lock"
	"github.com/ria-go/ria/logs"
	"github.com/ria-go/ria/market"
	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/queue/dashboard"
	"github.com/ria-go/ria/replica"
	"github.com/ria-go/ria/search"
	"github.com/ria-go/ria/semaphore"
	"github.com/ria-go/ria/session"
	"github.com/ria-go/ria/shard"
	"github.com/ria-go/ria/social"
	"github.com/ria-go/ria/voting"
)

// A nil functional option is user input: every function that takes
// options refuses it with an error saying so, and none panics. (The
// analyzer's NewStandard, which returns no error, ignores it.)
func TestNilOptions(t *testing.T) {
	ctx := t.Context()
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	must := func(err error) { t.Helper(); require.NoError(t, err) }

	lk, err := lock.New(rdb)
	must(err)
	sem, err := semaphore.New(rdb, "s", 1, time.Minute)
	must(err)
	group, err := queue.New(rdb, "g")
	must(err)
	idx, err := search.New(rdb, "i")
	must(err)
	ctrs, err := counters.New(rdb)
	must(err)
	lg, err := logs.New(rdb)
	must(err)
	sess, err := session.New(rdb, "app")
	must(err)
	db, err := geoip.New(rdb, "d")
	must(err)

	calls := map[string]func() error{
		"adtarget.New":      func() error { _, err := adtarget.New(rdb, "a", nil); return err },
		"autocomplete.New":  func() error { _, err := autocomplete.New(rdb, nil); return err },
		"cache.New":         func() error { _, err := cache.New[string](rdb, "c", nil); return err },
		"chat.New":          func() error { _, err := chat.New(rdb, nil); return err },
		"config.New":        func() error { _, err := config.New(rdb, nil); return err },
		"counters.New":      func() error { _, err := counters.New(rdb, nil); return err },
		"Counters.Batcher":  func() error { _, err := ctrs.Batcher(nil); return err },
		"Counters.Stats":    func() error { _, err := ctrs.Stats("t", nil); return err },
		"geoip.New":         func() error { _, err := geoip.New(rdb, "d", nil); return err },
		"DB.ImportRanges":   func() error { _, err := db.ImportRanges(ctx, strings.NewReader(""), nil); return err },
		"jobsearch.New":     func() error { _, err := jobsearch.New(rdb, "j", nil); return err },
		"lock.New":          func() error { _, err := lock.New(rdb, nil); return err },
		"Locker.Acquire":    func() error { _, err := lk.Acquire(ctx, "l", time.Minute, nil); return err },
		"Locker.AcquireAll": func() error { _, err := lk.AcquireAll(ctx, []string{"l"}, time.Minute, nil); return err },
		"RWLock.Lock":       func() error { _, err := lk.RW("rw").Lock(ctx, time.Minute, nil); return err },
		"logs.New":          func() error { _, err := logs.New(rdb, nil); return err },
		"Logs.Handler":      func() error { _, err := lg.Handler("h", nil); return err },
		"market.New":        func() error { _, err := market.New(rdb, "m", nil); return err },
		"queue.New":         func() error { _, err := queue.New(rdb, "g", nil); return err },
		"queue.NewWorker":   func() error { _, err := queue.NewWorker(group, nil); return err },
		"Group.Enqueue":     func() error { _, err := group.Enqueue(ctx, "q", "n", 1, nil); return err },
		"Group.EnqueueBatch": func() error {
			_, err := group.EnqueueBatch(ctx, []queue.Job{{Queue: "q", Name: "n", Options: []queue.EnqueueOption{nil}}})
			return err
		},
		"dashboard.New":     func() error { _, err := dashboard.New(group, nil); return err },
		"replica.New":       func() error { _, err := replica.New(rdb, nil); return err },
		"search.New":        func() error { _, err := search.New(rdb, "i", nil); return err },
		"Index.Search":      func() error { _, err := idx.Search(ctx, "word", nil); return err },
		"semaphore.New":     func() error { _, err := semaphore.New(rdb, "s", 1, time.Minute, nil); return err },
		"Semaphore.Acquire": func() error { _, err := sem.Acquire(ctx, nil); return err },
		"session.New":       func() error { _, err := session.New(rdb, "app", nil); return err },
		"Store.Cleaner":     func() error { _, err := sess.Cleaner(10, nil); return err },
		"shard.NewList":     func() error { _, err := shard.NewList(ctx, rdb, "l", nil); return err },
		"social.New":        func() error { _, err := social.New(rdb, group, nil); return err },
		"voting.New":        func() error { _, err := voting.New(rdb, "v", nil); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			assert.ErrorContains(t, err, "nil option")
		})
	}
	assert.NotNil(t, search.NewStandard(nil).Terms("ignored, not a panic"))
}
