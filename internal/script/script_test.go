package script_test

import (
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
