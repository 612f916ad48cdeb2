package autocomplete

import (
	"context"
	"fmt"
	"strings"

	"github.com/ria-go/ria/internal/script"
)

// AddContact makes contact the most recent of user's recent contacts:
// moved to the front if it is there, added otherwise, and the least recent
// dropped past the length of [WithRecent] (Redis in Action's
// add_update_contact). Contacts are compared as spelled: "Jeff" and "jeff"
// are two contacts. One round trip. A re-sent call (go-redis re-sends after
// a lost reply) is answered from a record of the first run and changes
// nothing, so it never undoes a later AddContact or RemoveContact of
// another client (see Lost replies in the package doc).
//
// An empty, too long ([MaxName]) or malformed contact, or a bad user name,
// is an error and nothing is written. A recent list holding another Redis
// type gives a *ria.KeyError and nothing is written.
func (c *Completer) AddContact(ctx context.Context, user, contact string) error {
	if err := c.checkContact(user, contact); err != nil {
		return fmt.Errorf("autocomplete: add contact: %w", err)
	}
	if _, err := touchScript.RunOnce(ctx, c.rdb, c.onceKey(user), []string{c.recentKey(user)}, contact, c.recent); err != nil {
		return fmt.Errorf("autocomplete: add contact %q for %q: %w", contact, user, script.Unknown(err))
	}
	return nil
}

// RemoveContact removes contact from user's recent contacts, if it is
// there (remove_contact). One round trip; a re-sent call changes nothing,
// as for [Completer.AddContact]. Errors as for [Completer.AddContact].
func (c *Completer) RemoveContact(ctx context.Context, user, contact string) error {
	if err := c.checkContact(user, contact); err != nil {
		return fmt.Errorf("autocomplete: remove contact: %w", err)
	}
	if _, err := removeScript.RunOnce(ctx, c.rdb, c.onceKey(user), []string{c.recentKey(user)}, contact); err != nil {
		return fmt.Errorf("autocomplete: remove contact %q for %q: %w", contact, user, script.Unknown(err))
	}
	return nil
}

// RecentContacts returns user's recent contacts, the most recent first.
// One round trip (LRANGE).
func (c *Completer) RecentContacts(ctx context.Context, user string) ([]string, error) {
	if err := checkEntity("user", user); err != nil {
		return nil, fmt.Errorf("autocomplete: recent contacts: %w", err)
	}
	all, err := c.recentContacts(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("autocomplete: recent contacts of %q: %w", user, err)
	}
	return all, nil
}

// Contacts returns user's recent contacts that start with prefix,
// case-insensitively (see [Fold]), the most recent first, as they were
// spelled (fetch_autocomplete_list, for any UTF-8 names). One round trip:
// the list is at most [WithRecent] long and is filtered here.
//
// An empty, too long or malformed prefix is an error, as is a bad user
// name; a recent list of another Redis type gives a *ria.KeyError.
func (c *Completer) Contacts(ctx context.Context, user, prefix string) ([]string, error) {
	if err := checkEntity("user", user); err != nil {
		return nil, fmt.Errorf("autocomplete: contacts: %w", err)
	}
	if err := checkName("prefix", prefix); err != nil {
		return nil, fmt.Errorf("autocomplete: contacts of %q: %w", user, err)
	}
	all, err := c.recentContacts(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("autocomplete: contacts of %q: %w", user, err)
	}
	p := Fold(prefix)
	var out []string
	for _, name := range all {
		if strings.HasPrefix(Fold(name), p) {
			out = append(out, name)
		}
	}
	return out, nil
}

func (c *Completer) recentContacts(ctx context.Context, user string) ([]string, error) {
	key := c.recentKey(user)
	all, err := c.rdb.LRange(ctx, key, 0, -1).Result()
	if err != nil {
		return nil, script.WrongType(ctx, c.rdb, err, key, "autocomplete recent contacts", "list")
	}
	return all, nil
}

func (c *Completer) checkContact(user, contact string) error {
	if err := checkEntity("user", user); err != nil {
		return err
	}
	return checkName("contact", contact)
}
