// Command autocomplete runs the autocompletion of Redis in Action 6.1:
// a user's recent contacts (ten added, one re-added to the front, one
// removed, a prefix looked up) and prefix completion over a guild's
// members and over a sentence's words, in any script and any case. It
// checks each answer and exits non-zero if one is wrong.
//
// It uses the server named by REDIS_URL (or REDIS_CLUSTER), or an embedded
// miniredis. Each run uses a prefix of its own and deletes its keys.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/autocomplete"
	"github.com/ria-go/ria/examples/demo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "autocomplete:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeFn, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeFn()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefix := "example:ac:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	defer cleanup(rdb, prefix)
	ac, err := autocomplete.New(rdb, autocomplete.WithPrefix(prefix))
	if err != nil {
		return err
	}
	check := func(what string, got, want []string) error {
		fmt.Printf("%-34s %v\n", what, got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s: got %v, want %v", what, got, want)
		}
		return nil
	}

	// Recent contacts.
	for i := range 10 {
		if err := ac.AddContact(ctx, "u", fmt.Sprintf("contact-%d-%d", i/3, i)); err != nil {
			return err
		}
	}
	all, err := ac.RecentContacts(ctx, "u")
	if err != nil {
		return err
	}
	fmt.Println("ten contacts, most recent first:  ", all)
	if err := ac.AddContact(ctx, "u", "contact-1-4"); err != nil {
		return err
	}
	all, _ = ac.RecentContacts(ctx, "u")
	if err := check("re-added contact-1-4, first:", all[:1], []string{"contact-1-4"}); err != nil {
		return err
	}
	if err := ac.RemoveContact(ctx, "u", "contact-2-7"); err != nil {
		return err
	}
	all, _ = ac.RecentContacts(ctx, "u")
	fmt.Println("removed contact-2-7, left:        ", len(all))
	if len(all) != 9 {
		return fmt.Errorf("want 9 contacts, got %d", len(all))
	}
	got, err := ac.Contacts(ctx, "u", "CONTACT-2-")
	if err != nil {
		return err
	}
	if err := check(`prefix "CONTACT-2-":`, got, []string{"contact-2-8", "contact-2-6"}); err != nil {
		return err
	}

	// A guild.
	if err := ac.Join(ctx, "guild", "jeff", "jenny", "jack", "jennifer"); err != nil {
		return err
	}
	got, _ = ac.Complete(ctx, "guild", "je", 10)
	if err := check(`guild, "je":`, got, []string{"jeff", "jennifer", "jenny"}); err != nil {
		return err
	}
	if err := ac.Leave(ctx, "guild", "jeff"); err != nil {
		return err
	}
	got, _ = ac.Complete(ctx, "guild", "je", 10)
	if err := check(`after jeff leaves, "je":`, got, []string{"jennifer", "jenny"}); err != nil {
		return err
	}

	// Words, then names in other scripts.
	words := strings.Fields("these are some words that we will be autocompleting on")
	if err := ac.Join(ctx, "words", words...); err != nil {
		return err
	}
	got, _ = ac.Complete(ctx, "words", "th", 10)
	if err := check(`words, "th":`, got, []string{"that", "these"}); err != nil {
		return err
	}
	got, _ = ac.Complete(ctx, "words", "w", 10)
	if err := check(`words, "w":`, got, []string{"we", "will", "words"}); err != nil {
		return err
	}
	if err := ac.Join(ctx, "towns", "Ærøskøbing", "Łódź", "Ωmega", "Straße", "日本橋"); err != nil {
		return err
	}
	for p, want := range map[string][]string{"ærø": {"Ærøskøbing"}, "ŁÓ": {"Łódź"}, "ωM": {"Ωmega"}, "日本": {"日本橋"}} {
		got, _ = ac.Complete(ctx, "towns", p, 10)
		if err := check(fmt.Sprintf("towns, %q:", p), got, want); err != nil {
			return err
		}
	}
	return nil
}

// cleanup deletes the keys of the run.
func cleanup(rdb redis.UniversalClient, prefix string) {
	ctx := context.Background()
	for _, k := range []string{"{u}:recent", "{guild}:members", "{words}:members", "{towns}:members"} {
		_ = rdb.Del(ctx, prefix+k).Err()
	}
}
