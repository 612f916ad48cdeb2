package config

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

// ErrNotFound is returned (wrapped, with the name) by Get for a value that
// was never set or was deleted.
var ErrNotFound = errors.New("config: not found")

var (
	//go:embed set.lua
	setLua string
	//go:embed del.lua
	delLua    string
	setScript = script.NewOnce("config set", setLua)
	delScript = script.NewOnce("config delete", delLua)
)

// Client is the subset of go-redis this package uses.
type Client interface {
	Get(ctx context.Context, key string) *redis.StringCmd
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd
	Do(ctx context.Context, args ...any) *redis.Cmd // TYPE, to name a key of another type
	// Scan lists components (Components); on a Cluster or Ring, every
	// node is scanned.
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// MaxValueSize bounds the JSON of one value (512 KiB): configuration, not
// data.
const MaxValueSize = 512 << 10

// Option configures a [Store].
type Option func(*options) error

type options struct {
	prefix   string
	maxAge   time.Duration
	log      *slog.Logger
	onChange func(typ, component string)
}

// WithPrefix sets the key prefix. Default "config:". It must not contain
// '{' or '}'.
func WithPrefix(p string) Option { return func(o *options) error { o.prefix = p; return nil } }

// WithMaxAge sets how long a read value is served from memory before Redis
// is asked again (the book re-reads at most once a second): the staleness
// bound when [Store.Run] is not running or a notification was missed.
// Zero reads Redis every time. Default 1 s.
func WithMaxAge(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("max age %v: must not be negative", d)
		}
		o.maxAge = d
		return nil
	}
}

// WithLogger sets where Run logs subscription errors. Default
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("nil logger")
		}
		o.log = l
		return nil
	}
}

// WithOnChange sets a function that [Store.Run] calls, from its goroutine,
// after a change of (typ, component) has dropped it from the cache, and
// with typ and component "" after a (re)subscription dropped everything
// (notifications may have been missed while unsubscribed). It must not
// block for long.
func WithOnChange(fn func(typ, component string)) Option {
	return func(o *options) error {
		if fn == nil {
			return errors.New("nil change function")
		}
		o.onChange = fn
		return nil
	}
}

// Store reads and writes configuration values, caching what it reads. It
// is safe for concurrent use.
type Store struct {
	rdb     Client
	keys    keys.Space
	channel string
	o       options
	now     func() time.Time

	mu    sync.Mutex
	cache map[string]entry // by name, typ + "\x00" + component
	gen   uint64           // bumped by every invalidation
	reads uint64           // GETs sent so far: orders the reads
}

type entry struct {
	raw   []byte // nil: not found
	until time.Time
	seq   uint64 // reads when its GET was sent: a later GET has a greater seq
}

// New returns a Store on rdb.
func New(rdb Client, opts ...Option) (*Store, error) {
	if rdb == nil {
		return nil, errors.New("config: new: nil client")
	}
	o := options{prefix: "config:", maxAge: time.Second, log: slog.Default()}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("config: new: nil option (%d of %d)", i+1, len(opts))
		}
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("config: new: %w", err)
		}
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("config: new: %w", err)
	}
	return &Store{rdb: rdb, keys: keys.New(o.prefix), channel: o.prefix + "changes", o: o,
		now: time.Now, cache: map[string]entry{}}, nil
}

// check validates a (typ, component) pair.
func check(typ, component string) error {
	if err := keys.CheckEntity("type", typ); err != nil {
		return err
	}
	if strings.ContainsRune(typ, 0) || strings.ContainsRune(component, 0) {
		return fmt.Errorf("type %q, component %q: must not contain NUL", typ, component)
	}
	if strings.Contains(typ, ":") { // else ("a:b", "c") and ("a", "b:c") would share a key
		return fmt.Errorf("type %q: must not contain ':'", typ)
	}
	return keys.CheckEntity("component", component)
}

// Components returns the components that have a value of type typ,
// sorted. It scans the keyspace (SCAN MATCH on every master of a Cluster,
// every shard of a Ring): one round trip per [keys.ScanCount] keys of the
// database per node, so it is for tools and start-up, not for every
// request. A value set or deleted during the scan may be missed or listed.
func (s *Store) Components(ctx context.Context, typ string) ([]string, error) {
	if err := check(typ, "x"); err != nil {
		return nil, fmt.Errorf("config: components: %w", err)
	}
	head := s.keys.Prefix() + "{" + typ + ":"
	const tail = "}:value"
	seen := map[string]bool{}
	var mu sync.Mutex
	err := keys.Scan(ctx, s.rdb, keys.GlobEscape(head)+"*"+tail, func(_ context.Context, ks []string) error {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range ks {
			c, ok := strings.CutPrefix(k, head)
			if c, ok2 := strings.CutSuffix(c, tail); ok && ok2 && c != "" && !strings.ContainsAny(c, "{}") {
				seen[c] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("config: components of %s: %w", typ, err)
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

func (s *Store) key(typ, component string) string {
	return s.keys.Key(typ+":"+component, "value")
}

// onceKey returns a new reply record key for one Set or Delete of (typ,
// component), <prefix>{<type>:<component>}:once:<nonce>: a key of this call
// alone, in the slot of the value's key.
func (s *Store) onceKey(typ, component string) string {
	return s.keys.Once(typ + ":" + component)
}

func name(typ, component string) string { return typ + "\x00" + component }

// Set stores v, as JSON, as the configuration of (typ, component) and
// notifies every Store of the prefix whose Run is running, in one round
// trip (one script: SET and PUBLISH). The JSON must be at most
// [MaxValueSize] bytes. The script records its reply for the client's
// retry window, so a go-redis re-send after a lost reply is answered from
// the record and neither writes nor publishes again (it never puts the
// value back over another process's later Set or Delete).
func (s *Store) Set(ctx context.Context, typ, component string, v any) error {
	if err := check(typ, component); err != nil {
		return fmt.Errorf("config: set: %w", err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("config: set %s %q: %w", typ, component, err)
	}
	if len(raw) > MaxValueSize {
		return fmt.Errorf("config: set %s %q: %d bytes of JSON: more than %d", typ, component, len(raw), MaxValueSize)
	}
	_, err = setScript.RunOnce(ctx, s.rdb, s.onceKey(typ, component), []string{s.key(typ, component)},
		raw, s.channel, name(typ, component))
	s.invalidate(name(typ, component)) // this process sees its own write at once
	if err != nil {
		return fmt.Errorf("config: set %s %q: %w", typ, component, script.Unknown(err))
	}
	return nil
}

// Delete removes the configuration of (typ, component) and notifies every
// Store, in one round trip. Deleting a missing value is not an error. As
// Set, it records its reply, so a re-send after a lost reply is answered
// from the record and never deletes another process's later Set.
func (s *Store) Delete(ctx context.Context, typ, component string) error {
	if err := check(typ, component); err != nil {
		return fmt.Errorf("config: delete: %w", err)
	}
	_, err := delScript.RunOnce(ctx, s.rdb, s.onceKey(typ, component), []string{s.key(typ, component)},
		s.channel, name(typ, component))
	s.invalidate(name(typ, component))
	if err != nil {
		return fmt.Errorf("config: delete %s %q: %w", typ, component, script.Unknown(err))
	}
	return nil
}

// Get decodes the configuration of (typ, component) into dst (as
// json.Unmarshal does). It answers from memory (no round trip) when the
// value was read less than the max age ago and no change was notified
// since; otherwise it costs one round trip (GET). A missing value gives an
// error wrapping [ErrNotFound].
func (s *Store) Get(ctx context.Context, typ, component string, dst any) error {
	raw, _, err := s.raw(ctx, typ, component)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("config: get %s %q: %w", typ, component, err)
	}
	return nil
}

// raw returns the JSON of (typ, component), from the cache when fresh,
// and the seq of the GET that read it.
func (s *Store) raw(ctx context.Context, typ, component string) ([]byte, uint64, error) {
	if err := check(typ, component); err != nil {
		return nil, 0, fmt.Errorf("config: get: %w", err)
	}
	n := name(typ, component)
	now := s.now()
	s.mu.Lock()
	e, ok := s.cache[n]
	gen := s.gen
	fresh := ok && now.Before(e.until)
	if !fresh {
		s.reads++
		e.seq = s.reads
	}
	s.mu.Unlock()
	if !fresh {
		k := s.key(typ, component)
		v, err := s.rdb.Get(ctx, k).Bytes()
		switch {
		case errors.Is(err, redis.Nil):
			v = nil
		case err != nil:
			return nil, 0, fmt.Errorf("config: get %s %q: %w", typ, component, script.WrongType(ctx, s.rdb, err, k, "config value", "string"))
		}
		e = entry{raw: v, until: now.Add(s.o.maxAge), seq: e.seq}
		s.mu.Lock()
		if s.gen == gen { // no change was notified while the GET ran
			s.cache[n] = e
		}
		s.mu.Unlock()
	}
	if e.raw == nil {
		return nil, 0, fmt.Errorf("config: get %s %q: %w", typ, component, ErrNotFound)
	}
	return e.raw, e.seq, nil
}

// invalidate drops name from the cache ("" drops everything).
func (s *Store) invalidate(n string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	if n == "" {
		clear(s.cache)
		return
	}
	delete(s.cache, n)
}

// Maintenance is the (type, component) of the maintenance flag.
const (
	maintenanceType      = "ria"
	maintenanceComponent = "maintenance"
)

// SetMaintenance sets or clears the maintenance flag (the book's
// is-under-maintenance), as Set does.
func (s *Store) SetMaintenance(ctx context.Context, on bool) error {
	return s.Set(ctx, maintenanceType, maintenanceComponent, on)
}

// UnderMaintenance reports the maintenance flag, cached as Get caches (the
// book re-reads it at most once a second). A flag never set is false.
func (s *Store) UnderMaintenance(ctx context.Context) (bool, error) {
	var on bool
	err := s.Get(ctx, maintenanceType, maintenanceComponent, &on)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return on, err
}

// Run subscribes to the change notifications of the prefix and drops each
// changed value from the cache as its notification arrives, until ctx
// ends (then it returns nil). While Run runs, a Set or Delete in any
// process reaches this Store's next Get within a notification's latency
// (milliseconds) instead of the max age. A script publishes on the server
// of the value's key: on a *redis.Client or a Redis Cluster (which passes
// every PUBLISH to every node) Run holds one subscription; on a
// [shard.Router]'s client (independent servers) and on a *redis.Ring it
// holds one per server (a Ring's live shards, subscribed again whenever
// they change). Each (re)subscription of a server drops the whole cache,
// since notifications sent while unsubscribed are lost, and a broken one
// drops it too; the change function hears "" once every subscription is
// confirmed, and again at each resubscription of a server after its
// subscription broke (whatever the other servers' state). Run retries lost connections with backoff and logs them; it
// returns (nil) only when ctx ends.
//
// [shard.Router]: https://pkg.go.dev/github.com/ria-go/ria/shard#Router
func (s *Store) Run(ctx context.Context) error {
	var backoff time.Duration
	retry := func(err error) bool {
		s.invalidate("") // until subscribed, changes may be missed
		backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
		s.o.log.Warn("config: change notifications interrupted; retrying", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff/2 + rand.N(backoff/2+1)):
			return true
		}
	}
	var routed bool // a ClusterClient over standalone servers: known once asked
	for ctx.Err() == nil {
		subs, check, err := s.subscribers(ctx, &routed)
		if err != nil {
			if !retry(err) {
				return nil
			}
			continue
		}
		if s.listen(ctx, subs, check, &backoff) {
			backoff = 0 // the shards changed: subscribe again at once
		}
	}
	return nil
}

// subscriber is what Run subscribes with: the client, or one server's.
type subscriber interface {
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

// subscribers returns the clients to subscribe with, one per server whose
// scripts' PUBLISH no other subscription hears, and, for a Ring, a
// function that reports whether its live shards are still those. *routed
// caches whether a ClusterClient is a Router's (standalone servers).
func (s *Store) subscribers(ctx context.Context, routed *bool) ([]subscriber, func() bool, error) {
	switch c := s.rdb.(type) {
	case *redis.Ring:
		shards := ringShards(ctx, c)
		if len(shards) == 0 {
			return nil, nil, errors.New("no live shard in the ring")
		}
		subs := make([]subscriber, len(shards))
		for i, sc := range shards {
			subs[i] = sc
		}
		return subs, func() bool { return slices.Equal(ringShards(ctx, c), shards) }, nil
	case *redis.ClusterClient:
		if !*routed {
			// A Cluster passes every PUBLISH to every node, a Router's
			// standalone servers do not.
			info, err := c.Info(ctx, "cluster").Result()
			if err != nil {
				return nil, nil, fmt.Errorf("info cluster: %w", err)
			}
			if strings.Contains(info, "cluster_enabled:1") {
				return []subscriber{c}, nil, nil
			}
			*routed = true
		}
		var mu sync.Mutex
		var subs []subscriber
		if err := c.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			subs = append(subs, m)
			return nil
		}); err != nil {
			return nil, nil, fmt.Errorf("servers: %w", err)
		}
		return subs, nil, nil
	default:
		return []subscriber{s.rdb}, nil, nil
	}
}

// ringShards returns the live shards of c, ordered by address.
func ringShards(ctx context.Context, c *redis.Ring) []*redis.Client {
	var mu sync.Mutex
	var out []*redis.Client
	_ = c.ForEachShard(ctx, func(_ context.Context, sc *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, sc)
		return nil
	})
	slices.SortFunc(out, func(a, b *redis.Client) int { return strings.Compare(a.Options().Addr, b.Options().Addr) })
	return out
}

// event is what a subscription's reader tells listen: a confirmation, a
// message, or an error (the reader backs off, then reads again, which
// reconnects and subscribes again).
type event struct {
	sub  int
	msg  any
	err  error
	wait chan<- time.Duration // after an error: how long the reader backs off
}

// ringCheck is how often Run compares a Ring's live shards with those it
// subscribed to (go-redis's default Ring heartbeat).
const ringCheck = 500 * time.Millisecond

// listen subscribes with each of subs and applies what they hear until
// ctx ends (false) or check, polled every ring heartbeat, reports that
// the servers changed (true). *backoff is the backoff of the failures of
// every subscription since one was last confirmed.
func (s *Store) listen(ctx context.Context, subs []subscriber, check func() bool, backoff *time.Duration) bool {
	lctx, cancel := context.WithCancel(ctx)
	events := make(chan event)
	var wg sync.WaitGroup
	pss := make([]*redis.PubSub, len(subs))
	for i, sub := range subs {
		pss[i] = sub.Subscribe(lctx, s.channel)
	}
	for i, ps := range pss {
		wg.Go(func() { s.read(lctx, i, ps, events) })
	}
	defer func() {
		cancel()
		for _, ps := range pss {
			_ = ps.Close() // Receive does not return when ctx ends; Close makes it
		}
		wg.Wait()
	}()
	var tick <-chan time.Time
	if check != nil {
		t := time.NewTicker(ringCheck)
		defer t.Stop()
		tick = t.C
	}
	up := make([]bool, len(subs))
	broke := make([]bool, len(subs)) // its subscription failed since it was confirmed
	down := len(subs)
	for {
		var e event
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			if !check() {
				s.invalidate("")
				return true
			}
			continue
		case e = <-events:
		}
		if e.err != nil {
			s.invalidate("") // until resubscribed, changes on its server may be missed
			if up[e.sub] {
				up[e.sub] = false
				down++
			}
			broke[e.sub] = true
			*backoff = min(max(2**backoff, 10*time.Millisecond), time.Second)
			s.o.log.Warn("config: change notifications interrupted; retrying", "err", e.err, "retry_in", *backoff)
			e.wait <- *backoff // buffered: the reader waits for it
			continue
		}
		switch m := e.msg.(type) {
		case *redis.Subscription:
			*backoff = 0
			s.invalidate("")
			if !up[e.sub] {
				up[e.sub] = true
				down--
			}
			// "" once every subscription is confirmed, and then at every
			// resubscription of a server, whatever the others' state:
			// notifications may have been missed while it was down.
			if down == 0 || broke[e.sub] {
				s.changed("")
			}
			broke[e.sub] = false
		case *redis.Message:
			s.changed(m.Payload)
		}
	}
}

// read receives what subscription ps (number i) hears and passes it to
// listen, until ctx ends; after an error it backs off as listen says, then
// receives again (go-redis reconnects and subscribes again).
func (s *Store) read(ctx context.Context, i int, ps *redis.PubSub, events chan<- event) {
	wait := make(chan time.Duration, 1)
	for {
		msg, err := ps.Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		select {
		case events <- event{sub: i, msg: msg, err: err, wait: wait}:
		case <-ctx.Done():
			return
		}
		if err == nil {
			continue
		}
		var d time.Duration
		select {
		case d = <-wait:
		case <-ctx.Done():
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(d/2 + rand.N(d/2+1)):
		}
	}
}

// changed drops n ("" for all) and calls the change function.
func (s *Store) changed(n string) {
	s.invalidate(n)
	if s.o.onChange != nil {
		typ, component, _ := strings.Cut(n, "\x00")
		s.o.onChange(typ, component)
	}
}
