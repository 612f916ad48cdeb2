package logs

import (
	"log/slog"
	"strconv"
	"strings"
	"unicode"
)

// severity returns the book's severity of a slog level: below Info
// "debug", below Warn "info", below Error "warning", below Error+4
// "error", from there "critical".
func severity(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return Debug
	case l < slog.LevelWarn:
		return Info
	case l < slog.LevelError:
		return Warning
	case l < slog.LevelError+4:
		return Error
	}
	return Critical
}

// appendAttr appends " key=value" for a (groups flattened as
// "group.key"), prefixing keys with group.
func appendAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, x := range a.Value.Group() {
			appendAttr(b, g, x)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(quote(group + a.Key))
	b.WriteByte('=')
	b.WriteString(quote(a.Value.String()))
}

// quote returns s, quoted when it is empty or holds a space, '=', '"' or
// a character that is not printable.
func quote(s string) string {
	if s == "" || strings.IndexFunc(s, func(r rune) bool {
		return r == ' ' || r == '=' || r == '"' || !unicode.IsPrint(r)
	}) >= 0 {
		return strconv.Quote(s)
	}
	return s
}
