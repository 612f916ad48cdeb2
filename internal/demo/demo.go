// Package demo gives the programs in examples/ their Redis: the server named
// by REDIS_URL when it is set, otherwise an embedded miniredis.
package demo

import (
	"fmt"
	"os"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Client returns a client and a function that closes it (and the embedded
// server, if any). REDIS_URL is parsed with redis.ParseURL, e.g.
// redis://127.0.0.1:6379/0.
func Client() (redis.UniversalClient, func(), error) {
	if url := os.Getenv("REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			return nil, nil, fmt.Errorf("demo: REDIS_URL: %w", err)
		}
		c := redis.NewClient(opt)
		return c, func() { _ = c.Close() }, nil
	}
	srv, err := miniredis.Run()
	if err != nil {
		return nil, nil, fmt.Errorf("demo: start miniredis: %w", err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	return c, func() { _ = c.Close(); srv.Close() }, nil
}
