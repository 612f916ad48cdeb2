package counters

// knownKey is a HASH that makes counter name known to cleaners and
// [Counters.Names]: step in seconds -> samples kept at that precision;
// "w<step>" -> the lowest slice start (Unix s) an update may still write
// there (the start of the retention when the precision was first used,
// raised by every clean); "cfg" -> the precisions of the last writer.
func (c *Counters) knownKey(name string) string { return c.keys.Key(name, "known") }

// samplesKey is a HASH of the samples of counter name at every precision:
// "<step>:<slice start>" (seconds, Unix seconds) -> count.
func (c *Counters) samplesKey(name string) string { return c.keys.Key(name, "samples") }

// statsKey is a HASH of the statistics of context under type typ for one
// hour: "hour" (Unix s of its start), "count", "sum", "min", "max",
// "sumsq". part is "cur" (the newest hour) or "last" (the hour before).
// Every key of a type shares its hash tag, {typ}.
func (c *Counters) statsKey(typ, context, part string) string {
	return c.stats.Key(typ, part+":"+context)
}

// slowestKey is a ZSET of the contexts of type typ timed by [Stats.Record],
// scored by the mean of the hour of their last recording; the slowest
// [WithSlowestKept] are kept.
func (c *Counters) slowestKey(typ string) string { return c.stats.Key(typ, "slowest") }
