package config_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/config"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/shard"
)

// On a Router's client with one server down, the live server's
// subscription breaks and is made again: Run drops the whole cache (changes
// on that server were missed meanwhile) and tells WithOnChange's function
// (""), though not every server's subscription is up. (It reported ""
// only once every server's subscription was up: never, here.)
func TestStore_Run_resubscribeWhileAServerIsDown(t *testing.T) {
	b := redistest.New(t, redistest.Sharded)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there: the server is down
	r, err := shard.NewRouter(b.Addrs()[0], dead)
	require.NoError(t, err)
	f := redistest.NewFaults(t)
	reader := r.NewClient(&redis.ClusterOptions{Dialer: f.Dialer})
	writerC := r.NewClient(nil)
	t.Cleanup(func() { _ = reader.Close(); _ = writerC.Close() })

	ch := make(chan string, 1024)
	s, err := config.New(reader, config.WithPrefix(b.Prefix), config.WithMaxAge(time.Hour),
		config.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		config.WithOnChange(func(typ, component string) { ch <- typ + "/" + component }))
	require.NoError(t, err)
	writer, err := config.New(writerC, config.WithPrefix(b.Prefix))
	require.NoError(t, err)

	comp := ""
	for i := range 100 {
		c := fmt.Sprint("c", i)
		if r.Server(s.Key("limits", c)) == 0 {
			comp = c
			break
		}
	}
	require.NotEmpty(t, comp)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	// heard sets the value until its notification arrives (the live
	// server's subscription is up); it returns whether "/" came first.
	heard := func() bool {
		t.Helper()
		sawAll := false
		deadline := time.After(30 * time.Second) // bounds a hang only
		for {
			require.NoError(t, writer.Set(context.Background(), "limits", comp, 1))
			retry := time.After(200 * time.Millisecond)
		wait:
			for {
				select {
				case got := <-ch:
					switch got {
					case "/":
						sawAll = true
					case "limits/" + comp:
						return sawAll
					}
				case <-retry:
					break wait
				case <-deadline:
					t.Fatal("no notification")
				}
			}
		}
	}
	heard() // subscribed on the live server
	var v int
	require.NoError(t, s.Get(context.Background(), "limits", comp, &v)) // cached for an hour

	f.Cut() // the live server's subscription breaks; go-redis subscribes again
	sawAll := heard()
	require.True(t, sawAll, "the change function was not told that the cache was dropped "+
		"(notifications missed while the live server's subscription was down)")
}
