// Package ria holds what every package of the library shares with its
// users: the errors that mean the same thing in all of them.
//
// The patterns themselves live in their own packages (lock, semaphore,
// queue, cache, market, voting, session, ...); each wraps a go-redis v9
// client. See the README for the list.
//
// # Answers after a lost reply
//
// go-redis re-sends a command whose reply was lost (a dropped connection, a
// read timeout; MaxRetries, 3 by default), so a state-changing script may
// run twice. Every state-changing operation of ria gives the same effect
// and the same answer when it is re-sent: either its script is naturally
// idempotent (its state carries the caller's token: a lock owner, a permit
// ID, a task ID), or it records its reply under a key of its own call for
// the client's retry window and answers a re-send from that record. When
// the call fails without a reply after every re-send, its error wraps
// [ErrOutcomeUnknown]: it may or may not have taken effect. A refusal (an
// error such as lock.ErrNotHeld or market.ErrNotListed) always means that
// the call changed nothing.
//
// # Keys of the wrong type
//
// A script checks the type (and, where it parses it, the value) of every key
// it relies on before its first write, so that a key written by someone
// else makes the call fail with a [*KeyError] naming the key and its role,
// and changes nothing.
package ria
