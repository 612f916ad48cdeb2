// Command dashboard serves the web dashboard of a ria task queue
// (queue/dashboard) with tasks in every state: ready emails, a paused
// reports queue, delayed tasks, images being resized by a worker, a charge
// waiting to retry and dead charges with their errors.
//
// By default it checks itself and exits: it serves the dashboard on a free
// loopback port, fetches each page, requeues a dead task through the
// dashboard's own form (cookie and token included) and shows that a form
// posted without the token is refused. With -serve it serves until
// interrupted (or for -for):
//
//	go run ./examples/dashboard                                   # self-check, embedded miniredis
//	go run ./examples/dashboard -serve -addr 127.0.0.1:8080       # then open http://127.0.0.1:8080/queues/
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/dashboard -serve
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"time"

	"github.com/ria-go/ria/examples/demo"
	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/queue/dashboard"
)

const prefix = "example:dashboard:"

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to serve on (loopback)")
	serve := flag.Bool("serve", false, "serve until interrupted instead of checking the pages and exiting")
	dur := flag.Duration("for", 0, "with -serve: stop after this long (0: until interrupted)")
	flag.Parse()
	if err := run(*addr, *serve, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard example:", err)
		os.Exit(1)
	}
}

func run(addr string, serve bool, dur time.Duration) error {
	rdb, closeRedis, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeRedis()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := demo.Clean(ctx, rdb, prefix); err != nil {
		return err
	}
	g, err := queue.New(rdb, "shop", queue.WithPrefix(prefix), queue.WithCodec(plainJSON{}))
	if err != nil {
		return err
	}
	workersDone, err := populate(ctx, g)
	if err != nil {
		return err
	}
	defer workersDone()

	h, err := dashboard.New(g, dashboard.WithBasePath("/queues"),
		dashboard.WithQueues("email", "images", "billing", "reports"), dashboard.WithPageSize(5))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/queues/", h)
	mux.Handle("/{$}", http.RedirectHandler("/queues/", http.StatusFound))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String() + "/queues/"
	fmt.Println("dashboard: serving", base)

	if !serve {
		return check(ctx, g, base)
	}
	if dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, dur)
		defer cancel()
	}
	<-ctx.Done()
	fmt.Println("dashboard: stopping")
	return nil
}

// plainJSON is encoding/json without the escaping of '<', '>' and '&'
// (a payload shown in the dashboard is escaped there).
type plainJSON struct{}

func (plainJSON) Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func (plainJSON) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// populate puts tasks in every state, and returns a function that stops
// the workers it started.
func populate(ctx context.Context, g *queue.Group) (func(), error) {
	jobs := []queue.Job{}
	for i, to := range []string{"ana@example.com", "bo@example.com", "chen@example.com", "dee@example.com", "eli@example.com", "fay@example.com", "gus@example.com"} {
		jobs = append(jobs, queue.Job{Queue: "email", Name: "send_welcome", Payload: map[string]any{"to": to, "user_id": 1000 + i}})
	}
	jobs = append(jobs,
		queue.Job{Queue: "email", Name: "send_reminder", Payload: map[string]string{"to": "ana@example.com"},
			Options: []queue.EnqueueOption{queue.Delay(2 * time.Hour)}},
		queue.Job{Queue: "reports", Name: "daily_digest", Payload: map[string]string{"day": "2026-11-23"},
			Options: []queue.EnqueueOption{queue.Delay(20 * time.Minute)}},
		queue.Job{Queue: "reports", Name: "weekly_digest", Payload: map[string]string{"week": "2026-W47"}},
		queue.Job{Queue: "reports", Name: "monthly_digest", Payload: map[string]string{"month": "2026-11"}},
		queue.Job{Queue: "images", Name: "resize", Payload: map[string]any{"src": "s3://photos/beach.jpg", "width": 1024}},
		queue.Job{Queue: "images", Name: "resize", Payload: map[string]any{"src": "s3://photos/cat.png", "width": 512}},
		queue.Job{Queue: "billing", Name: "charge", Payload: map[string]any{"order": "A-17", "cents": 4999},
			Options: []queue.EnqueueOption{queue.ID("charge-A-17"), queue.MaxRetry(5)}},
		queue.Job{Queue: "billing", Name: "charge", Payload: map[string]any{"order": "B-42", "cents": 120},
			Options: []queue.EnqueueOption{queue.ID("charge-B-42"), queue.MaxRetry(0)}},
		// A payload that holds markup: the pages show it as text.
		queue.Job{Queue: "billing", Name: "charge", Payload: map[string]any{"order": "<script>alert('x')</script>", "cents": 1},
			Options: []queue.EnqueueOption{queue.ID("charge-C-99"), queue.MaxRetry(0)}},
	)
	if _, err := g.EnqueueBatch(ctx, jobs); err != nil {
		return nil, err
	}
	if err := g.Pause(ctx, "reports"); err != nil {
		return nil, err
	}

	// The image worker holds its tasks until it stops; the billing worker
	// fails every charge (card declined), so they retry or die.
	wctx, cancel := context.WithCancel(ctx)
	quiet := queue.Logger(slog.New(slog.NewTextHandler(io.Discard, nil))) // the dashboard shows the failures
	images, err := queue.NewWorker(g, queue.Queues("images"), queue.Concurrency(2), queue.Grace(0), quiet)
	if err != nil {
		cancel()
		return nil, err
	}
	if err := images.Handle("resize", queue.HandlerFunc(func(ctx context.Context, _ *queue.Task) error {
		<-ctx.Done()
		return ctx.Err()
	})); err != nil {
		cancel()
		return nil, err
	}
	billing, err := queue.NewWorker(g, queue.Queues("billing"), queue.Backoff(time.Hour, time.Hour), quiet)
	if err != nil {
		cancel()
		return nil, err
	}
	if err := billing.Handle("charge", queue.HandlerFunc(func(context.Context, *queue.Task) error {
		return errors.New("card declined: insufficient funds (issuer code 51)")
	})); err != nil {
		cancel()
		return nil, err
	}
	bctx, stopBilling := context.WithCancel(wctx)
	done, billed := make(chan struct{}), make(chan struct{})
	go func() { _ = images.Run(wctx); close(done) }()
	go func() { _ = billing.Run(bctx); close(billed) }()
	stopWorkers := func() { stopBilling(); cancel(); <-done; <-billed }
	// Wait until the workers have taken their tasks (2 running, 2 dead, a
	// charge waiting to retry), then stop the billing worker: the charges
	// requeued from the dashboard wait in their queue.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := g.Stats(ctx)
		if err != nil {
			stopWorkers()
			return nil, err
		}
		if s.InFlight == 2 && s.Dead == 2 && s.Delayed == 3 {
			break
		}
		if time.Now().After(deadline) {
			stopWorkers()
			return nil, fmt.Errorf("tasks did not settle: %+v", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopBilling()
	<-billed
	return stopWorkers, nil
}

var tokenRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// check fetches each page as a browser would and acts through a form.
func check(ctx context.Context, g *queue.Group, base string) error {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	get := func(path string, want ...string) (string, error) {
		resp, err := c.Get(base + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		body := string(b)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				return "", fmt.Errorf("GET %s: the page does not show %q", path, w)
			}
		}
		fmt.Printf("GET %-26s 200, %5d bytes\n", "/queues/"+path, len(body))
		return body, nil
	}
	pages := []struct {
		path string
		want []string
	}{
		{"", []string{"email", "paused", ">7<"}},
		{"ready?queue=email", []string{"send_welcome", "ana@example.com"}},
		{"ready?queue=email&page=2", []string{"gus@example.com"}},
		{"delayed", []string{"send_reminder", "charge-A-17", "card declined"}},
		{"running", []string{"resize", "beach.jpg"}},
		{"dead", []string{"charge-B-42", "&lt;script&gt;"}},
		{"task?id=charge-A-17", []string{"A-17", "1 failed of 5 retries"}},
	}
	var overview string
	for _, p := range pages {
		body, err := get(p.path, p.want...)
		if err != nil {
			return err
		}
		if p.path == "" {
			overview = body
		}
	}
	m := tokenRE.FindStringSubmatch(overview)
	if m == nil {
		return errors.New("the overview has no form token")
	}
	post := func(form url.Values, origin string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"action", strings.NewReader(form.Encode()))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	u, _ := url.Parse(base)
	self := u.Scheme + "://" + u.Host
	code, err := post(url.Values{"op": {"requeue"}, "id": {"charge-B-42"}}, self)
	if err != nil {
		return err
	}
	fmt.Printf("POST requeue charge-B-42 without the token: %d\n", code)
	code, err = post(url.Values{"op": {"requeue"}, "id": {"charge-B-42"}, "csrf": {html.UnescapeString(m[1])}}, "https://evil.example")
	if err != nil {
		return err
	}
	fmt.Printf("POST requeue charge-B-42 from another site: %d\n", code)
	if info, err := g.Task(ctx, "charge-B-42"); err != nil || info.State != queue.StateDead {
		return fmt.Errorf("after refused requeues: %v %v", info.State, err)
	}
	code, err = post(url.Values{"op": {"requeue"}, "id": {"charge-B-42"}, "csrf": {html.UnescapeString(m[1])},
		"back": {u.Path + "dead"}}, self)
	if err != nil {
		return err
	}
	info, err := g.Task(ctx, "charge-B-42")
	if err != nil {
		return err
	}
	fmt.Printf("POST requeue charge-B-42 with the token: %d, now %s\n", code, info.State)
	if info.State == queue.StateDead {
		return errors.New("the requeue did not happen")
	}
	return nil
}
