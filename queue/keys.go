package queue

import "github.com/ria-go/ria/internal/keys"

// The keys of one group G are <prefix>{G}:<part>. All of them share the {G}
// hash tag, so every script touches a single Cluster slot.

// keySet holds the keys of one group, built once by [New].
type keySet struct {
	// tasks is a HASH of every task's fields, "<id>:<f>" -> value, with f
	// one of p (payload, as the codec encoded it), q (queue name), n (task
	// name), m (max retries), a (failed attempts so far), e (last error).
	tasks string
	// delayed is a ZSET of task IDs scored by their due time (server Unix
	// ms): tasks enqueued with a delay, and failed tasks waiting to retry.
	delayed string
	// inflight is a ZSET of "<id>:<lease token>" scored by the lease
	// deadline (server Unix ms): the tasks taken by workers.
	inflight string
	// dead is a ZSET of the IDs of dead tasks scored by their time of death
	// (server Unix ms); the last error is in tasks.
	dead string
	// seq is a STRING counter: the last lease token handed out, minted by
	// mint (internal/script.MintLua) so that it keeps increasing even if
	// Redis loses it.
	seq string
	// ready is the prefix of the ready lists: ready+q is a LIST of the IDs of
	// the tasks ready in queue q, oldest first.
	ready string
	// signal is the prefix of the signal lists: signal+q is a LIST holding at
	// most one wake token, pushed when queue q gets work, that idle workers
	// of q wait on (BLPOP).
	signal string
	// schedule is a LIST holding at most one wake token for any idle worker
	// of the group (all of them wait on it), pushed when a due time is added
	// that may be earlier than the one the idle workers wait for: the worker
	// it wakes takes again, which computes the right time to wait.
	schedule string
	// wake is the prefix of the workers' own wake lists: wake+ID is a LIST
	// where a stopping worker ID pushes a token to end its own wait.
	wake string
}

func newKeySet(ks keys.Space, group string) keySet {
	return keySet{
		tasks:    ks.Key(group, "tasks"),
		delayed:  ks.Key(group, "delayed"),
		inflight: ks.Key(group, "inflight"),
		dead:     ks.Key(group, "dead"),
		seq:      ks.Key(group, "seq"),
		ready:    ks.Key(group, "ready:"),
		signal:   ks.Key(group, "signal:"),
		schedule: ks.Key(group, "schedule"),
		wake:     ks.Key(group, "wake:"),
	}
}

// base returns the eight keys that every state-changing script takes first,
// in the order common.lua names them.
func (k keySet) base() []string {
	return []string{k.tasks, k.delayed, k.inflight, k.dead, k.seq, k.ready, k.signal, k.schedule}
}
