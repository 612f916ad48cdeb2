package script

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/group"
	"github.com/ria-go/ria/internal/slot"
)

// Group sends the calls that goroutines make at the same time in shared
// MULTI/EXEC round trips (see package group): one goroutine alone pays one
// round trip per call, as with [SendTx]; calls made while inflight
// transactions are on their way leave together in the next. Each call
// keeps the semantics of [SendTx]: it runs once or not at all, and a lost
// reply is an unknown outcome for every call of its transaction. On a
// *redis.Client or a *redis.Ring (which splits a transaction by shard) any
// calls may share a transaction; on any other client (a
// *redis.ClusterClient refuses a transaction over several slots) only
// calls whose keys share a slot, and inflight counts per slot. A call's
// keys must share a slot (as for RunTx): on a Cluster a call over several
// slots aborts the whole transaction it is in (EXECABORT: none of its
// calls ran).
type Group struct{ g *group.Group[*Call] }

// NewGroup returns a Group sending on c at most inflight transactions at
// once (per slot on a Cluster), each of at most maxBatch calls.
func NewGroup(c TxPipeliner, inflight, maxBatch int) *Group {
	var lane func(*Call) int
	switch c.(type) {
	case *redis.Client, *redis.Ring:
	default:
		lane = func(call *Call) int {
			if len(call.keys) == 0 {
				return 0
			}
			return slot.Of(call.keys[0])
		}
	}
	return &Group{g: group.New(inflight, maxBatch, lane, func(ctx context.Context, calls []*Call) { SendTx(ctx, c, calls) })}
}

// Run sends call, alone or with others, and returns its Val and Err, or
// the error of [group.Group.Do] (ctx ended: not sent, or an unknown
// outcome).
func (g *Group) Run(ctx context.Context, call *Call) (any, error) {
	if call.s.once {
		panic("script " + call.s.name + ": a once script in a Group")
	}
	if err := g.g.Do(ctx, call); err != nil {
		return nil, fmt.Errorf("script %s: %w", call.s.name, err)
	}
	return call.Val, call.Err
}

// Waiting returns how many calls wait for a transaction (for tests).
func (g *Group) Waiting() int { return g.g.Waiting() }
