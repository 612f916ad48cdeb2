package cache_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/cache"
	"github.com/ria-go/ria/internal/redistest"
)

// claims matches a Get's first command (SET NX PX GET), alone or first in
// a pipeline.
func claims(cmds []redis.Cmder) bool {
	a := cmds[0].Args()
	return cmds[0].Name() == "set" && len(a) > 3 && a[3] == "nx"
}

// Gets made while another Get's first command is on its way send theirs
// together in one pipeline, and each gets its own answer: hits their
// values, a miss its lease (then it loads and stores). With refresh ahead
// on, each claim carries its PTTL.
func TestCache_claimsShared(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		for _, refresh := range []bool{false, true} {
			t.Run(fmt.Sprint("refresh=", refresh), func(t *testing.T) {
				rdb, cnt := b.NewClient()
				gt := redistest.NewGate(claims)
				rdb.AddHook(gt)
				var opts []cache.Option
				if refresh {
					opts = append(opts, cache.WithRefreshAhead(time.Second))
				}
				c := newCache[string](t, rdb, b, opts...)
				// The first ClaimInflight Gets' claims go out at once and
				// are held; the next four wait, then share one pipeline.
				// The last key is missing.
				n := cache.ClaimInflight + 4
				k := func(i int) string { return fmt.Sprintf("r%v-k%d", refresh, i) }
				for i := range n {
					require.NoError(t, c.Set(ctx, k(i), fmt.Sprint("v", i))) // the store script cached on each node
				}
				require.NoError(t, c.Delete(ctx, k(n-1)))
				load := func(i int) func(context.Context) (string, error) {
					return func(context.Context) (string, error) { return fmt.Sprint("loaded", i), nil }
				}
				var batched []string // a pipeline is one round trip per node it reaches
				for i := cache.ClaimInflight; i < n; i++ {
					batched = append(batched, key(b, "jobs", k(i), "val"))
				}

				type got struct {
					v   string
					err error
				}
				results := make([]chan got, n)
				get := func(i int) {
					results[i] = make(chan got, 1)
					go func() {
						v, err := c.Get(ctx, k(i), load(i))
						results[i] <- got{v, err}
					}()
				}
				r0 := cnt.RoundTrips()
				var holds []*redistest.Hold
				for i := range cache.ClaimInflight {
					holds = append(holds, gt.Arm())
					get(i)
					holds[i].Entered()
				}
				for i := cache.ClaimInflight; i < n; i++ {
					get(i)
					require.Eventually(t, func() bool { return c.ClaimsWaitingForTest() == i-cache.ClaimInflight+1 },
						time.Minute, time.Millisecond)
				}
				for _, h := range holds {
					h.Release()
				}
				for i, ch := range results {
					want := fmt.Sprint("v", i)
					if i == n-1 {
						want = fmt.Sprint("loaded", i)
					}
					assert.Equal(t, got{want, nil}, <-ch, "Get %d", i)
				}
				assert.Equal(t, int64(cache.ClaimInflight)+nodes(t, b, batched...)+1, cnt.RoundTrips()-r0,
					"the first claims alone, the other four in one pipeline, the miss's store")
				v, err := c.Get(ctx, k(n-1), load(-1))
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprint("loaded", n-1), v, "stored")
			})
		}
	})
}

// A Get whose context ends while its claim is on its way in a pipeline
// that another Get sends still reads its reply: the lease it took is given
// back, not left for other Gets to wait out.
func TestCache_claimCancelled(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		rdb, _ := b.NewClient()
		gt := redistest.NewGate(claims)
		rdb.AddHook(gt)
		c := newCache[string](t, rdb, b)
		notCalled := func(context.Context) (string, error) { return "", errors.New("not called") }
		var hits []chan error
		hit := func(i int) {
			k := fmt.Sprint("hit", i) // Gets of one key in a process share one claim
			require.NoError(t, c.Set(ctx, k, "v"))
			ch := make(chan error, 1)
			hits = append(hits, ch)
			go func() {
				_, err := c.Get(ctx, k, notCalled)
				ch <- err
			}()
		}
		var first []*redistest.Hold
		for i := range cache.ClaimInflight {
			first = append(first, gt.Arm())
			hit(i)
			first[i].Entered()
		}
		hit(cache.ClaimInflight) // leads the next pipeline
		require.Eventually(t, func() bool { return c.ClaimsWaitingForTest() == 1 }, time.Minute, time.Millisecond)
		gctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := c.Get(gctx, "miss", func(ctx context.Context) (string, error) { return "", ctx.Err() })
			done <- err
		}()
		require.Eventually(t, func() bool { return c.ClaimsWaitingForTest() == 2 }, time.Minute, time.Millisecond)
		shared := gt.Arm()
		first[0].Release() // the two waiting leave together, and are held
		shared.Entered()
		cancel()
		select {
		case err := <-done:
			t.Fatalf("the Get returned (%v) while its claim was on its way", err)
		case <-time.After(20 * time.Millisecond): // a failure shows here most times; no wait is needed to pass
		}
		for _, h := range append(first[1:], shared) {
			h.Release()
		}
		for _, ch := range hits {
			require.NoError(t, <-ch)
		}
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.Empty(t, raw(t, b, key(b, "jobs", "miss", "val")), "no lease left behind")
		v, err := c.Get(ctx, "miss", func(context.Context) (string, error) { return "fresh", nil })
		require.NoError(t, err)
		assert.Equal(t, "fresh", v)
	})
}
