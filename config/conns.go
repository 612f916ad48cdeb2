package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ConnType is the configuration type under which [Conns] finds a
// component's Redis connection (the book's "config:redis:<component>").
const ConnType = "redis"

// ConnConfig is how a component's Redis connection is stored: JSON, set
// with [Store.Set] under [ConnType] (or [Conns.Set]).
type ConnConfig struct {
	// Addrs of the server, or of Cluster nodes. One address and Cluster
	// false: a *redis.Client; otherwise a *redis.ClusterClient.
	Addrs    []string `json:"addrs"`
	Cluster  bool     `json:"cluster,omitempty"`
	Username string   `json:"username,omitempty"`
	Password string   `json:"password,omitempty"`
	DB       int      `json:"db,omitempty"`
	PoolSize int      `json:"pool_size,omitempty"`
	// Timeouts in milliseconds; 0 keeps go-redis's defaults.
	DialTimeoutMS  int `json:"dial_timeout_ms,omitempty"`
	ReadTimeoutMS  int `json:"read_timeout_ms,omitempty"`
	WriteTimeoutMS int `json:"write_timeout_ms,omitempty"`
}

func (c ConnConfig) check() error {
	switch {
	case len(c.Addrs) == 0:
		return errors.New("no addrs")
	case slices.Contains(c.Addrs, ""):
		return errors.New("empty addr")
	case len(c.Addrs) > 1 && !c.Cluster:
		return errors.New("several addrs need cluster: true")
	case c.Cluster && c.DB != 0:
		return fmt.Errorf("db %d: a Cluster has only db 0", c.DB)
	case c.DB < 0 || c.PoolSize < 0 || c.DialTimeoutMS < 0 || c.ReadTimeoutMS < 0 || c.WriteTimeoutMS < 0:
		return errors.New("negative db, pool size or timeout")
	}
	return nil
}

func (c ConnConfig) client() redis.UniversalClient {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	o := &redis.UniversalOptions{Addrs: c.Addrs, Username: c.Username, Password: c.Password, DB: c.DB,
		PoolSize: c.PoolSize, DialTimeout: ms(c.DialTimeoutMS), ReadTimeout: ms(c.ReadTimeoutMS), WriteTimeout: ms(c.WriteTimeoutMS)}
	if c.Cluster {
		return redis.NewClusterClient(o.Cluster())
	}
	return redis.NewClient(o.Simple())
}

// Conns is a registry of named Redis connections built from configuration
// (the book's redis_connection): Get returns the client of a component,
// built from its [ConnConfig] and cached; when the configuration changes,
// the next Get builds a new client, and the old one is closed once every
// user has released it. It is safe for concurrent use.
type Conns struct {
	s      *Store
	mu     sync.Mutex
	conns  map[string]*conn // by component
	closed bool
	read   func() // called between reading the configuration and locking (tests)
}

type conn struct {
	raw     string // the JSON it was built from
	seq     uint64 // the Store's seq of the newest read of raw
	client  redis.UniversalClient
	refs    int
	retired bool
}

// Conns returns a registry of connections configured in s.
func (s *Store) Conns() *Conns { return &Conns{s: s, conns: map[string]*conn{}} }

// Set stores cfg as component's connection configuration (see
// [Store.Set]), after checking it.
func (c *Conns) Set(ctx context.Context, component string, cfg ConnConfig) error {
	if err := cfg.check(); err != nil {
		return fmt.Errorf("config: set connection %q: %w", component, err)
	}
	return c.s.Set(ctx, ConnType, component, cfg)
}

// Get returns the client of component and a release function to call when
// done with it (the client stays open until then, even if the
// configuration changes). The configuration is read as [Store.Get] reads
// it: from memory when fresh, so a Get usually costs no round trip. Gets
// never go back: one whose configuration was read before that of the
// client in use (a concurrent Get built it from a newer read) returns that
// client. An unknown component gives an error wrapping [ErrNotFound].
func (c *Conns) Get(ctx context.Context, component string) (redis.UniversalClient, func(), error) {
	raw, seq, err := c.s.raw(ctx, ConnType, component)
	if err != nil {
		return nil, nil, err
	}
	if c.read != nil {
		c.read()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, errors.New("config: conns: closed")
	}
	cur := c.conns[component]
	switch {
	case cur != nil && seq < cur.seq: // an older read than cur's: keep cur
	case cur != nil && cur.raw == string(raw):
		cur.seq = seq
	default:
		var cfg ConnConfig
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, nil, fmt.Errorf("config: connection %q: %w", component, err)
		}
		if err := cfg.check(); err != nil {
			return nil, nil, fmt.Errorf("config: connection %q: %w", component, err)
		}
		if cur != nil {
			c.retire(cur)
		}
		cur = &conn{raw: string(raw), seq: seq, client: cfg.client()}
		c.conns[component] = cur
	}
	cur.refs++
	var once sync.Once
	return cur.client, func() { once.Do(func() { c.release(cur) }) }, nil
}

// retire marks cn replaced and closes it if nobody uses it. c.mu is held.
func (c *Conns) retire(cn *conn) {
	cn.retired = true
	if cn.refs == 0 {
		_ = cn.client.Close()
	}
}

func (c *Conns) release(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cn.refs--
	if cn.retired && cn.refs == 0 {
		_ = cn.client.Close()
	}
}

// Close closes every client not in use now, and each other one when it is
// released. Get fails afterwards.
func (c *Conns) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for name, cn := range c.conns {
		c.retire(cn)
		delete(c.conns, name)
	}
	return nil
}
