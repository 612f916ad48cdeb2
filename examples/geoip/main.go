// Command geoip imports IP ranges into Redis with package geoip (Redis in
// Action 5.3) and looks addresses up.
//
//	go run ./examples/geoip                      # a generated file of 100,000 ranges
//	go run ./examples/geoip ranges.csv 8.8.8.8   # your start_ip,end_ip,country_code file
//
// It uses the server named by REDIS_URL or REDIS_CLUSTER, or an embedded
// miniredis. Its keys live under a prefix of their own, deleted at the end.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"time"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/geoip"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "geoip:", err)
		os.Exit(1)
	}
}

// generate writes n sorted IPv4 ranges, every other one followed by a gap.
func generate(w io.Writer, n int) error {
	codes := []string{"AU", "CN", "JP", "FR", "US", "BR"}
	step := uint32(1<<32/uint64(n+1)) &^ 1
	for i := range n {
		s := uint32(i+1) * step
		e := s + step - 1
		if i%2 == 1 {
			e = s + step/2
		}
		if _, err := fmt.Fprintf(w, "%s,%s,%s\n", v4(s), v4(e), codes[i%len(codes)]); err != nil {
			return err
		}
	}
	return nil
}

func v4(x uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)})
}

func run(args []string) error {
	rdb, closeAll, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeAll()
	ctx := context.Background()
	prefix := fmt.Sprintf("example:geoip:%d:", time.Now().UnixNano())
	db, err := geoip.New(rdb, "countries", geoip.WithPrefix(prefix))
	if err != nil {
		return err
	}
	defer func() {
		for _, k := range []string{prefix + "{countries}:ranges", prefix + "{countries}:version"} {
			_ = rdb.Del(ctx, k).Err()
		}
	}()

	var src io.Reader
	lookups := []string{"1.2.3.4", "100.64.0.1", "203.0.113.9", "2001:db8::1"}
	if len(args) > 0 {
		f, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer f.Close()
		src = f
		if len(args) > 1 {
			lookups = args[1:]
		}
	} else {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(generate(pw, 100_000)) }()
		src = pr
	}
	start := time.Now()
	p, err := db.ImportRanges(ctx, src, geoip.WithProgress(func(p geoip.Progress) {
		if p.Ranges%40_000 < 8_000 {
			fmt.Printf("  %d ranges staged\n", p.Ranges)
		}
	}))
	if err != nil {
		return err
	}
	fmt.Printf("imported %d ranges in %v\n", p.Ranges, time.Since(start).Round(time.Millisecond))
	for _, s := range lookups {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return err
		}
		r, err := db.Lookup(ctx, a)
		switch {
		case errors.Is(err, geoip.ErrNotFound):
			fmt.Printf("%-15s not in any range\n", a)
		case err != nil:
			return err
		default:
			fmt.Printf("%-15s %s (%v - %v)\n", a, r.Country, r.Start, r.End)
		}
	}
	return nil
}
