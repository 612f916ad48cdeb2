package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ResetStats zeroes the server's statistics (CONFIG RESETSTAT), among them
// the commandstats that [CommandCalls] reads.
func ResetStats(ctx context.Context, c redis.Cmdable) error {
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		return fmt.Errorf("server: config resetstat: %w", err)
	}
	return nil
}

// Calls is the number of calls per command name that INFO commandstats
// reports, without the commands a benchmark harness itself sends (see
// [Admin]). Subcommands are folded into their command ("client|setinfo"
// counts as "client"). Redis counts the commands a Lua script runs (through
// redis.call) as calls of those commands, in addition to the EVAL or EVALSHA
// that ran the script.
type Calls map[string]int64

// Total returns the calls summed over all commands.
func (c Calls) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// Admin reports whether the command name is one that a harness or a client's
// connection set-up sends (config, info, ping, hello, client, select), which
// [CommandCalls] leaves out.
func Admin(name string) bool {
	switch name {
	case "config", "info", "ping", "hello", "client", "select":
		return true
	}
	return false
}

// CommandCalls reads INFO commandstats and returns the calls per command,
// except the [Admin] commands.
func CommandCalls(ctx context.Context, c redis.Cmdable) (Calls, error) {
	s, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, fmt.Errorf("server: info commandstats: %w", err)
	}
	return ParseCommandStats(s)
}

// ParseCommandStats parses the text of INFO commandstats, lines such as
//
//	cmdstat_evalsha:calls=12,usec=40,usec_per_call=3.33,rejected_calls=0,failed_calls=0
//
// into calls per command, leaving out the [Admin] commands.
func ParseCommandStats(info string) (Calls, error) {
	out := Calls{}
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		name, fields, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		name, _, _ = strings.Cut(name, "|")
		if Admin(name) {
			continue
		}
		found := false
		for f := range strings.SplitSeq(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			if k != "calls" {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("server: commandstats line %q: %w", line, err)
			}
			out[name] += n
			found = true
		}
		if !found {
			return nil, fmt.Errorf("server: commandstats line %q has no calls field", line)
		}
	}
	return out, nil
}

// Version returns the server's redis_version.
func Version(ctx context.Context, c redis.Cmdable) (string, error) {
	v, err := infoField(ctx, c, "server", "redis_version")
	if err != nil {
		return "", err
	}
	return v, nil
}

// BlockedClients returns the number of clients blocked in a command such as
// BLPOP (INFO clients, blocked_clients).
func BlockedClients(ctx context.Context, c redis.Cmdable) (int64, error) {
	v, err := infoField(ctx, c, "clients", "blocked_clients")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("server: info clients: blocked_clients %q: %w", v, err)
	}
	return n, nil
}

func infoField(ctx context.Context, c redis.Cmdable, section, field string) (string, error) {
	s, err := c.Info(ctx, section).Result()
	if err != nil {
		return "", fmt.Errorf("server: info %s: %w", section, err)
	}
	for line := range strings.Lines(s) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == field {
			return v, nil
		}
	}
	return "", fmt.Errorf("server: info %s: no %s field", section, field)
}
