package replica

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

var (
	// ErrTimeout is returned (wrapped, with the counts) when fewer replicas
	// than asked acknowledged the write, or fsynced it, before the timeout.
	// The write itself happened on the primary: replication is not undone.
	ErrTimeout = errors.New("replica: not acknowledged in time")
	// ErrNoFsyncCheck is returned (wrapped) by a Wait with [WithFsync] on a
	// server older than Redis 7.2 (no WAITAOF) when the Waiter was given no
	// replica clients to run the book's check on.
	ErrNoFsyncCheck = errors.New("replica: fsync wait needs WAITAOF (Redis 7.2+) or replica clients")
	// ErrMigrating is returned (wrapped, naming the slot and the nodes) by
	// a Wait on a Cluster while the key's slot migrates to another master:
	// the key's writes may then be on either master, and a new marker
	// cannot be written on the one giving the slot away. Wait again once
	// the migration is over.
	ErrMigrating = errors.New("replica: the key's slot is migrating")
)

// Option configures a [Waiter].
type Option func(*options) error

type options struct {
	prefix   string
	replicas int
	timeout  time.Duration
	fsync    bool
	checks   []*redis.Client
}

// MaxReplicas bounds [WithReplicas], and MaxTimeout [WithTimeout].
const (
	MaxReplicas = 1000
	MaxTimeout  = 24 * time.Hour
)

// WithPrefix sets the prefix of the marker keys. Default "replica:". It
// must not contain '{' or '}'.
func WithPrefix(p string) Option {
	return func(o *options) error { o.prefix = p; return nil }
}

// WithReplicas sets how many replicas must acknowledge: 1 to [MaxReplicas].
// Default 1.
func WithReplicas(n int) Option {
	return func(o *options) error {
		if n < 1 || n > MaxReplicas {
			return fmt.Errorf("replicas %d: must be 1 to %d", n, MaxReplicas)
		}
		o.replicas = n
		return nil
	}
}

// WithTimeout sets how long a Wait waits for the acknowledgements, 1 ms to
// [MaxTimeout]. Default 1 s. (A Wait also ends with its ctx.)
func WithTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d < time.Millisecond || d > MaxTimeout {
			return fmt.Errorf("timeout %v: must be 1ms to %v", d, MaxTimeout)
		}
		o.timeout = d
		return nil
	}
}

// WithFsync makes a Wait also wait until the write is on disk: on Redis
// 7.2+ by WAITAOF (the primary's AOF and that of the asked number of
// replicas fsynced; the primary must run with appendonly yes); on older
// servers by the book's check, run on the given replica clients (at least
// the asked number): each replica's link to the primary is up, the replica
// holds the call's marker key, and its AOF has no fsync pending. The book's
// check is a heuristic: "no fsync pending" does not prove that the marker's
// write was fsynced under appendfsync everysec; only WAITAOF does. A client
// given twice is an error (it would count one replica twice).
func WithFsync(replicas ...*redis.Client) Option {
	return func(o *options) error {
		for i, r := range replicas {
			if r == nil {
				return fmt.Errorf("fsync replica client %d: nil", i)
			}
			if j := slices.Index(replicas[:i], r); j >= 0 {
				return fmt.Errorf("fsync replica client %d: the same as client %d", i, j)
			}
		}
		o.fsync, o.checks = true, slices.Clone(replicas)
		return nil
	}
}

// Waiter waits until writes have reached replicas. It is safe for
// concurrent use.
type Waiter struct {
	rdb  redis.UniversalClient
	keys keys.Space
	o    options

	mu      sync.Mutex
	probed  bool // waitAOF is known
	waitAOF bool // the server knows WAITAOF
}

// New returns a Waiter on rdb: a *redis.Client (a standalone primary, or a
// Sentinel failover client) or a *redis.ClusterClient (the master of a
// key's slot is asked). It returns an error for a bad option or a
// *redis.Ring (wait on each shard's client instead).
func New(rdb redis.UniversalClient, opts ...Option) (*Waiter, error) {
	if rdb == nil {
		return nil, errors.New("replica: new: nil client")
	}
	if _, ok := rdb.(*redis.Ring); ok {
		return nil, errors.New("replica: new: a Ring has no single primary: make a Waiter per shard client")
	}
	o := options{prefix: "replica:", replicas: 1, timeout: time.Second}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("replica: new: nil option (%d of %d)", i+1, len(opts))
		}
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("replica: new: %w", err)
		}
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("replica: new: %w", err)
	}
	if o.fsync && len(o.checks) > 0 && len(o.checks) < o.replicas {
		return nil, fmt.Errorf("replica: new: %d fsync replica clients for %d replicas", len(o.checks), o.replicas)
	}
	return &Waiter{rdb: rdb, keys: keys.New(o.prefix), o: o}, nil
}

// Ack is what a Wait observed.
type Ack struct {
	// Replicas that acknowledged the marker (WAIT's reply; with WAITAOF,
	// those that fsynced it).
	Replicas int
	// With WithFsync: whether the primary's AOF was fsynced (WAITAOF only),
	// and how many replicas fsynced.
	LocalFsynced    bool
	ReplicasFsynced int
}

// Wait writes a marker next to key (in key's hash slot, so on the master
// that holds key on a Cluster; key "" on a standalone client) and waits
// until the configured number of replicas acknowledged it. Replication is
// one ordered stream per primary, so every write that primary acknowledged
// before the call (to any client) has then reached those replicas too.
//
// It costs one round trip (the marker and WAIT pipelined on one
// connection), or two when the timeout does not fit in the client's
// ReadTimeout (a pipeline is read with ReadTimeout; a lone WAIT with its
// own timeout). The book's check for older servers (see [WithFsync]) polls
// every replica client side by side, each every millisecond, until the
// asked number passed or the timeout.
//
// Too few acknowledgements give an error wrapping [ErrTimeout] together
// with what was seen; a key whose Cluster slot is migrating, one wrapping
// [ErrMigrating].
func (w *Waiter) Wait(ctx context.Context, key string) (Ack, error) {
	var node *redis.Client // nil: the key's primary by the client's slot map
	for i := 0; ; i++ {
		ack, next, err := w.wait1(ctx, key, node)
		if next == nil || i == w.resends() || ctx.Err() != nil {
			return ack, err
		}
		node = next.node
	}
}

// retry is the next attempt of a Wait: on node, if not nil.
type retry struct{ node *redis.Client }

// resends returns how many times a Wait whose marker and WAIT got no reply
// sends them again itself. A pipeline on a *redis.Client is re-sent by
// go-redis (MaxRetries); a dedicated connection (the two-round-trip path)
// is not, nor are the node clients of a ClusterClient (the cluster client
// retries around them, MaxRedirects times). Wait is idempotent, so it
// re-sends itself where go-redis would not.
func (w *Waiter) resends() int {
	switch c := w.rdb.(type) {
	case *redis.ClusterClient:
		return max(c.Options().MaxRedirects, 0)
	case *redis.Client:
		if !fits(c, w.o.timeout) {
			return max(c.Options().MaxRetries, 0)
		}
	}
	return 0
}

// wait1 is one attempt of Wait, on the key's primary or on node if given.
// A next attempt is returned when its marker or WAIT got no reply, or when
// a Cluster node answered MOVED (on the master it names, if the client
// knows it; the slot map is reloaded).
func (w *Waiter) wait1(ctx context.Context, key string, node *redis.Client) (ack Ack, next *retry, err error) {
	node, tag, err := w.node(ctx, key, node)
	if err != nil {
		return Ack{}, nil, err
	}
	defer func() {
		var rerr redis.Error
		switch {
		case err == nil || errors.Is(err, ErrTimeout) || errors.Is(err, ErrNoFsyncCheck) ||
			errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		case !errors.As(err, &rerr):
			next = &retry{node: node} // no reply
		case strings.HasPrefix(rerr.Error(), "MOVED "):
			if c, ok := w.rdb.(*redis.ClusterClient); ok {
				c.ReloadState(ctx)
				next = &retry{node: master(ctx, c, rerr.Error())}
			}
		case strings.HasPrefix(rerr.Error(), "ASK "):
			err = fmt.Errorf("replica: wait: %q: %w (%v, from %s)", key, ErrMigrating, rerr, node.Options().Addr)
		}
	}()
	var aof bool
	if w.o.fsync {
		if aof, err = w.hasWaitAOF(ctx, node); err != nil {
			return Ack{}, nil, fmt.Errorf("replica: wait: probe WAITAOF: %w", err)
		}
		if !aof && len(w.o.checks) == 0 {
			return Ack{}, nil, fmt.Errorf("replica: wait: %w", ErrNoFsyncCheck)
		}
	}
	marker := w.keys.Key(tag, "sync:"+script.Nonce())
	ttl := max(w.o.timeout+time.Minute, 2*time.Minute)
	if aof {
		ack, err = w.waitAOFs(ctx, node, marker, ttl)
	} else {
		ack, err = w.wait(ctx, node, marker, ttl)
		if err == nil && w.o.fsync {
			ack, err = w.bookCheck(ctx, marker, ack)
		}
	}
	return ack, nil, err
}

// master returns the client of the master that a MOVED or ASK reply names
// ("MOVED <slot> <addr>"), if c knows it as a master, else nil.
func master(ctx context.Context, c *redis.ClusterClient, reply string) *redis.Client {
	f := strings.Fields(reply)
	if len(f) != 3 {
		return nil
	}
	var mu sync.Mutex
	var found *redis.Client
	_ = c.ForEachMaster(ctx, func(_ context.Context, n *redis.Client) error {
		if n.Options().Addr == f[2] {
			mu.Lock()
			found = n
			mu.Unlock()
		}
		return nil
	})
	return found
}

// node returns the client of the primary for key (given, or by the
// client's slot map) and the hash tag of the marker, which puts the marker
// in key's slot on a Cluster.
func (w *Waiter) node(ctx context.Context, key string, given *redis.Client) (*redis.Client, string, error) {
	switch c := w.rdb.(type) {
	case *redis.ClusterClient:
		tag, err := slotTag(key)
		if err != nil {
			return nil, "", fmt.Errorf("replica: wait: %w", err)
		}
		if given != nil {
			return given, tag, nil
		}
		n, err := c.MasterForKey(ctx, key)
		if err != nil {
			return nil, "", fmt.Errorf("replica: wait: primary of %q: %w", key, err)
		}
		return n, tag, nil
	case *redis.Client:
		return c, "standalone", nil
	default:
		return nil, "", fmt.Errorf("replica: wait: client %T: want a *redis.Client or *redis.ClusterClient", w.rdb)
	}
}

// slotTag returns a brace-free tag that Redis Cluster hashes to key's slot:
// key's own hash tag when it has one, else key itself, which works unless
// key holds a '}'.
func slotTag(key string) (string, error) {
	if key == "" {
		return "", errors.New("a Cluster needs a key to choose its primary")
	}
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j], nil
		}
	}
	if strings.Contains(key, "}") {
		return "", fmt.Errorf("key %q: a key without a hash tag must not contain '}'", key)
	}
	return key, nil
}

// fits reports whether a wait of d can be read inside node's ReadTimeout
// as part of a pipeline.
func fits(node *redis.Client, d time.Duration) bool {
	rt := node.Options().ReadTimeout
	return rt <= 0 || d+100*time.Millisecond < rt
}

// limit returns how long WAIT (WAITAOF) may block: the timeout, or less
// when ctx ends sooner (go-redis reads a lone WAIT for its timeout + 10 s,
// whatever ctx's deadline), and a non-nil error to return (wrapping
// context.DeadlineExceeded) if too few acknowledged within that.
func (w *Waiter) limit(ctx context.Context) (time.Duration, error) {
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < w.o.timeout {
			return max(left, time.Millisecond), fmt.Errorf("replica: wait: the call's deadline came first: %w", context.DeadlineExceeded)
		}
	}
	return w.o.timeout, nil
}

func (w *Waiter) wait(ctx context.Context, node *redis.Client, marker string, ttl time.Duration) (Ack, error) {
	var n int64
	d, short := w.limit(ctx)
	if fits(node, w.o.timeout) {
		var wait *redis.Cmd
		_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, marker, 1, ttl)
			wait = p.Do(ctx, "wait", w.o.replicas, d.Milliseconds())
			return nil
		})
		if err == nil {
			n, err = wait.Int64()
		}
		if err != nil {
			return Ack{}, fmt.Errorf("replica: wait: %w", err)
		}
	} else {
		conn := node.Conn()
		defer conn.Close()
		if err := conn.Set(ctx, marker, 1, ttl).Err(); err != nil {
			return Ack{}, fmt.Errorf("replica: wait: marker: %w", err)
		}
		var err error
		if n, err = conn.Wait(ctx, w.o.replicas, d).Result(); err != nil {
			return Ack{}, fmt.Errorf("replica: wait: %w", err)
		}
	}
	ack := Ack{Replicas: int(n)}
	if ack.Replicas < w.o.replicas && short != nil {
		return ack, short
	}
	if ack.Replicas < w.o.replicas {
		return ack, fmt.Errorf("replica: wait: %d of %d replicas acknowledged within %v: %w", n, w.o.replicas, w.o.timeout, ErrTimeout)
	}
	return ack, nil
}

func (w *Waiter) waitAOFs(ctx context.Context, node *redis.Client, marker string, ttl time.Duration) (Ack, error) {
	var got []int64
	d, short := w.limit(ctx)
	if fits(node, w.o.timeout) {
		var wait *redis.Cmd
		_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, marker, 1, ttl)
			wait = p.Do(ctx, "waitaof", 1, w.o.replicas, d.Milliseconds())
			return nil
		})
		if err == nil {
			got, err = wait.Int64Slice()
		}
		if err != nil {
			return Ack{}, fmt.Errorf("replica: wait: %w", err)
		}
	} else {
		conn := node.Conn()
		defer conn.Close()
		if err := conn.Set(ctx, marker, 1, ttl).Err(); err != nil {
			return Ack{}, fmt.Errorf("replica: wait: marker: %w", err)
		}
		var err error
		if got, err = conn.WaitAOF(ctx, 1, w.o.replicas, d).Result(); err != nil {
			return Ack{}, fmt.Errorf("replica: wait: %w", err)
		}
	}
	if len(got) != 2 {
		return Ack{}, fmt.Errorf("replica: wait: WAITAOF replied %v", got)
	}
	ack := Ack{LocalFsynced: got[0] == 1, Replicas: int(got[1]), ReplicasFsynced: int(got[1])}
	if (!ack.LocalFsynced || ack.ReplicasFsynced < w.o.replicas) && short != nil {
		return ack, short
	}
	if !ack.LocalFsynced || ack.ReplicasFsynced < w.o.replicas {
		return ack, fmt.Errorf("replica: wait: local fsync %v, %d of %d replicas fsynced within %v: %w",
			ack.LocalFsynced, ack.ReplicasFsynced, w.o.replicas, w.o.timeout, ErrTimeout)
	}
	return ack, nil
}

// bookCheck is the book's wait_for_sync on servers without WAITAOF: every
// replica client is polled, each on its own, until its link is up, it
// holds marker and its AOF has no fsync pending; it succeeds as soon as
// the asked number passed, or fails at the timeout.
func (w *Waiter) bookCheck(caller context.Context, marker string, ack Ack) (Ack, error) {
	ctx, cancel := context.WithTimeout(caller, w.o.timeout)
	defer cancel()
	results := make(chan error, len(w.o.checks)) // nil: that replica passed
	for _, r := range w.o.checks {
		go func() { results <- pollSynced(ctx, r, marker) }()
	}
	var last error
	for range w.o.checks {
		err := <-results
		if err == nil {
			ack.ReplicasFsynced++
		} else if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			last = err
		}
		if ack.ReplicasFsynced == w.o.replicas {
			cancel() // the others stop at once
		}
	}
	if ack.ReplicasFsynced >= w.o.replicas {
		return ack, nil
	}
	if err := caller.Err(); err != nil {
		return ack, fmt.Errorf("replica: wait: %d of %d replicas fsynced when the call ended: %w", ack.ReplicasFsynced, w.o.replicas, context.Cause(caller))
	}
	err := fmt.Errorf("replica: wait: %d of %d replicas fsynced within %v: %w", ack.ReplicasFsynced, w.o.replicas, w.o.timeout, ErrTimeout)
	return ack, errors.Join(err, last)
}

// pollSynced runs the book's checks on r every millisecond (the book's
// pace) until they pass (nil) or ctx ends (the last error of a check made
// before, or ctx's).
func pollSynced(ctx context.Context, r *redis.Client, marker string) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		ok, err := synced(ctx, r, marker)
		if ok {
			return nil
		}
		if err != nil && ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return last
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// synced runs the book's three checks on one replica.
func synced(ctx context.Context, r *redis.Client, marker string) (bool, error) {
	var repl, pers *redis.StringCmd
	var has *redis.IntCmd
	_, err := r.Pipelined(ctx, func(p redis.Pipeliner) error {
		repl = p.Info(ctx, "replication")
		has = p.Exists(ctx, marker)
		pers = p.Info(ctx, "persistence")
		return nil
	})
	if err != nil {
		return false, err
	}
	return infoField(repl.Val(), "master_link_status") == "up" && has.Val() == 1 &&
		infoField(pers.Val(), "aof_pending_bio_fsync") == "0", nil
}

// infoField returns the value of name in an INFO reply.
func infoField(info, name string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// hasWaitAOF reports whether the server knows WAITAOF, asking until one
// answer came (one more round trip for the Waits that begin before it;
// they ask side by side, so that each waits no longer than its own ctx).
func (w *Waiter) hasWaitAOF(ctx context.Context, node *redis.Client) (bool, error) {
	w.mu.Lock()
	probed, aof := w.probed, w.waitAOF
	w.mu.Unlock()
	if probed {
		return aof, nil
	}
	aof, err := probeWaitAOF(ctx, node)
	if err != nil {
		return false, err
	}
	w.mu.Lock()
	w.probed, w.waitAOF = true, aof
	w.mu.Unlock()
	return aof, nil
}

// probeWaitAOF asks node whether it knows WAITAOF.
func probeWaitAOF(ctx context.Context, node *redis.Client) (bool, error) {
	v, err := node.Do(ctx, "COMMAND", "INFO", "WAITAOF").Slice()
	if err != nil {
		return false, err
	}
	return len(v) == 1 && v[0] != nil, nil
}
