package shard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"

	"github.com/redis/go-redis/v9"
)

// ErrCrossServer is wrapped by the error of a command (a script, a
// transaction) sent through a [Router]'s client whose keys live on more
// than one server, or on a server other than the one it reached. Nothing
// of it was sent.
var ErrCrossServer = errors.New("shard: keys on different servers")

// Router maps keys to a fixed list of independent Redis servers (book
// ch. 10, get_sharded_connection): a key's server is its Redis Cluster hash
// slot ([Slot]: CRC16 of its hash tag, or of the whole key when it has
// none) mod the number of servers. The mapping depends only on the key and
// on the list, so every process with the same list agrees on it; change
// the list and the keys must be moved (which this package does not do).
//
// Its client ([Router.NewClient]) is a go-redis *redis.ClusterClient whose
// "cluster" is this list, so every ria package accepts it where a Redis
// Cluster works: each command, script, blocking pop and transaction goes to
// the server of its keys, a pipeline is split per server and sent to each
// in parallel (one round trip per server), and a command whose keys live
// on several servers fails with [ErrCrossServer] instead of running on one
// of them.
//
// When a server is down, the commands for its keys fail (after go-redis's
// retries) and are never sent to another server; the other servers' keys
// keep working. go-redis's own *redis.Ring does the opposite: it drops a
// shard that fails its health checks and re-hashes its keys over the
// others, so a lock, a queue or a counter would be written, split or lost
// elsewhere meanwhile. Ring suits a cache, whose entries may vanish; use a
// Router (or Redis Cluster) for data that must stay where it is.
//
// A Router is immutable and safe for concurrent use.
type Router struct {
	addrs []string
	slots []redis.ClusterSlot
	index map[string]int // server by address, in the forms go-redis uses
}

// NewRouter returns a Router over the servers at addrs (host:port), in
// this order: the order is part of the mapping. It returns an error for an
// empty list, an empty or malformed address, or an address listed twice.
func NewRouter(addrs ...string) (*Router, error) {
	if len(addrs) == 0 {
		return nil, errors.New("shard: router: no server")
	}
	r := &Router{addrs: slices.Clone(addrs), index: make(map[string]int, 2*len(addrs))}
	for i, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil || port == "" {
			return nil, fmt.Errorf("shard: router: server %d: address %q: want host:port", i, a)
		}
		if j, dup := r.index[a]; dup {
			return nil, fmt.Errorf("shard: router: address %q listed twice (servers %d and %d)", a, j, i)
		}
		r.index[a] = i
		// go-redis rewrites a loopback IP of a slot map without an origin
		// to an empty host (":port"); its node clients then carry that.
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			r.index[net.JoinHostPort("", port)] = i
		}
	}
	r.slots = make([]redis.ClusterSlot, 16384)
	for s := range r.slots {
		r.slots[s] = redis.ClusterSlot{Start: s, End: s, Nodes: []redis.ClusterNode{{Addr: r.addrs[s%len(r.addrs)]}}}
	}
	return r, nil
}

// Addrs returns the servers' addresses, in the Router's order.
func (r *Router) Addrs() []string { return slices.Clone(r.addrs) }

// Server returns the index in [Router.Addrs] of key's server.
func (r *Router) Server(key string) int { return Slot(key) % len(r.addrs) }

// NewClient returns a go-redis client that sends each command to the server
// of its keys. opt sets its connections, timeouts and retries (nil: go-redis
// defaults; PoolSize is per server); its Addrs, ClusterSlots, ReadOnly,
// RouteByLatency and RouteRandomly are replaced. Close it when done.
//
// Commands without a key follow go-redis's Cluster routing: SCRIPT LOAD,
// SCRIPT EXISTS and DBSIZE go to every server, others (PING, TIME, KEYS,
// SCAN, FLUSHDB) to an arbitrary one; use ForEachMaster for those. PUBLISH
// goes to an arbitrary server, which, unlike a Cluster node, does not pass
// it on: use SPUBLISH and SSUBSCRIBE, which follow the channel's server.
func (r *Router) NewClient(opt *redis.ClusterOptions) *redis.ClusterClient {
	var o redis.ClusterOptions
	if opt != nil {
		o = *opt
	}
	o.Addrs = r.Addrs()
	slots := r.slots
	o.ClusterSlots = func(context.Context) ([]redis.ClusterSlot, error) { return slots, nil }
	o.ReadOnly, o.RouteByLatency, o.RouteRandomly = false, false, false
	c := redis.NewClusterClient(&o)
	c.OnNewNode(func(n *redis.Client) {
		i, ok := r.index[n.NodeAddress()]
		if !ok {
			i, ok = r.index[n.Options().Addr]
		}
		if !ok {
			i = -1 // not one of ours: every keyed command is refused
		}
		n.AddHook(guard{r: r, server: i, addr: n.Options().Addr})
	})
	return c
}

// guard is the hook a Router puts on each server's client: it refuses a
// command whose keys are not all on that server (go-redis routes a command
// by its first key only, and a WATCH transaction runs every command of its
// function on the server of the watched keys).
type guard struct {
	r      *Router
	server int
	addr   string
}

func (g guard) check(cmd redis.Cmder) error {
	for _, k := range commandKeys(cmd.Args()) {
		if s := g.r.Server(k); s != g.server {
			return fmt.Errorf("%w: %s sends key %q to server %d (%s), but the key lives on server %d (%s): "+
				"the keys of one command, script or transaction must share a hash tag",
				ErrCrossServer, cmd.Name(), k, g.server, g.addr, s, g.r.addrs[s])
		}
	}
	return nil
}

func (g guard) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g guard) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := g.check(cmd); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook refuses the whole batch (a pipeline's part for this
// server, or a transaction) if one command is misrouted: a transaction must
// not run in part.
func (g guard) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if err := g.check(c); err != nil {
				for _, c := range cmds {
					c.SetErr(err)
				}
				return err
			}
		}
		return next(ctx, cmds)
	}
}
