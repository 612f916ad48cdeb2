package chat

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/option"
	"github.com/ria-go/ria/internal/script"
)

var (
	// ErrNoChat is wrapped by the error of a call on a chat that does not
	// exist.
	ErrNoChat = errors.New("chat: no such chat")
	// ErrNotMember is wrapped by the error of a send by a user who is not a
	// member of the chat.
	ErrNotMember = errors.New("chat: not a member")
	// ErrExists is wrapped by the error of [Chats.Create] for a chat id in
	// use.
	ErrExists = errors.New("chat: chat exists")
	// ErrEmpty is wrapped by the error for an empty user or chat id.
	ErrEmpty = errors.New("chat: empty")
	// ErrTooLong is wrapped by the error for a user or chat id of more than
	// [MaxName] bytes, or a payload of more than [MaxPayload] bytes.
	ErrTooLong = errors.New("chat: too long")
	// ErrFull is wrapped by the error of [Chats.Join] on a chat that has
	// [MaxMembers] members already.
	ErrFull = errors.New("chat: chat full")
	// ErrInvalid is wrapped by the error for an id with '{', '}' or a byte
	// that is not printable UTF-8, and for a count out of range.
	ErrInvalid = errors.New("chat: invalid")
)

const (
	// MaxName is the longest user or chat id, in bytes.
	MaxName = 256
	// MaxPayload is the largest encoded message payload, in bytes.
	MaxPayload = 1 << 20
	// MaxMembers is the most members a chat has: [Chats.Create] takes at
	// most that many, the sender included, and [Chats.Join] refuses a new
	// member beyond it (each send publishes one wake-up per member).
	MaxMembers = 1000
	// DefaultFetch is how many messages of each chat one [Chats.Fetch]
	// returns unless [WithFetchLimit] says otherwise.
	DefaultFetch = 1000
	// MaxPage is the largest page of [Chats.History] and [WithFetchLimit].
	MaxPage = 10000
)

var (
	//go:embed lib.lua
	libLua string
	//go:embed create.lua
	createLua string
	//go:embed send.lua
	sendLua string
	//go:embed join.lua
	joinLua string
	//go:embed leave.lua
	leaveLua string
	//go:embed history.lua
	historyLua string
	//go:embed fetch.lua
	fetchLua string
	//go:embed unread.lua
	unreadLua string

	createScript  = script.NewOnce("chat create", libLua+createLua)
	sendScript    = script.NewOnce("chat send", libLua+sendLua)
	joinScript    = script.NewOnce("chat join", libLua+joinLua)
	leaveScript   = script.NewOnce("chat leave", libLua+leaveLua)
	historyScript = script.New("chat history", historyLua)
	// fetch and unread run in pipelines, one run per chat (script.Send).
	fetchScript  = script.New("chat fetch", fetchLua)
	unreadScript = script.New("chat unread", unreadLua)
)

// Client is the subset of go-redis this package uses. *redis.Client,
// *redis.ClusterClient and *redis.Ring satisfy it.
type Client interface {
	// The methods of redis.Scripter: scripts run EVALSHA, then EVAL once
	// the server answers NOSCRIPT.
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *redis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *redis.StringCmd

	// Pipelined sends the per-chat scripts of Fetch and Unread (one
	// pipeline per node on a Cluster) and the users' chat lists.
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	SMembers(ctx context.Context, key string) *redis.StringSliceCmd
	SAdd(ctx context.Context, key string, members ...any) *redis.IntCmd
	SRem(ctx context.Context, key string, members ...any) *redis.IntCmd
	HMGet(ctx context.Context, key string, fields ...string) *redis.SliceCmd
	// ZRangeWithScores serves [Chats.Members].
	ZRangeWithScores(ctx context.Context, key string, start, stop int64) *redis.ZSliceCmd
	// ZScore serves [Chats.Leave]'s second look at the membership.
	ZScore(ctx context.Context, key, member string) *redis.FloatCmd
	Do(ctx context.Context, args ...any) *redis.Cmd // TYPE, to name a key of another type
	// Subscribe serves [Chats.Wait].
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

var (
	_ Client = (*redis.Client)(nil)
	_ Client = (*redis.ClusterClient)(nil)
	_ Client = (*redis.Ring)(nil)
)

// Codec encodes message payloads.
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// JSON is the default [Codec]: encoding/json.
var JSON Codec = jsonCodec{}

type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// Raw is a [Codec] for payloads that are bytes already: it marshals a
// []byte or a string as is, and unmarshals into a *[]byte or a *string.
var Raw Codec = rawCodec{}

type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case []byte:
		return v, nil
	case string:
		return []byte(v), nil
	}
	return nil, fmt.Errorf("chat: raw codec: cannot marshal %T: %w", v, ErrInvalid)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	switch v := v.(type) {
	case *[]byte:
		*v = append([]byte(nil), data...)
		return nil
	case *string:
		*v = string(data)
		return nil
	}
	return fmt.Errorf("chat: raw codec: cannot unmarshal into %T: %w", v, ErrInvalid)
}

// Message is one chat message.
type Message struct {
	// Chat is the chat's id.
	Chat string
	// ID is the message's id: 1, 2, 3... in send order within its chat.
	ID int64
	// Sender is the sending member's id.
	Sender string
	// Time is when the message was stored, by the Redis server's clock
	// (millisecond precision).
	Time time.Time
	// Payload is the encoded payload; see [Message.Decode].
	Payload []byte

	codec Codec
}

// Decode unmarshals the payload into v with the codec of the [Chats] that
// read the message.
func (m Message) Decode(v any) error {
	c := m.codec
	if c == nil {
		c = JSON
	}
	if err := c.Unmarshal(m.Payload, v); err != nil {
		return fmt.Errorf("chat: decode message %d of %q: %w", m.ID, m.Chat, err)
	}
	return nil
}

// Option configures [Chats].
type Option func(*options)

type options struct {
	prefix string
	codec  Codec
	fetch  int
	poll   time.Duration
	window int
}

// WithPrefix sets the key prefix. Default: "chat:". It must not contain
// '{' or '}'.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithCodec sets the payload codec. Default: [JSON].
func WithCodec(c Codec) Option { return func(o *options) { o.codec = c } }

// WithFetchLimit sets how many messages of each chat one [Chats.Fetch]
// returns at most. Default: [DefaultFetch]; 1 to [MaxPage].
func WithFetchLimit(n int) Option { return func(o *options) { o.fetch = n } }

// WithPollInterval sets how long [Chats.Wait] waits for a wake-up before
// it fetches anyway (a safety net: a wake-up is published on every send).
// Default: 5s; at least 10ms.
func WithPollInterval(d time.Duration) Option { return func(o *options) { o.poll = d } }

// WithFileWindow sets how many bytes of a file may wait in Redis for its
// slowest receiver before [Chats.SendFile] waits. Default:
// [DefaultFileWindow]; [ChunkSize] to 1 GiB.
func WithFileWindow(n int) Option { return func(o *options) { o.window = n } }

// Chats stores group chats: members, messages, what each member has seen.
// It is safe for concurrent use.
type Chats struct {
	rdb    Client
	keys   keys.Space
	codec  Codec
	fetch  int
	poll   time.Duration
	window int
}

// New returns Chats backed by rdb. It returns an error for a prefix with
// '{' or '}', a nil codec or an option out of range. A nil rdb is a
// programmer error and panics. Nothing reaches Redis.
func New(rdb Client, opts ...Option) (*Chats, error) {
	if rdb == nil {
		panic("chat: New with nil client")
	}
	o := options{prefix: "chat:", codec: JSON, fetch: DefaultFetch, poll: 5 * time.Second, window: DefaultFileWindow}
	if err := option.Apply(&o, opts); err != nil {
		return nil, fmt.Errorf("chat: new: %w", err)
	}
	if err := keys.CheckPrefix(o.prefix); err != nil {
		return nil, fmt.Errorf("chat: new: %w", err)
	}
	switch {
	case o.codec == nil:
		return nil, fmt.Errorf("chat: new: nil codec: %w", ErrInvalid)
	case o.fetch < 1 || o.fetch > MaxPage:
		return nil, fmt.Errorf("chat: new: WithFetchLimit(%d): want 1 to %d: %w", o.fetch, MaxPage, ErrInvalid)
	case o.window < ChunkSize || o.window > 1<<30:
		return nil, fmt.Errorf("chat: new: WithFileWindow(%d): want %d to 1 GiB: %w", o.window, ChunkSize, ErrInvalid)
	case o.poll < 10*time.Millisecond:
		return nil, fmt.Errorf("chat: new: WithPollInterval(%v): want at least 10ms: %w", o.poll, ErrInvalid)
	}
	return &Chats{rdb: rdb, keys: keys.New(o.prefix), codec: o.codec, fetch: o.fetch, poll: o.poll, window: o.window}, nil
}

// checkID reports whether s can be a user or chat id (kind says which).
func checkID(kind, s string) error {
	if err := keys.CheckEntity(kind, s); err != nil {
		if errors.Is(err, keys.ErrEmpty) {
			return fmt.Errorf("%s: %w", kind, ErrEmpty)
		}
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	if len(s) > MaxName {
		return fmt.Errorf("%s of %d bytes: %w", kind, len(s), ErrTooLong)
	}
	if !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 { // C0, DEL and C1
		return fmt.Errorf("%s %q: not printable UTF-8: %w", kind, s, ErrInvalid)
	}
	return nil
}

// encode marshals a payload with the codec and bounds its size.
func (c *Chats) encode(v any) ([]byte, error) {
	b, err := c.codec.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	if len(b) > MaxPayload {
		return nil, fmt.Errorf("payload of %d bytes: %w", len(b), ErrTooLong)
	}
	return b, nil
}
