package queue

import (
	"context"
	"encoding/json"
	"fmt"
)

// Task is one run of a task, handed to a [Handler].
type Task struct {
	ID       string
	Queue    string // the queue it was taken from
	Name     string
	Payload  []byte // as the group's codec encoded it
	Attempt  int    // failed attempts before this run: 0 on the first
	MaxRetry int    // retries it gets after a failure, in all

	codec Codec
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
// [ErrBadPayload]; fn is not called.
func Typed[T any](fn func(ctx context.Context, v T) error) Handler {
	return HandlerFunc(func(ctx context.Context, t *Task) error {
		var v T
		if err := t.Decode(&v); err != nil {
			return err
		}
		return fn(ctx, v)
	})
}

// jsonCodec is the default codec: encoding/json.
type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
