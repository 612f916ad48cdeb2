package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Task is one run of a task, handed to a [Handler].
type Task struct {
	ID       string
	Queue    string // the queue it was taken from
	Name     string
	Payload  []byte // as the group's codec encoded it
	Attempt  int    // failed attempts before this run: 0 on the first
	MaxRetry int    // retries it gets after a failure, in all

	codec  Codec
	unique string // its uniqueness key ([Unique]), released when it is done or dead
}

// Decode decodes the payload into v with the group's codec.
func (t *Task) Decode(v any) error {
	if err := t.codec.Unmarshal(t.Payload, v); err != nil {
		return fmt.Errorf("%w: %w", ErrBadPayload, err)
	}
	return nil
}

// Handler runs tasks of one name. Process returns nil when the task is
// done; an error makes the task retry with backoff, or go to the dead
// letters when the error wraps [ErrNoRetry] or the task has no retry left.
// ctx is cancelled when the worker shuts down (after its grace period) or
// loses the task's lease ([ErrLeaseLost] as cause); Process should then
// return soon.
type Handler interface {
	Process(ctx context.Context, t *Task) error
}

// HandlerFunc adapts a function to a [Handler].
type HandlerFunc func(ctx context.Context, t *Task) error

// Process calls f(ctx, t).
func (f HandlerFunc) Process(ctx context.Context, t *Task) error { return f(ctx, t) }

// Typed returns a Handler that decodes the payload into a T with the
// group's codec (JSON by default) and calls fn with it. A payload that does
// not decode sends the task to the dead letters with an error wrapping
// [ErrBadPayload]; fn is not called. [Worker.Handle] refuses the Handler of
// a nil fn.
func Typed[T any](fn func(ctx context.Context, v T) error) Handler { return typed[T]{fn} }

type typed[T any] struct {
	fn func(ctx context.Context, v T) error
}

func (h typed[T]) Process(ctx context.Context, t *Task) error {
	var v T
	if err := t.Decode(&v); err != nil {
		return err
	}
	return h.fn(ctx, v)
}

func (h typed[T]) nilFunc() bool { return h.fn == nil }

// checkHandler returns an error if h cannot run a task: nil, a nil func or
// pointer, or a [Typed] of a nil func.
func checkHandler(h Handler) error {
	if h == nil {
		return errors.New("nil handler")
	}
	if t, ok := h.(interface{ nilFunc() bool }); ok && t.nilFunc() {
		return errors.New("Typed of a nil func")
	}
	switch v := reflect.ValueOf(h); v.Kind() {
	case reflect.Func, reflect.Pointer, reflect.Map, reflect.Chan, reflect.Slice, reflect.Interface:
		if v.IsNil() {
			return fmt.Errorf("nil %T", h)
		}
	}
	return nil
}

// jsonCodec is the default codec: encoding/json.
type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// pack appends a task's packed form, the value of its field in the tasks
// hash, to buf:
//
//	<len(queue)>:<queue><len(name)>:<name><maxRetry>:<len(nonce)>:<nonce><payload>
//
// nonce is the enqueue call's, for an ID given by the caller (else empty),
// followed, for a [Unique] task, by '/' and its uniqueness key (see tag).
// The lengths are decimal byte counts; lib.lua reads the same layout.
func pack(buf []byte, queue, name string, maxRetry int, nonce string, payload []byte) []byte {
	buf = strconv.AppendInt(buf, int64(len(queue)), 10)
	buf = append(append(buf, ':'), queue...)
	buf = strconv.AppendInt(buf, int64(len(name)), 10)
	buf = append(append(buf, ':'), name...)
	buf = strconv.AppendInt(buf, int64(maxRetry), 10)
	buf = append(buf, ':')
	buf = strconv.AppendInt(buf, int64(len(nonce)), 10)
	buf = append(append(buf, ':'), nonce...)
	return append(buf, payload...)
}

// tag returns the nonce field of a packed task: the enqueue call's nonce
// (or nothing) and, for a [Unique] task, '/' and its uniqueness key. A
// nonce holds no '/' (letters, digits and dots), so the first '/' ends it.
func tag(nonce, unique string) string {
	if unique == "" {
		return nonce
	}
	return nonce + "/" + unique
}

// packed is a task's packed form, read back.
type packed struct {
	queue, name string
	maxRetry    int
	unique      string // the uniqueness key, "" if none
	payload     string
}

// unpack reads a task's packed form (see pack).
func unpack(v string) (packed, error) {
	var p packed
	field := func(what string) (string, error) {
		n, rest, ok := strings.Cut(v, ":")
		size, err := strconv.Atoi(n)
		if !ok || err != nil || size < 0 || size > len(rest) {
			return "", fmt.Errorf("%s: malformed length", what)
		}
		v = rest[size:]
		return rest[:size], nil
	}
	var err error
	if p.queue, err = field("queue"); err != nil {
		return p, err
	}
	if p.name, err = field("task name"); err != nil {
		return p, err
	}
	m, rest, ok := strings.Cut(v, ":")
	if p.maxRetry, err = strconv.Atoi(m); !ok || err != nil || p.maxRetry < 0 {
		return p, errors.New("max retries: malformed")
	}
	v = rest
	t, err := field("nonce")
	if err != nil {
		return p, err
	}
	_, p.unique, _ = strings.Cut(t, "/")
	p.payload = v
	return p, nil
}
