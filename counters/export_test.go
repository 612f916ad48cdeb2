package counters

import "time"

// SetBatcherClock sets the clock b dates its re-sends by.
func SetBatcherClock(b *Batcher, now func() time.Time) { b.now = now }
