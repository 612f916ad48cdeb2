package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/queue/dashboard"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// textCodec stores strings as they are (so that a payload can hold raw
// markup), anything else as JSON.
type textCodec struct{}

func (textCodec) Marshal(v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		return []byte(s), nil
	}
	return json.Marshal(v)
}
func (textCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

const xss = `<script>alert("x")</script>`

// populate builds tasks in every state: ready e1..e3 and x (payload xss)
// in "email"; delayed "later" (email) and "p2" (pay, retrying after
// "card <b>declined</b>"); "h" running (slow); "p1" dead (pay).
func populate(t *testing.T, b *redistest.Backend) *queue.Group {
	t.Helper()
	ctx := t.Context()
	g, err := queue.New(b.Client, "shop", queue.WithPrefix(b.Prefix), queue.WithCodec(textCodec{}))
	require.NoError(t, err)
	_, err = g.EnqueueBatch(ctx, []queue.Job{
		{Queue: "email", Name: "welcome", Payload: map[string]string{"to": "ana@example.com"}, Options: []queue.EnqueueOption{queue.ID("e1")}},
		{Queue: "email", Name: "welcome", Payload: map[string]string{"to": "bo@example.com"}, Options: []queue.EnqueueOption{queue.ID("e2")}},
		{Queue: "email", Name: "welcome", Payload: map[string]string{"to": "cy@example.com"}, Options: []queue.EnqueueOption{queue.ID("e3")}},
		{Queue: "email", Name: "welcome", Payload: xss, Options: []queue.EnqueueOption{queue.ID("x")}},
		{Queue: "email", Name: "remind", Payload: 1, Options: []queue.EnqueueOption{queue.ID("later"), queue.Delay(time.Hour)}},
		{Queue: "slow", Name: "hold", Payload: 2, Options: []queue.EnqueueOption{queue.ID("h")}},
		{Queue: "pay", Name: "charge", Payload: map[string]int{"cents": 120}, Options: []queue.EnqueueOption{queue.ID("p1"), queue.MaxRetry(0)}},
		{Queue: "pay", Name: "charge", Payload: map[string]int{"cents": 4999}, Options: []queue.EnqueueOption{queue.ID("p2"), queue.MaxRetry(3)}},
	})
	require.NoError(t, err)
	quiet := queue.Logger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	slow, err := queue.NewWorker(g, queue.Queues("slow"), queue.Grace(0), quiet)
	require.NoError(t, err)
	require.NoError(t, slow.Handle("hold", queue.HandlerFunc(func(ctx context.Context, _ *queue.Task) error {
		<-ctx.Done()
		return ctx.Err()
	})))
	pay, err := queue.NewWorker(g, queue.Queues("pay"), queue.Backoff(time.Hour, time.Hour), quiet)
	require.NoError(t, err)
	require.NoError(t, pay.Handle("charge", queue.HandlerFunc(func(context.Context, *queue.Task) error {
		return errors.New("card <b>declined</b>")
	})))
	sctx, stopSlow := context.WithCancel(context.Background())
	pctx, stopPay := context.WithCancel(context.Background())
	slowDone, payDone := make(chan struct{}), make(chan struct{})
	go func() { _ = slow.Run(sctx); close(slowDone) }()
	go func() { _ = pay.Run(pctx); close(payDone) }()
	t.Cleanup(func() { stopSlow(); stopPay(); <-slowDone; <-payDone })
	require.Eventually(t, func() bool {
		s, err := g.Stats(ctx)
		return err == nil && s.InFlight == 1 && s.Dead == 1 && s.Delayed == 2
	}, 20*time.Second, 5*time.Millisecond, "the workers run h and fail p1 and p2")
	// The pay worker stops: a charge requeued from the dashboard waits.
	stopPay()
	<-payDone
	return g
}

// client is a browser: it keeps cookies and follows redirects.
type client struct {
	t    *testing.T
	c    *http.Client
	base string // the server's URL, with the base path
	srv  string // the server's origin
}

func newClient(t *testing.T, srv *httptest.Server, base string) *client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	host := srv.Listener.Addr().String()
	// Redirects stay on the test server: a redirect elsewhere fails.
	redirect := func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host != host {
			return fmt.Errorf("redirected off the dashboard, to %s", req.URL)
		}
		return nil
	}
	return &client{t: t, c: &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: redirect}, base: srv.URL + base, srv: srv.URL}
}

func serve(t *testing.T, g *queue.Group, base string, opts ...dashboard.Option) *httptest.Server {
	h, err := dashboard.New(g, append([]dashboard.Option{dashboard.WithBasePath(base), dashboard.WithQueues("email", "pay", "slow")}, opts...)...)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle(base+"/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func (c *client) get(path string) (int, string) {
	c.t.Helper()
	resp, err := c.c.Get(c.base + path)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp.StatusCode, string(b)
}

func (c *client) page(path string) string {
	c.t.Helper()
	code, body := c.get(path)
	require.Equal(c.t, http.StatusOK, code, "GET %s: %s", path, body)
	return body
}

var tokenRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// token returns the form token of the page at path.
func (c *client) token(path string) string {
	c.t.Helper()
	m := tokenRE.FindStringSubmatch(c.page(path))
	require.NotNil(c.t, m, "the page has a form token")
	return m[1]
}

// post sends a form to the action URL with the headers given (name,
// value pairs).
func (c *client) post(form url.Values, headers ...string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+"/action", strings.NewReader(form.Encode()))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.c.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp.StatusCode, string(b)
}

// rows returns the task IDs a list page shows, in order.
var rowRE = regexp.MustCompile(`<td class="id"><a href="[^"]*">([^<]*)</a>`)

func rows(body string) []string {
	var out []string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// Each page shows the tasks the test made, with their counts, payloads
// and errors, markup in payloads and errors escaped.
func TestDashboard_pages(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		g := populate(t, b)
		srv := serve(t, g, "/queues", dashboard.WithPageSize(3))
		c := newClient(t, srv, "/queues")

		body := c.page("/")
		assert.Regexp(t, `queue=email">email</a></td>\s*<td class="num">4</td>`, body)
		assert.Regexp(t, `queue=pay">pay</a></td>\s*<td class="num">0</td>`, body)
		assert.Regexp(t, `Delayed</span><span class="v">2<`, body)
		assert.Regexp(t, `Running</span><span class="v">1<`, body)
		assert.Regexp(t, `Dead</span><span class="v">1<`, body)
		assert.Contains(t, body, `href="/queues/style.css"`)

		body = c.page("/ready?queue=email")
		assert.Equal(t, []string{"e1", "e2", "e3"}, rows(body), "page 1 of 2, in the order workers take them")
		assert.Contains(t, body, "4 tasks, page 1 of 2")
		assert.Contains(t, body, `ana@example.com`)
		assert.Contains(t, body, `href="/queues/ready?page=2&amp;queue=email"`)
		assert.Contains(t, body, `<input type="hidden" name="op" value="pause"><button type="submit">Pause</button>`)
		body = c.page("/ready?queue=email&page=2")
		assert.Equal(t, []string{"x"}, rows(body))
		assert.Contains(t, body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", "the payload, escaped")
		assert.NotContains(t, body, "<script")
		assert.Contains(t, body, "Previous")
		assert.Equal(t, []string{"x"}, rows(c.page("/ready?queue=email&page=3")), "past the last page: redirected to it")

		body = c.page("/delayed")
		assert.ElementsMatch(t, []string{"p2", "later"}, rows(body))
		assert.Contains(t, body, "card &lt;b&gt;declined&lt;/b&gt;")
		assert.NotContains(t, body, "<b>declined")
		assert.Contains(t, body, `value="runnow"`)

		body = c.page("/running")
		assert.Equal(t, []string{"h"}, rows(body))
		assert.Contains(t, body, "hold")
		assert.NotContains(t, body, `name="op"`, "no action on a running task")

		body = c.page("/dead")
		assert.Equal(t, []string{"p1"}, rows(body))
		assert.Contains(t, body, "card &lt;b&gt;declined&lt;/b&gt;")
		assert.Contains(t, body, `value="requeue"`)

		body = c.page("/task?id=p2")
		assert.Contains(t, body, "1 failed of 3 retries")
		assert.Contains(t, body, "card &lt;b&gt;declined&lt;/b&gt;")
		assert.Contains(t, body, `&#34;cents&#34;: 4999`, "the payload, indented")
		assert.Contains(t, body, `<span class="tag delayed">delayed</span>`)
		body = c.page("/task?id=x")
		assert.Contains(t, body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;")
		assert.NotContains(t, body, "<script")

		for path, want := range map[string]int{
			"/task?id=nope": http.StatusNotFound, "/task": http.StatusBadRequest, "/ready": http.StatusBadRequest,
			"/dead?page=0": http.StatusBadRequest, "/dead?page=x": http.StatusBadRequest, "/nope": http.StatusNotFound,
			"/action": http.StatusMethodNotAllowed, "/dead?page=9223372036854775807": http.StatusBadRequest,
			"/dead?page=4611686018427387905": http.StatusBadRequest,
		} {
			code, _ := c.get(path)
			assert.Equal(t, want, code, path)
		}
		code, _ := c.get("/../other")
		assert.Equal(t, http.StatusNotFound, code)

		resp, err := c.c.Get(c.base + "/")
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
		assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
		var cookie *http.Cookie
		for _, ck := range resp.Cookies() {
			cookie = ck
		}
		if cookie == nil { // set on the first page only
			u, _ := url.Parse(c.base + "/")
			cookie = c.c.Jar.Cookies(u)[0]
		}
		assert.Equal(t, "ria_dashboard_csrf", cookie.Name)
	})
}

// state is what the actions may change: the IDs in each state and the
// paused queues.
func state(t *testing.T, g *queue.Group) string {
	t.Helper()
	var sb strings.Builder
	for _, s := range []struct {
		st queue.State
		q  string
	}{{queue.StateReady, "email"}, {queue.StateReady, "pay"}, {queue.StateDelayed, ""}, {queue.StateRunning, ""}, {queue.StateDead, ""}} {
		ts, err := g.List(t.Context(), s.st, s.q, 0, 100)
		require.NoError(t, err)
		var ids []string
		for _, ti := range ts {
			ids = append(ids, ti.ID)
		}
		slices.Sort(ids)
		sb.WriteString(string(s.st) + " " + s.q + ": " + strings.Join(ids, ",") + "\n")
	}
	p, err := g.Paused(t.Context())
	require.NoError(t, err)
	sb.WriteString("paused: " + strings.Join(p, ","))
	return sb.String()
}

// Each action works with the page's token and is refused (403, nothing
// changed) without it, with a wrong one, with another browser's, and
// from another site.
func TestDashboard_actions(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := populate(t, b)
		srv := serve(t, g, "/queues")
		c := newClient(t, srv, "/queues")
		tok := c.token("/")
		other := newClient(t, srv, "/queues")
		otherTok := other.token("/")
		require.NotEqual(t, tok, otherTok)
		self := []string{"Origin", c.srv, "Sec-Fetch-Site", "same-origin"}

		actions := []struct {
			form  url.Values
			msg   string
			check func()
		}{
			{url.Values{"op": {"requeue"}, "id": {"p1"}, "back": {"/queues/dead"}}, `Task &#34;p1&#34; requeued.`, func() {
				info, err := g.Task(ctx, "p1")
				require.NoError(t, err)
				assert.Equal(t, queue.StateReady, info.State)
			}},
			{url.Values{"op": {"delete"}, "id": {"e2"}, "back": {"/queues/ready?queue=email"}}, `Task &#34;e2&#34; deleted.`, func() {
				_, err := g.Task(ctx, "e2")
				assert.ErrorIs(t, err, queue.ErrNotFound)
			}},
			{url.Values{"op": {"runnow"}, "id": {"later"}, "back": {"/queues/task?id=later"}}, `Task &#34;later&#34; is ready to run.`, func() {
				info, err := g.Task(ctx, "later")
				require.NoError(t, err)
				assert.Equal(t, queue.StateReady, info.State)
			}},
			{url.Values{"op": {"pause"}, "queue": {"email"}, "back": {"/queues/"}}, `Queue &#34;email&#34; paused.`, func() {
				p, err := g.Paused(ctx)
				require.NoError(t, err)
				assert.Equal(t, []string{"email"}, p)
			}},
			{url.Values{"op": {"resume"}, "queue": {"email"}, "back": {"https://evil.example/"}}, `Queue &#34;email&#34; resumed.`, func() {
				p, err := g.Paused(ctx)
				require.NoError(t, err)
				assert.Empty(t, p)
			}},
		}
		for _, a := range actions {
			before := state(t, g)
			with := func(tok string) url.Values {
				f := url.Values{}
				for k, v := range a.form {
					f[k] = v
				}
				if tok != "" {
					f.Set("csrf", tok)
				}
				return f
			}
			for _, bad := range []struct {
				name    string
				c       *client
				form    url.Values
				headers []string
			}{
				{"no token", c, with(""), self},
				{"wrong token", c, with(tok[:len(tok)-2] + "xx"), self},
				{"another browser's token", c, with(otherTok), self},
				{"token without its cookie", newClient(t, srv, "/queues"), with(tok), self},
				{"another site's Origin", c, with(tok), []string{"Origin", "https://evil.example"}},
				{"Origin null", c, with(tok), []string{"Origin", "null"}},
				{"cross-site fetch", c, with(tok), []string{"Sec-Fetch-Site", "cross-site"}},
				{"same-site fetch", c, with(tok), []string{"Sec-Fetch-Site", "same-site"}},
			} {
				code, body := bad.c.post(bad.form, bad.headers...)
				assert.Equal(t, http.StatusForbidden, code, "%s %s", a.form.Get("op"), bad.name)
				assert.Contains(t, body, "forbidden")
				assert.Equal(t, before, state(t, g), "%s %s changed nothing", a.form.Get("op"), bad.name)
			}
			code, body := c.post(with(tok), self...)
			assert.Equal(t, http.StatusOK, code, "%s: %s", a.form.Get("op"), body)
			assert.Contains(t, body, a.msg)
			a.check()
		}
		// No Origin and no Sec-Fetch-Site (an old browser): the token is enough.
		code, body := c.post(url.Values{"op": {"delete"}, "id": {"e3"}, "csrf": {tok}})
		assert.Equal(t, http.StatusOK, code, body)
		_, err := g.Task(ctx, "e3")
		assert.ErrorIs(t, err, queue.ErrNotFound)

		// Refusals of the queue: 409, and the error.
		code, body = c.post(url.Values{"op": {"delete"}, "id": {"h"}, "csrf": {tok}}, self...)
		assert.Equal(t, http.StatusConflict, code)
		assert.Contains(t, body, "in flight")
		code, _ = c.post(url.Values{"op": {"requeue"}, "id": {"e1"}, "csrf": {tok}}, self...)
		assert.Equal(t, http.StatusConflict, code)
		code, _ = c.post(url.Values{"op": {"explode"}, "id": {"e1"}, "csrf": {tok}}, self...)
		assert.Equal(t, http.StatusBadRequest, code)
		code, _ = c.post(url.Values{"op": {"delete"}, "csrf": {tok}}, self...)
		assert.Equal(t, http.StatusBadRequest, code)

		// A GET never acts.
		before := state(t, g)
		code, _ = c.get("/action?op=delete&id=e1&csrf=" + url.QueryEscape(tok))
		assert.Equal(t, http.StatusMethodNotAllowed, code)
		code, _ = c.get("/?op=delete&id=e1&csrf=" + url.QueryEscape(tok))
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, before, state(t, g))
	})
}

// The bulk actions: shown on the ready and dead pages with a confirm box,
// refused (400, nothing changed) unconfirmed or (403) without the token,
// and they say how many tasks they deleted or requeued.
func TestDashboard_bulkActions(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		g := populate(t, b)
		srv := serve(t, g, "/queues")
		c := newClient(t, srv, "/queues")
		tok := c.token("/")
		self := []string{"Origin", c.srv, "Sec-Fetch-Site", "same-origin"}

		body := c.page("/ready?queue=email")
		assert.Contains(t, body, `<input type="hidden" name="op" value="purge">`)
		assert.Contains(t, body, `<input type="checkbox" name="confirm" value="yes" required>`)
		body = c.page("/dead")
		assert.Contains(t, body, `<input type="hidden" name="op" value="requeueall">`)
		assert.Contains(t, body, `<input type="hidden" name="op" value="deleteall">`)
		assert.NotContains(t, c.page("/ready?queue=none"), `value="purge"`, "no purge button on an empty queue")
		assert.NotContains(t, c.page("/delayed"), `value="deleteall"`)

		for _, op := range []url.Values{
			{"op": {"purge"}, "queue": {"email"}}, {"op": {"requeueall"}}, {"op": {"deleteall"}},
		} {
			before := state(t, g)
			f := url.Values{"csrf": {tok}}
			for k, v := range op {
				f[k] = v
			}
			code, body := c.post(f, self...)
			assert.Equal(t, http.StatusBadRequest, code, "%s unconfirmed", op.Get("op"))
			assert.Contains(t, body, "not confirmed")
			f.Set("confirm", "yes")
			f.Del("csrf")
			code, _ = c.post(f, self...)
			assert.Equal(t, http.StatusForbidden, code, "%s without token", op.Get("op"))
			assert.Equal(t, before, state(t, g), "%s refused changed nothing", op.Get("op"))
		}
		code, _ := c.post(url.Values{"op": {"purge"}, "confirm": {"yes"}, "csrf": {tok}}, self...)
		assert.Equal(t, http.StatusBadRequest, code, "purge without a queue")

		code, body = c.post(url.Values{"op": {"purge"}, "queue": {"email"}, "confirm": {"yes"}, "csrf": {tok},
			"back": {"/queues/ready?queue=email"}}, self...)
		assert.Equal(t, http.StatusOK, code, body)
		assert.Contains(t, body, `Queue &#34;email&#34; purged: 4 tasks deleted.`)
		s, err := g.Stats(ctx, "email")
		require.NoError(t, err)
		assert.Zero(t, s.Ready["email"])
		assert.Equal(t, int64(2), s.Delayed, "delayed tasks stay")

		code, body = c.post(url.Values{"op": {"requeueall"}, "confirm": {"yes"}, "csrf": {tok}, "back": {"/queues/dead"}}, self...)
		assert.Equal(t, http.StatusOK, code, body)
		assert.Contains(t, body, `Dead tasks requeued: 1 task.`)
		info, err := g.Task(ctx, "p1")
		require.NoError(t, err)
		assert.Equal(t, queue.StateReady, info.State)

		// p1 dies again (no retry), then deleteall deletes it.
		quiet := queue.Logger(slog.New(slog.NewTextHandler(io.Discard, nil)))
		pay, err := queue.NewWorker(g, queue.Queues("pay"), quiet)
		require.NoError(t, err)
		require.NoError(t, pay.Handle("charge", queue.HandlerFunc(func(context.Context, *queue.Task) error {
			return queue.ErrNoRetry
		})))
		pctx, stopPay := context.WithCancel(context.Background())
		payDone := make(chan struct{})
		go func() { _ = pay.Run(pctx); close(payDone) }()
		require.Eventually(t, func() bool {
			s, err := g.Stats(ctx)
			return err == nil && s.Dead == 1
		}, 20*time.Second, 5*time.Millisecond, "p1 dies again")
		stopPay()
		<-payDone
		code, body = c.post(url.Values{"op": {"deleteall"}, "confirm": {"yes"}, "csrf": {tok}, "back": {"/queues/dead"}}, self...)
		assert.Equal(t, http.StatusOK, code, body)
		assert.Contains(t, body, `Dead tasks deleted: 1 task.`)
		s, err = g.Stats(ctx)
		require.NoError(t, err)
		assert.Zero(t, s.Dead)

		// A count in the URL that is not one shows no message.
		assert.NotContains(t, c.page("/?done=purge&what=email&n=x"), "purged")
	})
}

// The dashboard serves at the root too, and New refuses bad options.
func TestDashboard_rootAndOptions(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		g, err := queue.New(b.Client, "shop", queue.WithPrefix(b.Prefix))
		require.NoError(t, err)
		_, err = g.Enqueue(t.Context(), "email", "welcome", 1, queue.ID("only"))
		require.NoError(t, err)
		h, err := dashboard.New(g)
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		c := newClient(t, srv, "")
		body := c.page("/ready?queue=email")
		assert.Equal(t, []string{"only"}, rows(body))
		assert.Contains(t, body, `href="/task?id=only"`)
		body = c.page("/")
		assert.Contains(t, body, "No queue named")

		// Round trips, once the scripts are loaded.
		ctx := t.Context()
		tok := c.token("/ready?queue=email")
		c.page("/task?id=only")
		require.ErrorIs(t, g.Delete(ctx, "nope"), queue.ErrNotFound)
		for path, want := range map[string]int64{"/": 1, "/ready?queue=email": 2, "/dead": 2, "/task?id=only": 1} {
			rt, _ := b.Count.Delta(func() { c.page(path) })
			assert.Equal(t, want, rt, "round trips of %s", path)
		}
		require.NoError(t, g.Pause(ctx, "email"))
		rt, _ := b.Count.Delta(func() { body = c.page("/") })
		assert.Equal(t, int64(2), rt, "round trips of the overview with an unnamed paused queue")
		assert.Regexp(t, `queue=email">email</a></td>\s*<td class="num">1</td>\s*<td><span class="tag paused">`, body)
		var code int
		rt, _ = b.Count.Delta(func() {
			code, body = c.post(url.Values{"op": {"delete"}, "id": {"only"}, "csrf": {tok}}, "Origin", srv.URL)
		})
		assert.Equal(t, http.StatusOK, code, body)
		assert.Contains(t, body, "deleted")
		assert.Equal(t, int64(3), rt, "round trips of an action (1) and of the overview it leads to (2: email is paused, unnamed)")

		for _, o := range []dashboard.Option{
			dashboard.WithBasePath("queues"), dashboard.WithBasePath("/queues/"), dashboard.WithBasePath("/a b"),
			dashboard.WithQueues("ok", ""), dashboard.WithPageSize(0), dashboard.WithPageSize(queue.MaxListPage + 1),
			dashboard.WithSecret([]byte("short")), dashboard.WithTimeout(0),
		} {
			_, err := dashboard.New(g, o)
			assert.Error(t, err)
		}
		_, err = dashboard.New(g, dashboard.WithBasePath("/"), dashboard.WithSecret(make([]byte, 32)))
		assert.NoError(t, err)
		assert.Panics(t, func() { _, _ = dashboard.New(nil) })
	})
}
