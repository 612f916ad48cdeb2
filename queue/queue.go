package queue

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

// Client is the subset of go-redis this package uses: scripts (EVALSHA,
// falling back to EVAL), the blocking pop idle workers wait on (BLPOP,
// through BLPop or, for a wait under a second, Do), and the transactions
// of [Group.Stats] and of a stopping worker. *redis.Client,
// *redis.ClusterClient and *redis.Ring implement it.
type Client interface {
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd
	BLPop(ctx context.Context, timeout time.Duration, keys ...string) *redis.StringSliceCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
	TxPipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	// Pipelined sends a Scheduler's schedules in one round trip.
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

var (
	// ErrNotFound is returned by [Group.Cancel] when the task is not waiting
	// in the delayed set, and by [Group.Requeue] when it is not dead.
	ErrNotFound = errors.New("queue: task not found")
	// ErrDuplicate is returned by [Group.Enqueue] and [Group.EnqueueBatch]
	// when a task ID given with [ID] is taken by a task that has not
	// finished (ready, delayed, in flight or dead).
	ErrDuplicate = errors.New("queue: duplicate task ID")
	// ErrNotUnique is the error (within a [*NotUniqueError]) of an enqueue
	// refused because the task's uniqueness key ([Unique]) is held by an
	// unfinished task. It is also [ErrDuplicate].
	ErrNotUnique error = &duplicateError{"queue: task not unique"}
	// ErrNoRetry, wrapped in a handler's error, sends the task to the dead
	// letters at once instead of retrying it.
	ErrNoRetry = errors.New("queue: no retry")
	// ErrUnknownTask is the error of a task whose name has no handler. It
	// is also [ErrNoRetry]: such a task goes to the dead letters at once.
	ErrUnknownTask error = &noRetryError{"queue: unknown task name"}
	// ErrBadPayload is the error of a task whose payload does not decode
	// (see [Task.Decode] and [Typed]). It is also [ErrNoRetry]: such a task
	// goes to the dead letters at once.
	ErrBadPayload error = &noRetryError{"queue: payload does not decode"}
	// ErrLeaseLost is the cause (context.Cause) of a handler's context
	// cancelled because the worker no longer holds the task: its lease
	// expired and another worker may be running it.
	ErrLeaseLost = errors.New("queue: lease lost")
)

// noRetryError is an error that is also [ErrNoRetry].
type noRetryError struct{ msg string }

func (e *noRetryError) Error() string        { return e.msg }
func (e *noRetryError) Is(target error) bool { return target == ErrNoRetry }

var (
	//go:embed lib.lua
	libLua string
	//go:embed common.lua
	commonLua string
	//go:embed enqueue_one.lua
	enqueueOneLua string
	//go:embed enqueue.lua
	enqueueLua string
	//go:embed take.lua
	takeLua string
	//go:embed settle.lua
	settleLua string
	//go:embed promote.lua
	promoteLua string
	//go:embed recover.lua
	recoverLua string
	//go:embed cancel.lua
	cancelLua string
	//go:embed requeue.lua
	requeueLua string
	//go:embed drop.lua
	dropLua string
	//go:embed extend.lua
	extendLua string
	//go:embed dead.lua
	deadLua string
	//go:embed info.lua
	infoLua string

	enqueueScript    = script.New("queue enqueue", libLua+enqueueLua)
	enqueueOneScript = script.New("queue enqueue one", enqueueOneLua)
	takeScript       = script.New("queue take", libLua+commonLua+takeLua)
	settleScript     = script.New("queue settle", libLua+commonLua+settleLua)
	extendScript     = script.New("queue extend", libLua+extendLua)
	deadScript       = script.New("queue dead", libLua+deadLua)
	infoScript       = script.New("queue info", libLua+infoLua)
	// Run once per call: a re-send is answered from a record of the first
	// reply.
	promoteScript = script.NewOnce("queue promote", libLua+commonLua+promoteLua)
	recoverScript = script.NewOnce("queue recover", libLua+commonLua+recoverLua)
	cancelScript  = script.NewOnce("queue cancel", libLua+commonLua+cancelLua)
	requeueScript = script.NewOnce("queue requeue", libLua+commonLua+dropLua+requeueLua)
)

const (
	// batch is the most delayed tasks promoted, and the most expired leases
	// recovered, by one script call.
	batch = 100
	// defaultMaxRetry is the retries a task gets unless [MaxRetry] says.
	defaultMaxRetry = 5
	// maxErrorLen bounds the error text kept with a failed task.
	maxErrorLen = 1024

	// Bounds of the numbers that reach Redis.

	// MaxBatch is the most jobs one [Group.EnqueueBatch] takes.
	MaxBatch = 10_000
	// MaxRetries is the most retries [MaxRetry] gives a task.
	MaxRetries = 1_000_000
	// MaxDelay is the longest delay of [Delay], [At] (from now) and
	// [Backoff].
	MaxDelay = 100 * 365 * 24 * time.Hour
	// MaxDeadLimit is the largest [WithDeadLimit].
	MaxDeadLimit = 100_000_000
	// MaxDeadPage is the most dead tasks one [Group.Dead] lists.
	MaxDeadPage = 10_000
)

// Codec encodes task payloads into bytes and back.
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// Option configures a [Group].
type Option func(*options)

type options struct {
	prefix    string
	codec     Codec
	deadLimit int
}

// WithPrefix sets the key prefix. Default: "queue:". It must not contain
// '{' or '}', which would break the keys' Cluster hash tag.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithCodec sets the codec of the payloads. Default: encoding/json.
func WithCodec(c Codec) Option { return func(o *options) { o.codec = c } }

// WithDeadLimit sets how many dead tasks the group keeps: beyond it, the
// oldest are deleted as new ones die. Default: 10000; at most
// [MaxDeadLimit].
func WithDeadLimit(n int) Option { return func(o *options) { o.deadLimit = n } }

// Group is a named group of queues sharing one Redis Cluster slot: tasks
// are enqueued into one of its queues by name, and workers serve some of
// its queues in priority order. It is safe for concurrent use.
type Group struct {
	rdb       Client
	name      string
	codec     Codec
	deadLimit int
	keys      keySet
	bulkBatch int // tasks per script call of the bulk inspector actions (MaxBulkBatch; tests set less)
}

// New returns the group called name. Every Group of the same name and
// prefix, in any process, shares the same tasks.
//
// New returns an error naming the bad argument if name is empty or holds
// '{' or '}' (which would let two groups share a key), the prefix holds
// '{' or '}', the codec is nil or the dead limit is not between 1 and
// [MaxDeadLimit]. It panics if rdb is nil. Nothing reaches Redis.
func New(rdb Client, name string, opts ...Option) (*Group, error) {
	if rdb == nil {
		panic("queue: New with a nil client")
	}
	o := options{prefix: "queue:", codec: jsonCodec{}, deadLimit: 10000}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("queue: new %q: %w", name, err)
	}
	if err := keys.CheckEntity("group name", name); err != nil {
		return nil, fmt.Errorf("queue: new: %w", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("queue: new %q: %w", name, err)
	}
	if o.codec == nil {
		return nil, fmt.Errorf("queue: new %q: codec: must not be nil", name)
	}
	if o.deadLimit < 1 || o.deadLimit > MaxDeadLimit {
		return nil, fmt.Errorf("queue: new %q: dead limit %d: must be between 1 and %d", name, o.deadLimit, MaxDeadLimit)
	}
	return &Group{rdb: rdb, name: name, codec: o.codec, deadLimit: o.deadLimit, keys: newKeySet(keys.New(o.prefix), name),
		bulkBatch: MaxBulkBatch}, nil
}

// Name returns the group's name.
func (g *Group) Name() string { return g.name }

// EnqueueOption configures one task of [Group.Enqueue] or a [Job].
type EnqueueOption func(*enqueueOptions)

type enqueueOptions struct {
	delay     time.Duration
	at        time.Time
	atSet     bool
	maxRetry  int
	id        string
	idSet     bool
	uniqueTTL time.Duration
	uniqueSet bool
	uniqueKey string
	keySet    bool
}

// Delay makes the task ready d after the server's clock reads the enqueue
// (zero: at once). A negative d, or one above [MaxDelay], is an error.
func Delay(d time.Duration) EnqueueOption { return func(o *enqueueOptions) { o.delay = d } }

// At makes the task ready when the server's clock reaches t (at once if t
// has passed). It replaces [Delay]. A zero t, or one more than [MaxDelay]
// from now, is an error.
func At(t time.Time) EnqueueOption {
	return func(o *enqueueOptions) { o.at, o.atSet = t, true }
}

// MaxRetry sets how many times a failed task is retried before it goes to
// the dead letters (0: never). Default: 5. A negative n, or one above
// [MaxRetries], is an error.
func MaxRetry(n int) EnqueueOption { return func(o *enqueueOptions) { o.maxRetry = n } }

// ID gives the task the ID id instead of a random UUID. Enqueueing a task
// whose ID is taken by an unfinished task (ready, delayed, in flight or
// dead) fails with [ErrDuplicate], so a caller can retry an Enqueue whose
// reply was lost without doubling the task. (The client's own re-send of
// the same call, which go-redis makes when a reply is lost, is recognised
// and succeeds.) Once a task is done, its ID is free again. An empty id,
// or one ending in ":a" or ":e", is an error: task "x" keeps its failed
// attempts and last error in fields "x:a" and "x:e" (see Keys in the
// package doc). Generated and [Scheduler] IDs never end so.
func ID(id string) EnqueueOption { return func(o *enqueueOptions) { o.id, o.idSet = id, true } }

// Unique makes the task unique for at most ttl: while a task with the
// same uniqueness key is unfinished (ready, delayed, in flight or waiting
// to retry), and at most ttl after its enqueue, enqueueing another one
// fails with a [*NotUniqueError] ([ErrNotUnique], which is also
// [ErrDuplicate]) naming the task that holds the key. The uniqueness key
// is the task's queue, name and encoded payload (hashed with SHA-256),
// unless [UniqueKey] gives one. The check and the enqueue are one script.
// The key is released, in the script that settles the task, when the task
// is acknowledged, dies (goes to the dead letters) or is cancelled, unless
// its TTL ran out and a later task took it. A requeued dead task does not
// take it again. A ttl that is not positive, or above [MaxDelay], is an
// error; it is rounded up to a whole millisecond.
func Unique(ttl time.Duration) EnqueueOption {
	return func(o *enqueueOptions) { o.uniqueTTL, o.uniqueSet = ttl, true }
}

// UniqueKey sets the uniqueness key of a [Unique] task to key instead of
// the hash of its queue, name and payload. The key spans the group: tasks
// of any queue and name that give the same key exclude each other. An
// empty key, or a UniqueKey without [Unique], is an error.
func UniqueKey(key string) EnqueueOption {
	return func(o *enqueueOptions) { o.uniqueKey, o.keySet = key, true }
}

// NotUniqueError is the error of an enqueue refused because the task's
// uniqueness key ([Unique]) is held by another task. It matches
// [ErrNotUnique] and [ErrDuplicate] (errors.Is).
type NotUniqueError struct {
	Key    string // the uniqueness key (the SHA-256 hex digest unless [UniqueKey] gave it)
	Holder string // the ID of the task that holds it
	Job    int    // the index of the refused job (0 for [Group.Enqueue])
}

func (e *NotUniqueError) Error() string {
	if e.Holder == "" {
		return fmt.Sprintf("unique key %q given to two jobs: %v", e.Key, ErrNotUnique)
	}
	return fmt.Sprintf("unique key %q held by task %q: %v", e.Key, e.Holder, ErrNotUnique)
}

// Unwrap returns [ErrNotUnique].
func (e *NotUniqueError) Unwrap() error { return ErrNotUnique }

// duplicateError is an error that is also [ErrDuplicate].
type duplicateError struct{ msg string }

func (e *duplicateError) Error() string        { return e.msg }
func (e *duplicateError) Is(target error) bool { return target == ErrDuplicate }

// Job is one task of [Group.EnqueueBatch].
type Job struct {
	Queue   string          // name of the queue the task goes to
	Name    string          // task name, which selects the handler
	Payload any             // encoded with the group's codec
	Options []EnqueueOption // Delay, At, MaxRetry, ID, Unique, UniqueKey
}

// Enqueue adds a task named name with payload, encoded by the group's codec,
// to the queue called queue, in one round trip, and returns its ID. The
// task is ready at once unless [Delay] or [At] says otherwise. It returns
// [ErrDuplicate] if an [ID] is taken, a [*NotUniqueError] (matching
// [ErrNotUnique] and [ErrDuplicate]) if the uniqueness key of a [Unique]
// task is held, and an error naming the bad argument (nothing written)
// for an empty queue or task name, a delay, time, retry count or
// uniqueness TTL out of bounds, an empty ID or uniqueness key, an ID
// ending in ":a" or ":e", a [UniqueKey] without [Unique] or a payload
// the codec rejects.
// An error that wraps ria.ErrOutcomeUnknown means that the reply never
// came (even after go-redis's re-sends): the task may have been enqueued;
// an Enqueue with the same [ID] tells (ErrDuplicate: it was). A key of the
// group that holds another type gives a *ria.KeyError naming it (one more
// round trip, to find out which), and nothing is written.
func (g *Group) Enqueue(ctx context.Context, queue, name string, payload any, opts ...EnqueueOption) (string, error) {
	ids, err := g.enqueue(ctx, []Job{{Queue: queue, Name: name, Payload: payload, Options: opts}}, true)
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// EnqueueBatch adds every job in one round trip, all or nothing, and
// returns their IDs in order. Its errors are those of [Group.Enqueue], for
// the first bad job; two jobs with the same [ID] are refused with
// [ErrDuplicate], two [Unique] jobs with the same uniqueness key with a
// [*NotUniqueError] (Holder empty), and a batch of more than [MaxBatch]
// jobs with an error. An empty batch does nothing.
//
// A call whose reply is lost and that go-redis re-sends does not enqueue
// its tasks twice (see "Lost replies" in the package doc).
func (g *Group) EnqueueBatch(ctx context.Context, jobs []Job) ([]string, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	if len(jobs) > MaxBatch {
		return nil, fmt.Errorf("queue: enqueue %q: batch of %d jobs: at most %d", g.name, len(jobs), MaxBatch)
	}
	return g.enqueue(ctx, jobs, false)
}

func (g *Group) enqueue(ctx context.Context, jobs []Job, single bool) ([]string, error) {
	if single {
		if ids, ok, err := g.enqueueOne(ctx, jobs[0]); ok || err != nil {
			return ids, err
		}
	}
	ids := make([]string, len(jobs))
	opts := make([]enqueueOptions, len(jobs))
	custom := false
	var seen map[string]int // the jobs' own IDs
	for i, j := range jobs {
		// (uniqueness keys are compared below, once the payloads are encoded)
		o := enqueueOptions{maxRetry: defaultMaxRetry}
		if err := option.Apply(&o, j.Options); err != nil {
			return nil, g.jobError(single, i, err)
		}
		if err := checkJob(j, o); err != nil {
			return nil, g.jobError(single, i, err)
		}
		opts[i] = o
		if o.idSet {
			custom = true
			if seen == nil {
				seen = map[string]int{}
			}
			if first, ok := seen[o.id]; ok {
				return nil, fmt.Errorf("queue: enqueue %q: job %d: ID %q also in job %d: %w", g.name, i, o.id, first, ErrDuplicate)
			}
			seen[o.id] = i
		}
	}
	// The nonce tells a re-send of this call (go-redis re-sends a script
	// whose reply was lost) from another call with the same IDs: see
	// enqueue.lua. A generated ID is random: it tells by itself.
	nonce := ""
	if custom {
		nonce = script.Nonce()
	}
	keys := make([]string, 4, 6)
	keys[0], keys[1], keys[2], keys[3] = g.keys.tasks, g.keys.delayed, g.keys.schedule, g.keys.unique
	var queueIdx map[string]int
	var uniques map[string]int // uniqueness key -> the first job with it
	args := make([]any, 2, 2+7*len(jobs))
	args[0], args[1] = len(jobs), nonce
	for i, j := range jobs {
		o := opts[i]
		payload, err := g.codec.Marshal(j.Payload)
		if err != nil {
			return nil, g.jobError(single, i, fmt.Errorf("payload: %w", err))
		}
		unique, ttl := "", int64(0)
		if o.uniqueSet {
			unique = o.uniqueKey
			if !o.keySet {
				unique = uniqueKey(j.Queue, j.Name, payload)
			}
			ttl = int64(max((o.uniqueTTL+time.Millisecond-1)/time.Millisecond, 1))
			if uniques == nil {
				uniques = map[string]int{}
			}
			if first, ok := uniques[unique]; ok {
				return nil, fmt.Errorf("queue: enqueue %q: job %d (and job %d): %w", g.name, i, first,
					&NotUniqueError{Key: unique, Job: i})
			}
			uniques[unique] = i
		}
		id, flag := o.id, "1"
		if !o.idSet {
			id, flag = uuid.NewString(), ""
		}
		ids[i] = id
		qi := 0
		if single {
			qi = 1
			keys = append(keys, g.keys.ready+j.Queue, g.keys.signal+j.Queue)
		} else {
			if queueIdx == nil {
				queueIdx = map[string]int{}
			}
			var ok bool
			if qi, ok = queueIdx[j.Queue]; !ok {
				qi = len(queueIdx) + 1
				queueIdx[j.Queue] = qi
				keys = append(keys, g.keys.ready+j.Queue, g.keys.signal+j.Queue)
			}
		}
		due := ""
		switch {
		case o.atSet:
			due = "a" + strconv.FormatInt(o.at.UnixMilli(), 10)
		case o.delay > 0:
			due = "d" + strconv.FormatInt(max(o.delay.Milliseconds(), 1), 10)
		}
		taskNonce := ""
		if o.idSet {
			taskNonce = nonce
		}
		taskTag := tag(taskNonce, unique)
		v := pack(make([]byte, 0, 32+len(j.Queue)+len(j.Name)+len(taskTag)+len(payload)), j.Queue, j.Name, o.maxRetry, taskTag, payload)
		args = append(args, id, flag, qi, due, v, unique, ttl)
	}
	r, err := enqueueScript.Run(ctx, g.rdb, keys, args...)
	if err != nil {
		return nil, fmt.Errorf("queue: enqueue %q: %w", g.name, script.Unknown(err))
	}
	if held, ok := r.([]any); ok {
		var i int64
		var holder string
		if len(held) != 2 || scan(held, &i, &holder) != nil || i < 1 || int(i) > len(jobs) {
			return nil, fmt.Errorf("queue: enqueue %q: script %s: unexpected reply %v", g.name, enqueueScript.Name(), r)
		}
		e := &NotUniqueError{Key: args[2+7*(i-1)+5].(string), Holder: holder, Job: int(i - 1)}
		if single {
			return nil, fmt.Errorf("queue: enqueue %q: %w", g.name, e)
		}
		return nil, fmt.Errorf("queue: enqueue %q: job %d: %w", g.name, i-1, e)
	}
	n, err := enqueueScript.AsInt64(r)
	if err != nil {
		return nil, fmt.Errorf("queue: enqueue %q: %w", g.name, err)
	}
	if n > 0 && int(n) <= len(jobs) {
		if single {
			return nil, fmt.Errorf("queue: enqueue %q: ID %q: %w", g.name, ids[0], ErrDuplicate)
		}
		return nil, fmt.Errorf("queue: enqueue %q: job %d: ID %q: %w", g.name, n-1, ids[n-1], ErrDuplicate)
	}
	if n != 0 {
		return nil, fmt.Errorf("queue: enqueue %q: script %s: unexpected reply %d", g.name, enqueueScript.Name(), n)
	}
	return ids, nil
}

// enqueueOne enqueues j through enqueue_one.lua if it is the common case
// (a generated ID, ready at once) and all goes well (ok); else it has
// written nothing, and enqueue goes the general way.
func (g *Group) enqueueOne(ctx context.Context, j Job) (ids []string, ok bool, err error) {
	o := enqueueOptions{maxRetry: defaultMaxRetry}
	if option.Apply(&o, j.Options) != nil {
		return nil, false, nil // enqueue reports it
	}
	if o.idSet || o.atSet || o.delay != 0 || o.uniqueSet || o.keySet {
		return nil, false, nil
	}
	if err := checkJob(j, o); err != nil {
		return nil, false, g.jobError(true, 0, err)
	}
	payload, err := g.codec.Marshal(j.Payload)
	if err != nil {
		return nil, false, g.jobError(true, 0, fmt.Errorf("payload: %w", err))
	}
	id := uuid.NewString()
	v := pack(make([]byte, 0, 24+len(j.Queue)+len(j.Name)+len(payload)), j.Queue, j.Name, o.maxRetry, "", payload)
	n, err := enqueueOneScript.Int64(ctx, g.rdb, []string{g.keys.tasks, g.keys.ready + j.Queue, g.keys.signal + j.Queue}, id, v)
	switch {
	case err != nil:
		return nil, false, fmt.Errorf("queue: enqueue %q: %w", g.name, script.Unknown(err))
	case n == 0:
		return []string{id}, true, nil
	case n == -1:
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("queue: enqueue %q: script %s: unexpected reply %d", g.name, enqueueOneScript.Name(), n)
}

func (g *Group) jobError(single bool, i int, err error) error {
	if single {
		return fmt.Errorf("queue: enqueue %q: %w", g.name, err)
	}
	return fmt.Errorf("queue: enqueue %q: job %d: %w", g.name, i, err)
}

func checkJob(j Job, o enqueueOptions) error {
	switch {
	case j.Queue == "":
		return errors.New("queue name: empty name")
	case j.Name == "":
		return errors.New("task name: empty name")
	case o.delay < 0 || o.delay > MaxDelay:
		return fmt.Errorf("delay %v: must be between 0 and %v", o.delay, MaxDelay)
	case o.atSet && o.at.IsZero():
		return errors.New("at: zero time")
	case o.atSet && time.Until(o.at) > MaxDelay:
		return fmt.Errorf("at %v: more than %v from now", o.at, MaxDelay)
	case o.maxRetry < 0 || o.maxRetry > MaxRetries:
		return fmt.Errorf("max retry %d: must be between 0 and %d", o.maxRetry, MaxRetries)
	case o.idSet && o.id == "":
		return errors.New("ID: empty ID")
	case o.idSet && (strings.HasSuffix(o.id, ":a") || strings.HasSuffix(o.id, ":e")):
		return fmt.Errorf("ID %q: must not end in \":a\" or \":e\" (the names of another task's fields)", o.id)
	case o.uniqueSet && (o.uniqueTTL <= 0 || o.uniqueTTL > MaxDelay):
		return fmt.Errorf("unique TTL %v: must be positive and at most %v", o.uniqueTTL, MaxDelay)
	case o.keySet && !o.uniqueSet:
		return errors.New("unique key: UniqueKey without Unique")
	case o.keySet && o.uniqueKey == "":
		return errors.New("unique key: empty key")
	}
	return nil
}

// uniqueKey returns the default uniqueness key of a [Unique] task: the
// SHA-256 hex digest of its queue, name and payload, each but the last
// prefixed with its length (so that no two triples give the same input).
func uniqueKey(queue, name string, payload []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s%d:%s", len(queue), queue, len(name), name)
	h.Write(payload)
	return hex.EncodeToString(h.Sum(nil))
}

// Cancel deletes a task that waits in the delayed set, in one round trip:
// one enqueued with a delay that is not yet due, or a failed one waiting for
// its retry. It returns [ErrNotFound] if the task is not there (ready, in
// flight, dead, done, or unknown), and an error for an empty id. A re-send
// of a Cancel whose reply was lost gets the first run's answer; if every
// re-send fails, the error wraps ria.ErrOutcomeUnknown.
func (g *Group) Cancel(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("queue: cancel in %q: empty ID", g.name)
	}
	n, err := g.once(ctx, cancelScript, append(g.keys.base(), g.keys.unique), id)
	if err != nil {
		return fmt.Errorf("queue: cancel %q in %q: %w", id, g.name, err)
	}
	if n == 0 {
		return fmt.Errorf("queue: cancel %q in %q: %w", id, g.name, ErrNotFound)
	}
	return nil
}

// Requeue moves a dead task back to the end of its queue, with its failed
// attempts reset, in one round trip. It returns [ErrNotFound] if the task
// is not dead, and an error for an empty id. A re-send of a Requeue whose
// reply was lost gets the first run's answer; if every re-send fails, the
// error wraps ria.ErrOutcomeUnknown. [Group.RequeueAllDead] requeues every
// dead task.
func (g *Group) Requeue(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("queue: requeue in %q: empty ID", g.name)
	}
	n, err := g.once(ctx, requeueScript, g.keys.base(), id)
	if err != nil {
		return fmt.Errorf("queue: requeue %q in %q: %w", id, g.name, err)
	}
	if n == 0 {
		return fmt.Errorf("queue: requeue %q in %q: %w", id, g.name, ErrNotFound)
	}
	return nil
}

// once runs a once-script that answers an integer.
func (g *Group) once(ctx context.Context, s *script.Script, keys []string, args ...any) (int64, error) {
	v, err := s.RunOnce(ctx, g.rdb, g.keys.once(), keys, args...)
	if err != nil {
		return 0, err
	}
	return s.AsInt64(v)
}

// Promote moves every due delayed task to its queue, in batches of 100 per
// round trip, and returns how many it moved (to the dead letters, unrun,
// a task whose stored fields do not parse). Workers promote as they take
// tasks, so calling it is never required; it suits schedulers and tests.
// Any number of promoters may run at once: each task is moved once. After
// an error, the count is of the batches that were answered; an error that
// wraps ria.ErrOutcomeUnknown means the last batch may have been moved.
func (g *Group) Promote(ctx context.Context) (int, error) {
	return g.loop(ctx, "promote", promoteScript, g.keys.base(), batch, g.deadLimit)
}

// Recover puts every task whose lease has expired (its worker died or
// stalled) back at the front of its queue, counting a failed attempt, or
// into the dead letters when it has no retry left or its stored fields do
// not parse; in batches of 100 per
// round trip. It returns how many it recovered (see [Group.Promote] for
// errors). Workers recover as they take tasks, so calling it is never
// required. Any number of recoverers may run at once: each expired lease
// is recovered once.
func (g *Group) Recover(ctx context.Context) (int, error) {
	return g.loop(ctx, "recover", recoverScript, append(g.keys.base(), g.keys.unique), batch, g.deadLimit)
}

func (g *Group) loop(ctx context.Context, op string, s *script.Script, keys []string, args ...any) (int, error) {
	total := 0
	for {
		v, err := s.RunOnce(ctx, g.rdb, g.keys.once(), keys, args...)
		var r []int64
		if err == nil {
			r, err = s.AsInt64s(v)
		}
		if err == nil && len(r) != 2 {
			err = fmt.Errorf("script %s: want 2 integers, got %d", s.Name(), len(r))
		}
		if err != nil {
			return total, fmt.Errorf("queue: %s %q: %w", op, g.name, err)
		}
		total += int(r[0])
		if r[1] == 0 {
			return total, nil
		}
	}
}

// Stats counts a group's tasks.
type Stats struct {
	Ready    map[string]int64 // ready tasks per queue asked for
	Delayed  int64            // tasks waiting for their due time or retry
	InFlight int64            // tasks taken by a worker, not yet settled
	Dead     int64            // tasks in the dead letters
	Paused   []string         // the group's paused queues, sorted (all of them, not only those asked for)
}

// Stats counts the ready tasks of each named queue and the group's delayed,
// in-flight and dead tasks, and lists its paused queues, in one round trip
// (a MULTI/EXEC, so the counts are of one moment). An empty queue name is
// an error, and nothing is sent. A key of the wrong type gives a
// *ria.KeyError naming it (and costs one more round trip).
func (g *Group) Stats(ctx context.Context, queues ...string) (Stats, error) {
	if slices.Contains(queues, "") {
		return Stats{}, fmt.Errorf("queue: stats %q: queue name: empty name", g.name)
	}
	var (
		ready  []*redis.IntCmd
		z      [3]*redis.IntCmd
		paused *redis.StringSliceCmd
	)
	cmds, err := g.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, q := range queues {
			ready = append(ready, p.LLen(ctx, g.keys.ready+q))
		}
		z[0], z[1], z[2] = p.ZCard(ctx, g.keys.delayed), p.ZCard(ctx, g.keys.inflight), p.ZCard(ctx, g.keys.dead)
		paused = p.SMembers(ctx, g.keys.paused)
		return nil
	})
	if err != nil {
		roles := map[string][2]string{
			g.keys.delayed: {"queue delayed set", "a zset"}, g.keys.inflight: {"queue in-flight set", "a zset"},
			g.keys.dead: {"queue dead set", "a zset"}, g.keys.paused: {"queue paused set", "a set"},
		}
		for _, c := range cmds {
			if k, ok := c.Args()[len(c.Args())-1].(string); ok && c.Err() != nil && strings.HasPrefix(c.Err().Error(), "WRONGTYPE") {
				rw, ok := roles[k]
				role, want := rw[0], rw[1]
				if !ok {
					role, want = "queue ready list", "a list"
				}
				got, _ := g.rdb.Do(ctx, "type", k).Text()
				err = &ria.KeyError{Role: role, Key: k, Got: "a " + got, Want: want, Err: ria.ErrWrongType}
				break
			}
		}
		return Stats{}, fmt.Errorf("queue: stats %q: %w", g.name, err)
	}
	s := Stats{Ready: make(map[string]int64, len(queues)), Delayed: z[0].Val(), InFlight: z[1].Val(), Dead: z[2].Val(),
		Paused: paused.Val()}
	slices.Sort(s.Paused)
	for i, q := range queues {
		s.Ready[q] = ready[i].Val()
	}
	return s, nil
}

// DeadTask is a task in the dead letters.
type DeadTask struct {
	ID       string
	Queue    string
	Name     string
	Attempts int       // failed attempts
	Error    string    // the last error
	Died     time.Time // by the server's clock
}

// Dead lists up to limit dead tasks, most recent first, skipping the first
// offset, in one round trip. An offset that is negative or above
// [MaxDeadLimit], or a limit that is not between 1 and [MaxDeadPage], is an
// error.
func (g *Group) Dead(ctx context.Context, offset, limit int) ([]DeadTask, error) {
	if offset < 0 || offset > MaxDeadLimit {
		return nil, fmt.Errorf("queue: dead %q: offset %d: must be between 0 and %d", g.name, offset, MaxDeadLimit)
	}
	if limit < 1 || limit > MaxDeadPage {
		return nil, fmt.Errorf("queue: dead %q: limit %d: must be between 1 and %d", g.name, limit, MaxDeadPage)
	}
	v, err := deadScript.Run(ctx, g.rdb, []string{g.keys.dead, g.keys.tasks}, offset, limit)
	if err != nil {
		return nil, fmt.Errorf("queue: dead %q: %w", g.name, err)
	}
	arr, ok := v.([]any)
	if !ok && v != nil || len(arr)%6 != 0 {
		return nil, fmt.Errorf("queue: dead %q: script %s: malformed reply %T", g.name, deadScript.Name(), v)
	}
	out := make([]DeadTask, 0, len(arr)/6)
	for i := 0; i < len(arr); i += 6 {
		var d DeadTask
		var died int64
		var attempts string
		if err := scan(arr[i:i+6], &d.ID, &died, &d.Queue, &d.Name, &attempts, &d.Error); err != nil {
			return nil, fmt.Errorf("queue: dead %q: script %s: %w", g.name, deadScript.Name(), err)
		}
		d.Attempts, _ = strconv.Atoi(attempts)
		d.Died = time.UnixMilli(died)
		out = append(out, d)
	}
	return out, nil
}

// scan copies a script's reply values into strings and int64s.
func scan(vals []any, dst ...any) error {
	for i, d := range dst {
		switch d := d.(type) {
		case *string:
			s, ok := vals[i].(string)
			if !ok {
				return fmt.Errorf("value %d: want a string, got %T", i, vals[i])
			}
			*d = s
		case *int64:
			n, ok := vals[i].(int64)
			if !ok {
				return fmt.Errorf("value %d: want an integer, got %T", i, vals[i])
			}
			*d = n
		}
	}
	return nil
}
