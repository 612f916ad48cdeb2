package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/queue/dashboard"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	g, err := queue.New(rdb, "mail")
	if err != nil {
		panic(err)
	}
	_, _ = g.Enqueue(context.Background(), "default", "welcome", map[string]string{"to": "ana@example.com"}, queue.ID("w-1"))

	h, err := dashboard.New(g, dashboard.WithBasePath("/queues"), dashboard.WithQueues("default"))
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/queues/", h) // behind your service's authentication
	web := httptest.NewServer(mux)
	defer web.Close()

	resp, err := http.Get(web.URL + "/queues/ready?queue=default")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, strings.Contains(string(page), `ana@example.com`))
	// Output:
	// 200 OK true
}
