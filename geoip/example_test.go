package geoip_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/geoip"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	db, err := geoip.New(rdb, "countries")
	if err != nil {
		panic(err)
	}
	csv := "start_ip,end_ip,country_code\n" +
		"1.0.0.0,1.0.0.255,AU\n" +
		"1.0.4.0,1.0.7.255,AU\n" +
		"2001:200::,2001:200:ffff:ffff:ffff:ffff:ffff:ffff,JP\n"
	p, err := db.ImportRanges(ctx, strings.NewReader(csv))
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Ranges, "ranges")
	for _, a := range []string{"1.0.5.9", "2001:200::42", "::ffff:1.0.0.1", "1.0.2.1"} {
		r, err := db.Lookup(ctx, netip.MustParseAddr(a))
		if errors.Is(err, geoip.ErrNotFound) {
			fmt.Println(a, "not found")
			continue
		}
		fmt.Println(a, r.Country, r.Start, r.End)
	}
	// Output:
	// 3 ranges
	// 1.0.5.9 AU 1.0.4.0 1.0.7.255
	// 2001:200::42 JP 2001:200:: 2001:200:ffff:ffff:ffff:ffff:ffff:ffff
	// ::ffff:1.0.0.1 AU 1.0.0.0 1.0.0.255
	// 1.0.2.1 not found
}

func ExampleDB_Drop() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	db, err := geoip.New(rdb, "countries")
	if err != nil {
		panic(err)
	}
	if _, err := db.ImportRanges(ctx, strings.NewReader("1.0.0.0,1.0.0.255,AU\n")); err != nil {
		panic(err)
	}
	if err := db.Drop(ctx); err != nil { // retire the data set
		panic(err)
	}
	_, err = db.Lookup(ctx, netip.MustParseAddr("1.0.0.1"))
	v, _ := db.Version(ctx)
	fmt.Println(errors.Is(err, geoip.ErrNotFound), v == "", db.Drop(ctx))
	// Output:
	// true true <nil>
}
