package dashboard

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/queue"
)

//go:embed templates/*.html templates/style.css
var files embed.FS

var tmpl = template.Must(template.New("").Funcs(template.FuncMap{
	"when":    when,
	"snippet": snippet,
	"pretty":  pretty,
	"add":     func(a, b int) int { return a + b },
	"dict":    dict,
}).ParseFS(files, "templates/*.html"))

var style = must(files.ReadFile("templates/style.css"))

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

const (
	// DefaultPageSize is the tasks a list page shows unless [WithPageSize]
	// says.
	DefaultPageSize = 50
	// maxForm bounds the body of a POST.
	maxForm = 64 << 10
)

// Option configures a [Handler].
type Option func(*options)

type options struct {
	base     string
	queues   []string
	pageSize int
	secret   []byte
	timeout  time.Duration
}

// WithBasePath sets the path the handler is mounted at, e.g. "/queues":
// its pages are served under it, and its links and forms point there.
// Mount the handler at that path with a trailing slash, without
// http.StripPrefix. Default: "" (the root). It must start with '/' and
// not end with one (except "/" itself, the root).
func WithBasePath(p string) Option { return func(o *options) { o.base = p } }

// WithQueues names queues of the group for the overview to show (a group
// does not record its queues' names). Paused queues are shown too.
func WithQueues(names ...string) Option {
	return func(o *options) { o.queues = append(o.queues, names...) }
}

// WithPageSize sets how many tasks a list page shows. Default:
// [DefaultPageSize]; at most queue.MaxListPage.
func WithPageSize(n int) Option { return func(o *options) { o.pageSize = n } }

// WithSecret sets the key of the forms' tokens (see the package doc), at
// least 32 bytes. Default: 32 random bytes per handler. Handlers that
// serve the same users from several processes need the same secret.
func WithSecret(key []byte) Option { return func(o *options) { o.secret = slices.Clone(key) } }

// WithTimeout bounds the Redis calls of one request. Default: 10s.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// Handler serves the dashboard of one group. It is safe for concurrent
// use.
type Handler struct {
	g        *queue.Group
	base     string
	queues   []string
	pageSize int
	secret   []byte
	timeout  time.Duration
}

// New returns the dashboard of group g. It returns an error naming the bad
// option if the base path does not start with '/' or ends with one, a
// queue name is empty, the page size is not between 1 and
// queue.MaxListPage, the secret is shorter than 32 bytes or the timeout
// is not positive. It panics if g is nil. Nothing reaches Redis.
func New(g *queue.Group, opts ...Option) (*Handler, error) {
	if g == nil {
		panic("dashboard: New with a nil group")
	}
	o := options{pageSize: DefaultPageSize, timeout: 10 * time.Second}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("dashboard: new: %w", err)
	}
	if o.base == "/" {
		o.base = ""
	}
	switch {
	case o.base != "" && (!strings.HasPrefix(o.base, "/") || strings.HasSuffix(o.base, "/")):
		return nil, fmt.Errorf("dashboard: base path %q: must start with '/' and not end with one", o.base)
	case strings.ContainsAny(o.base, "?#\"'<>\\ "):
		return nil, fmt.Errorf("dashboard: base path %q: holds a character that needs escaping", o.base)
	case slices.Contains(o.queues, ""):
		return nil, errors.New("dashboard: queues: empty queue name")
	case o.pageSize < 1 || o.pageSize > queue.MaxListPage:
		return nil, fmt.Errorf("dashboard: page size %d: must be between 1 and %d", o.pageSize, queue.MaxListPage)
	case o.secret != nil && len(o.secret) < 32:
		return nil, fmt.Errorf("dashboard: secret: %d bytes, want at least 32", len(o.secret))
	case o.timeout <= 0:
		return nil, fmt.Errorf("dashboard: timeout %v: must be positive", o.timeout)
	}
	if o.secret == nil {
		o.secret = make([]byte, 32)
		_, _ = rand.Read(o.secret) // never fails (crypto/rand)
	}
	qs := slices.Clone(o.queues)
	slices.Sort(qs)
	return &Handler{g: g, base: o.base, queues: slices.Compact(qs), pageSize: o.pageSize, secret: o.secret, timeout: o.timeout}, nil
}

// page is what every template gets.
type page struct {
	Title  string
	Base   string
	Group  string
	CSRF   string
	Nav    string     // the current page's state, or "overview"
	Totals *totals    // the group's counts, for the navigation (nil: not read)
	Msg    string     // what the last action did
	Err    string     // what went wrong
	Data   any        // the page's own data
	Now    time.Time  // when the page was rendered
	States []navState // the navigation's entries
}

type totals struct{ Delayed, Running, Dead int64 }

type navState struct {
	State string
	Label string
	N     int64
}

// ServeHTTP serves the dashboard's pages (GET, HEAD) and actions (POST
// to <base>/action).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "same-origin")
	hdr.Set("Cache-Control", "no-store")
	path, ok := strings.CutPrefix(r.URL.Path, h.base)
	if !ok || path != "" && !strings.HasPrefix(path, "/") {
		http.NotFound(w, r)
		return
	}
	if path == "" {
		http.Redirect(w, r, h.base+"/", http.StatusFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.timeout)
	defer cancel()
	if path == "/action" {
		if r.Method != http.MethodPost {
			hdr.Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.action(ctx, w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch path {
	case "/style.css":
		hdr.Set("Content-Type", "text/css; charset=utf-8")
		hdr.Set("Cache-Control", "max-age=3600")
		_, _ = w.Write(style)
	case "/":
		h.overview(ctx, w, r)
	case "/ready", "/delayed", "/running", "/dead":
		h.list(ctx, w, r, queue.State(path[1:]))
	case "/task":
		h.task(ctx, w, r)
	default:
		http.NotFound(w, r)
	}
}

// render executes template name into a buffer, then writes it with status.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.Base, p.Group, p.Now = h.base, h.g.Name(), time.Now()
	p.CSRF = h.token(h.session(w, r))
	p.States = []navState{{"delayed", "Delayed", -1}, {"running", "Running", -1}, {"dead", "Dead", -1}}
	if t := p.Totals; t != nil {
		p.States[0].N, p.States[1].N, p.States[2].N = t.Delayed, t.Running, t.Dead
	}
	if p.Msg == "" {
		p.Msg = message(r.URL.Query())
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, name, p); err != nil {
		http.Error(w, "dashboard: render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// fail renders an error page.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	h.render(w, r, status, "error.html", page{Title: http.StatusText(status), Nav: "error", Err: err.Error()})
}

type queueRow struct {
	Name   string
	Ready  int64
	Paused bool
}

func (h *Handler) stats(ctx context.Context, queues ...string) (queue.Stats, *totals, error) {
	s, err := h.g.Stats(ctx, queues...)
	return s, &totals{Delayed: s.Delayed, Running: s.InFlight, Dead: s.Dead}, err
}

// dict builds a map for a sub-template from key, value pairs.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, errors.New("dict: odd number of arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}

func (h *Handler) overview(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	s, t, err := h.stats(ctx, h.queues...)
	if err != nil {
		h.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	names := slices.Clone(h.queues)
	var more []string // paused queues the options do not name
	for _, q := range s.Paused {
		if !slices.Contains(names, q) {
			more = append(more, q)
		}
	}
	if len(more) > 0 {
		m, _, err := h.stats(ctx, more...)
		if err != nil {
			h.fail(w, r, http.StatusInternalServerError, err)
			return
		}
		for _, q := range more {
			s.Ready[q] = m.Ready[q]
		}
		names = append(names, more...)
		slices.Sort(names)
	}
	rows := make([]queueRow, len(names))
	for i, q := range names {
		rows[i] = queueRow{Name: q, Ready: s.Ready[q], Paused: slices.Contains(s.Paused, q)}
	}
	h.render(w, r, http.StatusOK, "overview.html", page{Title: "Overview", Nav: "overview", Totals: t, Data: rows})
}

type listData struct {
	State    string
	Queue    string
	Tasks    []queue.TaskInfo
	Total    int64
	Page     int
	Pages    int64
	First    int // the position of the first task shown (1-based)
	Prev     string
	Next     string
	Back     string // this page, for the actions' redirect
	Actions  []string
	Paused   bool
	Showable bool // the page lists tasks
}

func (h *Handler) list(ctx context.Context, w http.ResponseWriter, r *http.Request, state queue.State) {
	q := r.URL.Query()
	n := 1
	if p := q.Get("page"); p != "" {
		var err error
		if n, err = strconv.Atoi(p); err != nil || n < 1 || n-1 > queue.MaxListOffset/h.pageSize {
			h.fail(w, r, http.StatusBadRequest, fmt.Errorf("page %q: want a number from 1", p))
			return
		}
	}
	name := ""
	if state == queue.StateReady {
		if name = q.Get("queue"); name == "" {
			h.fail(w, r, http.StatusBadRequest, errors.New("ready tasks are listed per queue: give ?queue=<name>"))
			return
		}
	}
	var qs []string
	if name != "" {
		qs = []string{name}
	}
	s, t, err := h.stats(ctx, qs...)
	if err != nil {
		h.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	ts, err := h.g.List(ctx, state, name, (n-1)*h.pageSize, h.pageSize)
	if err != nil {
		h.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	d := listData{State: string(state), Queue: name, Tasks: ts, Page: n, First: (n-1)*h.pageSize + 1, Showable: true}
	switch state {
	case queue.StateReady:
		d.Total = s.Ready[name]
		d.Paused = slices.Contains(s.Paused, name)
		d.Actions = []string{"delete"}
	case queue.StateDelayed:
		d.Total = s.Delayed
		d.Actions = []string{"runnow", "delete"}
	case queue.StateRunning:
		d.Total = s.InFlight
	case queue.StateDead:
		d.Total = s.Dead
		d.Actions = []string{"requeue", "delete"}
	}
	d.Pages = max((d.Total+int64(h.pageSize)-1)/int64(h.pageSize), 1)
	link := func(p int) string {
		v := url.Values{}
		if name != "" {
			v.Set("queue", name)
		}
		if p > 1 {
			v.Set("page", strconv.Itoa(p))
		}
		if len(v) == 0 {
			return h.base + "/" + string(state)
		}
		return h.base + "/" + string(state) + "?" + v.Encode()
	}
	if int64(n) > d.Pages {
		// Past the last page (the list shrank since the link was made, or
		// the link was made up): show the last one.
		http.Redirect(w, r, link(int(d.Pages)), http.StatusSeeOther)
		return
	}
	d.Back = link(n)
	if n > 1 {
		d.Prev = link(n - 1)
	}
	if int64(n) < d.Pages {
		d.Next = link(n + 1)
	}
	title := map[queue.State]string{queue.StateReady: "Ready", queue.StateDelayed: "Delayed", queue.StateRunning: "Running",
		queue.StateDead: "Dead"}[state]
	if name != "" {
		title += ": " + name
	}
	h.render(w, r, http.StatusOK, "list.html", page{Title: title, Nav: string(state), Totals: t, Data: d})
}

type taskData struct {
	queue.TaskInfo
	Actions []string
	Back    string
}

func (h *Handler) task(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		h.fail(w, r, http.StatusBadRequest, errors.New("give ?id=<task ID>"))
		return
	}
	info, err := h.g.Task(ctx, id)
	if errors.Is(err, queue.ErrNotFound) {
		h.fail(w, r, http.StatusNotFound, fmt.Errorf("task %q: not found (never enqueued, done, or deleted)", id))
		return
	}
	if err != nil {
		h.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	d := taskData{TaskInfo: info, Back: h.base + "/task?" + url.Values{"id": {id}}.Encode()}
	d.Actions = map[queue.State][]string{queue.StateReady: {"delete"}, queue.StateDelayed: {"runnow", "delete"},
		queue.StateDead: {"requeue", "delete"}}[info.State]
	h.render(w, r, http.StatusOK, "task.html", page{Title: "Task " + id, Nav: "task", Data: d})
}

// The actions' messages, by the redirect's "done" parameter.
var messages = map[string]string{
	"requeue": "Task %s requeued.", "delete": "Task %s deleted.", "runnow": "Task %s is ready to run.",
	"pause": "Queue %s paused.", "resume": "Queue %s resumed.",
}

// The bulk actions' messages, by the redirect's "done" parameter: the
// queue (purge) and the count of tasks.
var bulkMessages = map[string]string{
	"purge": "Queue %s purged: %s deleted.", "requeueall": "Dead tasks requeued: %[2]s.",
	"deleteall": "Dead tasks deleted: %[2]s.",
}

func message(q url.Values) string {
	if f, ok := bulkMessages[q.Get("done")]; ok {
		n, err := strconv.Atoi(q.Get("n"))
		if err != nil || n < 0 {
			return ""
		}
		tasks := strconv.Itoa(n) + " tasks"
		if n == 1 {
			tasks = "1 task"
		}
		return fmt.Sprintf(f, strconv.Quote(q.Get("what")), tasks)
	}
	f, ok := messages[q.Get("done")]
	if !ok {
		return ""
	}
	return fmt.Sprintf(f, strconv.Quote(q.Get("what")))
}

func (h *Handler) action(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		status := http.StatusBadRequest
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			status = http.StatusRequestEntityTooLarge
		}
		h.fail(w, r, status, fmt.Errorf("form: %w", err))
		return
	}
	if !h.allowed(r) {
		h.fail(w, r, http.StatusForbidden, errors.New("forbidden: the form's token is missing or wrong, or the request comes from another site; reload the page and try again"))
		return
	}
	op, id, q := r.PostForm.Get("op"), r.PostForm.Get("id"), r.PostForm.Get("queue")
	var err error
	what, count := id, ""
	switch op {
	case "requeue":
		err = need(ctx, "task ID", id, h.g.Requeue)
	case "delete":
		err = need(ctx, "task ID", id, h.g.Delete)
	case "runnow":
		err = need(ctx, "task ID", id, h.g.RunNow)
	case "pause":
		what = q
		err = need(ctx, "queue", q, h.g.Pause)
	case "resume":
		what = q
		err = need(ctx, "queue", q, h.g.Resume)
	case "purge", "requeueall", "deleteall":
		// Many tasks at once: the form's confirm box must be ticked.
		if r.PostForm.Get("confirm") != "yes" {
			h.fail(w, r, http.StatusBadRequest, fmt.Errorf("action %q: not confirmed (tick the box next to the button)", op))
			return
		}
		var n int
		switch op {
		case "purge":
			what = q
			err = need(ctx, "queue", q, func(ctx context.Context, q string) (err error) {
				n, err = h.g.Purge(ctx, q)
				return err
			})
		case "requeueall":
			n, err = h.g.RequeueAllDead(ctx)
		default:
			n, err = h.g.DeleteAllDead(ctx)
		}
		count = strconv.Itoa(n)
	default:
		h.fail(w, r, http.StatusBadRequest, fmt.Errorf("action %q: unknown", op))
		return
	}
	switch {
	case errors.Is(err, errMissing):
		h.fail(w, r, http.StatusBadRequest, err)
		return
	case errors.Is(err, queue.ErrNotFound), errors.Is(err, queue.ErrInFlight):
		h.fail(w, r, http.StatusConflict, err)
		return
	case err != nil:
		h.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	back := r.PostForm.Get("back")
	if !h.local(back) || op == "delete" && strings.HasPrefix(back, h.base+"/task?") {
		back = h.base + "/"
	}
	sep := "?"
	if strings.Contains(back, "?") {
		sep = "&"
	}
	v := url.Values{"done": {op}, "what": {what}}
	if count != "" {
		v.Set("n", count)
	}
	http.Redirect(w, r, back+sep+v.Encode(), http.StatusSeeOther)
}

var errMissing = errors.New("missing")

func need(ctx context.Context, what, v string, fn func(context.Context, string) error) error {
	if v == "" {
		return fmt.Errorf("%s: %w", what, errMissing)
	}
	return fn(ctx, v)
}

// local reports whether back is a path of this dashboard (not another
// site's URL), without an earlier action's message.
func (h *Handler) local(back string) bool {
	if !strings.HasPrefix(back, h.base+"/") || strings.HasPrefix(back, "//") || strings.ContainsAny(back, "\\\r\n") {
		return false
	}
	u, err := url.Parse(back)
	return err == nil && u.Scheme == "" && u.Host == "" && !u.Query().Has("done")
}

// when formats a time for the pages, relative to now.
func when(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := t.Sub(now).Round(time.Second)
	rel := "in " + d.String()
	if d < 0 {
		rel = (-d).String() + " ago"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC") + " (" + rel + ")"
}

// snippet shortens a payload for a table cell.
func snippet(b []byte) string {
	const n = 80
	s := string(b)
	if !utf8.ValidString(s) {
		return fmt.Sprintf("(%d bytes of binary data)", len(b))
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// pretty indents a JSON payload; any other payload is shown as it is (or
// as hex if it is not text).
func pretty(b []byte) string {
	var buf bytes.Buffer
	if json.Valid(b) && json.Indent(&buf, b, "", "  ") == nil {
		return buf.String()
	}
	if !utf8.Valid(b) {
		return fmt.Sprintf("%x", b)
	}
	return string(b)
}
