package queue

import "github.com/ria-go/ria/internal/keys"

// The keys of one group G are <prefix>{G}:<part>. All of them share the {G}
// hash tag, so every script touches a single Cluster slot.

// keySet holds the keys of one group, built once by [New].
type keySet struct {
	space keys.Space
	group string
	// tasks is a HASH of every task: field "<id>" holds its packed fields
	// (queue, task name, max retries, the enqueue call's nonce for an ID
	// given by the caller) followed by its payload (see pack); a failed
	// task also has "<id>:a" (failed attempts) and "<id>:e" (last error).
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
	// ready is the prefix of the ready lists: ready+q is a LIST of the IDs of
	// the tasks ready in queue q, oldest first.
	ready string
	// signal is the prefix of the signal lists: signal+q is a LIST holding
	// a wake token, pushed when queue q gets work, that idle workers of q
	// wait on (BLPOP).
	signal string
	// schedule is a LIST holding at most one wake token for any idle worker
	// of the group (all of them wait on it), pushed when a due time is added
	// that may be earlier than the one the idle workers wait for: the worker
	// it wakes takes again, which computes the right time to wait.
	schedule string
	// took is the prefix of the workers' take records: took+W is a STRING
	// holding the lease token of worker W's last take and the IDs it took,
	// for a lease, so that a re-send of that take hands the same tasks out.
	took string
	// periodic is a HASH of schedule name -> the start (server Unix ms) of
	// the last period whose task a Scheduler enqueued, and of
	// "<name>@cron" -> the last cron time enqueued (Unix seconds).
	periodic string
	// wake is the prefix of the workers' own wake lists: wake+W is a LIST
	// where a stopping worker W pushes a token to end its own wait.
	wake string
	// unique is the prefix of the unique locks: unique+U is a STRING
	// holding the ID of the unfinished task whose uniqueness key is U
	// ([Unique]), with the task's uniqueness TTL.
	unique string
	// paused is a SET of the names of the group's paused queues.
	paused string
}

func newKeySet(ks keys.Space, group string) keySet {
	return keySet{
		space:    ks,
		group:    group,
		tasks:    ks.Key(group, "tasks"),
		delayed:  ks.Key(group, "delayed"),
		inflight: ks.Key(group, "inflight"),
		dead:     ks.Key(group, "dead"),
		ready:    ks.Key(group, "ready:"),
		signal:   ks.Key(group, "signal:"),
		schedule: ks.Key(group, "schedule"),
		took:     ks.Key(group, "took:"),
		wake:     ks.Key(group, "wake:"),
		periodic: ks.Key(group, "periodic"),
		unique:   ks.Key(group, "unique:"),
		paused:   ks.Key(group, "paused"),
	}
}

// base returns the seven keys that the scripts which move tasks between
// lists and sets take first, in the order common.lua names them.
func (k keySet) base() []string {
	return []string{k.tasks, k.delayed, k.inflight, k.dead, k.ready, k.signal, k.schedule}
}

// once returns a new reply record key for one call of a once-script
// (<prefix>{G}:once:<nonce>).
func (k keySet) once() string { return k.space.Once(k.group) }
