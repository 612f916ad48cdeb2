package config_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/config"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	st, err := config.New(rdb)
	if err != nil {
		panic(err)
	}
	type limits struct{ Rate int }
	_ = st.Set(ctx, "limits", "api", limits{Rate: 100})
	var l limits
	_ = st.Get(ctx, "limits", "api", &l)
	down, _ := st.UnderMaintenance(ctx)
	fmt.Println(l.Rate, down)

	conns := st.Conns()
	defer conns.Close()
	_ = conns.Set(ctx, "sessions", config.ConnConfig{Addrs: []string{srv.Addr()}})
	db, release, _ := conns.Get(ctx, "sessions")
	defer release()
	fmt.Println(db.Ping(ctx).Val())
	// Output:
	// 100 false
	// PONG
}
