package shard

import (
	"fmt"
	"strconv"
	"strings"
)

// keySpec says where a command's keys are, for the Router's guard.
type keySpec struct {
	kind       byte // see the constants
	first, end int  // kindRange: keys args[first:len+end] (end <= 0) or args[first:end+1] (end > 0)
	step       int
}

const (
	kindRange   byte = iota // keys at first..end by step
	kindNumKeys             // numkeys at args[first], keys after it
	kindEval                // EVAL family: numkeys at 2, keys after it
	kindStreams             // XREAD/XREADGROUP: keys after STREAMS, half of the rest
	kindStore               // key at 1, plus the argument after STORE/STOREDIST
	kindSub                 // subcommand at 1, key at 2 (OBJECT, XINFO, XGROUP, MEMORY USAGE)
)

// single-key commands (key at args[1]).
var singleKey = strings.Fields(`
append bitcount bitfield bitfield_ro bitpos decr decrby dump expire expireat expiretime get getbit getdel getex
getrange getset hdel hexists hexpire hexpireat hexpiretime hget hgetall hgetdel hgetex hincrby hincrbyfloat hkeys
hlen hmget hmset hpersist hpexpire hpexpireat hpexpiretime hpttl hrandfield hscan hset hsetex hsetnx hstrlen httl
hvals incr incrby incrbyfloat lindex linsert llen lpop lpos lpush lpushx lrange lrem lset ltrim persist pexpire
pexpireat pexpiretime pfadd psetex pttl restore rpop rpush rpushx sadd scard set setbit setex setnx setrange
sismember smembers smismember spop srandmember srem sscan strlen substr ttl type xack xadd xautoclaim xclaim xdel
xlen xpending xrange xrevrange xsetid xtrim zadd zcard zcount zincrby zlexcount zmscore zpopmax zpopmin
zrandmember zrange zrangebylex zrangebyscore zrank zrem zremrangebylex zremrangebyrank zremrangebyscore zrevrange
zrevrangebylex zrevrangebyscore zrevrank zscan zscore geoadd geodist geohash geopos geosearch georadius_ro
georadiusbymember_ro`)

var keySpecs = func() map[string]keySpec {
	m := map[string]keySpec{}
	for _, c := range singleKey {
		m[c] = keySpec{kind: kindRange, first: 1, end: 1, step: 1}
	}
	for _, c := range strings.Fields("del unlink exists touch mget watch sinter sunion sdiff sinterstore sunionstore sdiffstore pfcount pfmerge") {
		m[c] = keySpec{kind: kindRange, first: 1, end: 0, step: 1} // every argument
	}
	for _, c := range strings.Fields("rename renamenx smove lmove blmove rpoplpush brpoplpush copy lcs zrangestore geosearchstore") {
		m[c] = keySpec{kind: kindRange, first: 1, end: 2, step: 1}
	}
	for _, c := range strings.Fields("blpop brpop bzpopmin bzpopmax") {
		m[c] = keySpec{kind: kindRange, first: 1, end: -1, step: 1} // all but the timeout
	}
	for _, c := range strings.Fields("mset msetnx") {
		m[c] = keySpec{kind: kindRange, first: 1, end: 0, step: 2}
	}
	m["bitop"] = keySpec{kind: kindRange, first: 2, end: 0, step: 1}
	for _, c := range strings.Fields("zunion zinter zdiff zintercard sintercard lmpop zmpop") {
		m[c] = keySpec{kind: kindNumKeys, first: 1}
	}
	for _, c := range strings.Fields("blmpop bzmpop") {
		m[c] = keySpec{kind: kindNumKeys, first: 2}
	}
	for _, c := range strings.Fields("zunionstore zinterstore zdiffstore") {
		m[c] = keySpec{kind: kindNumKeys, first: 2, end: 1} // end 1: args[1] is a key too
	}
	for _, c := range strings.Fields("eval evalsha eval_ro evalsha_ro fcall fcall_ro") {
		m[c] = keySpec{kind: kindEval}
	}
	m["xread"] = keySpec{kind: kindStreams}
	m["xreadgroup"] = keySpec{kind: kindStreams}
	for _, c := range strings.Fields("sort sort_ro georadius georadiusbymember") {
		m[c] = keySpec{kind: kindStore}
	}
	for _, c := range strings.Fields("object xinfo xgroup memory") {
		m[c] = keySpec{kind: kindSub}
	}
	return m
}()

// commandKeys returns the keys of the command args (nil for a command
// without keys or one the table does not know: those are not checked).
func commandKeys(args []any) []string {
	if len(args) < 2 {
		return nil
	}
	name := strings.ToLower(str(args[0]))
	spec, ok := keySpecs[name]
	if !ok {
		return nil
	}
	n := len(args)
	switch spec.kind {
	case kindRange:
		last := n - 1 + spec.end
		if spec.end > 0 {
			last = min(spec.end, n-1)
		}
		var out []string
		for i := spec.first; i <= last; i += spec.step {
			out = append(out, str(args[i]))
		}
		return out
	case kindNumKeys, kindEval:
		pos := spec.first
		if spec.kind == kindEval {
			pos = 2
		}
		if pos >= n {
			return nil
		}
		k, err := strconv.Atoi(str(args[pos]))
		if err != nil || k < 0 {
			return nil
		}
		var out []string
		if spec.end == 1 {
			out = append(out, str(args[1]))
		}
		for i := pos + 1; i <= pos+k && i < n; i++ {
			out = append(out, str(args[i]))
		}
		return out
	case kindStreams:
		for i := 1; i < n; i++ {
			if strings.EqualFold(str(args[i]), "streams") {
				rest := args[i+1:]
				out := make([]string, 0, len(rest)/2)
				for _, a := range rest[:len(rest)/2] {
					out = append(out, str(a))
				}
				return out
			}
		}
		return nil
	case kindStore:
		out := []string{str(args[1])}
		for i := 2; i+1 < n; i++ {
			if s := str(args[i]); strings.EqualFold(s, "store") || strings.EqualFold(s, "storedist") {
				out = append(out, str(args[i+1]))
			}
		}
		return out
	case kindSub:
		sub := strings.ToLower(str(args[1]))
		if n < 3 || sub == "help" || (name == "memory" && sub != "usage") {
			return nil
		}
		return []string{str(args[2])}
	}
	return nil
}

func str(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(a)
}
