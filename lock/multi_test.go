package lock_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/lock"
)

func newLockerOn(t *testing.T, b *redistest.Backend, rdb lock.Client) *lock.Locker {
	t.Helper()
	lk, err := lock.New(rdb, lock.WithPrefix(b.Prefix))
	require.NoError(t, err)
	return lk
}

// Goroutines on two clients take random overlapping sets of five locks,
// named in random order: no deadlock, and no lock is ever held by two at
// once.
func TestAcquireAll_noDeadlockMutualExclusion(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		other, _ := b.NewClient()
		lks := []*lock.Locker{newLockerOn(t, b, b.Client), newLockerOn(t, b, other)}
		names := []string{"a", "b", "c", "d", "e"}
		var holders [5]atomic.Int32
		var wg sync.WaitGroup
		var done atomic.Int64
		for g := range 8 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 1))
				for range 15 {
					set := []string{}
					for _, i := range rng.Perm(5)[:1+rng.IntN(3)] {
						set = append(set, names[i])
					}
					err := lks[g%2].DoAll(ctx, set, 10*time.Second, func(ctx context.Context, m *lock.Multi) error {
						for _, l := range m.Locks() {
							i := int(l.Name()[0] - 'a')
							if n := holders[i].Add(1); n != 1 {
								return fmt.Errorf("lock %s held by %d", l.Name(), n)
							}
						}
						runtime.Gosched() // let another holder, if the locks failed, overlap
						for _, l := range m.Locks() {
							holders[int(l.Name()[0]-'a')].Add(-1)
						}
						return nil
					})
					if !assert.NoError(t, err) {
						return
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int64(8*15), done.Load())
	})
}

// All or none: with one lock of the set held elsewhere, WithWait(0) gets
// none of them and leaves the free ones free; once it is released, all.
func TestAcquireAll_allOrNone(t *testing.T) {
	redistest.RunAll(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		lk := newLockerOn(t, b, b.Client)
		held, err := lk.TryAcquire(ctx, "c", time.Minute)
		require.NoError(t, err)
		_, err = lk.AcquireAll(ctx, []string{"c", "a", "b"}, time.Minute, lock.WithWait(0))
		require.ErrorIs(t, err, lock.ErrNotObtained)
		for _, n := range []string{"a", "b"} {
			l, err := lk.TryAcquire(ctx, n, time.Minute)
			require.NoError(t, err, "%s was given back", n)
			require.NoError(t, l.Release(ctx))
		}
		_, err = lk.AcquireAll(ctx, []string{"a", "c"}, time.Minute, lock.WithWait(50*time.Millisecond))
		require.ErrorIs(t, err, lock.ErrNotObtained)

		require.NoError(t, held.Release(ctx))
		m, err := lk.AcquireAll(ctx, []string{"c", "a", "b", "a"}, time.Minute)
		require.NoError(t, err)
		var got []string
		for _, l := range m.Locks() {
			got = append(got, l.Name())
		}
		assert.Equal(t, []string{"a", "b", "c"}, got, "sorted, duplicates once")
		require.NoError(t, m.Extend(ctx, 2*time.Minute))
		require.NoError(t, m.Release(ctx))
		assert.ErrorIs(t, m.Release(ctx), lock.ErrNotHeld)

		many := make([]string, lock.MaxMulti+1)
		for i := range many {
			many[i] = "n" + strconv.Itoa(i)
		}
		for _, bad := range [][]string{nil, {""}, {"a{b"}, many} {
			_, err := lk.AcquireAll(ctx, bad, time.Minute)
			assert.Error(t, err, "%q", bad)
		}
		_, err = lk.AcquireAll(ctx, many, time.Minute)
		assert.EqualError(t, err, fmt.Sprintf("lock: acquire all: %d names: want 1 to %d", lock.MaxMulti+1, lock.MaxMulti))
		_, err = lk.AcquireAll(ctx, []string{"a"}, 0)
		assert.Error(t, err)
		assert.Error(t, lk.DoAll(ctx, []string{"a"}, time.Minute, nil))
		err = lk.DoAll(ctx, []string{"a", "b"}, time.Minute, func(context.Context, *lock.Multi) error { return errors.New("fn failed") })
		assert.EqualError(t, err, "fn failed")
		l, err := lk.TryAcquire(ctx, "b", time.Minute)
		require.NoError(t, err, "DoAll released its locks")
		require.NoError(t, l.Release(ctx))
	})
}

// A lock of the set taken first is lost while a later one is awaited (its
// TTL runs out, another caller takes it): AcquireAll and DoAll give the set
// back and return ErrNotObtained naming that lock, with ErrNotHeld (they
// used to return the extension's ErrNotHeld alone, which the doc promises
// for a set it could not get).
func TestAcquireAll_earlierLockLost_notObtained(t *testing.T) {
	for _, doAll := range []bool{false, true} {
		t.Run(map[bool]string{false: "AcquireAll", true: "DoAll"}[doAll], func(t *testing.T) {
			redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
				ctx := t.Context()
				lk, other := newLocker(b), newLocker(b)
				hb, err := other.TryAcquire(ctx, "b", time.Minute)
				require.NoError(t, err)

				// a TTL so short that taking the set lasts more than a
				// tenth of it: a is extended once b is held
				const ttl = 5 * time.Millisecond
				done := make(chan error, 1)
				ran := make(chan struct{}, 1)
				go func() {
					if doAll {
						done <- lk.DoAll(ctx, []string{"b", "a"}, ttl, func(context.Context, *lock.Multi) error {
							ran <- struct{}{}
							return nil
						}, lock.WithWait(20*time.Second))
						return
					}
					m, err := lk.AcquireAll(ctx, []string{"b", "a"}, ttl, lock.WithWait(20*time.Second))
					if err == nil {
						_ = m.Release(context.WithoutCancel(ctx))
					}
					done <- err
				}()
				waitForWaiters(t, b, "b", 1) // a taken, waiting for b
				expireNow(t, b, ownerKey(b, "a"))
				var ha *lock.Lock
				require.Eventually(t, func() bool {
					ha, err = other.TryAcquire(ctx, "a", time.Minute)
					return err == nil
				}, 10*time.Second, time.Millisecond, "another caller takes a")
				require.NoError(t, hb.Release(ctx)) // hands b over
				err = <-done
				assert.ErrorIs(t, err, lock.ErrNotObtained)
				assert.ErrorIs(t, err, lock.ErrNotHeld)
				assert.ErrorContains(t, err, `"a"`)
				assert.Empty(t, ran, "fn did not run")
				assert.Equal(t, ha.Token(), owner(t, b, "a"), "a stays with its new holder")
				assert.Equal(t, "", owner(t, b, "b"), "b was given back")
			})
		})
	}
}
