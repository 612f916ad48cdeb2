package queue

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// CronSpec is a parsed cron schedule ([ParseCron]): the minutes it names,
// in UTC. The zero CronSpec never matches.
type CronSpec struct {
	spec                     string
	minute, hour, dom, month uint64 // bit v set: value v matches
	dow                      uint64 // bit 0 Sunday ... bit 6 Saturday
	domStar, dowStar         bool   // the field starts with '*' (see ParseCron)
	ok                       bool
}

// cronSearch bounds the search of [CronSpec.Next] and [CronSpec.Prev]: a
// spec that matches only on 29 February may wait 8 years (2096 to 2104).
const cronSearch = 10

type cronField struct {
	name     string
	min, max int
	names    map[string]int
}

var cronFields = [5]cronField{
	{"minute", 0, 59, nil},
	{"hour", 0, 23, nil},
	{"day of month", 1, 31, nil},
	{"month", 1, 12, map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}},
	{"day of week", 0, 7, map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}},
}

var cronMacros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// ParseCron parses a standard 5-field cron spec,
//
//	minute hour day-of-month month day-of-week
//
// (minute 0-59, hour 0-23, day of month 1-31, month 1-12 or JAN-DEC, day of
// week 0-7 or SUN-SAT, 0 and 7 both Sunday, so a range may end on Sunday:
// "fri-sun"; names in any case), each field
// a comma-separated list of "*", a value "v", a range "a-b", each with an
// optional step "/s" ("*/15", "1-30/2"; "a/s" is "a-max/s"), or one of the
// macros @yearly (@annually), @monthly, @weekly, @daily (@midnight) and
// @hourly. Times are in UTC.
//
// As in Vixie cron, when both the day of month and the day of week are
// restricted (neither field starts with '*'), a day matches if either
// does: "0 0 13 * 5" runs on every 13th and every Friday. A spec that can
// never match (30 February) is an error. The error names the field and
// the value that is wrong.
func ParseCron(spec string) (CronSpec, error) {
	s := strings.TrimSpace(spec)
	if m, ok := cronMacros[strings.ToLower(s)]; ok {
		s = m
	} else if strings.HasPrefix(s, "@") {
		return CronSpec{}, fmt.Errorf("cron %q: unknown macro (want @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)", spec)
	}
	fs := strings.Fields(s)
	if len(fs) != 5 {
		return CronSpec{}, fmt.Errorf("cron %q: %d fields: want 5 (minute hour day-of-month month day-of-week)", spec, len(fs))
	}
	c := CronSpec{spec: spec, ok: true}
	dst := [5]*uint64{&c.minute, &c.hour, &c.dom, &c.month, &c.dow}
	for i, f := range fs {
		set, err := parseCronField(f, cronFields[i])
		if err != nil {
			return CronSpec{}, fmt.Errorf("cron %q: field %d (%s): %w", spec, i+1, cronFields[i].name, err)
		}
		*dst[i] = set
	}
	if c.dow&(1<<7) != 0 {
		c.dow = c.dow&^(1<<7) | 1
	}
	c.domStar, c.dowStar = fs[2][0] == '*', fs[4][0] == '*'
	if !c.possible() {
		return CronSpec{}, fmt.Errorf("cron %q: day of month %q never falls in month %q", spec, fs[2], fs[3])
	}
	return c, nil
}

func parseCronField(f string, fd cronField) (uint64, error) {
	var set uint64
	for _, part := range strings.Split(f, ",") {
		rng, stepText, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 || n > fd.max {
				return 0, fmt.Errorf("%q: step %q: want a number from 1 to %d", part, stepText, fd.max)
			}
			step = n
		}
		var lo, hi int
		switch {
		case rng == "*":
			lo, hi = fd.min, fd.max
			if fd.names != nil && fd.max == 7 {
				hi = 6 // 7 is Sunday again
			}
		case rng == "":
			return 0, fmt.Errorf("%q: empty value", part)
		default:
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = cronValue(a, fd); err != nil {
				return 0, fmt.Errorf("%q: %w", part, err)
			}
			hi = lo
			switch {
			case isRange:
				if hi, err = cronValue(b, fd); err != nil {
					return 0, fmt.Errorf("%q: %w", part, err)
				}
				if hi == 0 && lo > 0 && fd.max == 7 {
					hi = 7 // a range of days of week may end on Sunday: "fri-sun" (not "sun-sun")
				}
				if hi < lo {
					return 0, fmt.Errorf("%q: range %d-%d: end before start", part, lo, hi)
				}
			case hasStep:
				hi = fd.max
			}
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << v
		}
	}
	return set, nil
}

func cronValue(s string, fd cronField) (int, error) {
	if v, ok := fd.names[strings.ToLower(s)]; ok {
		return v, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || len(s) > 2 {
		if fd.names != nil {
			return 0, fmt.Errorf("value %q: want a number from %d to %d or a name", s, fd.min, fd.max)
		}
		return 0, fmt.Errorf("value %q: want a number from %d to %d", s, fd.min, fd.max)
	}
	if v < fd.min || v > fd.max {
		return 0, fmt.Errorf("value %d: out of range %d-%d", v, fd.min, fd.max)
	}
	return v, nil
}

// possible reports whether some day of some month matches.
func (c CronSpec) possible() bool {
	if !c.domStar && !c.dowStar || c.domStar {
		return true // any day of week matches some day; '*' matches every day
	}
	// Only the day of month restricts the day.
	days := [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	for m := 1; m <= 12; m++ {
		if c.month&(1<<m) != 0 && c.dom&(1<<(days[m]+1)-1) != 0 {
			return true
		}
	}
	return false
}

// String returns the spec as given to [ParseCron].
func (c CronSpec) String() string { return c.spec }

func (c CronSpec) dayMatches(t time.Time) bool {
	dom := c.dom&(1<<t.Day()) != 0
	dow := c.dow&(1<<int(t.Weekday())) != 0
	if c.domStar || c.dowStar {
		return dom && dow
	}
	return dom || dow
}

// Next returns the first time the spec names that is after t (a whole
// minute, in UTC), or the zero time if there is none within 10 years.
func (c CronSpec) Next(t time.Time) time.Time {
	if !c.ok {
		return time.Time{}
	}
	t = t.UTC().Truncate(time.Minute).Add(time.Minute)
	limit := t.AddDate(cronSearch, 0, 0)
	for t.Before(limit) {
		y, m, d := t.Date()
		switch {
		case c.month&(1<<int(m)) == 0:
			t = time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
		case !c.dayMatches(t):
			t = time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
		case c.hour&(1<<t.Hour()) == 0:
			t = time.Date(y, m, d, t.Hour()+1, 0, 0, 0, time.UTC)
		case c.minute&(1<<t.Minute()) == 0:
			// Skip to the next minute of the set within this hour, if any.
			if rest := c.minute >> (t.Minute() + 1) << (t.Minute() + 1); rest != 0 {
				t = time.Date(y, m, d, t.Hour(), bits.TrailingZeros64(rest), 0, 0, time.UTC)
			} else {
				t = time.Date(y, m, d, t.Hour()+1, 0, 0, 0, time.UTC)
			}
		default:
			return t
		}
	}
	return time.Time{}
}

// Prev returns the last time the spec names that is at or before t (a
// whole minute, in UTC), or the zero time if there is none within 10
// years.
func (c CronSpec) Prev(t time.Time) time.Time {
	if !c.ok {
		return time.Time{}
	}
	t = t.UTC().Truncate(time.Minute)
	limit := t.AddDate(-cronSearch, 0, 0)
	for t.After(limit) {
		y, m, d := t.Date()
		switch {
		case c.month&(1<<int(m)) == 0:
			t = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Add(-time.Minute)
		case !c.dayMatches(t):
			t = time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Add(-time.Minute)
		case c.hour&(1<<t.Hour()) == 0:
			t = time.Date(y, m, d, t.Hour(), 0, 0, 0, time.UTC).Add(-time.Minute)
		case c.minute&(1<<t.Minute()) == 0:
			// Back to the last minute of the set within this hour, if any.
			if below := c.minute & (1<<t.Minute() - 1); below != 0 {
				t = time.Date(y, m, d, t.Hour(), 63-bits.LeadingZeros64(below), 0, 0, time.UTC)
			} else {
				t = time.Date(y, m, d, t.Hour(), 0, 0, 0, time.UTC).Add(-time.Minute)
			}
		default:
			return t
		}
	}
	return time.Time{}
}
