package script_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/internal/script"
)

func TestScript(t *testing.T) {
	srv := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	ctx := t.Context()

	n, err := script.New("incr", "return redis.call('incrby', KEYS[1], ARGV[1])").Int64(ctx, rdb, []string{"k"}, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(5), n)

	ns, err := script.New("pair", "return {1, tonumber(ARGV[1])}").Int64s(ctx, rdb, nil, 7)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 7}, ns)

	v, err := script.New("nil", "return false").Run(ctx, rdb, nil)
	require.NoError(t, err)
	assert.Nil(t, v)

	_, err = script.New("str", "return 'x'").Int64(ctx, rdb, nil)
	assert.ErrorContains(t, err, "script str: want an integer reply")

	_, err = script.New("str", "return 'x'").Int64s(ctx, rdb, nil)
	assert.ErrorContains(t, err, "script str: want an array reply")

	_, err = script.New("bad", "return redis.call('nosuchcommand')").Run(ctx, rdb, nil)
	assert.ErrorContains(t, err, "script bad:")
}

func TestMintLua(t *testing.T) {
	srv := miniredis.RunT(t)
	srv.SetTime(time.Unix(1_700_000_000, 0))
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	ctx := t.Context()
	mint := script.New("mint", script.MintLua+"return mint(KEYS[1])")

	first, err := mint.Int64(ctx, rdb, []string{"c"})
	require.NoError(t, err)
	assert.Equal(t, int64(1_700_000_000_000_000), first, "a new counter starts at the server time in µs")
	next, err := mint.Int64(ctx, rdb, []string{"c"})
	require.NoError(t, err)
	assert.Equal(t, first+1, next)

	require.NoError(t, rdb.Del(ctx, "c").Err()) // the counter is lost
	srv.SetTime(time.Unix(1_700_000_000, 5000))
	after, err := mint.Int64(ctx, rdb, []string{"c"})
	require.NoError(t, err)
	assert.Greater(t, after, next)
}

func TestMain(m *testing.M) { redistest.Main(m) }

func TestRunOnce_answersResendFromRecord(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		add := script.NewOnce("add", `
local v = redis.call('incrby', KEYS[1], ARGV[1])
if ARGV[2] == 'arr' then return {v, 'x' .. v, {1, 'é;:a'}, false} end
return v`)
		k, rec := b.Prefix+"{c}:n", b.Prefix+"{c}:once:"+script.Nonce()
		v, err := add.RunOnce(ctx, b.Client, rec, []string{k}, 5, "arr")
		require.NoError(t, err)
		want := []any{int64(5), "x5", []any{int64(1), "é;:a"}, nil}
		assert.Equal(t, want, v)
		// A re-send of the same call (same record key) is answered from the
		// record: same reply, no second increment.
		v, err = add.RunOnce(ctx, b.Client, rec, []string{k}, 5, "arr")
		require.NoError(t, err)
		assert.Equal(t, want, v)
		n, err := b.Client.Get(ctx, k).Int64()
		require.NoError(t, err)
		assert.Equal(t, int64(5), n)
		pttl, err := b.Client.PTTL(ctx, rec).Result()
		require.NoError(t, err)
		assert.Greater(t, pttl, time.Duration(0), "the record expires")

		// Another call has its own record.
		v, err = add.RunOnce(ctx, b.Client, b.Prefix+"{c}:once:"+script.Nonce(), []string{k}, 1, "int")
		require.NoError(t, err)
		assert.Equal(t, int64(6), v)
	})
}

func TestRunOnce_errorsNotRecorded(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := script.NewOnce("checked", `
local bad = check_int(KEYS[1], 'test counter')
if bad then return bad end
return redis.call('incr', KEYS[1])`)
		k, rec := b.Prefix+"{c}:n", b.Prefix+"{c}:once:"+script.Nonce()
		require.NoError(t, b.Client.Set(ctx, k, "x", 0).Err())
		_, err := s.RunOnce(ctx, b.Client, rec, []string{k})
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.ErrorIs(t, err, ria.ErrCorrupt)
		assert.Equal(t, "test counter", kerr.Role)
		assert.Equal(t, k, kerr.Key)
		assert.NotErrorIs(t, err, ria.ErrOutcomeUnknown)
		assert.Zero(t, b.Client.Exists(ctx, rec).Val(), "no record of a failed call")

		require.NoError(t, b.Client.Set(ctx, k, "41", 0).Err())
		v, err := s.RunOnce(ctx, b.Client, rec, []string{k})
		require.NoError(t, err)
		assert.Equal(t, int64(42), v)
	})
}

func TestCheckTypes(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := script.New("typed", `
local bad = check_types({KEYS[1], 'string', 'first thing', KEYS[2], 'zset', 'second thing'})
if bad then return bad end
return 1`)
		k1, k2 := b.Prefix+"{c}:a", b.Prefix+"{c}:b with ;= chars"
		n, err := s.Int64(ctx, b.Client, []string{k1, k2})
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, "missing keys pass")
		require.NoError(t, b.Client.HSet(ctx, k2, "f", "v").Err())
		_, err = s.Int64(ctx, b.Client, []string{k1, k2})
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.ErrorIs(t, err, ria.ErrWrongType)
		assert.Equal(t, &ria.KeyError{Role: "second thing", Key: k2, Got: "a hash", Want: "a zset", Err: ria.ErrWrongType}, kerr)
		assert.Equal(t, `ria: second thing "`+k2+`" holds a hash, want a zset`, err.Error())
	})
}

func TestUnknown(t *testing.T) {
	assert.NoError(t, script.Unknown(nil))
	netErr := &net.OpError{Op: "read", Err: io.ErrUnexpectedEOF}
	err := script.Unknown(netErr)
	assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.ErrorIs(t, script.Unknown(context.Canceled), ria.ErrOutcomeUnknown)
	assert.Equal(t, err, script.Unknown(err), "wrapped once")
	kerr := &ria.KeyError{Err: ria.ErrWrongType}
	assert.Same(t, kerr, script.Unknown(kerr))

	// A server's answer: the call ran and answered, or was refused, once.
	answer := srvErr("ERR something the script said")
	assert.Equal(t, error(answer), script.Unknown(answer))
	assert.False(t, script.MayHaveRun(answer))
	// A refusal go-redis re-sends on, or BUSY (after an attempt that timed
	// out behind a long script), may answer the re-send of a call that ran
	// and lost its reply.
	for _, e := range []srvErr{"LOADING Redis is loading the dataset in memory", "READONLY You can't write against a read only replica.",
		"TRYAGAIN Multiple keys request during rehashing of slot", "CLUSTERDOWN The cluster is down",
		"MASTERDOWN Link with MASTER is down", "NOREPLICAS Not enough good replicas to write.", "ERR max number of clients reached",
		"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT."} {
		assert.ErrorIs(t, script.Unknown(e), ria.ErrOutcomeUnknown, string(e))
		assert.True(t, script.MayHaveRun(e), string(e))
		assert.True(t, script.MayHaveRun(fmt.Errorf("script x: %w", e)), "wrapped %s", e)
	}
	assert.True(t, script.MayHaveRun(&net.OpError{Op: "dial", Err: io.EOF}), "a dial error may follow an attempt that ran")
	assert.False(t, script.MayHaveRun(kerr))
	// Calls sent together: one part unknown makes the whole unknown,
	// and every part stays in the chain.
	joined := script.Unknown(errors.Join(kerr, netErr))
	assert.ErrorIs(t, joined, ria.ErrOutcomeUnknown)
	assert.ErrorIs(t, joined, ria.ErrWrongType)
	assert.NotErrorIs(t, script.Unknown(errors.Join(kerr, answer)), ria.ErrOutcomeUnknown)
	for _, e := range []srvErr{"BUSYGROUP Consumer Group name already exists", "BUSYKEY Target key name already exists."} {
		assert.False(t, script.MayHaveRun(e), "%s is an answer", e)
	}
}

// srvErr is a server error reply (redis.Error) that miniredis cannot produce.
type srvErr string

func (e srvErr) Error() string { return string(e) }
func (srvErr) RedisError()     {}

func TestReplayWindow(t *testing.T) {
	c := redis.NewClient(&redis.Options{})
	defer c.Close()
	// go-redis v9.23 defaults: 3 retries x (6s pool + 5s write + 5s read + 1s backoff) + 1s.
	o := c.Options()
	assert.Equal(t, time.Duration(o.MaxRetries)*(o.PoolTimeout+o.WriteTimeout+o.ReadTimeout+o.MaxRetryBackoff)+time.Second,
		script.ReplayWindow(c))
	never := redis.NewClient(&redis.Options{MaxRetries: -1})
	defer never.Close()
	assert.Zero(t, script.ReplayWindow(never))
	cc := redis.NewClusterClient(&redis.ClusterOptions{})
	defer cc.Close()
	assert.Positive(t, script.ReplayWindow(cc), "a cluster client re-sends through its redirects")
	assert.Equal(t, time.Minute, script.ReplayWindow(struct{}{}))
}

func TestNonce(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := script.Nonce()
		assert.False(t, seen[n])
		seen[n] = true
	}
}

func TestSend(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		// Fresh sources so the server has not cached them: Send falls back
		// to EVAL on NOSCRIPT.
		read := script.New("read", "-- "+script.Nonce()+`
local bad = check_types({KEYS[1], 'string', 'test value'})
if bad then return bad end
return redis.call('get', KEYS[1])`)
		add := script.NewOnce("add", "-- "+script.Nonce()+"\nreturn redis.call('incrby', KEYS[1], ARGV[1])")
		ks := make([]string, 6)
		for i := range ks {
			ks[i] = b.Prefix + "{" + string(rune('a'+i)) + "}:n"
		}
		require.NoError(t, b.Client.Set(ctx, ks[0], "7", 0).Err())
		require.NoError(t, b.Client.HSet(ctx, ks[2], "f", "v").Err())
		calls := []*script.Call{
			read.Call([]string{ks[0]}),
			read.Call([]string{ks[1]}),
			read.Call([]string{ks[2]}),
			add.Prepare(b.Prefix+"{d}:once:"+script.Nonce(), time.Minute, []string{ks[3]}, 2),
			add.Prepare(b.Prefix+"{e}:once:"+script.Nonce(), time.Minute, []string{ks[4]}, 3),
		}
		script.Send(ctx, b.Client, calls)
		assert.Equal(t, "7", calls[0].Val)
		assert.NoError(t, calls[0].Err)
		assert.Nil(t, calls[1].Val, "a nil reply, not redis.Nil")
		assert.NoError(t, calls[1].Err)
		var kerr *ria.KeyError
		require.ErrorAs(t, calls[2].Err, &kerr)
		assert.Equal(t, ks[2], kerr.Key)
		assert.Equal(t, int64(2), calls[3].Val)
		assert.Equal(t, int64(3), calls[4].Val)
		assert.Equal(t, "3", b.Client.Get(ctx, ks[4]).Val())

		// A failed round trip: a read answers the error, a once-script
		// answers that its outcome is unknown.
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		calls = []*script.Call{read.Call([]string{ks[0]}), add.Prepare(b.Prefix+"{d}:once:"+script.Nonce(), time.Minute, []string{ks[3]}, 1)}
		script.Send(cancelled, b.Client, calls)
		assert.ErrorIs(t, calls[0].Err, context.Canceled)
		assert.NotErrorIs(t, calls[0].Err, ria.ErrOutcomeUnknown)
		assert.ErrorIs(t, calls[1].Err, ria.ErrOutcomeUnknown)
	})
}

func TestWrongType(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		k := b.Prefix + "{w}:h"
		require.NoError(t, b.Client.HSet(ctx, k, "f", "v").Err())
		err := b.Client.LRange(ctx, k, 0, -1).Err()
		require.Error(t, err)
		var kerr *ria.KeyError
		require.ErrorAs(t, script.WrongType(ctx, b.Client, err, k, "test list", "list"), &kerr)
		assert.Equal(t, &ria.KeyError{Role: "test list", Key: k, Got: "a hash", Want: "a list", Err: ria.ErrWrongType}, kerr)
		assert.Equal(t, err, script.WrongType(ctx, b.Client, err, k, "test hash", "hash"), "key holds the wanted type")
		other := io.ErrUnexpectedEOF
		assert.Equal(t, other, script.WrongType(ctx, b.Client, other, k, "test list", "list"))
		assert.NoError(t, script.WrongType(ctx, b.Client, nil, k, "test list", "list"))
	})
}

// RunTx falls back to EVAL on NOSCRIPT, turns a check.lua error into a
// *ria.KeyError, and a lost reply into an unknown outcome: go-redis does
// not re-send the MULTI/EXEC, so the script ran exactly once.
func TestRunTx(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		add := script.New("add", "-- "+script.Nonce()+`
local bad = check_types({KEYS[1], 'string', 'test counter'})
if bad then return bad end
return redis.call('incrby', KEYS[1], ARGV[1])`)
		k := b.Prefix + "{n}:n"
		rt, _ := b.Count.Delta(func() {
			v, err := add.RunTx(ctx, b.Client, []string{k}, 2)
			require.NoError(t, err)
			assert.Equal(t, int64(2), v)
		})
		assert.Equal(t, int64(2), rt, "EVALSHA refused (NOSCRIPT), then EVAL")
		rt, _ = b.Count.Delta(func() {
			v, err := add.RunTx(ctx, b.Client, []string{k}, 3)
			require.NoError(t, err)
			assert.Equal(t, int64(5), v)
		})
		assert.Equal(t, int64(1), rt)

		h := b.Prefix + "{h}:h"
		require.NoError(t, b.Client.HSet(ctx, h, "f", "v").Err())
		_, err := add.RunTx(ctx, b.Client, []string{h}, 1)
		var kerr *ria.KeyError
		require.ErrorAs(t, err, &kerr)
		assert.Equal(t, h, kerr.Key)

		rdb, _, f := b.FaultyClient()
		_, err = add.RunTx(ctx, rdb, []string{k}, 0) // connections made
		require.NoError(t, err)
		f.LoseReply(1, redistest.Commands("exec"))
		_, err = add.RunTx(ctx, rdb, []string{k}, 10)
		assert.ErrorIs(t, err, ria.ErrOutcomeUnknown)
		assert.Equal(t, int64(1), f.Lost())
		assert.Equal(t, "15", b.Client.Get(ctx, k).Val(), "ran once: not re-sent")
	})
}

// check_int passes exactly the values Redis's INCRBY reads as integers (a
// looser test let "0125" or a 20-digit value through, and the increment
// then failed after a script's first write); check_hint, the counts
// within ±2^53.
func TestCheckInt_values(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := script.New("ints", `
local bad = check_int(KEYS[1], 'test counter')
if bad then return 'int' end
bad = check_hint(KEYS[2], 'n', 'test hash')
if bad then return 'count' end
return 'ok'`)
		k, h := b.Prefix+"{c}:n", b.Prefix+"{c}:h"
		values := []string{"0", "1", "-1", "7", "10", "-10", "9007199254740991", "9007199254740992", "-9007199254740992",
			"9007199254740993", "-9007199254740993", "9223372036854775807", "-9223372036854775808",
			"9223372036854775808", "-9223372036854775809", "99999999999999999999", "0125", "00", "-0", "+1", "01",
			"1.5", " 1", "1 ", "", "-", "1e3", "0x10", "١٢"}
		for _, v := range values {
			require.NoError(t, b.Client.Set(ctx, k, v, 0).Err())
			require.NoError(t, b.Client.HSet(ctx, h, "n", v).Err())
			got, err := s.Run(ctx, b.Client, []string{k, h})
			require.NoError(t, err)
			// What Redis reads as an integer: what it would write back.
			_, isInt := script.ParseInt(v)
			if b.Real() { // miniredis's INCRBY is looser ("+1", "0125")
				assert.Equal(t, isInt, b.Client.IncrBy(ctx, k, 0).Err() == nil, "%q: Redis's INCRBY agrees", v)
			}
			_, count := script.ParseCount(v)
			want := "ok"
			switch {
			case !isInt:
				want = "int"
			case !count:
				want = "count"
			}
			assert.Equal(t, want, got, "%q", v)
		}
	})
}

// TestBytesLua: bless orders strings by bytes, both through Lua's < when
// the server's collation is byte order (BYTE_ORDER) and byte by byte when
// it is not (forced here: the test servers run under the C locale).
func TestBytesLua(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		pairs := [][2]string{
			{"B", "a"}, {"a", "B"}, {"a", "aa"}, {"aa", "a"}, {"a b", "ab"}, {"ab", "a b"}, {"z", "é"},
			{"\x7f", "\x80"}, {"Z", "_"}, {"-", "0"}, {"", "a"}, {"a", ""}, {"same", "same"}, {"\xff", "é"},
		}
		var args []any
		var want []int64
		for _, p := range pairs {
			args = append(args, p[0], p[1])
			w := int64(0)
			if p[0] < p[1] { // Go compares strings by bytes
				w = 1
			}
			want = append(want, w)
		}
		body := `
local out = {}
for i = 1, #ARGV, 2 do out[#out + 1] = bless(ARGV[i], ARGV[i + 1]) and 1 or 0 end
return out`
		for _, force := range []string{"", "BYTE_ORDER = false\n"} {
			got, err := script.New("bless", script.BytesLua+force+body).Int64s(ctx, b.Client, nil, args...)
			require.NoError(t, err)
			assert.Equal(t, want, got, "forced byte by byte: %v", force != "")
		}
		order, err := script.New("order", script.BytesLua+"return BYTE_ORDER and 1 or 0").Int64(ctx, b.Client, nil)
		require.NoError(t, err)
		assert.Equal(t, int64(1), order, "the test servers collate by bytes (C locale)")
	})
}

// TestBytesLua_collatingServer: on a server under a language locale, Lua's
// < is not byte order (BYTE_ORDER is false) and bless still is.
func TestBytesLua_collatingServer(t *testing.T) {
	srv := redistest.StartCollatingServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	got, err := script.New("probe", script.BytesLua+`
return {BYTE_ORDER and 1 or 0, ('B' < 'a') and 1 or 0, bless('B', 'a') and 1 or 0, bless('a', 'B') and 1 or 0,
  bless('a b', 'ab') and 1 or 0, bless('ab', 'a b') and 1 or 0}`).Int64s(ctx, rdb, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, 1, 0, 1, 0}, got, "BYTE_ORDER, Lua's 'B' < 'a', then bless by bytes")
}

// TestToNumber: to_number (check.lua) reads every number Go's
// strconv.FormatFloat(f, 'g', -1, 64) writes, and every score a server
// replies, as the same float64 on every backend: miniredis's Lua tonumber
// is nil for an exponent without a fraction ("2e+09", "1e-05"), which
// both write.
func TestToNumber(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		s := script.New("to_number", `
local function show(x)
  if x == nil then return 'nil' end
  if x ~= x then return 'nan' end
  return string.format('%.17g', x)
end
if ARGV[2] == 'z' then
  redis.call('ZADD', KEYS[1], ARGV[1], 'm')
  return show(to_number(redis.call('ZSCORE', KEYS[1], 'm')))
end
return show(to_number(ARGV[1]))`)
		key := b.Prefix + "{n}:z"
		for _, f := range []float64{0, 1, -1, 0.1, 2e9, -2e9, 1.5e9, 1e-5, 1.5e-5, 1e6, 1e21, 1e25, 123456789,
			1234567890123456789, 0.1 + 0.2, 1.7976931348623157e308, -1.7976931348623157e308, 5e-324, 2.2250738585072014e-308,
			3e-310, 1e308, 9007199254740993, 1e15, 1e16, 1e17} {
			arg := strconv.FormatFloat(f, 'g', -1, 64)
			for _, via := range []string{"arg", "z"} {
				got, err := s.Run(ctx, b.Client, []string{key}, arg, via)
				require.NoError(t, err, "%s via %s", arg, via)
				v, err := strconv.ParseFloat(got.(string), 64)
				if assert.NoError(t, err, "%s via %s: %q", arg, via, got) {
					assert.Equal(t, math.Float64bits(f), math.Float64bits(v), "%s via %s: read %q", arg, via, got)
				}
			}
		}
		for arg, want := range map[string]string{"inf": "+Inf", "-inf": "-Inf", "+inf": "+Inf", "Infinity": "+Inf",
			"nan": "nan", "12345678901234567890": "1.2345678901234567e+19", "2E9": "2e+09", " 7 ": "7",
			"": "nil", "abc": "nil", "1e": "nil", "e5": "nil", "1e+": "nil", "1ee5": "nil", "--1": "nil", "1e5x": "nil"} {
			got, err := s.Run(ctx, b.Client, []string{key}, arg, "arg")
			require.NoError(t, err, "%q", arg)
			if want == "nil" || want == "nan" {
				assert.Equal(t, want, got, "%q", arg)
				continue
			}
			v, err := strconv.ParseFloat(got.(string), 64)
			w, _ := strconv.ParseFloat(want, 64)
			if assert.NoError(t, err, "%q: %q", arg, got) {
				assert.Equal(t, w, v, "%q", arg)
			}
		}
	})
}

// TestSendWith: the commands queued along with the calls run once, in the
// same pipeline, even when the calls are sent again with EVAL (NOSCRIPT).
func TestSendWith(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		read := script.New("read", "-- "+script.Nonce()+"\nreturn redis.call('get', KEYS[1])")
		ka, kb, kn := b.Prefix+"{a}:v", b.Prefix+"{b}:v", b.Prefix+"{n}:n"
		require.NoError(t, b.Client.Set(ctx, ka, "x", 0).Err())
		var incr *redis.IntCmd
		calls := []*script.Call{read.Call([]string{ka}), read.Call([]string{kb})}
		script.SendWith(ctx, b.Client, func(p redis.Pipeliner) { incr = p.IncrBy(ctx, kn, 5) }, calls)
		require.NoError(t, incr.Err())
		assert.Equal(t, int64(5), incr.Val())
		assert.Equal(t, "5", b.Client.Get(ctx, kn).Val(), "queued once")
		assert.Equal(t, "x", calls[0].Val)
		assert.NoError(t, calls[0].Err)
		assert.Nil(t, calls[1].Val)
		script.SendWith(ctx, b.Client, nil, calls[:1])
		assert.Equal(t, "x", calls[0].Val)
	})
}
