package counters_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/counters"
	"github.com/ria-go/ria/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// t0 is a fixed test time: 30 s before an hour boundary.
var t0 = time.Unix(1_700_002_770, 0)

// hourEnd is the hour boundary after t0.
var hourEnd = time.Unix(1_700_002_800, 0)

// clock is a test clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// newCounters returns Counters under the test's prefix, on the clock at
// t0 unless opts give another.
func newCounters(t *testing.T, b *redistest.Backend, rdb counters.Client, opts ...counters.Option) (*counters.Counters, *clock) {
	t.Helper()
	clk := &clock{now: t0}
	c, err := counters.New(rdb, append([]counters.Option{counters.WithPrefix(b.Prefix), counters.WithClock(clk.Now)}, opts...)...)
	require.NoError(t, err)
	return c, clk
}

// key returns the name of a key of counter name.
func key(b *redistest.Backend, name, part string) string { return b.Prefix + "{" + name + "}:" + part }

// sum adds the counts of samples.
func sum(s []counters.Sample) int64 {
	var n int64
	for _, x := range s {
		n += x.Count
	}
	return n
}

// errorOr returns err, or a new error from format when err is nil.
func errorOr(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf(format, args...)
}

// slice returns the start of the slice of step that holds at (Unix
// seconds divisible by step; time.Truncate counts from year 1 instead).
func slice(at time.Time, step time.Duration) time.Time {
	s := int64(step / time.Second)
	u := at.Unix()
	return time.Unix(u-u%s, 0)
}
