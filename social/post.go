package social

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ria-go/ria/internal/slot"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/script"
	"github.com/ria-go/ria/queue"
)

// ErrFanoutIncomplete is returned (wrapped, with the posted [Status]) by
// [Network.Post] when the status was posted but its fan-out could neither
// be finished nor handed to the queue; [Network.Syndicate] starts it again.
var ErrFanoutIncomplete = errors.New("social: status posted, fan-out not finished")

// Task names registered by [Network.Handle].
const (
	// TaskFanout feeds a status to one batch of its author's followers and
	// enqueues the next batch.
	TaskFanout = "social.fanout"
	// TaskClean removes a deleted status from one batch of its author's
	// followers' home timelines and enqueues the next batch.
	TaskClean = "social.clean"
	// TaskRegenerate regenerates the home timeline of a user who was
	// inactive ([WithInactiveAfter]) and read it.
	TaskRegenerate = "social.regenerate"
)

// pass is the payload of a fan-out or clean task: the followers of Author
// whose follower number is above After.
type pass struct {
	Author string `json:"author"`
	Status string `json:"status"`
	Score  int64  `json:"score,omitempty"` // post time (ms), fan-out only
	After  int64  `json:"after"`
}

// Post posts a status of user uid with message msg and returns it. It
// feeds the status to the home timelines of the author's first
// [WithFirstPass] followers (default: [WithFanoutBatch]) before it
// returns and enqueues a [TaskFanout] task for the rest. Round trips: 1
// (the script) plus 1 per node for the first batch when the author has
// followers and the first pass is not 0, plus 1 for the enqueue when it
// has more than the first pass.
//
// It returns [ErrNoUser] if uid does not exist and an error naming the bad
// argument (nothing written) for a bad uid or a message that is empty, not
// UTF-8 or longer than [MaxStatusLen] characters. When the status was
// posted but its first batch failed and the task that would redo it could
// not be enqueued, it returns the status and an error wrapping
// [ErrFanoutIncomplete].
func (n *Network) Post(ctx context.Context, uid, msg string, opts ...PostOption) (Status, error) {
	uid, err := checkUID("user", uid)
	if err == nil {
		err = checkMessage(msg)
	}
	var po postOptions
	for _, o := range opts {
		if o != nil {
			o(&po)
		}
	}
	if err == nil && po.at != nil {
		err = po.at.check()
	}
	if err != nil {
		return Status{}, fmt.Errorf("social: post: %w", err)
	}
	lat, lon := "", ""
	if po.at != nil {
		lat, lon = strconv.FormatFloat(po.at.Lat, 'f', -1, 64), strconv.FormatFloat(po.at.Lon, 'f', -1, 64)
	}
	keys := []string{n.userKey(uid), n.profileKey(uid), n.followersKey(uid), n.statusPrefix(uid), n.listedKey(uid)}
	step := 0 // the first batch as call ranges (one server), or as targets
	if n.single() {
		step = feedCall
	}
	v, err := postScript.RunOnce(ctx, n.rdb, n.onceKey(uid), keys, uid, msg, n.cap, n.first, lat, lon, step)
	if err != nil {
		err = refusal(err)
		return Status{}, fmt.Errorf("social: post %q: %w", uid, err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return Status{}, fmt.Errorf("social: post %q: script %s: unexpected reply %v", uid, postScript.Name(), v)
	}
	if len(arr) < 7 {
		return Status{}, fmt.Errorf("social: post %q: script %s: unexpected reply %v", uid, postScript.Name(), v)
	}
	id, _ := arr[1].(string)
	ms, _ := arr[2].(int64)
	more, _ := arr[3].(int64)
	last, _ := arr[4].(int64)
	login, _ := arr[5].(string)
	var ends []int64 // the first batch's call ranges ('e')
	var followers []string
	var seqs []int64 // or its targets and their sequence numbers ('m')
	if kind, _ := arr[6].(string); kind == "e" {
		for _, e := range arr[7:] {
			end, _ := e.(int64)
			ends = append(ends, end)
		}
	} else {
		for i := 7; i+1 < len(arr); i += 2 {
			f, _ := arr[i].(string)
			seq, _ := arr[i+1].(int64)
			followers, seqs = append(followers, f), append(seqs, seq)
		}
	}
	st := Status{ID: id, UID: uid, Login: login, Message: msg, Posted: msToTime(ms), Location: po.at}
	// Publish, feed the first batch and enqueue the rest side by side: one
	// round trip of wall time for the three (a lost publish loses nothing
	// stored, see Subscribe; the stream hears of the status before Post
	// returns).
	var wg sync.WaitGroup
	var eerr error
	wg.Go(func() { n.publish(ctx, Event{Status: st}) })
	if more == 1 {
		wg.Go(func() {
			eerr = n.enqueue(ctx, n.job(TaskFanout, pass{Author: uid, Status: id, Score: ms, After: last}))
		})
	}
	var ferr error
	if len(ends) > 0 {
		ferr = n.feedRanges(ctx, uid, id, ms, "-inf", ends)
	} else {
		ferr = n.feed(ctx, uid, id, ms, "-inf", followers, seqs)
	}
	wg.Wait()
	if ferr != nil {
		// Redo the whole fan-out in the background: feeding is idempotent.
		eerr = n.enqueue(ctx, n.job(TaskFanout, pass{Author: uid, Status: id, Score: ms}))
	}
	if eerr != nil {
		return st, fmt.Errorf("social: post %q: %w: %w", uid, ErrFanoutIncomplete, eerr)
	}
	return st, nil
}

// Syndicate enqueues the fan-out of status id to all its author's
// followers again, in one round trip plus one to read the status: for a
// [Network.Post] that returned [ErrFanoutIncomplete]. Feeding a timeline
// twice changes nothing. If a dead task holds the fan-out's ID (a fan-out
// that failed for good), Syndicate requeues it (one more round trip). It returns [ErrNoStatus] if the status does not
// exist.
func (n *Network) Syndicate(ctx context.Context, id string) error {
	uid, num, err := checkStatusID(id)
	if err != nil {
		return fmt.Errorf("social: syndicate: %w", err)
	}
	posted, err := n.rdb.HGetAll(ctx, n.statusPrefix(uid)+num).Result()
	if err != nil {
		err = script.WrongType(ctx, n.rdb, err, n.statusPrefix(uid)+num, "social status", "hash")
		return fmt.Errorf("social: syndicate %q: %w", id, err)
	}
	ms, err := strconv.ParseInt(posted["posted"], 10, 64)
	if len(posted) == 0 || posted["uid"] != uid || err != nil {
		return fmt.Errorf("social: syndicate %q: %w", id, ErrNoStatus)
	}
	if err := n.enqueue(ctx, n.job(TaskFanout, pass{Author: uid, Status: id, Score: ms})); err != nil {
		return fmt.Errorf("social: syndicate %q: %w", id, err)
	}
	return nil
}

// Delete deletes status id of user uid: its hash, and its entries in the
// author's profile and home timelines, at once (one round trip); pages
// stop showing it everywhere at once, since a page shows only statuses
// whose hash exists (with [WithStatusCache]: other processes' pages stop
// showing it once they hear the invalidation the script publishes, and
// never later than the cache's maxStale). A [TaskClean] task then removes
// it from the followers' home timelines (one more round trip to enqueue
// it, when the author has followers). It returns [ErrNoStatus] if the
// status does not exist or is not uid's. If the task cannot be enqueued,
// Delete returns an error but the status is deleted: the followers'
// timelines keep a dead entry that pages skip and the cap trims;
// [Network.Clean] enqueues the task again.
func (n *Network) Delete(ctx context.Context, uid, id string) error {
	uid, err := checkUID("user", uid)
	if err != nil {
		return fmt.Errorf("social: delete: %w", err)
	}
	author, num, err := checkStatusID(id)
	if err != nil {
		return fmt.Errorf("social: delete: %w", err)
	}
	if author != uid {
		return fmt.Errorf("social: delete %q of %q: %w", id, uid, ErrNoStatus)
	}
	keys := []string{n.userKey(uid), n.statusPrefix(uid) + num, n.profileKey(uid), n.homeKey(uid), n.followersKey(uid), n.listedKey(uid)}
	ch, msg := n.cacheArgs(id)
	v, err := deleteScript.RunOnce(ctx, n.rdb, n.onceKey(uid), keys, uid, id, ch, msg)
	if n.near != nil { // its own invalidation is not heard: drop the status here
		n.near.Drop(id)
	}
	if err != nil {
		err = refusal(err)
		return fmt.Errorf("social: delete %q: %w", id, err)
	}
	r, ok := v.([]any)
	if !ok || len(r) != 7 {
		return fmt.Errorf("social: delete %q: script %s: unexpected reply %v", id, deleteScript.Name(), v)
	}
	followers, _ := r[1].(int64)
	str := func(i int) string { s, _ := r[i].(string); return s }
	st := Status{ID: id, UID: uid, Login: str(2), Message: str(3), Location: parsePoint(str(5), str(6))}
	if ms, err := strconv.ParseInt(str(4), 10, 64); err == nil {
		st.Posted = msToTime(ms)
	}
	n.publish(ctx, Event{Status: st, Deleted: true})
	if followers > 0 {
		if err := n.enqueue(ctx, n.job(TaskClean, pass{Author: uid, Status: id})); err != nil {
			return fmt.Errorf("social: delete %q: deleted, clean not enqueued: %w", id, err)
		}
	}
	return nil
}

// Clean enqueues a [TaskClean] task for status id (deleted) in one round
// trip: for a [Network.Delete] whose task was not enqueued. The task
// cleans only a status that was posted and no longer exists: one whose
// number is above its author's last (not posted yet) is left alone, with
// no tombstone, so that it is fed once posted. If a dead task holds the
// clean's ID, Clean requeues it (one more round trip).
func (n *Network) Clean(ctx context.Context, id string) error {
	uid, _, err := checkStatusID(id)
	if err != nil {
		return fmt.Errorf("social: clean: %w", err)
	}
	if err := n.enqueue(ctx, n.job(TaskClean, pass{Author: uid, Status: id})); err != nil {
		return fmt.Errorf("social: clean %q: %w", id, err)
	}
	return nil
}

// job is the task of one pass. Its queue ID names the pass, so a re-sent
// or repeated enqueue of a pass that has not run yet is one task.
func (n *Network) job(name string, p pass) task {
	return n.task(name, name+":"+p.Status+":"+strconv.FormatInt(p.After, 10), p)
}

// task is a job to enqueue with its queue ID: one ID, one pass, one
// payload.
type task struct {
	queue.Job
	id string
}

// task returns the task named name with queue ID id and payload p.
func (n *Network) task(name, id string, p any) task {
	return task{queue.Job{Queue: n.queue, Name: name, Payload: p, Options: []queue.EnqueueOption{queue.ID(id)}}, id}
}

// enqueue enqueues t in one round trip. If a task holds its ID already
// ([queue.ErrDuplicate]), that is fine while the task is waiting or
// running; a dead one (the queue keeps its ID) is requeued instead, one
// more round trip on that path only, so that a pass enqueued again runs
// again.
func (n *Network) enqueue(ctx context.Context, t task) error {
	_, err := n.tasks.Enqueue(ctx, t.Queue, t.Name, t.Payload, t.Options...)
	if !errors.Is(err, queue.ErrDuplicate) {
		return err
	}
	err = n.tasks.Requeue(ctx, t.id)
	if errors.Is(err, queue.ErrNotFound) { // not dead: it will run, or is running
		return nil
	}
	return err
}

// feed feeds status id (posted at ms) of author to one batch of its
// fan-out targets: followers (home timelines) and "<owner>/<list>" targets
// (list timelines), in the order of their follower sequence numbers seqs,
// the first after the ZRANGEBYSCORE bound after. On one server it sends one
// feed.lua call per [feedCall] consecutive targets, each naming its range
// of sequence numbers (the calls' ranges cover the batch's): the script
// reads the targets in its range itself and feeds those still there.
// Elsewhere it sends one deliver.lua call per group of targets that may
// share a script (see [Network.groups]). The calls are pipelined: one
// round trip per node. Every target whose keys hold the right types is
// fed; a target with a key of another type is skipped, and the first such
// *ria.KeyError is returned.
func (n *Network) feed(ctx context.Context, author, id string, ms int64, after string, followers []string, seqs []int64) error {
	if len(followers) == 0 {
		return nil
	}
	if n.single() {
		var ends []int64 // the last target of each call
		for i := feedCall; i < len(seqs); i += feedCall {
			ends = append(ends, seqs[i-1])
		}
		return n.feedRanges(ctx, author, id, ms, after, append(ends, seqs[len(seqs)-1]))
	}
	groups := n.groups(followers)
	calls := make([]*script.Call, len(groups))
	for i, g := range groups {
		keys := make([]string, 0, 4*len(g))
		args := make([]any, 0, 5+len(g))
		args = append(args, author, id, ms, n.cap, n.idle.Milliseconds())
		for _, f := range g {
			tl, members, gone, kind := n.feedKeys(f)
			keys = append(keys, tl, members, gone, n.userKey(ownerOf(f)))
			args = append(args, kind)
		}
		calls[i] = deliverScript.Call(keys, args...)
	}
	return send(ctx, n.rdb, calls)
}

// single reports whether the network's keys are all on one server (a
// *redis.Client), where a fan-out batch is fed by feed.lua.
func (n *Network) single() bool {
	_, one := n.rdb.(*redis.Client)
	return one
}

// feedRanges feeds status id (posted at ms) of author, on one server, to
// the targets whose follower sequence numbers are after the ZRANGEBYSCORE
// bound after and at most the last of ends: one feed.lua call per range
// (after, ends[0]], (ends[0], ends[1]]..., the calls pipelined.
func (n *Network) feedRanges(ctx context.Context, author, id string, ms int64, after string, ends []int64) error {
	uid, num, err := checkStatusID(id)
	if err != nil || uid != author {
		return fmt.Errorf("social: feed: status %q is not by %q", id, author)
	}
	keys := []string{n.statusPrefix(author) + num, n.followersKey(author), n.listedKey(author)}
	calls := make([]*script.Call, 0, len(ends))
	for _, end := range ends {
		calls = append(calls, feedScript.Call(keys, id, ms, n.cap, n.idle.Milliseconds(), n.ks.Prefix(), after, end))
		after = "(" + strconv.FormatInt(end, 10)
	}
	return send(ctx, n.rdb, calls)
}

// fanoutByRank runs fan-out task p on one server without reading its
// batch: bounds.lua finds the batch's call ranges by rank in the author's
// followers, and feed.lua reads each range. It returns false (having done
// nothing) when lists hold entries in the batch's range, which ranks in
// followers alone do not count.
func (n *Network) fanoutByRank(ctx context.Context, p pass) (bool, error) {
	author, num, err := checkStatusID(p.Status)
	if err != nil || author != p.Author {
		return true, fmt.Errorf("%w: bad task %+v", queue.ErrNoRetry, p)
	}
	keys := []string{n.statusPrefix(author) + num, n.followersKey(author), n.listedKey(author)}
	v, err := boundsScript.Int64s(ctx, n.rdb, keys, p.After, n.batch, feedCall)
	switch {
	case err != nil:
		return true, err
	case len(v) == 0 || v[0] == -1:
		return false, nil
	case v[0] == 0 || len(v) < 3: // the status is gone (its clean does the rest), or no target left
		return true, nil
	}
	ends := v[2:]
	if v[1] == 1 { // first, so that the next batch is fed beside this one
		next := p
		next.After = ends[len(ends)-1]
		if err := n.enqueue(ctx, n.job(TaskFanout, next)); err != nil {
			return true, err
		}
	}
	return true, n.feedRanges(ctx, author, p.Status, p.Score, "("+strconv.FormatInt(p.After, 10), ends)
}

// feedCall is the most fan-out targets (followers or lists) one feed.lua,
// deliver.lua or clean.lua call handles: enough to spread the cost of a
// call over many targets, few enough that one call stays short (about
// 200 us of server time per feed call on a single server).
const feedCall = 100

// groups splits fan-out targets into the groups whose keys may share one
// script call, in order, each of at most [feedCall] targets. All of a
// target's keys share its owner's hash tag. On a *redis.Client (one
// server) any targets may: groups are consecutive runs. On a
// *redis.ClusterClient only targets whose keys hash to the same slot may
// (a Cluster refuses a script with keys of two slots): targets are
// grouped by slot, which followers rarely share, so most groups hold one
// target. On a *redis.Ring, targets whose keys the ring maps to the same
// shard are grouped. On any other Client every target gets its own call.
func (n *Network) groups(targets []string) [][]string {
	if len(targets) == 0 {
		return nil
	}
	var shard func(key string) (any, bool)
	switch c := n.rdb.(type) {
	case *redis.Client:
		shard = func(string) (any, bool) { return 0, true }
	case *redis.ClusterClient:
		shard = func(key string) (any, bool) { return slot.Of(key), true }
	case *redis.Ring:
		shard = func(key string) (any, bool) {
			s, err := c.GetShardClientForKey(key)
			return s, err == nil
		}
	default:
		shard = func(string) (any, bool) { return nil, false }
	}
	var out [][]string
	open := map[any]int{} // shard -> index in out of its group being filled
	for _, t := range targets {
		s, ok := shard(n.userKey(ownerOf(t)))
		if !ok {
			out = append(out, []string{t})
			continue
		}
		i, found := open[s]
		if !found || len(out[i]) >= feedCall {
			i = len(out)
			open[s] = i
			out = append(out, make([]string, 0, min(feedCall, len(targets))))
		}
		out[i] = append(out[i], t)
	}
	return out
}

// send sends calls in one pipeline (one round trip per node) and returns
// the first error.
func send(ctx context.Context, rdb Client, calls []*script.Call) error {
	if len(calls) == 0 {
		return nil
	}
	script.Send(ctx, rdb, calls)
	for _, c := range calls {
		if c.Err != nil {
			return c.Err
		}
	}
	return nil
}

// Handle registers the handlers of [TaskFanout], [TaskClean] and
// [TaskRegenerate] on w, a
// worker of the group given to [New] that serves its queue ([WithQueue]).
// Each task handles one batch of followers ([WithFanoutBatch]) in two
// round trips plus one per node (read the batch and whether the status
// still exists; enqueue the next batch, so that batches are fed side by
// side by the worker's slots; feed or clean them, pipelined).
// Tasks are idempotent and at least once: a task run twice, or by a worker
// killed midway and then by another one, feeds or cleans the same
// timelines to the same end. A follower whose keys hold another type is
// skipped and the task fails with its *ria.KeyError after enqueuing the
// next batch (the queue retries it, then keeps it dead with the error).
func (n *Network) Handle(w *queue.Worker) error {
	if w == nil {
		return errors.New("social: handle: nil worker")
	}
	if err := w.Handle(TaskFanout, queue.Typed(n.fanoutTask)); err != nil {
		return fmt.Errorf("social: handle: %w", err)
	}
	if err := w.Handle(TaskClean, queue.Typed(n.cleanTask)); err != nil {
		return fmt.Errorf("social: handle: %w", err)
	}
	if err := w.Handle(TaskRegenerate, queue.Typed(n.regenerateTask)); err != nil {
		return fmt.Errorf("social: handle: %w", err)
	}
	return nil
}

// readBatch reads the followers of p.Author after p.After, at most one batch
// (and one more to tell whether there are more), with their sequence
// numbers, and whether the status exists, in one round trip. With
// posted, it also reads the author's last status number, and posted
// answers whether the status was ever posted (a clean of a status never
// posted must leave no tombstone: the status may be posted later).
func (n *Network) readBatch(ctx context.Context, p pass, withPosted bool) (followers []string, seqs []int64, more, exists, posted bool, err error) {
	author, num, err := checkStatusID(p.Status)
	if err != nil || author != p.Author {
		return nil, nil, false, false, false, fmt.Errorf("%w: bad task %+v", queue.ErrNoRetry, p)
	}
	var ex *redis.IntCmd
	var last *redis.StringCmd
	var zs, ls *redis.ZSliceCmd
	by := &redis.ZRangeBy{Min: "(" + strconv.FormatInt(p.After, 10), Max: "+inf", Count: int64(n.batch) + 1}
	_, err = n.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		ex = pl.Exists(ctx, n.statusPrefix(author)+num)
		zs = pl.ZRangeByScoreWithScores(ctx, n.followersKey(author), by)
		ls = pl.ZRangeByScoreWithScores(ctx, n.listedKey(author), by)
		if withPosted {
			last = pl.HGet(ctx, n.userKey(author), "seq")
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		// Name the key of another type (the first that failed).
		switch {
		case last != nil && last.Err() != nil && !errors.Is(last.Err(), redis.Nil):
			err = script.WrongType(ctx, n.rdb, last.Err(), n.userKey(author), "social user", "hash")
		case zs.Err() != nil:
			err = script.WrongType(ctx, n.rdb, zs.Err(), n.followersKey(author), "social followers", "zset")
		case ls.Err() != nil:
			err = script.WrongType(ctx, n.rdb, ls.Err(), n.listedKey(author), "social listed", "zset")
		}
		return nil, nil, false, false, false, err
	}
	if withPosted {
		if s := last.Val(); s != "" {
			seq, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil {
				return nil, nil, false, false, false, &ria.KeyError{Role: "social user field seq", Key: n.userKey(author),
					Got: fmt.Sprintf("%.40q", s), Want: "an integer", Err: ria.ErrCorrupt}
			}
			i, perr := strconv.ParseInt(num, 10, 64)
			posted = perr == nil && i <= seq
		}
	}
	// Followers and lists share one sequence: merge them by it.
	zz := append(zs.Val(), ls.Val()...)
	slices.SortFunc(zz, func(a, b redis.Z) int { return cmp.Compare(a.Score, b.Score) })
	if len(zz) > n.batch {
		more, zz = true, zz[:n.batch]
	}
	for _, z := range zz {
		followers, seqs = append(followers, z.Member.(string)), append(seqs, int64(z.Score))
	}
	return followers, seqs, more, ex.Val() == 1, posted, nil
}

func (n *Network) fanoutTask(ctx context.Context, p pass) error {
	if n.single() {
		done, err := n.fanoutByRank(ctx, p)
		if done || err != nil {
			return err
		}
		// Lists hold entries in the batch's range: read it whole.
	}
	followers, seqs, more, exists, _, err := n.readBatch(ctx, p, false)
	if err != nil || !exists { // a deleted status: its clean task does the rest
		return err
	}
	if more { // first, so that the next batch is fed beside this one
		next := p
		next.After = seqs[len(seqs)-1]
		if err := n.enqueue(ctx, n.job(TaskFanout, next)); err != nil {
			return err
		}
	}
	return n.feed(ctx, p.Author, p.Status, p.Score, "("+strconv.FormatInt(p.After, 10), followers, seqs)
}

func (n *Network) cleanTask(ctx context.Context, p pass) error {
	followers, seqs, more, exists, posted, err := n.readBatch(ctx, p, true)
	if err != nil || exists || !posted { // a live status, or one never posted, is not cleaned
		return err
	}
	groups := n.groups(followers)
	calls := make([]*script.Call, len(groups))
	for i, g := range groups {
		keys := make([]string, 0, 2*len(g))
		args := make([]any, 0, 2+len(g))
		args = append(args, p.Status, n.tombTTL.Milliseconds())
		for _, f := range g {
			tl, _, gone, kind := n.feedKeys(f)
			keys = append(keys, tl, gone)
			args = append(args, kind)
		}
		calls[i] = cleanScript.Call(keys, args...)
	}
	if more { // first, so that the next batch is cleaned beside this one
		next := p
		next.After = seqs[len(seqs)-1]
		if err := n.enqueue(ctx, n.job(TaskClean, next)); err != nil {
			return err
		}
	}
	return send(ctx, n.rdb, calls)
}

// ownerOf returns the user of a fan-out target: a follower, or the owner of
// a list "<owner>/<list>".
func ownerOf(target string) string {
	owner, _, _ := strings.Cut(target, "/")
	return owner
}

// regen is the payload of a [TaskRegenerate] task.
type regen struct {
	User string `json:"user"`
}

// regenerateTask refills the home timeline of a user who was inactive,
// then lets its reads through. The user is fed again from the moment its
// read asked for the regeneration, and the refill reads the profiles after
// that, so no status is missed. Idempotent.
func (n *Network) regenerateTask(ctx context.Context, r regen) error {
	uid, err := checkUID("user", r.User)
	if err != nil {
		return fmt.Errorf("%w: bad task %+v", queue.ErrNoRetry, r)
	}
	if _, err := n.Refill(ctx, uid); err != nil {
		return err
	}
	_, err = activeScript.Run(ctx, n.rdb, []string{n.userKey(uid)})
	return err
}
