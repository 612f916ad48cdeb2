package script

import "strconv"

// ParseInt parses s as Redis reads an integer (INCRBY, HINCRBY) and as
// check.lua's is_int64 does: canonical decimal, no '+', no leading zero,
// no "-0", within int64. Go readers of counters the scripts write use it,
// so that they refuse what the scripts refuse (strconv.ParseInt alone
// reads "+5", "007" and "-0").
func ParseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && strconv.FormatInt(n, 10) == s
}

// ParseCount parses s as check.lua's is_count: ParseInt within ±2^53,
// which Lua's numbers hold exactly.
func ParseCount(s string) (int64, bool) {
	n, ok := ParseInt(s)
	return n, ok && n >= -1<<53 && n <= 1<<53
}
